//===- Gemm.h - CPU GEMM entry points of the lpc runtime --------*- C++ -*-===//
//
// The batched matrix products that JIT-compiled train steps call on the host.
// Code lowered with `llvm.emit_c_interface` passes each memref operand as a
// pointer to its strided descriptor (MLIR's C interface layout):
//
//   C[b] = op(A[b]) x op(B[broadcastB ? 0 : b])      (C overwritten, f32)
//
//   A: [batch, M, K]            or [batch, K, M] when transA
//   B: [batch or 1, K, N]       or [batch or 1, N, K] when transB
//   C: [batch, M, N]            f32
//
// Operands are row-major with a unit stride in the last dimension; the other
// strides (padding) and the descriptor's offset are honoured. BF16 and F16
// operands are raw 16-bit patterns (bf16: the top half of an f32; f16: IEEE
// binary16). Products accumulate in f32 in every entry point. Broken
// descriptors (wrong stride, mismatched sizes, overlapping rows of C) are
// programming errors of the caller: the entry points print what is wrong to
// stderr and abort.
//
// Back end: oneDNN's matmul primitive (libdnnl), one primitive cached per
// shape/layout/type. F16 operands are widened to f32 and multiplied in f32
// (oneDNN 2.6 has no f16 matmul on CPUs without AVX512-FP16). Threads: the
// OpenMP runtime oneDNN was built with (Debian: GNU libgomp), i.e.
// OMP_NUM_THREADS, or every CPU of the process's affinity mask when unset;
// setGemmThreads overrides it.
// See runtime/gemm/README.md for the measurements behind the choice.
//
// The entry points are safe to call from several threads at once.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_GEMM_H
#define LPC_RUNTIME_GEMM_H

#include <cstddef>
#include <cstdint>

namespace lpc {
namespace rt {

/// A strided memref descriptor of rank R, laid out as MLIR's C interface
/// passes it (`llvm.emit_c_interface`). Element (i, j, k) lives at
/// aligned[offset + i*strides[0] + j*strides[1] + k*strides[2]].
template <typename T, int R> struct MemRef {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[R];
  int64_t strides[R];
};

using MemRef3F32 = MemRef<float, 3>;
using MemRef3U16 = MemRef<uint16_t, 3>;
using MemRef3U8 = MemRef<uint8_t, 3>;
using MemRef1F32 = MemRef<float, 1>;

/// A rank-0 memref descriptor (a scalar in memory): aligned[offset].
template <typename T> struct MemRef0 {
  T *allocated;
  T *aligned;
  int64_t offset;
};
using MemRef0F32 = MemRef0<float>;

/// Threads the entry points use: n > 0 fixes the count, 0 restores the
/// default (OMP_NUM_THREADS, else every CPU in the process's affinity mask,
/// as found at the first call). Takes effect at the next call, from any
/// thread. The caller's own OpenMP setting is left as it was after each call.
void setGemmThreads(int n);
/// The thread count the next call will use.
int gemmThreads();

/// A JIT symbol: name and address of one entry point.
struct GemmSymbol {
  const char *name;
  void *address;
};

/// Every entry point below, the fused attention ones of Attention.h and the
/// grouped GEMMs of GroupedGemm.h
/// (`_mlir_ciface_lpc_rt_attention_*`), for the JIT to register (as
/// absolute symbols of its JITDylib): the names are the ones the
/// lowered code calls (`_mlir_ciface_lpc_rt_gemm_f32`, ...). Going through
/// this table also keeps a static LpcGemm from being dropped by the linker.
const GemmSymbol *gemmSymbols(size_t *count);

} // namespace rt
} // namespace lpc

extern "C" {

/// f32 x f32 -> f32.
void _mlir_ciface_lpc_rt_gemm_f32(lpc::rt::MemRef3F32 *A,
                                  lpc::rt::MemRef3F32 *B,
                                  lpc::rt::MemRef3F32 *C, int64_t transA,
                                  int64_t transB, int64_t broadcastB);

/// bf16 x bf16 -> f32 (operands: bf16 bit patterns), f32 accumulation.
void _mlir_ciface_lpc_rt_gemm_bf16(lpc::rt::MemRef3U16 *A,
                                   lpc::rt::MemRef3U16 *B,
                                   lpc::rt::MemRef3F32 *C, int64_t transA,
                                   int64_t transB, int64_t broadcastB);

/// bf16 x bf16 -> bf16: the f32 accumulation of lpc_rt_gemm_bf16, rounded
/// to bf16 by oneDNN as it stores C (to nearest even; subnormal results,
/// below 2^-126, flush to zero). Half the bytes of C for a GEMM whose result
/// is wanted in bf16 anyway.
void _mlir_ciface_lpc_rt_gemm_bf16_bf16(lpc::rt::MemRef3U16 *A,
                                        lpc::rt::MemRef3U16 *B,
                                        lpc::rt::MemRef3U16 *C, int64_t transA,
                                        int64_t transB, int64_t broadcastB);

/// f16 x f16 -> f32 (operands: IEEE binary16 bit patterns), f32
/// accumulation: the operands are widened to f32 (exactly) and multiplied
/// by the f32 path.
void _mlir_ciface_lpc_rt_gemm_f16(lpc::rt::MemRef3U16 *A,
                                  lpc::rt::MemRef3U16 *B,
                                  lpc::rt::MemRef3F32 *C, int64_t transA,
                                  int64_t transB, int64_t broadcastB);

/// FP8 x FP8 -> f32 (operands: E4M3FN / E5M2 bit patterns, as named),
/// f32 accumulation: the operands are widened to bf16 (exactly: bf16 holds
/// every FP8 value) and multiplied by the bf16 path. What an FP8 tensor
/// core computes, up to summation order; the CUDA artifact's FP8 GEMMs run
/// here in lpc-jit --gpu-loop-passes.
void _mlir_ciface_lpc_rt_gemm_f8e4m3_f8e4m3(lpc::rt::MemRef3U8 *A,
                                            lpc::rt::MemRef3U8 *B,
                                            lpc::rt::MemRef3F32 *C,
                                            int64_t transA, int64_t transB,
                                            int64_t broadcastB);
void _mlir_ciface_lpc_rt_gemm_f8e4m3_f8e5m2(lpc::rt::MemRef3U8 *A,
                                            lpc::rt::MemRef3U8 *B,
                                            lpc::rt::MemRef3F32 *C,
                                            int64_t transA, int64_t transB,
                                            int64_t broadcastB);
void _mlir_ciface_lpc_rt_gemm_f8e5m2_f8e4m3(lpc::rt::MemRef3U8 *A,
                                            lpc::rt::MemRef3U8 *B,
                                            lpc::rt::MemRef3F32 *C,
                                            int64_t transA, int64_t transB,
                                            int64_t broadcastB);

/// FP8 x FP8 dequantized: C = (op(A) x op(B)) * (SA * SB) in f32, SA and
/// SB the operands' scale inverses (f32 scalars): what cuBLASLt computes
/// with A/B scale pointers, and exactly what lpc's reference computes
/// after the GEMM. `_bf16`: C then rounded to bf16 (to nearest even).
#define LPC_RT_GEMM_FP8_SCALED(NAME, CTYPE)                                    \
  void _mlir_ciface_##NAME(lpc::rt::MemRef3U8 *A, lpc::rt::MemRef3U8 *B,      \
                           CTYPE *C, lpc::rt::MemRef0F32 *SA,                  \
                           lpc::rt::MemRef0F32 *SB, int64_t transA,            \
                           int64_t transB, int64_t broadcastB)
LPC_RT_GEMM_FP8_SCALED(lpc_rt_gemm_f8e4m3_f8e4m3_scaled, lpc::rt::MemRef3F32);
LPC_RT_GEMM_FP8_SCALED(lpc_rt_gemm_f8e4m3_f8e5m2_scaled, lpc::rt::MemRef3F32);
LPC_RT_GEMM_FP8_SCALED(lpc_rt_gemm_f8e5m2_f8e4m3_scaled, lpc::rt::MemRef3F32);
LPC_RT_GEMM_FP8_SCALED(lpc_rt_gemm_f8e4m3_f8e4m3_scaled_bf16, lpc::rt::MemRef3U16);
LPC_RT_GEMM_FP8_SCALED(lpc_rt_gemm_f8e4m3_f8e5m2_scaled_bf16, lpc::rt::MemRef3U16);
LPC_RT_GEMM_FP8_SCALED(lpc_rt_gemm_f8e5m2_f8e4m3_scaled_bf16, lpc::rt::MemRef3U16);

/// f32 / bf16 / f16 GEMMs with an f32 result and a bias: C[b, i, j] =
/// product + BIAS[j], added in f32 (cuBLASLt's bias epilogue; what lpc's
/// graph computes when it adds an f32 bias to an f32 product).
#define LPC_RT_GEMM_BIAS(NAME, ABTYPE)                                         \
  void _mlir_ciface_##NAME(ABTYPE *A, ABTYPE *B, lpc::rt::MemRef3F32 *C,       \
                           lpc::rt::MemRef1F32 *BIAS, int64_t transA,          \
                           int64_t transB, int64_t broadcastB)
LPC_RT_GEMM_BIAS(lpc_rt_gemm_f32_bias, lpc::rt::MemRef3F32);
LPC_RT_GEMM_BIAS(lpc_rt_gemm_bf16_bias, lpc::rt::MemRef3U16);
LPC_RT_GEMM_BIAS(lpc_rt_gemm_f16_bias, lpc::rt::MemRef3U16);

} // extern "C"

#endif // LPC_RUNTIME_GEMM_H
