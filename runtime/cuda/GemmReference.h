//===- GemmReference.h - double-precision GEMM on the host ------*- C++ -*-===//
//
// The oracle of the GPU GEMM checks: the same row-major semantics as
// CudaGemm.h (transposes, broadcast B, bias per output column, tanh GELU),
// computed in double from operands already rounded to their formats.
// Internal to runtime/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDA_GEMMREFERENCE_H
#define LPC_RUNTIME_CUDA_GEMMREFERENCE_H

#include "lpc/Runtime/CudaGemm.h"

#include <cmath>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {

/// GELU, tanh approximation (cuBLASLt's CUBLASLT_EPILOGUE_GELU).
inline double geluTanh(double x) {
  const double c = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

/// C = epilogue(scale * op(A) op(B) + bias) for every batch, row-major
/// [batch, M, N]; `scale` folds alpha and the FP8 operand scales.
inline std::vector<double> referenceGemm(const GemmDesc &d,
                                         const std::vector<double> &a,
                                         const std::vector<double> &b,
                                         const std::vector<double> &bias,
                                         double scale) {
  const int64_t M = d.m, N = d.n, K = d.k;
  std::vector<double> c(size_t(d.batch * M * N));
  for (int64_t t = 0; t < d.batch; ++t) {
    const double *at = a.data() + t * M * K;
    const double *bt = b.data() + (d.broadcastB ? 0 : t) * K * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < K; ++kk) {
          double av = d.transA ? at[kk * M + i] : at[i * K + kk];
          double bv = d.transB ? bt[j * K + kk] : bt[kk * N + j];
          s += av * bv;
        }
        s *= scale;
        if (d.hasBias())
          s += bias[size_t(j)];
        if (d.epilogue == GemmEpilogue::GeluTanh ||
            d.epilogue == GemmEpilogue::BiasGeluTanh)
          s = geluTanh(s);
        c[size_t((t * M + i) * N + j)] = s;
      }
  }
  return c;
}

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDA_GEMMREFERENCE_H
