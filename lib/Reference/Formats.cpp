//===- Formats.cpp - element types and exact rounding ---------------------===//
//
// llvm::APFloat defines every conversion: its conversions are exact
// IEEE-754 round-to-nearest-even for every format lpc uses (including the
// OCP FP8 formats, whose special values APFloat models: f8E4M3FN has NaN but
// no inf, f8E5M2 is IEEE-like). Finite values take a fast path with the same
// results (APFloat was most of the time of lpc-jit's harness and of the
// evaluator's low-precision ops): a double is rounded to p significant bits
// by scaling it by a power of two (exact), rounding to an integer
// (nearbyint: to nearest even) and scaling back; bit patterns are encoded
// and decoded from the format's fields. Non-finite values go to APFloat.
// test/Reference/check_formats.py compares the results bit for bit with
// ml_dtypes, and lpc-formats-test compares the fast path with APFloat.
//
//===----------------------------------------------------------------------===//

#include "lpc/Reference/Evaluator.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::lpc::ref;

std::optional<DType> mlir::lpc::ref::dtypeOf(Type t) {
  if (t.isF32())
    return DType::f32;
  if (t.isF16())
    return DType::f16;
  if (t.isBF16())
    return DType::bf16;
  if (isa<Float8E4M3FNType>(t))
    return DType::f8e4m3;
  if (isa<Float8E5M2Type>(t))
    return DType::f8e5m2;
  if (t.isSignlessInteger(32))
    return DType::i32;
  if (t.isSignlessInteger(64))
    return DType::i64;
  if (t.isSignlessInteger(1))
    return DType::i1;
  return std::nullopt;
}

Type mlir::lpc::ref::mlirTypeOf(DType t, MLIRContext *ctx) {
  switch (t) {
  case DType::f32:
    return Float32Type::get(ctx);
  case DType::f16:
    return Float16Type::get(ctx);
  case DType::bf16:
    return BFloat16Type::get(ctx);
  case DType::f8e4m3:
    return Float8E4M3FNType::get(ctx);
  case DType::f8e5m2:
    return Float8E5M2Type::get(ctx);
  case DType::i32:
    return IntegerType::get(ctx, 32);
  case DType::i64:
    return IntegerType::get(ctx, 64);
  case DType::i1:
    return IntegerType::get(ctx, 1);
  }
  llvm_unreachable("unknown DType");
}

llvm::StringRef mlir::lpc::ref::dtypeName(DType t) {
  switch (t) {
  case DType::f32:
    return "f32";
  case DType::f16:
    return "f16";
  case DType::bf16:
    return "bf16";
  case DType::f8e4m3:
    return "f8E4M3FN";
  case DType::f8e5m2:
    return "f8E5M2";
  case DType::i32:
    return "i32";
  case DType::i64:
    return "i64";
  case DType::i1:
    return "i1";
  }
  llvm_unreachable("unknown DType");
}

std::optional<DType> mlir::lpc::ref::parseDType(llvm::StringRef name) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f8e4m3,
                  DType::f8e5m2, DType::i32, DType::i64, DType::i1})
    if (dtypeName(t) == name)
      return t;
  return std::nullopt;
}

bool mlir::lpc::ref::isFloat(DType t) {
  return t != DType::i32 && t != DType::i64 && t != DType::i1;
}

unsigned mlir::lpc::ref::bitWidth(DType t) {
  switch (t) {
  case DType::f32:
  case DType::i32:
    return 32;
  case DType::f16:
  case DType::bf16:
    return 16;
  case DType::f8e4m3:
  case DType::f8e5m2:
    return 8;
  case DType::i64:
    return 64;
  case DType::i1:
    return 1;
  }
  llvm_unreachable("unknown DType");
}

const llvm::fltSemantics &mlir::lpc::ref::semanticsOf(DType t) {
  switch (t) {
  case DType::f32:
    return llvm::APFloat::IEEEsingle();
  case DType::f16:
    return llvm::APFloat::IEEEhalf();
  case DType::bf16:
    return llvm::APFloat::BFloat();
  case DType::f8e4m3:
    return llvm::APFloat::Float8E4M3FN();
  case DType::f8e5m2:
    return llvm::APFloat::Float8E5M2();
  default:
    llvm_unreachable("not a float DType");
  }
}

static double toDouble(llvm::APFloat f) {
  bool losesInfo = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return f.convertToDouble();
}

namespace {
/// The fields of a float format, for the fast path.
struct FloatFormat {
  int precision; // significand bits, the implicit one included
  int minExp;    // exponent of the smallest normal
  int bias;
  int bits;      // storage width
  double max;    // largest finite value
};

FloatFormat formatOf(DType t) {
  switch (t) {
  case DType::f32:
    return {24, -126, 127, 32, 0x1.fffffep127};
  case DType::f16:
    return {11, -14, 15, 16, 65504.0};
  case DType::bf16:
    return {8, -126, 127, 16, 0x1.fep127};
  case DType::f8e4m3:
    return {4, -6, 7, 8, 448.0};
  case DType::f8e5m2:
    return {3, -14, 15, 8, 57344.0};
  default:
    llvm_unreachable("not a float DType");
  }
}

/// 2^e, for -1022 <= e <= 1023 (exact, no libm call).
double pow2(int e) {
  return llvm::bit_cast<double>(static_cast<uint64_t>(e + 1023) << 52);
}

/// floor(log2(|v|)) of a finite nonzero double.
int exponentOf(double v) {
  const int field =
      static_cast<int>((llvm::bit_cast<uint64_t>(v) >> 52) & 0x7ff);
  return field ? field - 1023 : std::ilogb(v); // ilogb: subnormal doubles
}

/// Finite v rounded to nearest even in `f`'s precision and exponent range,
/// without the upper limit (the caller checks overflow). q is the exponent
/// of the last bit kept: precision - 1 below v's leading bit, and no lower
/// than the format's subnormal spacing. Scaling by 2^-q is exact (q is
/// within [-149, 1001]); |v| 2^-q < 2^precision <= 2^24, which adding and
/// subtracting 2^52 rounds to an integer, to nearest even (the default
/// rounding mode, no -ffast-math here); scaling back is exact.
double roundFinite(double v, const FloatFormat &f) {
  if (v == 0.0)
    return v;
  const int q = std::max(exponentOf(v), f.minExp) - (f.precision - 1);
  const double scaled = std::fabs(v) * pow2(-q);
  const double rounded = (scaled + 0x1p52) - 0x1p52;
  return std::copysign(rounded * pow2(q), v);
}

/// The bit pattern of a value of `f` (finite, |x| <= f.max).
uint64_t encodeFinite(double x, const FloatFormat &f) {
  const uint64_t sign = std::signbit(x) ? uint64_t(1) << (f.bits - 1) : 0;
  const double a = std::fabs(x);
  if (a == 0.0)
    return sign;
  const int mantBits = f.precision - 1;
  const int e = exponentOf(a);
  if (e < f.minExp) // subnormal: a in units of the subnormal spacing
    return sign | static_cast<uint64_t>(a * pow2(mantBits - f.minExp));
  const uint64_t mant = static_cast<uint64_t>(a * pow2(mantBits - e)) -
                        (uint64_t(1) << mantBits);
  return sign | uint64_t(e + f.bias) << mantBits | mant;
}

/// The value of a finite pattern (f8E4M3FN's top binade, exponent field all
/// ones, is finite and decodes as any other).
double decodeFinite(uint64_t bits, const FloatFormat &f) {
  const int mantBits = f.precision - 1;
  const uint64_t mant = bits & ((uint64_t(1) << mantBits) - 1);
  const int expField = static_cast<int>((bits >> mantBits) &
                                        ((uint64_t(1) << (f.bits - 1 - mantBits)) - 1));
  const double mag =
      expField == 0
          ? static_cast<double>(mant) * pow2(f.minExp - mantBits)
          : static_cast<double>(mant | uint64_t(1) << mantBits) *
                pow2(expField - f.bias - mantBits);
  return (bits >> (f.bits - 1)) & 1 ? -mag : mag;
}
} // namespace

double mlir::lpc::ref::maxFinite(DType t) { return formatOf(t).max; }

double mlir::lpc::ref::spacing(double v, DType t) {
  const FloatFormat f = formatOf(t);
  int e = v != 0 && std::isfinite(v) ? std::ilogb(v) : f.minExp;
  return std::ldexp(1.0, std::max(e, f.minExp) - (f.precision - 1));
}

/// `v` in the float format `t`, rounded to nearest even, with saturation as
/// documented at roundToFormat (APFloat: the definition, and the path of
/// non-finite values).
static llvm::APFloat convertFloat(double v, DType t, bool saturate) {
  const llvm::fltSemantics &sem = semanticsOf(t);
  llvm::APFloat f(v);
  bool losesInfo = false;
  // Overflow gives inf, or NaN in formats without inf (f8E4M3FN).
  f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  if (!saturate || std::isnan(v))
    return f;
  // Saturation clamps overflow and +-inf alike (PTX cvt.rn.satfinite).
  if (!f.isFinite())
    return llvm::APFloat::getLargest(sem, /*Negative=*/std::signbit(v));
  return f;
}

double mlir::lpc::ref::roundToFormat(double v, DType t, bool saturate) {
  switch (t) {
  case DType::i1:
    return v != 0.0 ? 1.0 : 0.0;
  case DType::i32:
  case DType::i64:
    return std::nearbyint(v);
  default:
    break;
  }
  if (std::isfinite(v)) {
    const FloatFormat f = formatOf(t);
    const double r = roundFinite(v, f);
    if (std::fabs(r) <= f.max)
      return r;
    if (saturate)
      return std::copysign(f.max, v);
    // Overflow: inf, or NaN in f8E4M3FN (no inf); either with v's sign.
    return std::copysign(t == DType::f8e4m3
                             ? std::numeric_limits<double>::quiet_NaN()
                             : HUGE_VAL,
                         v);
  }
  return toDouble(convertFloat(v, t, saturate));
}

uint64_t mlir::lpc::ref::toBits(double v, DType t, bool saturate) {
  if (!isFloat(t)) {
    uint64_t bits = static_cast<uint64_t>(
        static_cast<int64_t>(roundToFormat(v, t, saturate)));
    unsigned w = bitWidth(t);
    return w == 64 ? bits : bits & ((uint64_t(1) << w) - 1);
  }
  if (std::isfinite(v)) {
    const FloatFormat f = formatOf(t);
    const double r = roundToFormat(v, t, saturate);
    if (std::isfinite(r))
      return encodeFinite(r, f);
  }
  return convertFloat(v, t, saturate).bitcastToAPInt().getZExtValue();
}

double mlir::lpc::ref::fromBits(uint64_t bits, DType t) {
  unsigned w = bitWidth(t);
  if (!isFloat(t)) {
    llvm::APInt value(w, w == 64 ? bits : bits & ((uint64_t(1) << w) - 1));
    return t == DType::i1 ? static_cast<double>(value.getZExtValue())
                          : static_cast<double>(value.getSExtValue());
  }
  bits &= (uint64_t(1) << w) - 1;
  const FloatFormat f = formatOf(t);
  const int mantBits = f.precision - 1;
  const uint64_t expField = (bits >> mantBits) & ((uint64_t(1) << (w - 1 - mantBits)) - 1);
  const uint64_t expOnes = (uint64_t(1) << (w - 1 - mantBits)) - 1;
  // f8E4M3FN: only S.1111.111 is special (NaN); the other formats: an
  // exponent field of all ones (inf, NaN).
  const bool special = t == DType::f8e4m3 ? (bits & 0x7f) == 0x7f
                                          : expField == expOnes;
  if (!special)
    return decodeFinite(bits, f);
  llvm::APInt value(w, bits);
  return toDouble(llvm::APFloat(semanticsOf(t), value));
}
