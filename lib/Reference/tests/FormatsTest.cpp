//===- FormatsTest.cpp - the reference's conversions against APFloat ------===//
//
// roundToFormat, toBits and fromBits (lib/Reference/Formats.cpp) take a fast
// path for finite values; llvm::APFloat is their definition. This test
// compares them with APFloat, bit for bit, in every float format lpc uses:
//  - fromBits: every pattern of f16, bf16, f8E4M3FN, f8E5M2; 2^20 random
//    f32 patterns and every f32 special;
//  - roundToFormat / toBits, saturating and not: every value of the 8- and
//    16-bit formats, the midpoints (ties) between neighbours and doubles one
//    and a few ulps either side of both; the same around random f32 values;
//    random doubles of every magnitude from below the smallest subnormal to
//    past the largest finite value; +-0, +-inf, NaN.
// (test/Reference/check_formats.py checks the same functions against
// ml_dtypes through lpc-eval.)
//
//===----------------------------------------------------------------------===//

#include "lpc/Reference/Evaluator.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

using namespace mlir::lpc::ref;

namespace {

int failures = 0;
long checks = 0;

double toDouble(llvm::APFloat f) {
  bool loses = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &loses);
  return f.convertToDouble();
}

/// v in t as APFloat rounds it (saturation as documented at roundToFormat).
llvm::APFloat oracle(double v, DType t, bool saturate) {
  llvm::APFloat f(v);
  bool loses = false;
  f.convert(semanticsOf(t), llvm::APFloat::rmNearestTiesToEven, &loses);
  if (saturate && !std::isnan(v) && !f.isFinite())
    return llvm::APFloat::getLargest(semanticsOf(t), std::signbit(v));
  return f;
}

uint64_t doubleBits(double x) { return llvm::bit_cast<uint64_t>(x); }

/// Equal as values, -0 != +0; NaNs equal when their signs are (lpc-eval
/// prints -nan; the payload is not kept).
bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) && std::signbit(a) == std::signbit(b);
  return doubleBits(a) == doubleBits(b);
}

void fail(const char *what, DType t, double v, bool saturate, double got,
          double want) {
  if (++failures <= 20)
    std::printf("FAIL %s %s saturate=%d: input %a: got %a, want %a\n", what,
                dtypeName(t).str().c_str(), saturate, v, got, want);
}

void checkRound(double v, DType t) {
  for (bool saturate : {false, true}) {
    llvm::APFloat want = oracle(v, t, saturate);
    const double wantValue = toDouble(want);
    const double gotValue = roundToFormat(v, t, saturate);
    ++checks;
    if (!same(gotValue, wantValue))
      fail("roundToFormat", t, v, saturate, gotValue, wantValue);
    const uint64_t wantBits = want.bitcastToAPInt().getZExtValue();
    const uint64_t gotBits = toBits(v, t, saturate);
    ++checks;
    if (gotBits != wantBits)
      fail("toBits", t, v, saturate, double(gotBits), double(wantBits));
  }
}

/// v, its neighbours 1 and 3 double ulps either side, and -v likewise.
void checkAround(double v, DType t) {
  for (double s : {v, -v}) {
    checkRound(s, t);
    double up = s, down = s;
    for (int i = 0; i < 3; ++i) {
      up = std::nextafter(up, HUGE_VAL);
      down = std::nextafter(down, -HUGE_VAL);
      if (i != 1) {
        checkRound(up, t);
        checkRound(down, t);
      }
    }
  }
}

double decodeOracle(uint64_t bits, DType t) {
  const unsigned w = bitWidth(t);
  return toDouble(llvm::APFloat(semanticsOf(t), llvm::APInt(w, bits)));
}

void checkDecode(uint64_t bits, DType t) {
  ++checks;
  const double want = decodeOracle(bits, t), got = fromBits(bits, t);
  if (!same(got, want))
    fail("fromBits", t, double(bits), false, got, want);
}

void checkFormat(DType t, std::mt19937_64 &rng) {
  const unsigned w = bitWidth(t);
  if (w <= 16) {
    // Every pattern decoded; every finite value, its neighbours, and the
    // ties between neighbours (the midpoint of two finite values).
    std::vector<double> values;
    for (uint64_t b = 0; b < (uint64_t(1) << w); ++b) {
      checkDecode(b, t);
      const double v = decodeOracle(b, t);
      if (std::isfinite(v) && !std::signbit(v))
        values.push_back(v);
    }
    std::sort(values.begin(), values.end());
    for (size_t i = 0; i < values.size(); ++i) {
      checkAround(values[i], t);
      if (i + 1 < values.size())
        checkAround((values[i] + values[i + 1]) / 2, t);
    }
    // Past the largest finite: its tie with the next binade step and more.
    const double max = values.back(), ulp = max - values[values.size() - 2];
    checkAround(max + ulp / 2, t);
    checkAround(max + ulp, t);
  } else {
    // f32: random patterns decoded; random values, their neighbours and
    // ties with the next value up.
    for (int i = 0; i < (1 << 20); ++i) {
      const uint64_t b = rng() & 0xffffffffu;
      checkDecode(b, t);
      const double v = decodeOracle(b, t);
      if (i % 4 == 0 && std::isfinite(v)) {
        checkAround(v, t);
        const double next = decodeOracle(
            (b & 0x7fffffffu) == 0x7f7fffffu ? b : b + 1, t);
        if (std::isfinite(next))
          checkAround((v + next) / 2, t);
      }
    }
    for (uint64_t b : {0x7f800000ull, 0xff800000ull, 0x7fc00000ull,
                       0x00000001ull, 0x007fffffull, 0x00800000ull,
                       0x7f7fffffull})
      checkDecode(b, t);
    checkAround(0x1.fffffep127 + 0x1p103, t); // max + half an ulp: a tie
  }
  // Random doubles of every magnitude, around the format's range.
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> expo(-160, 140);
  for (int i = 0; i < 200000; ++i)
    checkRound((rng() & 1 ? -1.0 : 1.0) * std::ldexp(mant(rng), expo(rng)), t);
  for (double v : {0.0, HUGE_VAL, std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::denorm_min(),
                   std::numeric_limits<double>::max()})
    checkAround(v, t);
}

} // namespace

int main() {
  std::mt19937_64 rng(20261205);
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f8e4m3,
                  DType::f8e5m2})
    checkFormat(t, rng);
  std::printf("lpc formats test: %ld checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
