//===- AttentionInternal.h - shared by the CPU attention kernel's files -===//
//
// INTERNAL to runtime/gemm: what Attention.cpp (packing, scheduling, entry
// points), AttentionTiles.cpp (the tile kernels, in three builds) and
// AttentionCheck.cpp (the descriptor checks) share. The public interface
// is include/lpc/Runtime/Attention.h.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_GEMM_ATTENTIONINTERNAL_H
#define LPC_RUNTIME_GEMM_ATTENTIONINTERNAL_H

#include "lpc/Runtime/Attention.h"

#include <cstdint>
#include <cstring>
#include <limits>

namespace lpc {
namespace rt {
namespace attention {

constexpr int64_t kBr = lpc::rt::kAttentionBlockQ; // queries per tile
constexpr int64_t kBc = lpc::rt::kAttentionBlockK; // keys per tile
static_assert(kBr % 16 == 0 && kBc % 16 == 0,
              "tile sizes must be multiples of the micro-kernel's 16 columns");
constexpr float kInf = std::numeric_limits<float>::infinity();

inline int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
/// p[0, n) = 0 (nothing when n == 0, p then possibly null).
inline void zero(float *p, int64_t n) {
  if (n > 0)
    std::memset(p, 0, sizeof(float) * static_cast<size_t>(n));
}
inline int64_t ceilDiv(int64_t x, int64_t m) { return (x + m - 1) / m; }

//===----------------------------------------------------------------------===//
// The problem, and the packed operands the tile kernels read
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
  // bf16 entry points: P and dS rounded to bf16 (to nearest even) before
  // their products, as FlashAttention-2, cuDNN and lpc's unfused bf16 path do.
  bool bf16P = false;

  Problem(int64_t B, int64_t H, int64_t Sq, int64_t Skv, int64_t D,
          int64_t Dv, bool causal, double scale)
      : B(B), H(H), Sq(Sq), Skv(Skv), D(D), Dv(Dv), Dp(roundUp(D, 16)),
        Dvp(roundUp(Dv, 16)), nQT(ceilDiv(Sq, kBr)), nKT(ceilDiv(Skv, kBc)),
        SqP(nQT * kBr), SkvP(nKT * kBc), off(Skv - Sq), causal(causal),
        scale(static_cast<float>(scale)), mask(nullptr), ms0(0), ms1(0) {}

  int64_t BH() const { return B * H; }
};

/// Forward operands of one (batch, head), packed.
struct FwdPacked {
  const float *Q;  // [SqP][Dp]
  const float *Kt; // [nKT][D][kBc]: each key tile transposed
  const float *V;  // [SkvP][Dvp]
  // The bf16 dot-product kernel's operands (else null): Q as rows of pairs
  // [SqP][Dp/2], each key tile's pairs as columns [nKT][Dp/2][kBc], and V
  // with its rows paired (keys 2t and 2t + 1 of each column) [SkvP/2][Dvp]
  // (V above is then null).
  const uint32_t *Qp = nullptr, *Kp = nullptr, *Vk = nullptr;
};

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
  // as columns ([nQT][Dp/2][kBr], [nQT][Dvp/2][kBr]); and Q, dO, K with
  // their rows paired (rows 2t and 2t + 1 of each column: [SqP/2][Dp],
  // [SqP/2][Dvp], [SkvP/2][Dp]) for the products with P and dS.
  const uint32_t *Kp = nullptr, *Vp = nullptr, *Qp = nullptr, *dOp = nullptr;
  const uint32_t *Qk = nullptr, *dOk = nullptr, *Kk = nullptr;
};

/// Per-task scratch of the backward.
struct BwdScratch {
  float *PT;  // [kBc][kBr]: S^T, then P^T
  float *dST; // [kBc][kBr]: dP^T, then dS^T
  float *mT;  // [kBc][kBr]: mask tile, transposed
  float *dK;  // [kBc][Dp]
  float *dV;  // [kBc][Dvp]
  // The dot-product kernel's bf16 P^T and dS^T (rows of pairs, [kBc][kBr/2])
  // and dS (pairs as columns, [kBc/2][kBr]).
  uint32_t *PTb, *dSTb, *dSb;
};

//===----------------------------------------------------------------------===//
// The tile kernels (AttentionTiles.cpp)
//===----------------------------------------------------------------------===//

/// One query tile of the forward: O[r][0, Dv) = o of query qt*kBr + r
/// (normalized), lse[r]. S: [kBr][kBc] f32 scratch followed by [kBr][kBc/2]
/// pairs (the dot-product kernel's bf16 P); O: [kBr][Dvp]; m, l: [kBr].
using FwdTileFn = void (*)(const Problem &, const FwdPacked &, int64_t qt,
                           float *S, float *O, float *m, float *l,
                           float *lse);
/// One key tile of the backward: dK, dV (f32, dK not yet scaled) in the
/// scratch, dQ[i] += dS K into the group's dQ buffer (not yet scaled).
using BwdTileFn = void (*)(const Problem &, const BwdPacked &, int64_t kt,
                           float *dQ, const BwdScratch &);

/// 1 generic, 2 AVX2+FMA, 3 AVX2+FMA with AVX512-BF16 dot products: the
/// setting (0: the best) where the CPU has it, else the best below it.
int kernelKind();
/// The tile functions of kernel `kind`; `bf16Dot` (Attention.cpp's
/// usesBf16Dot: kernel 3 and bf16 inputs) picks the dot-product build,
/// which reads the pairs in the packed operands instead of the f32 Q, Kt
/// (forward) and Qt, dOt (backward).
FwdTileFn fwdTileFn(int kind, bool bf16Dot);
BwdTileFn bwdTileFn(int kind, bool bf16Dot);

//===----------------------------------------------------------------------===//
// Checking the caller's descriptors (AttentionCheck.cpp)
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

/// Every check of the header's contract; aborts on the first fault.
void validate(const Call &c);

} // namespace attention
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_GEMM_ATTENTIONINTERNAL_H
