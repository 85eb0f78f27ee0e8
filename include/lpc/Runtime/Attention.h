//===- Attention.h - CPU fused attention entry points -----------*- C++ -*-===//
//
// What `lpc.attention` and its gradient op become on the host after
// bufferization: a call to one of these C-interface entry points (MLIR's
// `llvm.emit_c_interface`: each memref as a pointer to its strided
// descriptor, lpc::rt::MemRef in Gemm.h). They are registered with the JIT
// through lpc::rt::gemmSymbols() (one table for the whole CPU kernel
// library).
//
// Shapes (B batch, H heads, Sq queries, Skv keys, D the q/k width, Dv the
// v width; any size >= 0, every dimension's stride arbitrary, in elements):
//
//   q    [B, H, Sq, D]     k  [B, H, Skv, D]     v [B, H, Skv, Dv]
//   o    [B, H, Sq, Dv]    dout like o           lse [B, H, Sq] (f32)
//   mask [Sq, Skv] (f32, additive, shared by every batch and head)
//   dq like q, dk like k, dv like v
//
// Element types: `_f32` float, `_bf16` / `_f16` raw 16-bit patterns
// (uint16_t). lse and mask are f32 in every variant.
//
// Semantics (what lpc's reference evaluator computes in double):
//
//   s_ij  = scale * sum_d q_id k_jd  (+ mask_ij)
//           causal: s_ij = -inf where j > i + (Skv - Sq)
//   lse_i = log(sum_j exp(s_ij))     (-inf for a row of -inf only)
//   p_ij  = exp(s_ij - lse_i)         (0 for such a row)
//   o_i   = sum_j p_ij v_j            (0 for such a row)
//
//   backward, given dout = dO, o and lse as the forward stored them:
//   D_i   = sum_e dO_ie o_ie
//   dv_j  = sum_i p_ij dO_i
//   ds_ij = p_ij (dO_i . v_j - D_i)
//   dq_i  = scale * sum_j ds_ij k_j,   dk_j = scale * sum_i ds_ij q_i
//
// Everything is computed in f32 (bf16 / f16 inputs widened exactly) and each
// output is rounded to its type once, to nearest even, at the end; the bf16
// entry points also round p (for o and dv) and ds (for dq and dk) to bf16,
// to nearest even, before those products, as FlashAttention-2, cuDNN and
// PyTorch's CPU flash attention do for bf16 and as lpc's unfused bf16 path
// does (the row sums of p stay f32, unrounded). p is recomputed from q, k
// and lse. o, lse, dq, dk, dv are overwritten. Rows or keys that see nothing
// get exactly 0 (and lse -inf).
//
// The kernel (runtime/gemm/Attention.cpp; README.md "Fused attention"):
// tiled online softmax (flash-attention style) in tiles of
// kAttentionBlockQ queries x kAttentionBlockK keys; no Sq x Skv matrix is
// ever formed, tiles wholly above the causal diagonal are skipped. Parallel
// over (batch * head, tile) on the runtime's pool (lpc_rt_parallel_for,
// setGemmThreads); the results do not depend on the thread count (no
// atomics, fixed summation order).
//
// Scratch: q, k, v (dout) are packed as f32 tiles into a block that the
// calling thread keeps for its next calls, O(B * H * (Sq + Skv) * (D + Dv))
// floats; nothing of size Sq x Skv.
//
// Broken descriptors (null descriptors, negative sizes, shapes that do not
// match, a null data pointer with elements, causal not 0/1, a non-finite
// scale, an output whose elements overlap) are a bug in the caller: one line
// on stderr naming the entry point, the fault and every shape, then abort().
// Outputs must not share elements with each other or with an input (not
// checked).
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_ATTENTION_H
#define LPC_RUNTIME_ATTENTION_H

#include "lpc/Runtime/Gemm.h"

#include <cstdint>

namespace lpc {
namespace rt {

/// Tile sizes of the kernel (queries x keys).
constexpr int64_t kAttentionBlockQ = 64;
constexpr int64_t kAttentionBlockK = 64;

/// Which code the attention entry points run, for tests and benchmarks:
/// 0 = chosen by the CPU (the default: the best it has), 1 = the generic
/// x86-64 build, 2 = AVX2+FMA, 3 = AVX2+FMA with the bf16 entry points'
/// products as AVX512-BF16 dot products (all five: exact products, f32
/// sums; subnormal inputs read as 0; f32 and f16 run kernel 2's code). A
/// kind the CPU lacks falls back to the best below it. Takes effect at the
/// next call.
void setAttentionKernel(int kind);
/// The code the next call will run: 1 generic, 2 AVX2+FMA, 3 AVX512-BF16.
int attentionKernel();

} // namespace rt
} // namespace lpc

extern "C" {

#define LPC_RT_ATTENTION_DECLS(SUFFIX, T)                                      \
  void _mlir_ciface_lpc_rt_attention_fwd_##SUFFIX(                             \
      lpc::rt::MemRef<T, 4> *q, lpc::rt::MemRef<T, 4> *k,                      \
      lpc::rt::MemRef<T, 4> *v, lpc::rt::MemRef<T, 4> *o,                      \
      lpc::rt::MemRef<float, 3> *lse, int64_t causal, double scale);           \
  void _mlir_ciface_lpc_rt_attention_fwd_##SUFFIX##_mask(                      \
      lpc::rt::MemRef<T, 4> *q, lpc::rt::MemRef<T, 4> *k,                      \
      lpc::rt::MemRef<T, 4> *v, lpc::rt::MemRef<float, 2> *mask,               \
      lpc::rt::MemRef<T, 4> *o, lpc::rt::MemRef<float, 3> *lse,                \
      int64_t causal, double scale);                                           \
  void _mlir_ciface_lpc_rt_attention_bwd_##SUFFIX(                             \
      lpc::rt::MemRef<T, 4> *q, lpc::rt::MemRef<T, 4> *k,                      \
      lpc::rt::MemRef<T, 4> *v, lpc::rt::MemRef<T, 4> *o,                      \
      lpc::rt::MemRef<T, 4> *dout, lpc::rt::MemRef<float, 3> *lse,             \
      lpc::rt::MemRef<T, 4> *dq, lpc::rt::MemRef<T, 4> *dk,                    \
      lpc::rt::MemRef<T, 4> *dv, int64_t causal, double scale);                \
  void _mlir_ciface_lpc_rt_attention_bwd_##SUFFIX##_mask(                      \
      lpc::rt::MemRef<T, 4> *q, lpc::rt::MemRef<T, 4> *k,                      \
      lpc::rt::MemRef<T, 4> *v, lpc::rt::MemRef<T, 4> *o,                      \
      lpc::rt::MemRef<T, 4> *dout, lpc::rt::MemRef<float, 3> *lse,             \
      lpc::rt::MemRef<float, 2> *mask, lpc::rt::MemRef<T, 4> *dq,              \
      lpc::rt::MemRef<T, 4> *dk, lpc::rt::MemRef<T, 4> *dv, int64_t causal,    \
      double scale);

/// _mlir_ciface_lpc_rt_attention_{fwd,bwd}_{f32,bf16,f16}[_mask]
LPC_RT_ATTENTION_DECLS(f32, float)
LPC_RT_ATTENTION_DECLS(bf16, uint16_t)
LPC_RT_ATTENTION_DECLS(f16, uint16_t)

#undef LPC_RT_ATTENTION_DECLS

} // extern "C"

#endif // LPC_RUNTIME_ATTENTION_H
