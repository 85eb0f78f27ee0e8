//===- CudaGemm.h - GEMMs on the GPU through cuBLASLt -----------*- C++ -*-===//
//
// The GEMMs of compiled train steps on an NVIDIA GPU, on row-major lpc
// tensors:
//
//   C[b] = epilogue(alpha * op(A[b]) x op(B[broadcastB ? 0 : b]) (+ bias))
//
//   A: [batch, M, K], or [batch, K, M] when transA
//   B: [batch or 1, K, N], or [batch or 1, N, K] when transB
//   C: [batch, M, N]              bias: [N] (added to every row of C)
//
// Precisions (always FP32 accumulation and FP32 alpha):
//
//   A, B            C                      notes
//   F32  x F32      F32                    tf32 = true: TF32 tensor cores
//   BF16 x BF16     BF16 or F32
//   F16  x F16      F16 or F32
//   FP8  x FP8      F32, BF16, F16, or     E4M3xE4M3, E4M3xE5M2, E5M2xE4M3
//                   F8_E4M3 / F8_E5M2      (never E5M2xE5M2); C in E5M2 only
//                   (with cScale)          when an operand is E5M2
//
// FP8 follows cuBLASLt's rules: the "TN" layout only, which for row-major
// lpc tensors is A [M, K] and B transposed, [N, K] (a Linear layer's weight);
// M, N and K multiples of 16 (cuBLASLt: "all matrix dimensions" 16-byte
// aligned; lpc-assign-precision's BF16 fallback checks only K and N); every
// pointer 16-byte aligned. aScale / bScale are device f32 scalars that
// multiply A and B (dequantization factors, 1/scale of Transformer Engine's
// recipes); cScale quantizes an FP8 C; amax (device f32) receives max|C|
// before cScale; fastAccum skips the periodic promotion of the tensor-core
// accumulator (what Transformer Engine does for fprop GEMMs).
//
// Epilogues: bias (type gemmBiasType(): C's type, BF16 for FP8 GEMMs with an
// F32 or FP8 C) and GELU in its tanh approximation (cuBLASLt has no erf GELU).
//
// Mapping: a row-major matrix is its column-major transpose, so the layer
// asks cuBLASLt for C^T = op(B)^T op(A)^T (operands swapped, M and N swapped);
// lpc's "A, B transposed" is therefore cuBLASLt's "TN".
//
// cuBLASLt itself is opened with dlopen (libcublasLt.so.13, else
// libcublasLt.so, else $LPC_CUBLASLT_LIBRARY when set, which wins) so the
// runtime builds and runs its non-GPU paths without the 500 MiB library.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDAGEMM_H
#define LPC_RUNTIME_CUDAGEMM_H

#include "lpc/Runtime/CudaDriver.h"
#include "lpc/Runtime/Error.h"
#include "lpc/Runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

namespace lpc {
namespace rt {
namespace cuda {

enum class GemmEpilogue : uint8_t { None, Bias, GeluTanh, BiasGeluTanh };
const char *gemmEpilogueName(GemmEpilogue epilogue);

/// What is multiplied: shapes, layout, types, epilogue.
struct GemmDesc {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  bool transA = false, transB = false;
  bool broadcastB = false; // one B for every batch
  DType a = DType::F32, b = DType::F32, c = DType::F32;
  GemmEpilogue epilogue = GemmEpilogue::None;
  bool tf32 = false;      // F32 only
  bool fastAccum = false; // FP8 only

  bool isFP8() const;
  bool hasBias() const {
    return epilogue == GemmEpilogue::Bias ||
           epilogue == GemmEpilogue::BiasGeluTanh;
  }
  /// "bf16 x bf16 -> f32, 4096x4096x4096 (MxNxK), A, B^T, bias+gelu"
  std::string str() const;
};

/// Where FP8 scale and amax scalars must sit: cuBLASLt 13.1 answers
/// CUBLAS_STATUS_NOT_SUPPORTED for scale pointers 4 bytes apart (seen on an
/// H200, 2026-12-04); 16-byte aligned ones run.
constexpr size_t kScaleAlign = 16;

/// Device pointers of one call (0 = absent).
struct GemmOperands {
  CUdeviceptr a = 0, b = 0, c = 0;
  CUdeviceptr bias = 0;                // needed iff the epilogue has a bias
  CUdeviceptr aScale = 0, bScale = 0;  // FP8: f32 scalars; 0 = 1
  CUdeviceptr cScale = 0;              // FP8 C: f32 scalar, required
  CUdeviceptr amax = 0;                // FP8: f32 scalar written with max|C|
  float alpha = 1.0f;
};

/// Checks a description against the table above. Pure: no GPU, no library.
Error validateGemm(const GemmDesc &desc);
/// validateGemm plus the pointers: present where required, absent where
/// meaningless, aligned (element size; 16 bytes for FP8 operands and for
/// scale/amax pointers).
Error validateGemm(const GemmDesc &desc, const GemmOperands &ops);
/// The bias element type (C's type; BF16 for FP8 GEMMs with F32/FP8 C).
DType gemmBiasType(const GemmDesc &desc);
/// Bytes of A, B and C for a description (B once when broadcastB).
size_t gemmBytesA(const GemmDesc &desc);
size_t gemmBytesB(const GemmDesc &desc);
size_t gemmBytesC(const GemmDesc &desc);

/// cuBLASLt, opened with dlopen on first use (process-wide, thread-safe).
class CublasLt;
Expected<const CublasLt *> loadCublasLt();
/// cublasLtGetVersion() of the loaded library (130100 = 13.1.0).
size_t cublasLtVersion(const CublasLt &lib);
/// The file the library was loaded from (as dlopen was given it).
const std::string &cublasLtPath(const CublasLt &lib);

/// Success when a cuBLASLt of version `cublasVersion` (cublasLtGetVersion:
/// 130100 = 13.1.0) can run on a driver of `driverVersion`
/// (cuDriverGetVersion): cuBLAS N needs a CUDA N.0 driver (13: R580 or
/// later). Otherwise says which versions were found and which is needed,
/// where cuBLASLt itself would only fail with CUBLAS_STATUS_NOT_INITIALIZED.
Error checkCublasLtDriver(size_t cublasVersion, int driverVersion);

/// Builds and destroys the cuBLASLt descriptors (matmul, layouts,
/// preference) for `desc` with placeholder pointers: checks, without a GPU,
/// that the loaded library accepts every attribute the layer sets.
Error checkGemmDescriptors(const CublasLt &lib, const GemmDesc &desc);

/// Runs GEMMs on one Device's stream. Algorithms come from cuBLASLt's
/// heuristic, cached per (shape, types, layout, epilogue, flags, pointer
/// alignment, which optional pointers are set); one workspace serves every
/// call (they are ordered on the stream). Thread-safe; calls serialize.
class GemmEngine {
public:
  /// Default workspace: 32 MiB (what cuBLAS recommends for Hopper).
  static constexpr size_t kDefaultWorkspaceBytes = size_t(32) << 20;

  static Expected<std::unique_ptr<GemmEngine>>
  create(Device &device, size_t workspaceBytes = kDefaultWorkspaceBytes);
  ~GemmEngine();
  GemmEngine(const GemmEngine &) = delete;
  GemmEngine &operator=(const GemmEngine &) = delete;

  /// Validates and queues one GEMM on the device's stream.
  Error run(const GemmDesc &desc, const GemmOperands &ops);

  /// Plans (heuristic results) cached so far.
  size_t cachedPlans() const;
  /// The algorithm the last run() used ("algo 66 tile 20 stages 35
  /// splitK 1 workspace 0"), for benchmark logs.
  std::string lastPlanInfo() const;

  /// Descriptors and algorithm of one cache entry (defined in Gemm.cpp).
  struct Plan;

private:
  GemmEngine() = default;
  Device *device_ = nullptr;
  const CublasLt *lib_ = nullptr;
  void *handle_ = nullptr; // cublasLtHandle_t
  DeviceBuffer workspace_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
  std::string lastPlanInfo_;
};

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDAGEMM_H
