//===- GroupedGemm.h - grouped GEMMs (mixture of experts) -------*- C++ -*-===//
//
// The CPU entry points of lpc.grouped_matmul and its weight gradient
// (runtime/gemm/GroupedGemm.cpp; the lowered code calls them through
// dialects/GroupedMatmulBufferization.cpp). <t> = f32 | bf16 | f16 (bf16
// and f16 as raw bits); products accumulate in f32, results are rounded to
// <t> once.
//
//   lpc_rt_grouped_gemm_<t>(x [R, K], w [G, K, N] ([G, N, K] with transB),
//                           groups [R] i32, y [R, N], transB):
//     y[r] = x[r] op(w[groups[r]]); 0 where groups[r] is outside [0, G).
//   lpc_rt_grouped_gemm_wgrad_<t>(x [R, K], dy [R, N], groups [R] i32,
//                                 dw [G, K, N]):
//     dw[g] = sum over the rows r of group g of x[r]^T dy[r]; 0 for a
//     group with no rows.
//
// Rows need unit stride in their last dimension; row strides (padding) and
// offsets are honoured. A descriptor that breaks this, or shapes that do not
// agree, abort with a message that names the entry point (a bug in the
// caller).
//
//===----------------------------------------------------------------------===//
#ifndef LPC_RUNTIME_GROUPEDGEMM_H
#define LPC_RUNTIME_GROUPEDGEMM_H

#include "lpc/Runtime/Gemm.h"

#include <cstdint>

#define LPC_RT_GROUPED_GEMM(SUFFIX, T)                                         \
  void _mlir_ciface_lpc_rt_grouped_gemm_##SUFFIX(                              \
      lpc::rt::MemRef<T, 2> *X, lpc::rt::MemRef<T, 3> *W,                      \
      lpc::rt::MemRef<int32_t, 1> *G, lpc::rt::MemRef<T, 2> *Y,                \
      int64_t transB);                                                         \
  void _mlir_ciface_lpc_rt_grouped_gemm_wgrad_##SUFFIX(                        \
      lpc::rt::MemRef<T, 2> *X, lpc::rt::MemRef<T, 2> *DY,                     \
      lpc::rt::MemRef<int32_t, 1> *G, lpc::rt::MemRef<T, 3> *DW);

extern "C" {
LPC_RT_GROUPED_GEMM(f32, float)
LPC_RT_GROUPED_GEMM(bf16, uint16_t)
LPC_RT_GROUPED_GEMM(f16, uint16_t)
}

#endif // LPC_RUNTIME_GROUPEDGEMM_H
