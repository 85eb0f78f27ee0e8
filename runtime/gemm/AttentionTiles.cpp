//===- AttentionTiles.cpp - the CPU attention kernel's tile kernels -----===//
//
// The compute step of Attention.cpp: one forward query tile or one backward
// key tile on the packed, zero-padded f32 operands (AttentionInternal.h).
// The products and the softmax work on dense f32 rows in registers of W
// floats (GCC's vector extension: no intrinsics, any target); they are
// compiled for generic x86-64 (W = 4, SSE2), for AVX2+FMA (W = 8: a target
// attribute on the tile functions, everything they call inlined into them)
// and for AVX2+FMA with every product of a bf16 call as an AVX512-BF16
// vdpbf16ps tile product (P and dS rounded to bf16 and paired per tile);
// kernelKind() picks one at run time.
//
//===----------------------------------------------------------------------===//

#include "AttentionInternal.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define LPC_INLINE inline __attribute__((always_inline))

using namespace lpc::rt::attention;

namespace {

//===----------------------------------------------------------------------===//
// The tile kernels (compiled generic, AVX2+FMA, and AVX2+FMA with
// AVX512-BF16 dot products; everything but dotTileBf16 and the bf16
// conversions inlined)
//===----------------------------------------------------------------------===//

// W floats / ints in one register: GCC's vector extension, W = 8 for AVX2
// (ymm), 4 for the generic build (xmm). The hot loops are written on these
// rather than left to the auto-vectorizer, which (GCC 12, tried first) kept
// the accumulating product's block of C in memory and turned exp's clamps
// into branches.
// (-Wpsabi: "AVX vector return without AVX enabled changes the ABI", about
// the helpers returning 8-float vectors; they are always inlined, so no
// call has an ABI.)
#pragma GCC diagnostic ignored "-Wpsabi"
template <int W> struct VecTypes;
template <> struct VecTypes<8> {
  typedef float F __attribute__((vector_size(32)));
  typedef int32_t I __attribute__((vector_size(32)));
  typedef float U __attribute__((vector_size(32), aligned(4), may_alias));
};
template <> struct VecTypes<4> {
  typedef float F __attribute__((vector_size(16)));
  typedef int32_t I __attribute__((vector_size(16)));
  typedef float U __attribute__((vector_size(16), aligned(4), may_alias));
};

template <int W> struct Vec {
  using F = typename VecTypes<W>::F;
  using I = typename VecTypes<W>::I;
  using U = typename VecTypes<W>::U;

  static LPC_INLINE F load(const float *p) {
    return *reinterpret_cast<const U *>(p);
  }
  static LPC_INLINE void store(float *p, const F &v) {
    *reinterpret_cast<U *>(p) = v;
  }
  /// x in every lane (for constants and values hoisted out of loops; in
  /// the hot products a scalar operand is broadcast by GCC directly: a
  /// vector built of copies came out as a shuffle chain, half the speed).
  static LPC_INLINE F splat(float x) {
    F v;
    for (int l = 0; l < W; ++l)
      v[l] = x;
    return v;
  }
  static LPC_INLINE I iota() {
    I v;
    for (int l = 0; l < W; ++l)
      v[l] = l;
    return v;
  }
  /// mask ? a : b per lane (mask lanes all ones or all zeros).
  static LPC_INLINE F select(const I &mask, const F &a, const F &b) {
    return reinterpret_cast<F>((mask & reinterpret_cast<I>(a)) |
                               (~mask & reinterpret_cast<I>(b)));
  }
  /// Sum of the lanes, in a fixed (pairwise) order.
  static LPC_INLINE float sum(const F &v) {
    float part[W];
    for (int l = 0; l < W; ++l)
      part[l] = v[l];
    for (int width = W / 2; width > 0; width /= 2)
      for (int l = 0; l < width; ++l)
        part[l] = part[2 * l] + part[2 * l + 1];
    return part[0];
  }
};

/// One register block of gemmTile: rows [m0, m0 + MR) x columns
/// [n0, n0 + 2W) of C in 2 MR registers while k runs (sequentially, one
/// multiply-add per k: the same order in every block).
template <int W, int MR, bool TransA>
LPC_INLINE void gemmBlock(int64_t m0, int64_t n0, int64_t K,
                          const float *__restrict A, int64_t lda,
                          const float *__restrict B, int64_t ldb,
                          float *__restrict C, int64_t ldc, bool accumulate) {
  using V = Vec<W>;
  using F = typename V::F;
  F c0[MR], c1[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
    c0[i] = c1[i] = V::splat(0);
  const float *a = TransA ? A + m0 : A + m0 * lda;
  const float *b = B + n0;
  const int64_t step = TransA ? 1 : lda;
  for (int64_t k = 0; k < K; ++k) {
    const F b0 = V::load(b + k * ldb), b1 = V::load(b + k * ldb + W);
    const float *ak = TransA ? a + k * lda : a + k;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const float ai = ak[i * step];
      c0[i] += ai * b0;
      c1[i] += ai * b1;
    }
  }
  float *c = C + m0 * ldc + n0;
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    if (accumulate) {
      c0[i] += V::load(c + i * ldc);
      c1[i] += V::load(c + i * ldc + W);
    }
    V::store(c + i * ldc, c0[i]);
    V::store(c + i * ldc + W, c1[i]);
  }
}

/// C[M x N] = (accumulate ? C : 0) + A[M x K] B[K x N], all row-major with
/// leading dimensions lda, ldb, ldc; with TransA, A is given as its
/// transpose (A[m][k] at A[k * lda + m]). M % 2 == 0, N % (2W) == 0.
/// Blocks of 6 rows x 2 vectors: 12 accumulators, enough independent
/// multiply-adds to cover the FMA latency (4 rows, 8 of them, left the
/// FMA units idle part of the time); the last rows in blocks of 4 or 2.
template <int W, bool TransA = false>
LPC_INLINE void gemmTile(int64_t M, int64_t N, int64_t K,
                         const float *__restrict A, int64_t lda,
                         const float *__restrict B, int64_t ldb,
                         float *__restrict C, int64_t ldc, bool accumulate) {
  for (int64_t n0 = 0; n0 < N; n0 += 2 * W) {
    int64_t m0 = 0;
    for (; m0 + 6 <= M; m0 += 6)
      gemmBlock<W, 6, TransA>(m0, n0, K, A, lda, B, ldb, C, ldc, accumulate);
    if (m0 + 4 <= M) {
      gemmBlock<W, 4, TransA>(m0, n0, K, A, lda, B, ldb, C, ldc, accumulate);
      m0 += 4;
    }
    if (m0 < M)
      gemmBlock<W, 2, TransA>(m0, n0, K, A, lda, B, ldb, C, ldc, accumulate);
  }
}

#if defined(__x86_64__)
#define LPC_BF16_TARGET                                                        \
  __attribute__((target("avx512f,avx512bw,avx512bf16,avx2,fma")))

/// One register block of dotTileBf16: MR rows x NV vectors of 16. A's pair
/// for row m and step kp is A[m * lda + kp], or with TransA A[kp * lda + m].
template <int MR, int NV, bool Acc, bool TransA>
LPC_INLINE LPC_BF16_TARGET void
dotBlockBf16(int64_t m0, int64_t n0, int64_t KP, const uint32_t *__restrict A,
             int64_t lda, const uint32_t *__restrict B, int64_t ldb,
             float *__restrict C, int64_t ldc) {
  __m512 c[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j)
      c[i][j] = Acc ? _mm512_loadu_ps(C + (m0 + i) * ldc + n0 + 16 * j)
                    : _mm512_setzero_ps();
  for (int64_t kp = 0; kp < KP; ++kp) {
    __m512bh b[NV];
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j)
      b[j] = (__m512bh)_mm512_loadu_si512(B + kp * ldb + n0 + 16 * j);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const uint32_t pair =
          TransA ? A[kp * lda + m0 + i] : A[(m0 + i) * lda + kp];
      const __m512bh a = (__m512bh)_mm512_set1_epi32(int(pair));
#pragma GCC unroll 2
      for (int j = 0; j < NV; ++j)
        c[i][j] = _mm512_dpbf16_ps(c[i][j], a, b[j]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j)
      _mm512_storeu_ps(C + (m0 + i) * ldc + n0 + 16 * j, c[i][j]);
}

/// C[M x N] = (Acc ? C : 0) + A B for bf16 operands given as pairs: A as
/// rows ([M][lda] pairs; with TransA as columns, [KP][lda]), B as columns
/// ([KP][ldb] pairs), C f32 row-major. M % 4 == 0, N % 16 == 0. vdpbf16ps
/// multiplies exactly (a product of two bf16 values fits an f32) and adds
/// in f32, two products per step, in the same order in every block: the
/// f32 sum of the f32 path, reassociated by pairs. (It treats subnormal
/// inputs and results as 0: below 1.2e-38, under any bound of the
/// header's.) A call per tile, not inlined: the tile functions that call it
/// are compiled for other targets too.
template <bool Acc, bool TransA>
__attribute__((noinline)) LPC_BF16_TARGET void
dotTileBf16(int64_t M, int64_t N, int64_t KP, const uint32_t *__restrict A,
            int64_t lda, const uint32_t *__restrict B, int64_t ldb,
            float *__restrict C, int64_t ldc) {
  int64_t n0 = 0;
  for (; n0 + 32 <= N; n0 += 32) {
    int64_t m0 = 0;
    for (; m0 + 8 <= M; m0 += 8)
      dotBlockBf16<8, 2, Acc, TransA>(m0, n0, KP, A, lda, B, ldb, C, ldc);
    for (; m0 < M; m0 += 4)
      dotBlockBf16<4, 2, Acc, TransA>(m0, n0, KP, A, lda, B, ldb, C, ldc);
  }
  if (n0 < N) { // N - n0 == 16
    int64_t m0 = 0;
    for (; m0 + 8 <= M; m0 += 8)
      dotBlockBf16<8, 1, Acc, TransA>(m0, n0, KP, A, lda, B, ldb, C, ldc);
    for (; m0 < M; m0 += 4)
      dotBlockBf16<4, 1, Acc, TransA>(m0, n0, KP, A, lda, B, ldb, C, ldc);
  }
}

/// Rows [0, rows) of src ([.][lds] f32, n % 16 == 0 columns) rounded to
/// bf16 (to nearest even; subnormals flushed to 0, as the products treat
/// them anyway) into dst ([.][ldd] bf16, ldd even): a row of bf16 values is
/// a row of pairs, a product's left operand.
__attribute__((noinline)) LPC_BF16_TARGET void
rowsToBf16(const float *__restrict src, int64_t rows, int64_t n, int64_t lds,
           uint32_t *__restrict dst, int64_t ldd) {
  uint16_t *d = reinterpret_cast<uint16_t *>(dst);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; c += 16)
      _mm256_storeu_si256(
          reinterpret_cast<__m256i *>(d + r * ldd + c),
          (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + r * lds + c)));
}

/// Rows 2t and 2t + 1 of src ([.][lds] f32), columns [0, n) (n % 16 == 0),
/// rounded to bf16 and paired, for t in [0, KP): dst[t * ldd + m] holds
/// (src[2t][m], src[2t + 1][m]), a product's left operand transposed.
__attribute__((noinline)) LPC_BF16_TARGET void
rowPairsToBf16(const float *__restrict src, int64_t KP, int64_t n, int64_t lds,
               uint32_t *__restrict dst, int64_t ldd) {
  for (int64_t t = 0; t < KP; ++t)
    for (int64_t c = 0; c < n; c += 16) {
      // (The zero-masked forms: GCC 12 warns about the plain ones'
      // undefined pass-through operand.)
      const __m512i lo = _mm512_maskz_cvtepu16_epi32(
                        0xffff, (__m256i)_mm512_cvtneps_pbh(
                                    _mm512_loadu_ps(src + 2 * t * lds + c))),
                    hi = _mm512_maskz_cvtepu16_epi32(
                        0xffff, (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(
                                    src + (2 * t + 1) * lds + c)));
      _mm512_storeu_si512(
          dst + t * ldd + c,
          _mm512_or_si512(lo, _mm512_maskz_slli_epi32(0xffff, hi, 16)));
    }
}
#endif

/// x rounded to bf16 (kept in f32), to nearest even; NaN stays NaN: the
/// bf16 entry points' P and dS in the kernels without AVX512-BF16, whose
/// f32 products then multiply exactly what the dot-product kernel's do.
template <int W>
LPC_INLINE typename Vec<W>::F roundBf16(const typename Vec<W>::F &x) {
  using V = Vec<W>;
  typedef uint32_t UI __attribute__((vector_size(4 * W)));
  const UI b = reinterpret_cast<UI>(x);
  const UI r = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;
  const UI q = (b | 0x00400000u) & 0xffff0000u; // NaN: quiet, truncated
  return V::select(x != x, reinterpret_cast<typename V::F>(q),
                   reinterpret_cast<typename V::F>(r));
}

/// exp(x) in f32, within ~2 ulp: x = n ln2 + r with |r| <= ln2/2, exp(r) by
/// its Taylor polynomial of degree 7 (truncation < 6e-9 relative), times
/// 2^n built in the exponent field. exp(-inf) and anything below -87.3
/// (results below 1.2e-38, the smallest normal f32) give 0; NaN stays NaN.
template <int W>
LPC_INLINE typename Vec<W>::F vexp(const typename Vec<W>::F &x) {
  using V = Vec<W>;
  using F = typename V::F;
  using I = typename V::I;
  const F lo = V::splat(-87.3f), hi = V::splat(88.3f);
  const F magic = V::splat(12582912.0f);
  const I tiny = x < lo;
  F xc = V::select(tiny, lo, x);
  xc = V::select(xc > hi, hi, xc);
  // n = round(x / ln2): adding 1.5 * 2^23 rounds to an integer.
  const F n = (xc * V::splat(1.44269504088896341f) + magic) - magic;
  F r = xc - n * V::splat(0.693145751953125f); // ln2, high part: exact
  r = r - n * V::splat(1.42860682030941723e-6f); // ln2, low part
  F p = V::splat(1.0f / 5040);
  p = p * r + V::splat(1.0f / 720);
  p = p * r + V::splat(1.0f / 120);
  p = p * r + V::splat(1.0f / 24);
  p = p * r + V::splat(1.0f / 6);
  p = p * r + V::splat(0.5f);
  p = p * r + V::splat(1.0f);
  p = p * r + V::splat(1.0f);
  const I e = (__builtin_convertvector(n, I) + 127) << 23;
  return V::select(tiny, V::splat(0), p * reinterpret_cast<F>(e));
}

/// max of s[0, n), n % 16 == 0.
template <int W> LPC_INLINE float rowMax(const float *s, int64_t n) {
  using V = Vec<W>;
  typename V::F acc = V::splat(-kInf);
  for (int64_t c = 0; c < n; c += W) {
    const typename V::F x = V::load(s + c);
    acc = V::select(x > acc, x, acc);
  }
  float m = acc[0];
  for (int l = 1; l < W; ++l)
    m = acc[l] > m ? acc[l] : m;
  return m;
}

/// s[c] = exp(s[c] - shift) over [0, n), n % 16 == 0 (with `round`, stored
/// rounded to bf16); returns their sum, unrounded (W lanes, then Vec::sum).
template <int W>
LPC_INLINE float expRowSum(float *s, int64_t n, float shift, bool round) {
  using V = Vec<W>;
  typename V::F acc = V::splat(0);
  const typename V::F sh = V::splat(shift);
  for (int64_t c = 0; c < n; c += W) {
    const typename V::F p = vexp<W>(V::load(s + c) - sh);
    V::store(s + c, round ? roundBf16<W>(p) : p);
    acc += p;
  }
  return V::sum(acc);
}

/// One query tile: O[r][0, Dv) = o of query qt*kBr + r (normalized), lse[r].
/// S: [kBr][kBc] scratch; O: [kBr][Dvp]; m, l: [kBr].
template <int W, bool Dot = false>
LPC_INLINE void fwdTileImpl(const Problem &p, const FwdPacked &in,
                            int64_t qt, float *__restrict S,
                            float *__restrict O, float *__restrict m,
                            float *__restrict l, float *__restrict lse) {
  const int64_t i0 = qt * kBr, nq = std::min(kBr, p.Sq - i0);
  const int64_t mq = roundUp(nq, 4);
  const float *Q = Dot ? nullptr : in.Q + i0 * p.Dp; // Dot: in.Qp instead
  for (int64_t r = 0; r < kBr; ++r) {
    m[r] = -kInf;
    l[r] = 0.0f;
  }
  zero(O, mq * p.Dvp);
  // Key tiles up to the one holding the last row's last visible key.
  int64_t ktEnd = p.nKT;
  if (p.causal) {
    const int64_t jLast = i0 + nq - 1 + p.off;
    ktEnd = jLast < 0 ? 0 : std::min(p.nKT, jLast / kBc + 1);
  }
  for (int64_t kt = 0; kt < ktEnd; ++kt) {
    const int64_t j0 = kt * kBc, nk = std::min(kBc, p.Skv - j0);
    const int64_t nkp = roundUp(nk, 16);
    // S = Q K^T over this key tile (rows past nq: zero rows of Q, S = 0).
#if defined(__x86_64__)
    if constexpr (Dot)
      dotTileBf16<false, false>(mq, nkp, p.Dp / 2, in.Qp + i0 * (p.Dp / 2),
                                p.Dp / 2, in.Kp + kt * (p.Dp / 2) * kBc, kBc, S,
                                kBc);
    else
#endif
      gemmTile<W>(mq, nkp, p.D, Q, p.Dp, in.Kt + kt * p.D * kBc, kBc, S, kBc,
                  false);
    for (int64_t r = 0; r < nq; ++r) {
      float *s = S + r * kBc;
      const int64_t i = i0 + r;
      int64_t vis = nk; // keys [j0, j0 + vis) visible to row i
      if (p.causal)
        vis = std::max<int64_t>(0, std::min(nk, i + p.off - j0 + 1));
      if (vis == 0) { // nothing here for this row: P = 0
        for (int64_t c = 0; c < nkp; ++c)
          s[c] = 0.0f;
        continue;
      }
      const float scale = p.scale;
      for (int64_t c = 0; c < vis; ++c)
        s[c] *= scale;
      if (p.mask) {
        const float *mr = p.mask + i * p.ms0 + j0 * p.ms1;
        if (p.ms1 == 1)
          for (int64_t c = 0; c < vis; ++c)
            s[c] += mr[c];
        else
          for (int64_t c = 0; c < vis; ++c)
            s[c] += mr[c * p.ms1];
      }
      for (int64_t c = vis; c < nkp; ++c)
        s[c] = -kInf;
      const float mx = rowMax<W>(s, nkp);
      const float mnew = mx > m[r] ? mx : m[r];
      if (mnew == -kInf) { // every visible entry so far is masked
        for (int64_t c = 0; c < nkp; ++c)
          s[c] = 0.0f;
        continue;
      }
      const float alpha = std::exp(m[r] - mnew); // 0 when m[r] = -inf
      // P in bf16 for the bf16 entry points: rounded here, as it is stored,
      // or (dot-product kernel) as it is paired below.
      l[r] = l[r] * alpha + expRowSum<W>(s, nkp, mnew, p.bf16P && !Dot);
      m[r] = mnew;
      if (alpha != 1.0f) {
        float *o = O + r * p.Dvp;
        for (int64_t e = 0; e < p.Dvp; ++e)
          o[e] *= alpha;
      }
    }
    // O += P V (P's columns past nk are 0, so only nk keys are summed); for
    // the bf16 entry points P rounded to bf16 first.
#if defined(__x86_64__)
    if constexpr (Dot) {
      uint32_t *Pb = reinterpret_cast<uint32_t *>(S + kBr * kBc);
      rowsToBf16(S, mq, nkp, kBc, Pb, kBc);
      dotTileBf16<true, false>(mq, p.Dvp, (nk + 1) / 2, Pb, kBc / 2,
                               in.Vk + kt * (kBc / 2) * p.Dvp, p.Dvp, O, p.Dvp);
      continue;
    }
#endif
    gemmTile<W>(mq, p.Dvp, nk, S, kBc, in.V + j0 * p.Dvp, p.Dvp, O, p.Dvp,
             true);
  }
  for (int64_t r = 0; r < nq; ++r) {
    float *o = O + r * p.Dvp;
    if (l[r] == 0.0f) { // every key masked: o = 0, lse = -inf
      for (int64_t e = 0; e < p.Dvp; ++e)
        o[e] = 0.0f;
      lse[r] = -kInf;
      continue;
    }
    const float sum = l[r];
    for (int64_t e = 0; e < p.Dvp; ++e)
      o[e] = o[e] / sum;
    lse[r] = m[r] + std::log(sum);
  }
}

/// One key tile: dK, dV (f32, dK not yet scaled) of keys kt*kBc + c, and
/// dQ[i] += dS K over the query tiles that see the key tile (dQ: this
/// group's [SqP][Dp] buffer, not yet scaled).
template <int W, bool Dot = false>
LPC_INLINE void bwdTileImpl(const Problem &p, const BwdPacked &in, int64_t kt,
                            float *__restrict dQ, const BwdScratch &w) {
  const int64_t j0 = kt * kBc, nk = std::min(kBc, p.Skv - j0);
  const int64_t mk = roundUp(nk, 4);
  const float *K = in.K + j0 * p.Dp, *V = in.V + j0 * p.Dvp;
  float *__restrict PT = w.PT, *__restrict dST = w.dST;
  float *__restrict mT = w.mT;
  zero(w.dK, mk * p.Dp);
  zero(w.dV, mk * p.Dvp);
  // Query tiles from the one holding the first query that sees key j0.
  int64_t qtBegin = 0;
  if (p.causal)
    qtBegin = std::max<int64_t>(0, j0 - p.off) / kBr;
  for (int64_t qt = qtBegin; qt < p.nQT; ++qt) {
    const int64_t i0 = qt * kBr, nq = std::min(kBr, p.Sq - i0);
    const int64_t nqp = roundUp(nq, 16), mq = roundUp(nq, 4);
#if defined(__x86_64__)
    if constexpr (Dot) {
      dotTileBf16<false, false>(mk, nqp, p.Dp / 2, in.Kp + j0 * (p.Dp / 2),
                                p.Dp / 2, in.Qp + qt * (p.Dp / 2) * kBr, kBr,
                                PT, kBr); // S^T
      dotTileBf16<false, false>(mk, nqp, p.Dvp / 2, in.Vp + j0 * (p.Dvp / 2),
                                p.Dvp / 2, in.dOp + qt * (p.Dvp / 2) * kBr, kBr,
                                dST, kBr); // dP^T
    } else
#endif
    {
      gemmTile<W>(mk, nqp, p.D, K, p.Dp, in.Qt + qt * p.D * kBr, kBr, PT,
                  kBr, false); // S^T
      gemmTile<W>(mk, nqp, p.Dv, V, p.Dvp, in.dOt + qt * p.Dv * kBr, kBr,
                  dST, kBr, false); // dP^T
    }
    if (p.mask) {
      for (int64_t r = 0; r < nq; ++r) {
        const float *mr = p.mask + (i0 + r) * p.ms0 + j0 * p.ms1;
        for (int64_t c = 0; c < nk; ++c)
          mT[c * kBr + r] = mr[c * p.ms1];
      }
      for (int64_t c = 0; c < nk; ++c)
        for (int64_t r = nq; r < nqp; ++r)
          mT[c * kBr + r] = 0.0f;
    }
    const float *lse = in.lse + i0, *di = in.Di + i0;
    using Vw = Vec<W>;
    using F = typename Vw::F;
    const F scale = Vw::splat(p.scale);
    const typename Vw::I lane = Vw::iota();
    const bool roundPS = p.bf16P && !Dot;
    for (int64_t c = 0; c < mk; ++c) {
      float *pt = PT + c * kBr, *ds = dST + c * kBr;
      // Queries [i0, i0 + rBegin) do not see key j0 + c: P = dS = 0.
      int64_t rBegin = 0;
      if (c >= nk)
        rBegin = nqp;
      else if (p.causal)
        rBegin = std::max<int64_t>(0, std::min(nqp, j0 + c - p.off - i0));
      const float *mc = mT + c * kBr;
      for (int64_t r = 0; r < nqp; r += W) {
        F x = Vw::load(pt + r) * scale;
        if (p.mask)
          x += Vw::load(mc + r);
        F pr = vexp<W>(x - Vw::load(lse + r));
        pr = Vw::select(lane + static_cast<int32_t>(r) >=
                            static_cast<int32_t>(rBegin),
                        pr, Vw::splat(0));
        const F dsr = pr * (Vw::load(ds + r) - Vw::load(di + r));
        // bf16 entry points: P and dS in bf16 (the dot-product kernel
        // rounds them as it pairs them below).
        Vw::store(pt + r, roundPS ? roundBf16<W>(pr) : pr);
        Vw::store(ds + r, roundPS ? roundBf16<W>(dsr) : dsr);
      }
    }
    // For the bf16 entry points P and dS are rounded to bf16 first.
#if defined(__x86_64__)
    if constexpr (Dot) {
      rowsToBf16(PT, mk, nqp, kBr, w.PTb, kBr);
      rowsToBf16(dST, mk, nqp, kBr, w.dSTb, kBr);
      rowPairsToBf16(dST, (nk + 1) / 2, nqp, kBr, w.dSb, kBr);
      const int64_t qPairs = (nq + 1) / 2;
      dotTileBf16<true, false>(mk, p.Dvp, qPairs, w.PTb, kBr / 2,
                               in.dOk + qt * (kBr / 2) * p.Dvp, p.Dvp, w.dV,
                               p.Dvp); // dV += P^T dO
      dotTileBf16<true, false>(mk, p.Dp, qPairs, w.dSTb, kBr / 2,
                               in.Qk + qt * (kBr / 2) * p.Dp, p.Dp, w.dK,
                               p.Dp); // dK += dS^T Q
      dotTileBf16<true, true>(mq, p.Dp, (nk + 1) / 2, w.dSb, kBr,
                              in.Kk + (j0 / 2) * p.Dp, p.Dp, dQ + i0 * p.Dp,
                              p.Dp); // dQ += dS K
      continue;
    }
#endif
    gemmTile<W>(mk, p.Dvp, nq, PT, kBr, in.dO + i0 * p.Dvp, p.Dvp, w.dV, p.Dvp,
             true); // dV += P^T dO
    gemmTile<W>(mk, p.Dp, nq, dST, kBr, in.Q + i0 * p.Dp, p.Dp, w.dK, p.Dp,
             true); // dK += dS^T Q
    gemmTile<W, true>(mq, p.Dp, nk, dST, kBr, K, p.Dp, dQ + i0 * p.Dp, p.Dp,
                      true); // dQ += dS K, dS = (dS^T)^T
  }
}

void fwdTileGeneric(const Problem &p, const FwdPacked &in, int64_t qt,
                    float *S, float *O, float *m, float *l, float *lse) {
  fwdTileImpl<4>(p, in, qt, S, O, m, l, lse);
}
void bwdTileGeneric(const Problem &p, const BwdPacked &in, int64_t kt,
                    float *dQ, const BwdScratch &w) {
  bwdTileImpl<4>(p, in, kt, dQ, w);
}
#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void
fwdTileAvx2(const Problem &p, const FwdPacked &in, int64_t qt, float *S,
            float *O, float *m, float *l, float *lse) {
  fwdTileImpl<8>(p, in, qt, S, O, m, l, lse);
}
__attribute__((target("avx2,fma"))) void
bwdTileAvx2(const Problem &p, const BwdPacked &in, int64_t kt, float *dQ,
            const BwdScratch &w) {
  bwdTileImpl<8>(p, in, kt, dQ, w);
}
/// AVX2+FMA, with the products of two bf16 inputs (S = Q K^T; backward
/// S^T and dP^T) as AVX512-BF16 dot products.
LPC_BF16_TARGET void fwdTileBf16Dot(const Problem &p, const FwdPacked &in,
                                    int64_t qt, float *S, float *O, float *m,
                                    float *l, float *lse) {
  fwdTileImpl<8, true>(p, in, qt, S, O, m, l, lse);
}
LPC_BF16_TARGET void bwdTileBf16Dot(const Problem &p, const BwdPacked &in,
                                    int64_t kt, float *dQ,
                                    const BwdScratch &w) {
  bwdTileImpl<8, true>(p, in, kt, dQ, w);
}
bool haveAvx512Bf16() {
  static const bool yes = __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512bf16") &&
                          __builtin_cpu_supports("avx2") &&
                          __builtin_cpu_supports("fma");
  return yes;
}
bool haveAvx2() {
  static const bool yes =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
#endif

std::atomic<int> kernelSetting{0};

} // namespace

namespace lpc {
namespace rt {

void setAttentionKernel(int kind) {
  kernelSetting.store(kind, std::memory_order_relaxed);
}

int attentionKernel() { return attention::kernelKind(); }

namespace attention {

/// 1 generic, 2 AVX2+FMA, 3 AVX2+FMA with AVX512-BF16 dot products: the
/// setting (0: the best) where the CPU has it, else the best below it.
int kernelKind() {
  const int want = kernelSetting.load(std::memory_order_relaxed);
#if defined(__x86_64__)
  if ((want == 0 || want >= 3) && haveAvx512Bf16())
    return 3;
  if (want != 1 && haveAvx2())
    return 2;
#endif
  (void)want;
  return 1;
}

/// Kernel 3 differs from 2 only where both operands of a product are bf16
/// inputs, which is what `bf16Dot` says.
FwdTileFn fwdTileFn(int kind, bool bf16Dot) {
#if defined(__x86_64__)
  if (bf16Dot)
    return fwdTileBf16Dot;
  if (kind >= 2)
    return fwdTileAvx2;
#endif
  (void)kind;
  (void)bf16Dot;
  return fwdTileGeneric;
}
BwdTileFn bwdTileFn(int kind, bool bf16Dot) {
#if defined(__x86_64__)
  if (bf16Dot)
    return bwdTileBf16Dot;
  if (kind >= 2)
    return bwdTileAvx2;
#endif
  (void)kind;
  (void)bf16Dot;
  return bwdTileGeneric;
}

} // namespace attention
} // namespace rt
} // namespace lpc
