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
// The tile products and the softmax work on dense f32 rows in registers of
// W floats (GCC's vector extension: no intrinsics, any target); they are
// compiled twice, for generic x86-64 (W = 4, SSE2) and for AVX2+FMA (W = 8:
// a target attribute on the two tile functions, everything they call
// inlined into them), and the CPU picks one at run time. On CPUs with
// AVX512-BF16 the bf16 entry points use a third build: AVX2+FMA with the
// products of two bf16 inputs (S = Q K^T; backward S^T and dP^T) as
// vdpbf16ps tile products on pairs of bf16 the pack step writes (exact
// products, f32 sums). Packing, checks and stores are ordinary code.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Attention.h"
#include "lpc/Runtime/Parallel.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using lpc::rt::MemRef;

#define LPC_INLINE inline __attribute__((always_inline))

namespace {

constexpr int64_t kBr = lpc::rt::kAttentionBlockQ; // queries per tile
constexpr int64_t kBc = lpc::rt::kAttentionBlockK; // keys per tile
static_assert(kBr % 16 == 0 && kBc % 16 == 0,
              "tile sizes must be multiples of the micro-kernel's 16 columns");
constexpr float kInf = std::numeric_limits<float>::infinity();

/// Backward: the key tiles of a (batch, head) are split into groups, one
/// task each, so that there are about this many tasks even when batch*head
/// is small. Depends on the shapes only (results must not depend on the
/// thread count); each group adds a dQ buffer of Sq x D floats, capped by
/// kMaxGroupBytes in all.
constexpr int64_t kTargetTasks = 32;
constexpr int64_t kMaxGroupBytes = int64_t(64) << 20;

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
/// p[0, n) = 0 (nothing when n == 0, p then possibly null).
void zero(float *p, int64_t n) {
  if (n > 0)
    std::memset(p, 0, sizeof(float) * static_cast<size_t>(n));
}
int64_t ceilDiv(int64_t x, int64_t m) { return (x + m - 1) / m; }

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
// Checking the caller's descriptors
//===----------------------------------------------------------------------===//

/// One descriptor as the checks see it.
struct Arg {
  const char *name = nullptr;
  int rank = 0;
  bool null = true;
  bool output = false;
  const void *data = nullptr;
  int64_t sizes[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};

  int64_t elements() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d)
      n *= sizes[d];
    return n;
  }
};

template <typename T, int R>
Arg describe(const char *name, const MemRef<T, R> *m, bool output) {
  Arg a;
  a.name = name;
  a.rank = R;
  a.output = output;
  if (!m)
    return a;
  a.null = false;
  a.data = m->aligned;
  for (int d = 0; d < R; ++d) {
    a.sizes[d] = m->sizes[d];
    a.strides[d] = m->strides[d];
  }
  return a;
}

/// One call's arguments, in the entry point's order, for the checks and
/// the abort message.
struct Call {
  const char *entry;
  Arg args[10];
  int n = 0;
  int64_t causal;
  double scale;

  const Arg *find(const char *name) const {
    for (int i = 0; i < n; ++i)
      if (std::strcmp(args[i].name, name) == 0)
        return &args[i];
    return nullptr;
  }
};

[[noreturn]] void fail(const Call &c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

[[noreturn]] void fail(const Call &c, const char *fmt, ...) {
  std::fprintf(stderr, "lpc runtime: %s: invalid call (a bug in the caller): ",
               c.entry);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fprintf(stderr, " (");
  for (int i = 0; i < c.n; ++i) {
    const Arg &a = c.args[i];
    std::fprintf(stderr, "%s=", a.name);
    if (a.null) {
      std::fprintf(stderr, "null ");
      continue;
    }
    for (int d = 0; d < a.rank; ++d)
      std::fprintf(stderr, "%s%" PRId64, d ? "x" : "[", a.sizes[d]);
    std::fprintf(stderr, "] ");
  }
  std::fprintf(stderr, "causal=%" PRId64 " scale=%g)\n", c.causal, c.scale);
  std::fflush(stderr);
  std::abort();
}

/// Whether no two elements of `a` share an address: sorted by |stride|,
/// each dimension's stride must step over everything the smaller ones span
/// (true of every dense layout, its transposes, slices and interleavings).
bool elementsDisjoint(const Arg &a) {
  if (a.elements() == 0)
    return true;
  int64_t order[4];
  int n = 0;
  for (int d = 0; d < a.rank; ++d)
    if (a.sizes[d] > 1)
      order[n++] = d;
  std::sort(order, order + n, [&](int64_t x, int64_t y) {
    return std::llabs(a.strides[x]) < std::llabs(a.strides[y]);
  });
  int64_t span = 1; // elements covered by the dimensions so far
  for (int i = 0; i < n; ++i) {
    const int64_t s = std::llabs(a.strides[order[i]]);
    if (s < span)
      return false;
    span += s * (a.sizes[order[i]] - 1);
  }
  return true;
}

void printSizes(char *buf, size_t len, const int64_t *sizes, int rank) {
  size_t used = 0;
  for (int d = 0; d < rank && used < len; ++d)
    used += std::snprintf(buf + used, len - used, "%s%" PRId64, d ? ", " : "[",
                          sizes[d]);
  if (used < len)
    std::snprintf(buf + used, len - used, "]");
}

/// Every check of the header's contract; aborts on the first fault.
void validate(const Call &c) {
  for (int i = 0; i < c.n; ++i)
    if (c.args[i].null)
      fail(c, "the descriptor of %s is null", c.args[i].name);
  for (int i = 0; i < c.n; ++i)
    for (int d = 0; d < c.args[i].rank; ++d)
      if (c.args[i].sizes[d] < 0)
        fail(c, "%s has a negative size (dimension %d: %" PRId64 ")",
             c.args[i].name, d, c.args[i].sizes[d]);
  const Arg &q = *c.find("q"), &k = *c.find("k"), &v = *c.find("v");
  const int64_t B = q.sizes[0], H = q.sizes[1], Sq = q.sizes[2],
                D = q.sizes[3], Skv = k.sizes[2], Dv = v.sizes[3];
  struct Want {
    const char *name, *dims;
    int64_t sizes[4];
  } wants[] = {{"k", "[B, H, Skv, D]", {B, H, Skv, D}},
               {"v", "[B, H, Skv, Dv]", {B, H, Skv, Dv}},
               {"o", "[B, H, Sq, Dv]", {B, H, Sq, Dv}},
               {"dout", "[B, H, Sq, Dv]", {B, H, Sq, Dv}},
               {"lse", "[B, H, Sq]", {B, H, Sq, 0}},
               {"mask", "[Sq, Skv]", {Sq, Skv, 0, 0}},
               {"dq", "[B, H, Sq, D]", {B, H, Sq, D}},
               {"dk", "[B, H, Skv, D]", {B, H, Skv, D}},
               {"dv", "[B, H, Skv, Dv]", {B, H, Skv, Dv}}};
  for (const Want &w : wants) {
    const Arg *a = c.find(w.name);
    if (!a)
      continue;
    if (std::memcmp(a->sizes, w.sizes, sizeof(int64_t) * a->rank) != 0) {
      char want[96], got[96];
      printSizes(want, sizeof want, w.sizes, a->rank);
      printSizes(got, sizeof got, a->sizes, a->rank);
      fail(c, "shape mismatch: %s is %s, expected %s = %s", w.name, got,
           w.dims, want);
    }
  }
  for (int i = 0; i < c.n; ++i)
    if (!c.args[i].data && c.args[i].elements() > 0)
      fail(c, "%s has a null data pointer", c.args[i].name);
  if (c.causal != 0 && c.causal != 1)
    fail(c, "causal must be 0 or 1, got %" PRId64, c.causal);
  if (!std::isfinite(c.scale))
    fail(c, "scale is not finite");
  for (int i = 0; i < c.n; ++i) {
    const Arg &a = c.args[i];
    if (a.output && !elementsDisjoint(a)) {
      char sizes[96], strides[96];
      printSizes(sizes, sizeof sizes, a.sizes, a.rank);
      printSizes(strides, sizeof strides, a.strides, a.rank);
      fail(c, "output %s has overlapping elements (sizes %s, strides %s)",
           a.name, sizes, strides);
    }
  }
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
// The problem, and the packed operands
//===----------------------------------------------------------------------===//

struct Problem {
  int64_t B, H, Sq, Skv, D, Dv;
  int64_t Dp, Dvp;   // D, Dv rounded up to 16: the packed rows' length
  int64_t nQT, nKT;  // query / key tiles
  int64_t SqP, SkvP; // nQT * kBr, nKT * kBc: packed rows (zero padded)
  int64_t off;       // Skv - Sq: key j is visible to query i iff j <= i + off
  bool causal;
  float scale;
  const float *mask; // aligned + offset, or null
  int64_t ms0, ms1;  // its strides

  Problem(int64_t B, int64_t H, int64_t Sq, int64_t Skv, int64_t D,
          int64_t Dv, bool causal, double scale)
      : B(B), H(H), Sq(Sq), Skv(Skv), D(D), Dv(Dv), Dp(roundUp(D, 16)),
        Dvp(roundUp(Dv, 16)), nQT(ceilDiv(Sq, kBr)), nKT(ceilDiv(Skv, kBc)),
        SqP(nQT * kBr), SkvP(nKT * kBc), off(Skv - Sq), causal(causal),
        scale(static_cast<float>(scale)), mask(nullptr), ms0(0), ms1(0) {}

  int64_t BH() const { return B * H; }
};

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

//===----------------------------------------------------------------------===//
// The tile kernels (compiled generic, AVX2+FMA, and AVX2+FMA with
// AVX512-BF16 dot products; everything but dotTileBf16 inlined)
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

/// One register block of dotTileBf16: MR rows x NV vectors of 16.
template <int MR, int NV>
LPC_INLINE LPC_BF16_TARGET void
dotBlockBf16(int64_t m0, int64_t n0, int64_t KP, const uint32_t *__restrict A,
             int64_t lda, const uint32_t *__restrict B, int64_t ldb,
             float *__restrict C, int64_t ldc) {
  __m512 c[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j)
      c[i][j] = _mm512_setzero_ps();
  for (int64_t kp = 0; kp < KP; ++kp) {
    __m512bh b[NV];
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j)
      b[j] = (__m512bh)_mm512_loadu_si512(B + kp * ldb + n0 + 16 * j);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512bh a =
          (__m512bh)_mm512_set1_epi32(int(A[(m0 + i) * lda + kp]));
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

/// C[M x N] = A B for bf16 operands given as pairs (packPairs): A as rows
/// ([M][lda] pairs), B as columns ([KP][ldb] pairs), C f32 row-major.
/// M % 4 == 0, N % 16 == 0. vdpbf16ps multiplies exactly (a product of two
/// bf16 values fits an f32) and adds in f32, two products per step, in the
/// same order in every block: the f32 sum of the f32 path, reassociated by
/// pairs. (It treats subnormal inputs and results as 0: below 1.2e-38,
/// under any bound of the header's.) A call per tile, not inlined: the tile
/// functions that call it are compiled for other targets too.
__attribute__((noinline)) LPC_BF16_TARGET void
dotTileBf16(int64_t M, int64_t N, int64_t KP, const uint32_t *__restrict A,
            int64_t lda, const uint32_t *__restrict B, int64_t ldb,
            float *__restrict C, int64_t ldc) {
  int64_t n0 = 0;
  for (; n0 + 32 <= N; n0 += 32) {
    int64_t m0 = 0;
    for (; m0 + 8 <= M; m0 += 8)
      dotBlockBf16<8, 2>(m0, n0, KP, A, lda, B, ldb, C, ldc);
    for (; m0 < M; m0 += 4)
      dotBlockBf16<4, 2>(m0, n0, KP, A, lda, B, ldb, C, ldc);
  }
  if (n0 < N) { // N - n0 == 16
    int64_t m0 = 0;
    for (; m0 + 8 <= M; m0 += 8)
      dotBlockBf16<8, 1>(m0, n0, KP, A, lda, B, ldb, C, ldc);
    for (; m0 < M; m0 += 4)
      dotBlockBf16<4, 1>(m0, n0, KP, A, lda, B, ldb, C, ldc);
  }
}
#endif

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

/// s[c] = exp(s[c] - shift) over [0, n), n % 16 == 0; returns their sum
/// (W lanes, then Vec::sum).
template <int W>
LPC_INLINE float expRowSum(float *s, int64_t n, float shift) {
  using V = Vec<W>;
  typename V::F acc = V::splat(0);
  const typename V::F sh = V::splat(shift);
  for (int64_t c = 0; c < n; c += W) {
    const typename V::F p = vexp<W>(V::load(s + c) - sh);
    V::store(s + c, p);
    acc += p;
  }
  return V::sum(acc);
}

/// Forward operands of one (batch, head), packed.
struct FwdPacked {
  const float *Q;  // [SqP][Dp]
  const float *Kt; // [nKT][D][kBc]: each key tile transposed
  const float *V;  // [SkvP][Dvp]
  // The bf16 dot-product kernel's operands (else null): Q as rows of pairs
  // [SqP][Dp/2], each key tile's pairs as columns [nKT][Dp/2][kBc].
  const uint32_t *Qp = nullptr, *Kp = nullptr;
};

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
      dotTileBf16(mq, nkp, p.Dp / 2, in.Qp + i0 * (p.Dp / 2), p.Dp / 2,
                  in.Kp + kt * (p.Dp / 2) * kBc, kBc, S, kBc);
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
      l[r] = l[r] * alpha + expRowSum<W>(s, nkp, mnew);
      m[r] = mnew;
      if (alpha != 1.0f) {
        float *o = O + r * p.Dvp;
        for (int64_t e = 0; e < p.Dvp; ++e)
          o[e] *= alpha;
      }
    }
    // O += P V (P's columns past nk are 0, so only nk keys are summed).
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

/// Backward operands of one (batch, head), packed.
struct BwdPacked {
  const float *Q;   // [SqP][Dp]
  const float *Qt;  // [nQT][D][kBr]: each query tile transposed
  const float *K;   // [SkvP][Dp]
  const float *V;   // [SkvP][Dvp]
  const float *dO;  // [SqP][Dvp]
  const float *dOt; // [nQT][Dv][kBr]
  const float *lse; // [SqP]: lse, +inf for rows that see nothing and padding
  const float *Di;  // [SqP]: sum_e dO_ie o_ie
  // The bf16 dot-product kernel's operands (else null): K and V as rows of
  // pairs ([SkvP][Dp/2], [SkvP][Dvp/2]), each query tile's Q and dO pairs
  // as columns ([nQT][Dp/2][kBr], [nQT][Dvp/2][kBr]).
  const uint32_t *Kp = nullptr, *Vp = nullptr, *Qp = nullptr, *dOp = nullptr;
};

/// Per-task scratch of the backward.
struct BwdScratch {
  float *PT;  // [kBc][kBr]: S^T, then P^T
  float *dST; // [kBc][kBr]: dP^T, then dS^T
  float *mT;  // [kBc][kBr]: mask tile, transposed
  float *dK;  // [kBc][Dp]
  float *dV;  // [kBc][Dvp]
};

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
      dotTileBf16(mk, nqp, p.Dp / 2, in.Kp + j0 * (p.Dp / 2), p.Dp / 2,
                  in.Qp + qt * (p.Dp / 2) * kBr, kBr, PT, kBr); // S^T
      dotTileBf16(mk, nqp, p.Dvp / 2, in.Vp + j0 * (p.Dvp / 2), p.Dvp / 2,
                  in.dOp + qt * (p.Dvp / 2) * kBr, kBr, dST, kBr); // dP^T
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
        Vw::store(pt + r, pr);
        Vw::store(ds + r, pr * (Vw::load(ds + r) - Vw::load(di + r)));
      }
    }
    gemmTile<W>(mk, p.Dvp, nq, PT, kBr, in.dO + i0 * p.Dvp, p.Dvp, w.dV, p.Dvp,
             true); // dV += P^T dO
    gemmTile<W>(mk, p.Dp, nq, dST, kBr, in.Q + i0 * p.Dp, p.Dp, w.dK, p.Dp,
             true); // dK += dS^T Q
    gemmTile<W, true>(mq, p.Dp, nk, dST, kBr, K, p.Dp, dQ + i0 * p.Dp, p.Dp,
                      true); // dQ += dS K, dS = (dS^T)^T
  }
}

using FwdTileFn = void (*)(const Problem &, const FwdPacked &, int64_t,
                           float *, float *, float *, float *, float *);
using BwdTileFn = void (*)(const Problem &, const BwdPacked &, int64_t,
                           float *, const BwdScratch &);

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

/// Whether E's calls run (and pack the operands of) the dot-product kernel.
template <class E> bool usesBf16Dot(int kind) {
  return kind == 3 && std::is_same_v<E, BF16>;
}

/// The tile functions for element type E: kernel 3 differs from 2 only
/// where both operands of a product are bf16 inputs.
template <class E> FwdTileFn fwdTileFn(int kind) {
#if defined(__x86_64__)
  if (usesBf16Dot<E>(kind))
    return fwdTileBf16Dot;
  if (kind >= 2)
    return fwdTileAvx2;
#endif
  (void)kind;
  return fwdTileGeneric;
}
template <class E> BwdTileFn bwdTileFn(int kind) {
#if defined(__x86_64__)
  if (usesBf16Dot<E>(kind))
    return bwdTileBf16Dot;
  if (kind >= 2)
    return bwdTileAvx2;
#endif
  (void)kind;
  return bwdTileGeneric;
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

template <class E> struct FwdJob {
  using T = typename E::T;
  const Problem &p;
  View4<T> q, k, v, o;
  View3F lse;
  // Packed, every (batch, head) one after the other; Q and Kt are null
  // with the dot-product kernel (its Qp and Kp replace them).
  float *Q, *Kt, *V;
  FwdTileFn tile;
  uint32_t *Qp = nullptr, *Kp = nullptr; // pairs (kernel 3), else null

  FwdPacked packed(int64_t bh) const {
    FwdPacked in{Q ? Q + bh * p.SqP * p.Dp : nullptr,
                 Kt ? Kt + bh * p.nKT * p.D * kBc : nullptr,
                 V + bh * p.SkvP * p.Dvp};
    if (Qp) {
      in.Qp = Qp + bh * p.SqP * (p.Dp / 2);
      in.Kp = Kp + bh * p.nKT * (p.Dp / 2) * kBc;
    }
    return in;
  }
};

/// Task t of (batch*head) x (query tiles + key tiles): pack one tile.
template <class E> void fwdPack(void *ctx, int64_t begin, int64_t end) {
  const FwdJob<E> &job = *static_cast<const FwdJob<E> *>(ctx);
  const Problem &p = job.p;
  const int64_t per = p.nQT + p.nKT;
  Floats rows(std::max(kBr, kBc) * p.Dp); // a tile's f32 rows, transient
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
      packRows<E>(job.v, bh, p.H, j0, nk, p.Dv, kBc,
                  job.V + (bh * p.SkvP + j0) * p.Dvp, p.Dvp, nullptr);
    }
  }
}

/// Task t of (batch*head) x query tiles: one query tile, stored.
template <class E> void fwdCompute(void *ctx, int64_t begin, int64_t end) {
  const FwdJob<E> &job = *static_cast<const FwdJob<E> *>(ctx);
  const Problem &p = job.p;
  Floats S(kBr * kBc), O(kBr * p.Dvp), rowStats(3 * kBr);
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
  if (mask) {
    p.mask = mask->aligned + mask->offset;
    p.ms0 = mask->strides[0];
    p.ms1 = mask->strides[1];
  }
  const int kind = kernelKind();
  const bool dot = usesBf16Dot<E>(kind);
  // With the dot-product kernel, the pairs (half a float per element)
  // replace the f32 Q and Kt.
  const int64_t nQ = dot ? 0 : p.BH() * p.SqP * p.Dp,
                nKt = dot ? 0 : p.BH() * p.nKT * p.D * kBc,
                nV = p.BH() * p.SkvP * p.Dvp;
  const int64_t nQp = dot ? p.BH() * p.SqP * p.Dp / 2 : 0,
                nKp = dot ? p.BH() * p.SkvP * p.Dp / 2 : 0;
  arena.reserve(Arena::size({nQ, nKt, nV, nQp, nKp}));
  float *Q = dot ? nullptr : arena.take(nQ);
  float *Kt = dot ? nullptr : arena.take(nKt);
  float *V = arena.take(nV);
  FwdJob<E> job{p,      View4<typename E::T>(q), View4<typename E::T>(k),
                View4<typename E::T>(v), View4<typename E::T>(o),
                View3F(lse), Q, Kt, V, fwdTileFn<E>(kind)};
  if (dot) {
    job.Qp = reinterpret_cast<uint32_t *>(arena.take(nQp));
    job.Kp = reinterpret_cast<uint32_t *>(arena.take(nKp));
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
  Floats tiles(3 * kBc * kBr), dK(kBc * p.Dp), dV(kBc * p.Dvp);
  const BwdScratch w{tiles.get(), tiles.get() + kBc * kBr,
                     tiles.get() + 2 * kBc * kBr, dK.get(), dV.get()};
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
  const int64_t nKp = dot ? nK / 2 : 0, nVp = dot ? nV / 2 : 0,
                nQp = dot ? nQ / 2 : 0, ndOp = dot ? ndO / 2 : 0;
  arena.reserve(Arena::size(
      {nQ, nQt, nK, nV, ndO, ndOt, nRow, nRow, ndQ, nKp, nVp, nQp, ndOp}));
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
                bwdTileFn<E>(kind)};
  if (dot) {
    job.Kp = reinterpret_cast<uint32_t *>(arena.take(nKp));
    job.Vp = reinterpret_cast<uint32_t *>(arena.take(nVp));
    job.Qp = reinterpret_cast<uint32_t *>(arena.take(nQp));
    job.dOp = reinterpret_cast<uint32_t *>(arena.take(ndOp));
  }
  lpc_rt_parallel_for(bwdPack<E>, &job, 0, p.BH() * (p.nQT + p.nKT), 1);
  lpc_rt_parallel_for(bwdCompute<E>, &job, 0, p.BH() * groups, 1);
  lpc_rt_parallel_for(bwdStoreDq<E>, &job, 0, p.BH() * p.nQT, 1);
}

} // namespace

namespace lpc {
namespace rt {

void setAttentionKernel(int kind) {
  kernelSetting.store(kind, std::memory_order_relaxed);
}

int attentionKernel() { return kernelKind(); }

} // namespace rt
} // namespace lpc

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
