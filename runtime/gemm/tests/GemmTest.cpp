//===- GemmTest.cpp - the CPU GEMM entry points against a double reference ===//
//
// Every entry point (f32, bf16, f16, the FP8 pairs) on random nonzero inputs over a grid of
// shapes (1, 3, 17, 100 and a few large ones that take oneDNN's blocked
// kernels), transposes, batches, broadcastB, offsets and padded strides. The
// reference accumulates in double; the tolerance is the deterministic bound
// of f32 accumulation, (K + 1) * 2^-24 * sum_k |a_k||b_k|, since the
// operands are exactly representable (bf16, f16 and FP8 values widen to f32
// exactly; f32 products round once). Padding and everything around C must
// stay untouched. Invalid calls must abort with a message naming the fault.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Gemm.h"
#include "lpc/Runtime/Attention.h"
#include "lpc/Runtime/GroupedGemm.h"

#include "TestCheck.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using lpc::rt::MemRef;

namespace {

enum class Kind { F32, BF16, F16, E4M3, E5M2 };
const char *kindName(Kind k) {
  switch (k) {
  case Kind::F32: return "f32";
  case Kind::BF16: return "bf16";
  case Kind::F16: return "f16";
  case Kind::E4M3: return "e4m3";
  case Kind::E5M2: return "e5m2";
  }
  return "?";
}

float bitsToFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t floatToBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// Reference half -> float, by the compiler's _Float16 (an implementation
/// independent of the runtime's).
float refHalf(uint16_t h) {
  _Float16 x;
  std::memcpy(&x, &h, 2);
  return static_cast<float>(x);
}

// One per thread: testThreads() makes operands on two threads at once (a
// shared engine is a data race, which UBSan caught as an index past its
// state).
thread_local std::mt19937_64 rng(12345);

/// A random nonzero value of magnitude in [1/8, 2], exactly representable in
/// the operand format; `bits` is its storage (f32 bits or a 16-bit pattern).
float randomValue(Kind kind, uint32_t &bits) {
  std::uniform_real_distribution<float> mag(0.125f, 2.0f);
  float v = mag(rng) * ((rng() & 1) ? -1.0f : 1.0f);
  switch (kind) {
  case Kind::F32:
    bits = floatToBits(v);
    return v;
  case Kind::BF16:
    bits = floatToBits(v) >> 16; // truncate: still nonzero, exactly bf16
    return bitsToFloat(bits << 16);
  case Kind::F16: {
    _Float16 h = static_cast<_Float16>(v);
    uint16_t b;
    std::memcpy(&b, &h, 2);
    bits = b;
    return refHalf(b);
  }
  case Kind::E4M3:
  case Kind::E5M2: {
    // A random normal FP8 code of magnitude in [1/8, 2): exponent field e
    // (bias 7 / 15), mantissa m, decoded here by the format's definition.
    const bool e4 = kind == Kind::E4M3;
    const int bias = e4 ? 7 : 15, manBits = e4 ? 3 : 2;
    const int e = bias - 3 + int(rng() % 4); // 2^-3 .. 2^0
    const int m = int(rng() % (1u << manBits));
    const bool neg = rng() & 1;
    bits = (neg ? 0x80u : 0u) | uint32_t(e << manBits) | uint32_t(m);
    float mag = std::ldexp(1.0f + float(m) / float(1 << manBits), e - bias);
    return neg ? -mag : mag;
  }
  }
  return 0;
}

/// A physical [batch, rows, cols] operand inside a larger buffer: an offset,
/// padded rows and padded matrices; the values (as float, exact) alongside.
template <typename T> struct Buffer {
  std::vector<T> storage;
  std::vector<float> values; // the logical value of each storage element
  MemRef<T, 3> desc;
  int64_t at(int64_t b, int64_t i, int64_t j) const {
    return desc.offset + b * desc.strides[0] + i * desc.strides[1] + j;
  }
};

template <typename T>
Buffer<T> makeBuffer(Kind kind, int64_t batch, int64_t rows, int64_t cols,
                     bool padded) {
  Buffer<T> buf;
  const int64_t offset = padded ? 5 : 0;
  const int64_t rowStride = cols + (padded ? 3 : 0);
  const int64_t matStride = rows * rowStride + (padded ? 7 : 0);
  const int64_t total = offset + batch * matStride + (padded ? 11 : 0);
  buf.storage.resize(static_cast<size_t>(std::max<int64_t>(total, 1)));
  buf.values.resize(buf.storage.size());
  for (size_t i = 0; i < buf.storage.size(); ++i) {
    uint32_t bits = 0;
    buf.values[i] = randomValue(kind, bits);
    if constexpr (sizeof(T) == 4)
      std::memcpy(&buf.storage[i], &bits, 4);
    else
      buf.storage[i] = static_cast<T>(bits);
  }
  buf.desc.allocated = buf.storage.data();
  buf.desc.aligned = buf.storage.data();
  buf.desc.offset = offset;
  buf.desc.sizes[0] = batch, buf.desc.sizes[1] = rows, buf.desc.sizes[2] = cols;
  buf.desc.strides[0] = matStride, buf.desc.strides[1] = rowStride;
  buf.desc.strides[2] = 1;
  return buf;
}

void call(Kind kind, void *A, void *B, MemRef<float, 3> *C, int64_t tA,
          int64_t tB, int64_t bc, Kind bKind) {
  if (kind == Kind::E4M3 || kind == Kind::E5M2) {
    auto *a = static_cast<MemRef<uint8_t, 3> *>(A);
    auto *b = static_cast<MemRef<uint8_t, 3> *>(B);
    if (kind == Kind::E4M3 && bKind == Kind::E4M3)
      _mlir_ciface_lpc_rt_gemm_f8e4m3_f8e4m3(a, b, C, tA, tB, bc);
    else if (kind == Kind::E4M3)
      _mlir_ciface_lpc_rt_gemm_f8e4m3_f8e5m2(a, b, C, tA, tB, bc);
    else
      _mlir_ciface_lpc_rt_gemm_f8e5m2_f8e4m3(a, b, C, tA, tB, bc);
    return;
  }
  switch (kind) {
  case Kind::F32:
    _mlir_ciface_lpc_rt_gemm_f32(static_cast<MemRef<float, 3> *>(A),
                                 static_cast<MemRef<float, 3> *>(B), C, tA, tB,
                                 bc);
    break;
  case Kind::BF16:
    _mlir_ciface_lpc_rt_gemm_bf16(static_cast<MemRef<uint16_t, 3> *>(A),
                                  static_cast<MemRef<uint16_t, 3> *>(B), C, tA,
                                  tB, bc);
    break;
  case Kind::F16:
    _mlir_ciface_lpc_rt_gemm_f16(static_cast<MemRef<uint16_t, 3> *>(A),
                                 static_cast<MemRef<uint16_t, 3> *>(B), C, tA,
                                 tB, bc);
    break;
  default:
    break;
  }
}
void call(Kind kind, void *A, void *B, MemRef<float, 3> *C, int64_t tA,
          int64_t tB, int64_t bc) {
  call(kind, A, B, C, tA, tB, bc, kind);
}

int gemmsRun = 0;

/// Calls f(b, i, j) for every element of a [batch, M, N] result.
template <typename F>
void forEachElement(int64_t batch, int64_t M, int64_t N, F f) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        f(b, i, j);
}

/// C[b, i, j] in double, and the sum of |a_k w_k| (the accumulation bound's
/// scale).
template <typename T>
double reference(const Buffer<T> &A, const Buffer<T> &B, int64_t b, int64_t i,
                 int64_t j, int64_t K, bool tA, bool tB, bool bc,
                 double &absSum) {
  double ref = 0;
  absSum = 0;
  for (int64_t k = 0; k < K; ++k) {
    double a = tA ? A.values[A.at(b, k, i)] : A.values[A.at(b, i, k)];
    int64_t bb = bc ? 0 : b;
    double w = tB ? B.values[B.at(bb, j, k)] : B.values[B.at(bb, k, j)];
    ref += a * w;
    absSum += std::fabs(a * w);
  }
  return ref;
}

/// One GEMM against the double reference; returns false on a mismatch.
template <typename T>
bool checkGemm(Kind kind, int64_t batch, int64_t M, int64_t N, int64_t K,
               bool tA, bool tB, bool bc, bool padded, Kind bKind) {
  Buffer<T> A = makeBuffer<T>(kind, batch, tA ? K : M, tA ? M : K, padded);
  Buffer<T> B = makeBuffer<T>(bKind, bc ? 1 : batch, tB ? N : K, tB ? K : N,
                              padded);
  Buffer<float> C = makeBuffer<float>(Kind::F32, batch, M, N, padded);
  const std::vector<float> cBefore = C.storage;
  call(kind, &A.desc, &B.desc, &C.desc, tA, tB, bc, bKind);
  ++gemmsRun;

  const double u = std::ldexp(1.0, -24);
  const double tol = (K + 1) * u * 1.001;
  std::vector<bool> isC(C.storage.size(), false);
  int bad = 0;
  forEachElement(batch, M, N, [&](int64_t b, int64_t i, int64_t j) {
        double absSum = 0;
        const double ref = reference(A, B, b, i, j, K, tA, tB, bc, absSum);
        const int64_t idx = C.at(b, i, j);
        isC[idx] = true;
        const double got = C.storage[idx];
        if (!(std::fabs(got - ref) <= tol * absSum) && bad++ < 3)
          CHECK(false,
                "%s batch=%lld M=%lld N=%lld K=%lld tA=%d tB=%d bc=%d "
                "padded=%d: C[%lld,%lld,%lld] = %.9g, reference %.9g "
                "(bound %.3g)",
                kindName(kind), (long long)batch, (long long)M, (long long)N,
                (long long)K, tA, tB, bc, padded, (long long)b, (long long)i,
                (long long)j, got, ref, tol * absSum);
      });
  ++checks;
  for (size_t i = 0; i < C.storage.size(); ++i)
    if (!isC[i] && floatToBits(C.storage[i]) != floatToBits(cBefore[i])) {
      CHECK(false,
            "%s batch=%lld M=%lld N=%lld K=%lld tA=%d tB=%d bc=%d: element "
            "%zu outside C (padding) was written",
            kindName(kind), (long long)batch, (long long)M, (long long)N,
            (long long)K, tA, tB, bc, i);
      ++bad;
      break;
    }
  return bad == 0;
}

bool checkKind(Kind kind, int64_t batch, int64_t M, int64_t N, int64_t K,
               bool tA, bool tB, bool bc, bool padded) {
  if (kind == Kind::F32)
    return checkGemm<float>(kind, batch, M, N, K, tA, tB, bc, padded, kind);
  return checkGemm<uint16_t>(kind, batch, M, N, K, tA, tB, bc, padded, kind);
}

/// The FP8 entry points: every pairing lpc emits (E5M2 x E5M2 has no FP8
/// GEMM), over small and large shapes, transposes, batches, padding.
void testFP8() {
  const Kind pairs[][2] = {{Kind::E4M3, Kind::E4M3},
                           {Kind::E4M3, Kind::E5M2},
                           {Kind::E5M2, Kind::E4M3}};
  const int64_t sizes[] = {1, 17, 64};
  for (const auto &pr : pairs) {
    for (int64_t M : sizes)
      for (int64_t N : sizes)
        for (int64_t K : sizes)
          for (int flags = 0; flags < 8; ++flags)
            checkGemm<uint8_t>(pr[0], flags & 4 ? 3 : 2, M, N, K, flags & 1,
                               flags & 2, flags & 4, (M + N + K + flags) % 2,
                               pr[1]);
    checkGemm<uint8_t>(pr[0], 1, 256, 1024, 784, false, true, false, false,
                       pr[1]);
    checkGemm<uint8_t>(pr[0], 1, 784, 1024, 256, true, false, false, true,
                       pr[1]);
  }
}

/// bf16 nearest to f (ties to even), by comparing the two bf16 neighbours
/// in double (independent of the library's integer rounding).
uint16_t nearestBF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;
  double dl = std::fabs(double(bitsToFloat(lo)) - f);
  double dh = std::fabs(double(bitsToFloat(hi)) - f);
  if (dl < dh || (dl == dh && ((lo >> 16) & 1) == 0))
    return uint16_t(lo >> 16);
  return uint16_t(hi >> 16);
}

/// The dequantizing FP8 entry points (`_scaled`, `_scaled_bf16`): the
/// plain entry's f32 product times (sa * sb), as f32 or rounded to bf16,
/// into padded C.
void testFP8Scaled() {
  using Scaled32 = void (*)(MemRef<uint8_t, 3> *, MemRef<uint8_t, 3> *,
                            MemRef<float, 3> *, lpc::rt::MemRef0F32 *,
                            lpc::rt::MemRef0F32 *, int64_t, int64_t, int64_t);
  using Scaled16 = void (*)(MemRef<uint8_t, 3> *, MemRef<uint8_t, 3> *,
                            MemRef<uint16_t, 3> *, lpc::rt::MemRef0F32 *,
                            lpc::rt::MemRef0F32 *, int64_t, int64_t, int64_t);
  struct Pair {
    Kind a, b;
    Scaled32 f32;
    Scaled16 bf16;
  } pairs[] = {{Kind::E4M3, Kind::E4M3, _mlir_ciface_lpc_rt_gemm_f8e4m3_f8e4m3_scaled,
                _mlir_ciface_lpc_rt_gemm_f8e4m3_f8e4m3_scaled_bf16},
               {Kind::E4M3, Kind::E5M2, _mlir_ciface_lpc_rt_gemm_f8e4m3_f8e5m2_scaled,
                _mlir_ciface_lpc_rt_gemm_f8e4m3_f8e5m2_scaled_bf16},
               {Kind::E5M2, Kind::E4M3, _mlir_ciface_lpc_rt_gemm_f8e5m2_f8e4m3_scaled,
                _mlir_ciface_lpc_rt_gemm_f8e5m2_f8e4m3_scaled_bf16}};
  // Scale inverses as the recipes make them (powers of two and not).
  float scaleValues[] = {0.0625f, 3.7f, 1.0f / 448.0f};
  for (const Pair &p : pairs)
    for (int flags = 0; flags < 4; ++flags) {
      const int64_t batch = 2, M = 33, N = 48, K = 64;
      const bool tA = flags & 1, tB = flags & 2;
      Buffer<uint8_t> a = makeBuffer<uint8_t>(p.a, batch, tA ? K : M, tA ? M : K, false);
      Buffer<uint8_t> b = makeBuffer<uint8_t>(p.b, batch, tB ? N : K, tB ? K : N, true);
      Buffer<float> plain = makeBuffer<float>(Kind::F32, batch, M, N, false);
      Buffer<float> c32 = makeBuffer<float>(Kind::F32, batch, M, N, true);
      Buffer<uint16_t> c16 = makeBuffer<uint16_t>(Kind::BF16, batch, M, N, true);
      float sa = scaleValues[flags % 3], sb = scaleValues[(flags + 1) % 3];
      lpc::rt::MemRef0F32 SA{&sa, &sa, 0}, SB{&sb, &sb, 0};
      call(p.a, &a.desc, &b.desc, &plain.desc, tA, tB, 0, p.b);
      p.f32(&a.desc, &b.desc, &c32.desc, &SA, &SB, tA, tB, 0);
      p.bf16(&a.desc, &b.desc, &c16.desc, &SA, &SB, tA, tB, 0);
      gemmsRun += 3;
      int bad = 0;
      forEachElement(batch, M, N, [&](int64_t bi, int64_t i, int64_t j) {
        float want = plain.storage[size_t(plain.at(bi, i, j))] * (sa * sb);
        if (std::memcmp(&c32.storage[size_t(c32.at(bi, i, j))], &want, 4) != 0 ||
            c16.storage[size_t(c16.at(bi, i, j))] != nearestBF16(want))
          ++bad;
      });
      CHECK(bad == 0, "FP8 scaled (flags %d): %d elements differ from the plain "
            "product times sa * sb", flags, bad);
      // Padding between rows and matrices of C is left alone.
      CHECK(c32.storage[0] == c32.values[0],
            "FP8 scaled wrote before C's offset");
    }
}

/// The `_bias` entry points: the plain entry's f32 product plus bias[j],
/// added in f32, into padded C.
void testBias() {
  for (Kind kind : {Kind::F32, Kind::BF16, Kind::F16})
    for (int flags = 0; flags < 8; ++flags) {
      const int64_t batch = 2, M = 17, N = 40, K = 33;
      const bool tA = flags & 1, tB = flags & 2, bc = flags & 4;
      void *a, *b;
      Buffer<float> a32, b32;
      Buffer<uint16_t> a16, b16;
      if (kind == Kind::F32) {
        a32 = makeBuffer<float>(kind, batch, tA ? K : M, tA ? M : K, true);
        b32 = makeBuffer<float>(kind, bc ? 1 : batch, tB ? N : K, tB ? K : N, false);
        a = &a32.desc, b = &b32.desc;
      } else {
        a16 = makeBuffer<uint16_t>(kind, batch, tA ? K : M, tA ? M : K, true);
        b16 = makeBuffer<uint16_t>(kind, bc ? 1 : batch, tB ? N : K, tB ? K : N, false);
        a = &a16.desc, b = &b16.desc;
      }
      Buffer<float> plain = makeBuffer<float>(Kind::F32, batch, M, N, false);
      Buffer<float> c = makeBuffer<float>(Kind::F32, batch, M, N, true);
      std::vector<float> bias(N);
      for (int64_t j = 0; j < N; ++j) {
        uint32_t bits;
        bias[size_t(j)] = randomValue(Kind::F32, bits);
      }
      MemRef<float, 1> BIAS{bias.data(), bias.data(), 0, {N}, {1}};
      call(kind, a, b, &plain.desc, tA, tB, bc);
      if (kind == Kind::F32)
        _mlir_ciface_lpc_rt_gemm_f32_bias(&a32.desc, &b32.desc, &c.desc, &BIAS, tA, tB, bc);
      else if (kind == Kind::BF16)
        _mlir_ciface_lpc_rt_gemm_bf16_bias(&a16.desc, &b16.desc, &c.desc, &BIAS, tA, tB, bc);
      else
        _mlir_ciface_lpc_rt_gemm_f16_bias(&a16.desc, &b16.desc, &c.desc, &BIAS, tA, tB, bc);
      gemmsRun += 2;
      int bad = 0;
      forEachElement(batch, M, N, [&](int64_t bi, int64_t i, int64_t j) {
        float want = plain.storage[size_t(plain.at(bi, i, j))] + bias[size_t(j)];
        if (std::memcmp(&c.storage[size_t(c.at(bi, i, j))], &want, 4) != 0)
          ++bad;
      });
      CHECK(bad == 0, "bias (kind %d, flags %d): %d elements differ from the "
            "plain product plus bias", int(kind), flags, bad);
    }
}

void testGrid() {
  const int64_t small[] = {1, 3, 17, 100};
  for (Kind kind : {Kind::F32, Kind::BF16, Kind::F16})
    for (int64_t M : small)
      for (int64_t N : small)
        for (int64_t K : small)
          for (int flags = 0; flags < 8; ++flags) {
            const bool tA = flags & 1, tB = flags & 2, bc = flags & 4;
            // batch 1 and 3 (with/without broadcast), dense and padded
            checkKind(kind, 1, M, N, K, tA, tB, bc, (M + N + K + flags) % 2);
            checkKind(kind, 3, M, N, K, tA, tB, bc, (M + N + K + flags) % 2);
            checkKind(kind, 2, M, N, K, tA, tB, bc,
                      !((M + N + K + flags) % 2));
          }
}

void testLarge() {
  struct Shape {
    int64_t batch, M, N, K;
  } shapes[] = {{1, 256, 130, 300}, {2, 129, 257, 64}, {1, 64, 512, 784},
                {4, 128, 128, 64},  {1, 33, 1024, 10}, {1, 512, 17, 255}};
  for (Kind kind : {Kind::F32, Kind::BF16, Kind::F16})
    for (const Shape &s : shapes)
      for (int flags = 0; flags < 8; ++flags)
        checkKind(kind, s.batch, s.M, s.N, s.K, flags & 1, flags & 2,
                  flags & 4, flags % 3 == 0);
}

/// Empty problems: nothing happens for batch/M/N = 0; K = 0 zeroes C.
void testEmpty() {
  for (Kind kind : {Kind::F32, Kind::BF16, Kind::F16}) {
    Buffer<uint16_t> a16 = makeBuffer<uint16_t>(kind, 2, 3, 0, false);
    Buffer<uint16_t> b16 = makeBuffer<uint16_t>(kind, 2, 0, 4, false);
    Buffer<float> a32 = makeBuffer<float>(Kind::F32, 2, 3, 0, false);
    Buffer<float> b32 = makeBuffer<float>(Kind::F32, 2, 0, 4, false);
    Buffer<float> C = makeBuffer<float>(Kind::F32, 2, 3, 4, true);
    void *A = kind == Kind::F32 ? (void *)&a32.desc : (void *)&a16.desc;
    void *B = kind == Kind::F32 ? (void *)&b32.desc : (void *)&b16.desc;
    std::vector<float> before = C.storage;
    call(kind, A, B, &C.desc, 0, 0, 0);
    bool ok = true;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j) {
          ok &= C.storage[C.at(b, i, j)] == 0.0f;
          before[C.at(b, i, j)] = 0.0f;
        }
    CHECK(ok && before == C.storage, "%s: K = 0 must zero C and only C",
          kindName(kind));

    Buffer<float> C0 = makeBuffer<float>(Kind::F32, 2, 0, 4, true);
    Buffer<float> a0 = makeBuffer<float>(Kind::F32, 2, 0, 5, false);
    Buffer<uint16_t> a0h = makeBuffer<uint16_t>(kind, 2, 0, 5, false);
    Buffer<float> bb = makeBuffer<float>(Kind::F32, 2, 5, 4, false);
    Buffer<uint16_t> bbh = makeBuffer<uint16_t>(kind, 2, 5, 4, false);
    before = C0.storage;
    call(kind, kind == Kind::F32 ? (void *)&a0.desc : (void *)&a0h.desc,
         kind == Kind::F32 ? (void *)&bb.desc : (void *)&bbh.desc, &C0.desc, 0,
         0, 0);
    CHECK(before == C0.storage, "%s: M = 0 must not write", kindName(kind));
  }
}

/// Every binary16 pattern through the f16 entry point: C = A x [1.0].
void testAllHalfPatterns() {
  std::vector<uint16_t> a(65536);
  for (uint32_t i = 0; i < 65536; ++i)
    a[i] = static_cast<uint16_t>(i);
  uint16_t one = 0x3c00;
  std::vector<float> c(65536, -7.0f);
  MemRef<uint16_t, 3> A{a.data(), a.data(), 0, {1, 65536, 1}, {65536, 1, 1}};
  MemRef<uint16_t, 3> B{&one, &one, 0, {1, 1, 1}, {1, 1, 1}};
  MemRef<float, 3> C{c.data(), c.data(), 0, {1, 65536, 1}, {65536, 1, 1}};
  _mlir_ciface_lpc_rt_gemm_f16(&A, &B, &C, 0, 0, 0);
  int bad = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const float want = refHalf(static_cast<uint16_t>(i));
    const bool ok = std::isnan(want) ? std::isnan(c[i]) : c[i] == want;
    if (!ok && bad++ < 3)
      CHECK(false, "f16 pattern 0x%04x: got %.9g, want %.9g", i, c[i], want);
  }
  CHECK(bad == 0, "%d of 65536 f16 patterns wrong", bad);
}

/// Two threads at once, each with its own shapes.
void testThreads() {
  bool ok[2] = {true, true};
  std::thread t0([&] {
    for (int r = 0; r < 20; ++r)
      ok[0] &= checkKind(Kind::F32, 2, 37, 41, 43, r & 1, r & 2, false, true);
  });
  std::thread t1([&] {
    for (int r = 0; r < 20; ++r)
      ok[1] &= checkKind(Kind::BF16, 3, 29, 31, 57, r & 1, r & 2, r & 4, true);
  });
  t0.join();
  t1.join();
  CHECK(ok[0] && ok[1], "concurrent calls");
}

/// Runs `fn` in a child; it must abort and print `expect` to stderr.
template <typename Fn> void expectAbort(const char *expect, Fn fn) {
  const std::string err = abortMessage(expect, fn);
  CHECK(err.find(expect) != std::string::npos &&
            err.find("lpc runtime: lpc_rt_gemm_") != std::string::npos,
        "abort message lacks \"%s\":\n%s", expect, err.c_str());
}

void testInvalid() {
  auto A = makeBuffer<float>(Kind::F32, 2, 4, 5, false);
  auto B = makeBuffer<float>(Kind::F32, 2, 5, 6, false);
  auto C = makeBuffer<float>(Kind::F32, 2, 4, 6, false);
  auto Ah = makeBuffer<uint16_t>(Kind::BF16, 2, 4, 5, false);
  auto Bh = makeBuffer<uint16_t>(Kind::BF16, 2, 5, 6, false);
  // Sanity: the valid call does not abort.
  _mlir_ciface_lpc_rt_gemm_f32(&A.desc, &B.desc, &C.desc, 0, 0, 0);

  expectAbort("the last dimension must be contiguous", [&] {
    auto a = A.desc;
    a.strides[2] = 2;
    _mlir_ciface_lpc_rt_gemm_f32(&a, &B.desc, &C.desc, 0, 0, 0);
  });
  expectAbort("rows overlap", [&] {
    auto c = C.desc;
    c.strides[1] = 5;
    _mlir_ciface_lpc_rt_gemm_f32(&A.desc, &B.desc, &c, 0, 0, 0);
  });
  expectAbort("matrices overlap", [&] {
    auto b = Bh.desc;
    b.strides[0] = 6;
    _mlir_ciface_lpc_rt_gemm_bf16(&Ah.desc, &b, &C.desc, 0, 0, 0);
  });
  expectAbort("inner dimensions differ: op(A) has 5 columns, op(B) has 7", [&] {
    auto b = makeBuffer<float>(Kind::F32, 2, 7, 6, false);
    _mlir_ciface_lpc_rt_gemm_f32(&A.desc, &b.desc, &C.desc, 0, 0, 0);
  });
  expectAbort("op(A) has 5 rows, C has 4", [&] {
    _mlir_ciface_lpc_rt_gemm_f32(&A.desc, &B.desc, &C.desc, 1, 0, 0);
  });
  expectAbort("B has 2 matrices, expected 1 (broadcastB)", [&] {
    _mlir_ciface_lpc_rt_gemm_bf16(&Ah.desc, &Bh.desc, &C.desc, 0, 0, 1);
  });
  expectAbort("op(B) has 5 columns, C has 6", [&] {
    _mlir_ciface_lpc_rt_gemm_f16(&Ah.desc, &Bh.desc, &C.desc, 0, 1, 0);
  });
  expectAbort("must be 0 or 1", [&] {
    _mlir_ciface_lpc_rt_gemm_f32(&A.desc, &B.desc, &C.desc, 0, 2, 0);
  });
  expectAbort("negative offset", [&] {
    auto c = C.desc;
    c.offset = -1;
    _mlir_ciface_lpc_rt_gemm_f32(&A.desc, &B.desc, &c, 0, 0, 0);
  });
  expectAbort("C overlaps an operand", [&] {
    // C as a view of A's storage (the call aborts before writing).
    MemRef<float, 3> c{A.storage.data(), A.storage.data(), 2, {2, 4, 6},
                       {24, 6, 1}};
    _mlir_ciface_lpc_rt_gemm_f32(&A.desc, &B.desc, &c, 0, 0, 0);
  });
  expectAbort("A is a null descriptor", [&] {
    _mlir_ciface_lpc_rt_gemm_f32(nullptr, &B.desc, &C.desc, 0, 0, 0);
  });
}

/// setGemmThreads: one thread, then back to the default (2 here or more).
void testThreadCount() {
  const int def = lpc::rt::gemmThreads();
  CHECK(def >= 1, "default gemm threads %d", def);
  lpc::rt::setGemmThreads(1);
  CHECK(lpc::rt::gemmThreads() == 1, "setGemmThreads(1)");
  bool ok = true;
  for (int flags = 0; flags < 8; ++flags) {
    ok &= checkKind(Kind::F32, 2, 100, 130, 77, flags & 1, flags & 2, flags & 4,
                    flags & 1);
    ok &= checkKind(Kind::BF16, 2, 100, 130, 77, flags & 1, flags & 2,
                    flags & 4, flags & 2);
  }
  lpc::rt::setGemmThreads(0);
  CHECK(lpc::rt::gemmThreads() == def, "setGemmThreads(0) restores %d", def);
  for (int flags = 0; flags < 8; ++flags)
    ok &= checkKind(Kind::F32, 2, 100, 130, 77, flags & 1, flags & 2,
                    flags & 4, flags & 1);
  CHECK(ok, "GEMMs with 1 thread and back");
}

/// C and the operands as interleaved column slices of one buffer (legal: no
/// element is shared), then the same with one shared column (must abort).
void testInterleaved() {
  // One f32 buffer of rows [A: 5 | C: 6 | B-part unused], row stride 16.
  const int64_t M = 4, K = 5, N = 6, ld = 16;
  std::vector<float> buf(M * ld);
  std::vector<float> b(K * N);
  for (size_t i = 0; i < buf.size(); ++i)
    buf[i] = 0.25f * static_cast<float>(i % 7) + 0.5f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = 0.125f * static_cast<float>(i % 5) - 0.25f;
  const std::vector<float> orig = buf;
  MemRef<float, 3> A{buf.data(), buf.data(), 0, {1, M, K}, {M * ld, ld, 1}};
  MemRef<float, 3> B{b.data(), b.data(), 0, {1, K, N}, {K * N, N, 1}};
  MemRef<float, 3> C{buf.data(), buf.data(), K, {1, M, N}, {M * ld, ld, 1}};
  _mlir_ciface_lpc_rt_gemm_f32(&A, &B, &C, 0, 0, 0);
  bool ok = true;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k)
        ref += double(orig[i * ld + k]) * b[k * N + j];
      ok &= std::fabs(buf[i * ld + K + j] - ref) <= 1e-5 * (1 + std::fabs(ref));
    }
    for (int64_t j = 0; j < ld; ++j)
      if (j < K || j >= K + N)
        ok &= buf[i * ld + j] == orig[i * ld + j];
  }
  CHECK(ok, "C interleaved with A in one buffer");
  expectAbort("C overlaps an operand", [&] {
    MemRef<float, 3> c = C;
    c.offset = K - 1; // shares A's last column
    _mlir_ciface_lpc_rt_gemm_f32(&A, &B, &c, 0, 0, 0);
  });
}

/// bf16 x bf16 -> bf16 C: within the f32 accumulation bound plus half a
/// bf16 ulp of the double reference, equal to the f32 entry point's C
/// rounded to nearest even (the same accumulation, rounded once), and
/// nothing outside C written.
bool checkBf16Out(int64_t batch, int64_t M, int64_t N, int64_t K, bool tA,
                  bool tB, bool bc, bool padded) {
  Buffer<uint16_t> A =
      makeBuffer<uint16_t>(Kind::BF16, batch, tA ? K : M, tA ? M : K, padded);
  Buffer<uint16_t> B = makeBuffer<uint16_t>(Kind::BF16, bc ? 1 : batch,
                                            tB ? N : K, tB ? K : N, padded);
  Buffer<uint16_t> C = makeBuffer<uint16_t>(Kind::BF16, batch, M, N, padded);
  Buffer<float> C32 = makeBuffer<float>(Kind::F32, batch, M, N, padded);
  const std::vector<uint16_t> cBefore = C.storage;
  _mlir_ciface_lpc_rt_gemm_bf16_bf16(&A.desc, &B.desc, &C.desc, tA, tB, bc);
  _mlir_ciface_lpc_rt_gemm_bf16(&A.desc, &B.desc, &C32.desc, tA, tB, bc);
  gemmsRun += 2;
  const double tol = (K + 1) * std::ldexp(1.0, -24) * 1.001;
  std::vector<bool> isC(C.storage.size(), false);
  int bad = 0, notRounded = 0;
  forEachElement(batch, M, N, [&](int64_t b, int64_t i, int64_t j) {
        double absSum = 0;
        const double ref = reference(A, B, b, i, j, K, tA, tB, bc, absSum);
        const int64_t idx = C.at(b, i, j);
        isC[idx] = true;
        uint32_t bits = static_cast<uint32_t>(C.storage[idx]) << 16;
        float got;
        std::memcpy(&got, &bits, 4);
        const double bound = tol * absSum + std::ldexp(std::fabs(ref) + tol * absSum, -8);
        if (!(std::fabs(got - ref) <= bound) && bad++ < 3)
          CHECK(false,
                "bf16->bf16 batch=%lld M=%lld N=%lld K=%lld tA=%d tB=%d "
                "bc=%d padded=%d: C[%lld,%lld,%lld] = %.9g, reference %.9g "
                "(bound %.3g)",
                (long long)batch, (long long)M, (long long)N, (long long)K, tA,
                tB, bc, padded, (long long)b, (long long)i, (long long)j, got,
                ref, bound);
        uint32_t f = floatToBits(C32.storage[C32.at(b, i, j)]);
        uint16_t rne = static_cast<uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
        if (C.storage[idx] != rne)
          ++notRounded;
      });
  CHECK(notRounded == 0,
        "bf16->bf16 batch=%lld M=%lld N=%lld K=%lld tA=%d tB=%d bc=%d: %d "
        "elements differ from the f32 entry point's C rounded to bf16",
        (long long)batch, (long long)M, (long long)N, (long long)K, tA, tB, bc,
        notRounded);
  for (size_t i = 0; i < C.storage.size(); ++i)
    if (!isC[i] && C.storage[i] != cBefore[i]) {
      CHECK(false, "bf16->bf16: element %zu outside C (padding) was written",
            i);
      ++bad;
      break;
    }
  return bad == 0 && notRounded == 0;
}

void testBf16Out() {
  const int64_t small[] = {1, 3, 17, 100};
  for (int64_t M : small)
    for (int64_t N : small)
      for (int64_t K : small)
        for (int flags = 0; flags < 8; ++flags)
          checkBf16Out(flags % 3 ? 2 : 1, M, N, K, flags & 1, flags & 2,
                       flags & 4, (M + N + K + flags) % 2);
  struct Shape {
    int64_t batch, M, N, K;
  } shapes[] = {{1, 256, 130, 300}, {4, 128, 128, 64}, {1, 512, 384, 512}};
  for (const Shape &sh : shapes)
    for (int flags = 0; flags < 8; ++flags)
      checkBf16Out(sh.batch, sh.M, sh.N, sh.K, flags & 1, flags & 2, flags & 4,
                   flags % 3 == 0);
}

/// Around the shapes where oneDNN 2.6.3's AMX bf16 matmul goes wrong with
/// more than one thread (N in 49..63 and no multiple of 16; K with a tail),
/// which Gemm.cpp gives to the AVX-512 BF16 kernel instead, and the standard
/// shapes on either side that keep AMX. On a host without AMX these are
/// more shapes for the same kernels.
void testAmxEdges() {
  for (int64_t N : {48, 49, 52, 56, 60, 63, 64, 69, 80})
    for (int64_t K : {32, 63, 64, 96})
      for (int64_t M : {1, 15, 32, 64})
        for (int flags = 0; flags < 8; ++flags) {
          const bool tA = flags & 1, tB = flags & 2, bc = flags & 4;
          checkKind(Kind::BF16, bc ? 2 : 1, M, N, K, tA, tB, bc, flags % 3);
          checkBf16Out(1, M, N, K, tA, tB, false, flags % 3 == 0);
        }
}

void testSymbols() {
  size_t n = 0;
  const lpc::rt::GemmSymbol *syms = lpc::rt::gemmSymbols(&n);
  CHECK(n == 34, "gemmSymbols: %zu entries", n);
  const char *names[] = {"_mlir_ciface_lpc_rt_gemm_f32",
                         "_mlir_ciface_lpc_rt_gemm_bf16",
                         "_mlir_ciface_lpc_rt_gemm_f16",
                         "_mlir_ciface_lpc_rt_gemm_bf16_bf16",
                         "_mlir_ciface_lpc_rt_gemm_f8e4m3_f8e4m3",
                         "_mlir_ciface_lpc_rt_gemm_f8e4m3_f8e5m2",
                         "_mlir_ciface_lpc_rt_gemm_f8e5m2_f8e4m3"};
  void *addrs[] = {(void *)&_mlir_ciface_lpc_rt_gemm_f32,
                   (void *)&_mlir_ciface_lpc_rt_gemm_bf16,
                   (void *)&_mlir_ciface_lpc_rt_gemm_f16,
                   (void *)&_mlir_ciface_lpc_rt_gemm_bf16_bf16,
                   (void *)&_mlir_ciface_lpc_rt_gemm_f8e4m3_f8e4m3,
                   (void *)&_mlir_ciface_lpc_rt_gemm_f8e4m3_f8e5m2,
                   (void *)&_mlir_ciface_lpc_rt_gemm_f8e5m2_f8e4m3};
  for (size_t i = 0; i < 7 && i < n; ++i)
    CHECK(std::strcmp(syms[i].name, names[i]) == 0 && syms[i].address == addrs[i],
          "gemmSymbols[%zu] = %s", i, syms[i].name);
  // The fused attention entry points (Attention.h), after the GEMMs.
  const char *attention[] = {"_mlir_ciface_lpc_rt_attention_fwd_f32",
                             "_mlir_ciface_lpc_rt_attention_fwd_f32_mask",
                             "_mlir_ciface_lpc_rt_attention_bwd_f32",
                             "_mlir_ciface_lpc_rt_attention_bwd_f32_mask",
                             "_mlir_ciface_lpc_rt_attention_fwd_bf16",
                             "_mlir_ciface_lpc_rt_attention_fwd_bf16_mask",
                             "_mlir_ciface_lpc_rt_attention_bwd_bf16",
                             "_mlir_ciface_lpc_rt_attention_bwd_bf16_mask",
                             "_mlir_ciface_lpc_rt_attention_fwd_f16",
                             "_mlir_ciface_lpc_rt_attention_fwd_f16_mask",
                             "_mlir_ciface_lpc_rt_attention_bwd_f16",
                             "_mlir_ciface_lpc_rt_attention_bwd_f16_mask"};
  void *attentionAddrs[] = {
      (void *)&_mlir_ciface_lpc_rt_attention_fwd_f32,
      (void *)&_mlir_ciface_lpc_rt_attention_fwd_f32_mask,
      (void *)&_mlir_ciface_lpc_rt_attention_bwd_f32,
      (void *)&_mlir_ciface_lpc_rt_attention_bwd_f32_mask,
      (void *)&_mlir_ciface_lpc_rt_attention_fwd_bf16,
      (void *)&_mlir_ciface_lpc_rt_attention_fwd_bf16_mask,
      (void *)&_mlir_ciface_lpc_rt_attention_bwd_bf16,
      (void *)&_mlir_ciface_lpc_rt_attention_bwd_bf16_mask,
      (void *)&_mlir_ciface_lpc_rt_attention_fwd_f16,
      (void *)&_mlir_ciface_lpc_rt_attention_fwd_f16_mask,
      (void *)&_mlir_ciface_lpc_rt_attention_bwd_f16,
      (void *)&_mlir_ciface_lpc_rt_attention_bwd_f16_mask};
  for (size_t i = 0; i < 12 && 16 + i < n; ++i)
    CHECK(std::strcmp(syms[16 + i].name, attention[i]) == 0 &&
              syms[16 + i].address == attentionAddrs[i],
          "gemmSymbols[%zu] = %s, expected %s", 16 + i, syms[16 + i].name,
          attention[i]);
  // The grouped GEMMs (GroupedGemm.h), last.
  const char *grouped[] = {"_mlir_ciface_lpc_rt_grouped_gemm_f32",
                           "_mlir_ciface_lpc_rt_grouped_gemm_bf16",
                           "_mlir_ciface_lpc_rt_grouped_gemm_f16",
                           "_mlir_ciface_lpc_rt_grouped_gemm_wgrad_f32",
                           "_mlir_ciface_lpc_rt_grouped_gemm_wgrad_bf16",
                           "_mlir_ciface_lpc_rt_grouped_gemm_wgrad_f16"};
  void *groupedAddrs[] = {(void *)&_mlir_ciface_lpc_rt_grouped_gemm_f32,
                          (void *)&_mlir_ciface_lpc_rt_grouped_gemm_bf16,
                          (void *)&_mlir_ciface_lpc_rt_grouped_gemm_f16,
                          (void *)&_mlir_ciface_lpc_rt_grouped_gemm_wgrad_f32,
                          (void *)&_mlir_ciface_lpc_rt_grouped_gemm_wgrad_bf16,
                          (void *)&_mlir_ciface_lpc_rt_grouped_gemm_wgrad_f16};
  for (size_t i = 0; i < 6 && 28 + i < n; ++i)
    CHECK(std::strcmp(syms[28 + i].name, grouped[i]) == 0 &&
              syms[28 + i].address == groupedAddrs[i],
          "gemmSymbols[%zu] = %s", 28 + i, syms[28 + i].name);
}

} // namespace

int main() {
  testSymbols();
  testInvalid(); // first: fork before oneDNN starts its threads
  testInterleaved();
  testGrid();
  testLarge();
  testFP8();
  testFP8Scaled();
  testBias();
  testBf16Out();
  testAmxEdges();
  testEmpty();
  testAllHalfPatterns();
  testThreads();
  testThreadCount();
  std::printf("lpc gemm test: %d GEMMs checked, %d checks, %d failed\n",
              gemmsRun, checks, failures);
  return failures ? 1 : 0;
}
