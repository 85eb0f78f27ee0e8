//===- Attention.cpp - fused attention (online softmax) on the CPU --------===//
//
// The entry points of include/lpc/Runtime/Attention.h. Each call runs in
// three steps, each a parallel loop on the runtime's pool:
//
//  1. pack: q, k, v (and dout, o, lse for the backward) are widened to f32
//     and copied into contiguous, zero-padded tiles, row-major and, where a
//     product needs it, transposed. This is where arbitrary strides and the
//     element type are dealt with; what follows sees only dense f32 tiles
//     whose row lengths are multiples of 16.
//  2. compute, on tiles of kBr queries x kBc keys:
//     forward, one task per (batch*head, query tile): S = Q K^T for one key
//     tile at a time, the online softmax (running max m and sum l per row,
//     the accumulator O rescaled when m grows), O += P V; key tiles wholly
//     above the causal diagonal are never visited.
//     backward, one task per (batch*head, group of key tiles): for each key
//     tile, over the query tiles that see it, S^T = K Q^T, P^T = exp(S^T -
//     lse), dP^T = V dO^T, dS^T = P^T (dP^T - D), dV += P^T dO, dK += dS^T Q
//     and dQ_g += dS K into the group's own dQ buffer. Five tile products,
//     no atomics.
//  3. store (backward: after summing the groups' dQ in group order): the f32
//     results rounded to the output type through the outputs' strides.
//
// What a task computes and in which order depends on the shapes only (the
// number of key-tile groups too), never on the thread count or on which
// thread runs it, so results are bit-identical for any thread count.
//
// The tile kernels (step 2's body) are in AttentionTiles.cpp, in three
// builds the CPU picks from at run time (generic x86-64, AVX2+FMA, and on
// CPUs with AVX512-BF16, for the bf16 entry points, AVX2+FMA with the
// products of two bf16 inputs as vdpbf16ps products on pairs of bf16 the
// pack step writes). The descriptor checks are in AttentionCheck.cpp; what
// the three files share, in AttentionInternal.h. This file is ordinary
// code: element types, scratch, packing, scheduling, stores.
//
//===----------------------------------------------------------------------===//

#include "AttentionInternal.h"
#include "lpc/Runtime/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using lpc::rt::MemRef;
using namespace lpc::rt::attention;

namespace {

/// Backward: the key tiles of a (batch, head) are split into groups, one
/// task each, so that there are about this many tasks even when batch*head
/// is small. Depends on the shapes only (results must not depend on the
/// thread count); each group adds a dQ buffer of Sq x D floats, capped by
/// kMaxGroupBytes in all.
constexpr int64_t kTargetTasks = 32;
constexpr int64_t kMaxGroupBytes = int64_t(64) << 20;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

float bitsToFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
uint32_t floatToBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

/// IEEE binary16 -> binary32, exact (integer code: independent of FTZ/DAZ).
float f16ToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) // inf, NaN (payload kept)
    return bitsToFloat(sign | 0x7f800000u | (man << 13));
  if (exp != 0)
    return bitsToFloat(sign | ((exp + 112) << 23) | (man << 13));
  // Zero or subnormal: man * 2^-24, exact in f32 (a normal f32).
  const float mag = static_cast<float>(man) * 0x1p-24f;
  return sign ? -mag : mag;
}

/// binary32 -> binary16, to nearest even; overflow to infinity, subnormals
/// kept, NaN stays NaN (quiet).
uint16_t floatToF16(float f) {
  const uint32_t x = floatToBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN
    return sign | 0x7e00u | static_cast<uint16_t>((a >> 13) & 0x1ffu);
  if (a >= 0x477ff000u) // >= 65520 (half-way above 65504, the largest): inf
    return sign | 0x7c00u;
  if (a >= 0x38800000u) { // >= 2^-14: normal; rebias, round the 13 low bits
    const uint32_t r = a - (uint32_t(112) << 23);
    return sign | static_cast<uint16_t>((r + 0xfffu + ((r >> 13) & 1u)) >> 13);
  }
  const uint32_t e = a >> 23;
  if (e < 102) // below 2^-25: rounds to zero (2^-25 itself is a tie to 0)
    return sign;
  // Subnormal: the value in units of 2^-24 is man24 >> (126 - e), rounded.
  const uint32_t man = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - e; // 14 .. 24
  uint32_t r = man >> shift;
  const uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (r & 1u)))
    ++r; // may carry into the smallest normal, 0x400: still right
  return sign | static_cast<uint16_t>(r);
}

/// binary32 -> bfloat16, to nearest even; NaN stays NaN (quiet).
uint16_t floatToBf16(float f) {
  const uint32_t x = floatToBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

#if defined(__x86_64__)
/// f16 row widening with F16C (vcvtph2ps is exact, subnormals included).
__attribute__((target("avx,f16c"))) void widenF16C(const uint16_t *src,
                                                  int64_t n, float *dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i *>(src + i))));
  for (; i < n; ++i)
    dst[i] = f16ToFloat(src[i]);
}
bool haveF16C() {
  static const bool yes = __builtin_cpu_supports("f16c");
  return yes;
}
#endif

struct F32 {
  using T = float;
  static float widen(float x) { return x; }
  static float narrow(float x) { return x; }
};
struct BF16 {
  using T = uint16_t;
  static float widen(uint16_t x) { return bitsToFloat(uint32_t(x) << 16); }
  static uint16_t narrow(float x) { return floatToBf16(x); }
};
struct F16 {
  using T = uint16_t;
  static float widen(uint16_t x) { return f16ToFloat(x); }
  static uint16_t narrow(float x) { return floatToF16(x); }
};

/// dst[0, n) = widened src[i * stride].
template <class E>
void widenRow(const typename E::T *src, int64_t stride, int64_t n,
              float *dst) {
#if defined(__x86_64__)
  if constexpr (std::is_same_v<E, F16>)
    if (stride == 1 && haveF16C())
      return widenF16C(src, n, dst);
#endif
  for (int64_t i = 0; i < n; ++i)
    dst[i] = E::widen(src[i * stride]);
}

//===----------------------------------------------------------------------===//
// Scratch memory
//===----------------------------------------------------------------------===//

/// A 64-byte aligned float array (uninitialized).
class Floats {
public:
  Floats() = default;
  explicit Floats(int64_t n) { reset(n); }
  ~Floats() { std::free(p_); }
  Floats(const Floats &) = delete;
  Floats &operator=(const Floats &) = delete;
  void reset(int64_t n) {
    std::free(p_);
    p_ = nullptr;
    if (n <= 0)
      return;
    const size_t bytes = static_cast<size_t>(roundUp(n * 4, 64));
    p_ = static_cast<float *>(std::aligned_alloc(64, bytes));
    if (!p_) {
      std::fprintf(stderr,
                   "lpc runtime: attention: out of memory (%zu bytes of "
                   "scratch)\n",
                   bytes);
      std::abort();
    }
  }
  float *get() const { return p_; }

private:
  float *p_ = nullptr;
};

/// The packed operands of one call, carved out of one block that the
/// calling thread keeps between calls (grown when a call needs more, never
/// shrunk; freed when the thread exits). The block is several MB for a
/// transformer's attention, and fresh memory for every call spent ~20% of
/// the backward in page faults.
class Arena {
public:
  /// Starts a call: `n` floats in all (sum of take()'s sizes, each rounded
  /// up to 16 floats).
  void reserve(int64_t n) {
    if (n > capacity_) {
      block_.reset(n);
      capacity_ = n;
    }
    used_ = 0;
  }
  /// The next `n` floats (64-byte aligned).
  float *take(int64_t n) {
    float *p = block_.get() + used_;
    used_ += roundUp(n, 16);
    return p;
  }
  static int64_t size(std::initializer_list<int64_t> sizes) {
    int64_t total = 0;
    for (int64_t n : sizes)
      total += roundUp(n, 16);
    return total;
  }

private:
  Floats block_;
  int64_t capacity_ = 0, used_ = 0;
};

thread_local Arena arena;

//===----------------------------------------------------------------------===//
// Views of the caller's operands, and packing
//===----------------------------------------------------------------------===//

/// A rank-4 [B, H, S, X] operand: aligned + offset and the strides.
template <typename T> struct View4 {
  T *data;
  int64_t s[4];
  explicit View4(const MemRef<T, 4> *m) : data(m->aligned + m->offset) {
    for (int d = 0; d < 4; ++d)
      s[d] = m->strides[d];
  }
  T *row(int64_t bh, int64_t H, int64_t i) const {
    return data + (bh / H) * s[0] + (bh % H) * s[1] + i * s[2];
  }
};

struct View3F {
  float *data;
  int64_t s[3];
  explicit View3F(const MemRef<float, 3> *m) : data(m->aligned + m->offset) {
    for (int d = 0; d < 3; ++d)
      s[d] = m->strides[d];
  }
  float &at(int64_t bh, int64_t H, int64_t i) const {
    return data[(bh / H) * s[0] + (bh % H) * s[1] + i * s[2]];
  }
};

/// Rows [r0, r0 + n) of `src` (row length `len`) widened into `rows`
/// (row-major, leading dimension `ld`, zero-padded to `ld` and to `pad`
/// rows) and, if `cols` is not null, transposed into `cols` ([len][pad]).
template <class E>
void packRows(const View4<typename E::T> &src, int64_t bh, int64_t H,
              int64_t r0, int64_t n, int64_t len, int64_t pad, float *rows,
              int64_t ld, float *cols) {
  for (int64_t r = 0; r < n; ++r) {
    float *dst = rows + r * ld;
    widenRow<E>(src.row(bh, H, r0 + r), src.s[3], len, dst);
    zero(dst + len, ld - len);
  }
  zero(rows + n * ld, (pad - n) * ld);
  if (cols) // from the rows just written (in cache; zero padding included)
    for (int64_t d = 0; d < len; ++d) {
      float *col = cols + d * pad;
      for (int64_t r = 0; r < pad; ++r)
        col[r] = rows[r * ld + d];
    }
}

/// `n` f32 values times `mul`, rounded to E, to dst[i * stride].
template <class E>
void storeRow(typename E::T *dst, int64_t stride, const float *src, int64_t n,
              float mul) {
  for (int64_t i = 0; i < n; ++i)
    dst[i * stride] = E::narrow(src[i] * mul);
}

/// Two bf16 values (f32 holding bf16 values exactly) as one 32-bit lane of a
/// bf16 dot product: the first in the low half.
inline uint32_t bf16Pair(const float *x) {
  return (floatToBits(x[0]) >> 16) | (floatToBits(x[1]) & 0xffff0000u);
}

/// The bf16 pairs of `rows` ([n][ld] f32 of bf16 values, ld even) for the
/// AVX512-BF16 products: as rows (out[r * ld/2 + kp]: a product's left
/// operand, one pair broadcast per row) or, with `columns`, transposed
/// (out[kp * n + r]: the right operand, 16 rows' pairs in one register).
void packPairs(const float *rows, int64_t n, int64_t ld, uint32_t *out,
               bool columns) {
  const int64_t pairs = ld / 2;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t kp = 0; kp < pairs; ++kp)
      out[columns ? kp * n + r : r * pairs + kp] =
          bf16Pair(rows + r * ld + 2 * kp);
}

/// The bf16 pairs of rows 2t and 2t + 1 of `rows` ([n][ld] f32 of bf16
/// values, n even) for t < n/2: out[t * ld + c], a product's right operand
/// whose inner dimension is the rows (P V, P^T dO, dS^T Q, dS K).
void packRowPairs(const float *rows, int64_t n, int64_t ld, uint32_t *out) {
  for (int64_t t = 0; t < n / 2; ++t)
    for (int64_t c = 0; c < ld; ++c) {
      const float pair[2] = {rows[2 * t * ld + c], rows[(2 * t + 1) * ld + c]};
      out[t * ld + c] = bf16Pair(pair);
    }
}

/// Whether E's calls run (and pack the operands of) the dot-product kernel.
template <class E> bool usesBf16Dot(int kind) {
  return kind == 3 && std::is_same_v<E, BF16>;
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

template <class E> struct FwdJob {
  using T = typename E::T;
  const Problem &p;
  View4<T> q, k, v, o;
  View3F lse;
  // Packed, every (batch, head) one after the other; Q, Kt and V are null
  // with the dot-product kernel (its Qp, Kp and Vk replace them).
  float *Q, *Kt, *V;
  FwdTileFn tile;
  // Pairs (kernel 3), else null.
  uint32_t *Qp = nullptr, *Kp = nullptr, *Vk = nullptr;

  FwdPacked packed(int64_t bh) const {
    FwdPacked in{Q ? Q + bh * p.SqP * p.Dp : nullptr,
                 Kt ? Kt + bh * p.nKT * p.D * kBc : nullptr,
                 V ? V + bh * p.SkvP * p.Dvp : nullptr};
    if (Qp) {
      in.Qp = Qp + bh * p.SqP * (p.Dp / 2);
      in.Kp = Kp + bh * p.nKT * (p.Dp / 2) * kBc;
      in.Vk = Vk + bh * (p.SkvP / 2) * p.Dvp;
    }
    return in;
  }
};

/// Task t of (batch*head) x (query tiles + key tiles): pack one tile.
template <class E> void fwdPack(void *ctx, int64_t begin, int64_t end) {
  const FwdJob<E> &job = *static_cast<const FwdJob<E> *>(ctx);
  const Problem &p = job.p;
  const int64_t per = p.nQT + p.nKT;
  // A tile's f32 rows, transient.
  Floats rows(std::max(kBr, kBc) * std::max(p.Dp, p.Dvp));
  for (int64_t t = begin; t < end; ++t) {
    const int64_t bh = t / per, tile = t % per;
    if (tile < p.nQT) {
      const int64_t i0 = tile * kBr;
      if (job.Qp) { // f32 rows only as the source of the pairs
        packRows<E>(job.q, bh, p.H, i0, std::min(kBr, p.Sq - i0), p.D, kBr,
                    rows.get(), p.Dp, nullptr);
        packPairs(rows.get(), kBr, p.Dp,
                  job.Qp + (bh * p.SqP + i0) * (p.Dp / 2), false);
      } else {
        packRows<E>(job.q, bh, p.H, i0, std::min(kBr, p.Sq - i0), p.D, kBr,
                    job.Q + (bh * p.SqP + i0) * p.Dp, p.Dp, nullptr);
      }
    } else {
      const int64_t kt = tile - p.nQT, j0 = kt * kBc;
      const int64_t nk = std::min(kBc, p.Skv - j0);
      packRows<E>(job.k, bh, p.H, j0, nk, p.D, kBc, rows.get(), p.Dp,
                  job.Kp ? nullptr : job.Kt + (bh * p.nKT + kt) * p.D * kBc);
      if (job.Kp)
        packPairs(rows.get(), kBc, p.Dp,
                  job.Kp + (bh * p.nKT + kt) * (p.Dp / 2) * kBc, true);
      if (job.Vk) {
        packRows<E>(job.v, bh, p.H, j0, nk, p.Dv, kBc, rows.get(), p.Dvp,
                    nullptr);
        packRowPairs(rows.get(), kBc, p.Dvp,
                     job.Vk + (bh * p.SkvP + j0) / 2 * p.Dvp);
      } else {
        packRows<E>(job.v, bh, p.H, j0, nk, p.Dv, kBc,
                    job.V + (bh * p.SkvP + j0) * p.Dvp, p.Dvp, nullptr);
      }
    }
  }
}

/// Task t of (batch*head) x query tiles: one query tile, stored.
template <class E> void fwdCompute(void *ctx, int64_t begin, int64_t end) {
  const FwdJob<E> &job = *static_cast<const FwdJob<E> *>(ctx);
  const Problem &p = job.p;
  // S: f32 scores, then the dot-product kernel's bf16 P (half as large).
  Floats S(kBr * kBc * 3 / 2), O(kBr * p.Dvp), rowStats(3 * kBr);
  float *m = rowStats.get(), *l = m + kBr, *lse = l + kBr;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t bh = t / p.nQT, qt = t % p.nQT;
    job.tile(p, job.packed(bh), qt, S.get(), O.get(), m, l, lse);
    const int64_t i0 = qt * kBr, nq = std::min(kBr, p.Sq - i0);
    for (int64_t r = 0; r < nq; ++r) {
      storeRow<E>(job.o.row(bh, p.H, i0 + r), job.o.s[3],
                  O.get() + r * p.Dvp, p.Dv, 1.0f);
      job.lse.at(bh, p.H, i0 + r) = lse[r];
    }
  }
}

template <class E>
void attentionFwd(const char *entry, bool hasMask, MemRef<typename E::T, 4> *q,
                  MemRef<typename E::T, 4> *k, MemRef<typename E::T, 4> *v,
                  MemRef<float, 2> *mask, MemRef<typename E::T, 4> *o,
                  MemRef<float, 3> *lse, int64_t causal, double scale) {
  Call c{entry, {}, 0, causal, scale};
  c.args[c.n++] = describe("q", q, false);
  c.args[c.n++] = describe("k", k, false);
  c.args[c.n++] = describe("v", v, false);
  if (hasMask)
    c.args[c.n++] = describe("mask", mask, false);
  c.args[c.n++] = describe("o", o, true);
  c.args[c.n++] = describe("lse", lse, true);
  validate(c);

  Problem p(q->sizes[0], q->sizes[1], q->sizes[2], k->sizes[2], q->sizes[3],
            v->sizes[3], causal != 0, scale);
  if (p.BH() == 0 || p.Sq == 0)
    return;
  p.bf16P = std::is_same_v<E, BF16>;
  if (mask) {
    p.mask = mask->aligned + mask->offset;
    p.ms0 = mask->strides[0];
    p.ms1 = mask->strides[1];
  }
  const int kind = kernelKind();
  const bool dot = usesBf16Dot<E>(kind);
  // With the dot-product kernel, the pairs (half a float per element)
  // replace the f32 Q, Kt and V.
  const int64_t nQ = dot ? 0 : p.BH() * p.SqP * p.Dp,
                nKt = dot ? 0 : p.BH() * p.nKT * p.D * kBc,
                nV = dot ? 0 : p.BH() * p.SkvP * p.Dvp;
  const int64_t nQp = dot ? p.BH() * p.SqP * p.Dp / 2 : 0,
                nKp = dot ? p.BH() * p.SkvP * p.Dp / 2 : 0,
                nVk = dot ? p.BH() * p.SkvP * p.Dvp / 2 : 0;
  arena.reserve(Arena::size({nQ, nKt, nV, nQp, nKp, nVk}));
  float *Q = dot ? nullptr : arena.take(nQ);
  float *Kt = dot ? nullptr : arena.take(nKt);
  float *V = dot ? nullptr : arena.take(nV);
  FwdJob<E> job{p,      View4<typename E::T>(q), View4<typename E::T>(k),
                View4<typename E::T>(v), View4<typename E::T>(o),
                View3F(lse), Q, Kt, V, fwdTileFn(kind, dot)};
  if (dot) {
    job.Qp = reinterpret_cast<uint32_t *>(arena.take(nQp));
    job.Kp = reinterpret_cast<uint32_t *>(arena.take(nKp));
    job.Vk = reinterpret_cast<uint32_t *>(arena.take(nVk));
  }
  lpc_rt_parallel_for(fwdPack<E>, &job, 0, p.BH() * (p.nQT + p.nKT), 1);
  lpc_rt_parallel_for(fwdCompute<E>, &job, 0, p.BH() * p.nQT, 1);
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

template <class E> struct BwdJob {
  using T = typename E::T;
  const Problem &p;
  View4<T> q, k, v, o, dout, dq, dk, dv;
  View3F lse;
  float *Q, *Qt, *K, *V, *dO, *dOt, *Lse, *Di;
  int64_t groups; // key-tile groups per (batch, head)
  float *dQ;      // [BH][groups][SqP][Dp]
  BwdTileFn tile;
  // Pairs (kernel 3), else null.
  uint32_t *Kp = nullptr, *Vp = nullptr, *Qp = nullptr, *dOp = nullptr;
  uint32_t *Qk = nullptr, *dOk = nullptr, *Kk = nullptr;

  BwdPacked packed(int64_t bh) const {
    BwdPacked in{Q + bh * p.SqP * p.Dp,
                 Qt ? Qt + bh * p.nQT * p.D * kBr : nullptr,
                 K + bh * p.SkvP * p.Dp,
                 V + bh * p.SkvP * p.Dvp,
                 dO + bh * p.SqP * p.Dvp,
                 dOt ? dOt + bh * p.nQT * p.Dv * kBr : nullptr,
                 Lse + bh * p.SqP,
                 Di + bh * p.SqP};
    if (Kp) {
      in.Kp = Kp + bh * p.SkvP * (p.Dp / 2);
      in.Vp = Vp + bh * p.SkvP * (p.Dvp / 2);
      in.Qp = Qp + bh * p.SqP * (p.Dp / 2);
      in.dOp = dOp + bh * p.SqP * (p.Dvp / 2);
      in.Qk = Qk + bh * (p.SqP / 2) * p.Dp;
      in.dOk = dOk + bh * (p.SqP / 2) * p.Dvp;
      in.Kk = Kk + bh * (p.SkvP / 2) * p.Dp;
    }
    return in;
  }
};

/// Task t of (batch*head) x (query tiles + key tiles): pack one tile; for a
/// query tile also D = rowsum(dO * o) and the lse the kernel uses.
template <class E> void bwdPack(void *ctx, int64_t begin, int64_t end) {
  const BwdJob<E> &job = *static_cast<const BwdJob<E> *>(ctx);
  const Problem &p = job.p;
  const int64_t per = p.nQT + p.nKT;
  Floats orow(p.Dv);
  for (int64_t t = begin; t < end; ++t) {
    const int64_t bh = t / per, tile = t % per;
    if (tile < p.nQT) {
      const int64_t qt = tile, i0 = qt * kBr, nq = std::min(kBr, p.Sq - i0);
      float *Q = job.Q + (bh * p.SqP + i0) * p.Dp;
      // The transposed copies only feed the f32 S^T and dP^T products.
      packRows<E>(job.q, bh, p.H, i0, nq, p.D, kBr, Q, p.Dp,
                  job.Qt ? job.Qt + (bh * p.nQT + qt) * p.D * kBr : nullptr);
      float *dO = job.dO + (bh * p.SqP + i0) * p.Dvp;
      packRows<E>(job.dout, bh, p.H, i0, nq, p.Dv, kBr, dO, p.Dvp,
                  job.dOt ? job.dOt + (bh * p.nQT + qt) * p.Dv * kBr
                          : nullptr);
      if (job.Qp) {
        packPairs(Q, kBr, p.Dp, job.Qp + (bh * p.SqP + i0) * (p.Dp / 2), true);
        packPairs(dO, kBr, p.Dvp,
                  job.dOp + (bh * p.SqP + i0) * (p.Dvp / 2), true);
        packRowPairs(Q, kBr, p.Dp, job.Qk + (bh * p.SqP + i0) / 2 * p.Dp);
        packRowPairs(dO, kBr, p.Dvp, job.dOk + (bh * p.SqP + i0) / 2 * p.Dvp);
      }
      float *lse = job.Lse + bh * p.SqP + i0, *di = job.Di + bh * p.SqP + i0;
      for (int64_t r = 0; r < kBr; ++r) {
        if (r >= nq) { // padding: P = 0, dS = 0
          lse[r] = kInf;
          di[r] = 0.0f;
          continue;
        }
        widenRow<E>(job.o.row(bh, p.H, i0 + r), job.o.s[3], p.Dv, orow.get());
        float sum = 0.0f;
        for (int64_t e = 0; e < p.Dv; ++e)
          sum += dO[r * p.Dvp + e] * orow.get()[e];
        di[r] = sum;
        const float x = job.lse.at(bh, p.H, i0 + r);
        // A row that sees nothing (lse = -inf) has P = 0: exp(s - inf).
        lse[r] = x == -kInf ? kInf : x;
      }
    } else {
      const int64_t j0 = (tile - p.nQT) * kBc;
      const int64_t nk = std::min(kBc, p.Skv - j0);
      float *K = job.K + (bh * p.SkvP + j0) * p.Dp;
      float *V = job.V + (bh * p.SkvP + j0) * p.Dvp;
      packRows<E>(job.k, bh, p.H, j0, nk, p.D, kBc, K, p.Dp, nullptr);
      packRows<E>(job.v, bh, p.H, j0, nk, p.Dv, kBc, V, p.Dvp, nullptr);
      if (job.Kp) {
        packPairs(K, kBc, p.Dp, job.Kp + (bh * p.SkvP + j0) * (p.Dp / 2),
                  false);
        packPairs(V, kBc, p.Dvp, job.Vp + (bh * p.SkvP + j0) * (p.Dvp / 2),
                  false);
        packRowPairs(K, kBc, p.Dp, job.Kk + (bh * p.SkvP + j0) / 2 * p.Dp);
      }
    }
  }
}

/// Task t of (batch*head) x groups: the key tiles g, g + groups, ... (a
/// mix of early and late keys: even work under causal), dk and dv stored,
/// the group's dQ left in its buffer.
template <class E> void bwdCompute(void *ctx, int64_t begin, int64_t end) {
  const BwdJob<E> &job = *static_cast<const BwdJob<E> *>(ctx);
  const Problem &p = job.p;
  // PT, dST, mT in f32, then PTb, dSTb, dSb (the dot-product kernel's bf16
  // pairs, half as large).
  Floats tiles(3 * kBc * kBr + 3 * kBc * kBr / 2), dK(kBc * p.Dp),
      dV(kBc * p.Dvp);
  uint32_t *pairs = reinterpret_cast<uint32_t *>(tiles.get() + 3 * kBc * kBr);
  const BwdScratch w{tiles.get(),
                     tiles.get() + kBc * kBr,
                     tiles.get() + 2 * kBc * kBr,
                     dK.get(),
                     dV.get(),
                     pairs,
                     pairs + kBc * kBr / 2,
                     pairs + kBc * kBr};
  for (int64_t t = begin; t < end; ++t) {
    const int64_t bh = t / job.groups, g = t % job.groups;
    float *dQ = job.dQ + t * p.SqP * p.Dp;
    zero(dQ, p.SqP * p.Dp);
    const BwdPacked in = job.packed(bh);
    for (int64_t kt = g; kt < p.nKT; kt += job.groups) {
      job.tile(p, in, kt, dQ, w);
      const int64_t j0 = kt * kBc, nk = std::min(kBc, p.Skv - j0);
      for (int64_t c = 0; c < nk; ++c) {
        storeRow<E>(job.dk.row(bh, p.H, j0 + c), job.dk.s[3],
                    w.dK + c * p.Dp, p.D, p.scale);
        storeRow<E>(job.dv.row(bh, p.H, j0 + c), job.dv.s[3],
                    w.dV + c * p.Dvp, p.Dv, 1.0f);
      }
    }
  }
}

/// Task t of (batch*head) x query tiles: dq = scale * (sum of the groups'
/// dQ, in group order), stored.
template <class E> void bwdStoreDq(void *ctx, int64_t begin, int64_t end) {
  const BwdJob<E> &job = *static_cast<const BwdJob<E> *>(ctx);
  const Problem &p = job.p;
  Floats sum(p.Dp);
  for (int64_t t = begin; t < end; ++t) {
    const int64_t bh = t / p.nQT, i0 = (t % p.nQT) * kBr;
    const int64_t nq = std::min(kBr, p.Sq - i0);
    const float *dQ = job.dQ + bh * job.groups * p.SqP * p.Dp;
    for (int64_t r = 0; r < nq; ++r) {
      float *s = sum.get();
      const float *g0 = dQ + (i0 + r) * p.Dp;
      for (int64_t d = 0; d < p.D; ++d)
        s[d] = g0[d];
      for (int64_t g = 1; g < job.groups; ++g) {
        const float *gr = g0 + g * p.SqP * p.Dp;
        for (int64_t d = 0; d < p.D; ++d)
          s[d] += gr[d];
      }
      storeRow<E>(job.dq.row(bh, p.H, i0 + r), job.dq.s[3], s, p.D, p.scale);
    }
  }
}

template <class E>
void attentionBwd(const char *entry, bool hasMask, MemRef<typename E::T, 4> *q,
                  MemRef<typename E::T, 4> *k, MemRef<typename E::T, 4> *v,
                  MemRef<typename E::T, 4> *o, MemRef<typename E::T, 4> *dout,
                  MemRef<float, 3> *lse, MemRef<float, 2> *mask,
                  MemRef<typename E::T, 4> *dq, MemRef<typename E::T, 4> *dk,
                  MemRef<typename E::T, 4> *dv, int64_t causal, double scale) {
  Call c{entry, {}, 0, causal, scale};
  c.args[c.n++] = describe("q", q, false);
  c.args[c.n++] = describe("k", k, false);
  c.args[c.n++] = describe("v", v, false);
  c.args[c.n++] = describe("o", o, false);
  c.args[c.n++] = describe("dout", dout, false);
  c.args[c.n++] = describe("lse", lse, false);
  if (hasMask)
    c.args[c.n++] = describe("mask", mask, false);
  c.args[c.n++] = describe("dq", dq, true);
  c.args[c.n++] = describe("dk", dk, true);
  c.args[c.n++] = describe("dv", dv, true);
  validate(c);

  Problem p(q->sizes[0], q->sizes[1], q->sizes[2], k->sizes[2], q->sizes[3],
            v->sizes[3], causal != 0, scale);
  if (p.BH() == 0)
    return;
  p.bf16P = std::is_same_v<E, BF16>;
  if (mask) {
    p.mask = mask->aligned + mask->offset;
    p.ms0 = mask->strides[0];
    p.ms1 = mask->strides[1];
  }
  using T = typename E::T;
  // Groups of key tiles per (batch, head): about kTargetTasks tasks, at
  // most kMaxGroupBytes of dQ buffers beyond the first group.
  int64_t groups = std::min(p.nKT, ceilDiv(kTargetTasks, p.BH()));
  const int64_t groupBytes = p.BH() * p.SqP * p.Dp * 4;
  if (groupBytes > 0)
    groups = std::min(groups, 1 + kMaxGroupBytes / groupBytes);
  groups = std::max<int64_t>(groups, 1);

  const int kind = kernelKind();
  const bool dot = usesBf16Dot<E>(kind);
  // With the dot-product kernel, the pairs (half a float per element)
  // replace the transposed f32 Qt and dOt.
  const int64_t nQ = p.BH() * p.SqP * p.Dp,
                nQt = dot ? 0 : p.BH() * p.nQT * p.D * kBr,
                nK = p.BH() * p.SkvP * p.Dp, nV = p.BH() * p.SkvP * p.Dvp,
                ndO = p.BH() * p.SqP * p.Dvp,
                ndOt = dot ? 0 : p.BH() * p.nQT * p.Dv * kBr,
                nRow = p.BH() * p.SqP, ndQ = p.BH() * groups * p.SqP * p.Dp;
  // Each packed twice in pairs: along its columns and along its rows.
  const int64_t nKp = dot ? nK / 2 : 0, nVp = dot ? nV / 2 : 0,
                nQp = dot ? nQ / 2 : 0, ndOp = dot ? ndO / 2 : 0;
  arena.reserve(Arena::size({nQ, nQt, nK, nV, ndO, ndOt, nRow, nRow, ndQ, nKp,
                             nVp, nQp, ndOp, nQp, ndOp, nKp}));
  BwdJob<E> job{p,
                View4<T>(q),
                View4<T>(k),
                View4<T>(v),
                View4<T>(o),
                View4<T>(dout),
                View4<T>(dq),
                View4<T>(dk),
                View4<T>(dv),
                View3F(lse),
                arena.take(nQ),
                dot ? nullptr : arena.take(nQt),
                arena.take(nK),
                arena.take(nV),
                arena.take(ndO),
                dot ? nullptr : arena.take(ndOt),
                arena.take(nRow),
                arena.take(nRow),
                groups,
                arena.take(ndQ),
                bwdTileFn(kind, dot)};
  if (dot) {
    job.Kp = reinterpret_cast<uint32_t *>(arena.take(nKp));
    job.Vp = reinterpret_cast<uint32_t *>(arena.take(nVp));
    job.Qp = reinterpret_cast<uint32_t *>(arena.take(nQp));
    job.dOp = reinterpret_cast<uint32_t *>(arena.take(ndOp));
    job.Qk = reinterpret_cast<uint32_t *>(arena.take(nQp));
    job.dOk = reinterpret_cast<uint32_t *>(arena.take(ndOp));
    job.Kk = reinterpret_cast<uint32_t *>(arena.take(nKp));
  }
  lpc_rt_parallel_for(bwdPack<E>, &job, 0, p.BH() * (p.nQT + p.nKT), 1);
  lpc_rt_parallel_for(bwdCompute<E>, &job, 0, p.BH() * groups, 1);
  lpc_rt_parallel_for(bwdStoreDq<E>, &job, 0, p.BH() * p.nQT, 1);
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

#define LPC_RT_ATTENTION_DEFS(SUFFIX, E)                                       \
  void _mlir_ciface_lpc_rt_attention_fwd_##SUFFIX(                             \
      MemRef<E::T, 4> *q, MemRef<E::T, 4> *k, MemRef<E::T, 4> *v,              \
      MemRef<E::T, 4> *o, MemRef<float, 3> *lse, int64_t causal,               \
      double scale) {                                                          \
    attentionFwd<E>("lpc_rt_attention_fwd_" #SUFFIX, false, q, k, v, nullptr, o,      \
                    lse, causal, scale);                                       \
  }                                                                            \
  void _mlir_ciface_lpc_rt_attention_fwd_##SUFFIX##_mask(                      \
      MemRef<E::T, 4> *q, MemRef<E::T, 4> *k, MemRef<E::T, 4> *v,              \
      MemRef<float, 2> *mask, MemRef<E::T, 4> *o, MemRef<float, 3> *lse,       \
      int64_t causal, double scale) {                                          \
    attentionFwd<E>("lpc_rt_attention_fwd_" #SUFFIX "_mask", true, q, k, v, mask,    \
                    o, lse, causal, scale);                                    \
  }                                                                            \
  void _mlir_ciface_lpc_rt_attention_bwd_##SUFFIX(                             \
      MemRef<E::T, 4> *q, MemRef<E::T, 4> *k, MemRef<E::T, 4> *v,              \
      MemRef<E::T, 4> *o, MemRef<E::T, 4> *dout, MemRef<float, 3> *lse,        \
      MemRef<E::T, 4> *dq, MemRef<E::T, 4> *dk, MemRef<E::T, 4> *dv,           \
      int64_t causal, double scale) {                                          \
    attentionBwd<E>("lpc_rt_attention_bwd_" #SUFFIX, false, q, k, v, o, dout, lse,    \
                    nullptr, dq, dk, dv, causal, scale);                       \
  }                                                                            \
  void _mlir_ciface_lpc_rt_attention_bwd_##SUFFIX##_mask(                      \
      MemRef<E::T, 4> *q, MemRef<E::T, 4> *k, MemRef<E::T, 4> *v,              \
      MemRef<E::T, 4> *o, MemRef<E::T, 4> *dout, MemRef<float, 3> *lse,        \
      MemRef<float, 2> *mask, MemRef<E::T, 4> *dq, MemRef<E::T, 4> *dk,        \
      MemRef<E::T, 4> *dv, int64_t causal, double scale) {                     \
    attentionBwd<E>("lpc_rt_attention_bwd_" #SUFFIX "_mask", true, q, k, v, o,       \
                    dout, lse, mask, dq, dk, dv, causal, scale);               \
  }

extern "C" {
LPC_RT_ATTENTION_DEFS(f32, F32)
LPC_RT_ATTENTION_DEFS(bf16, BF16)
LPC_RT_ATTENTION_DEFS(f16, F16)
}
