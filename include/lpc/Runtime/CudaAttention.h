//===- CudaAttention.h - fused attention on the GPU through cuDNN -*- C++ -*-===//
//
// Scaled dot-product attention of compiled train steps (the artifact's
// "attention" and "attention_backward" ops, docs/cuda-artifact.md), run by
// cuDNN 9's fused flash-attention engines through its backend graph API:
//
//   q [B, H, Sq, D], k [B, H, Skv, D], v [B, H, Skv, Dv] (BF16 or F16)
//   s_ij  = scale * q_i . k_j, masked (-inf) where causal and
//           j > i + (Skv - Sq) (bottom-right aligned; top-left when Sq = Skv)
//   lse_i = log sum_j exp(s_ij)                       ([B, H, Sq] F32)
//   o_i   = sum_j exp(s_ij - lse_i) v_j               ([B, H, Sq, Dv])
//
// and its gradient: given q, k, v, o, lse and do (like o), writes
//
//   dP_ij = do_i . v_j,  delta_i = do_i . o_i,  dS_ij = p_ij (dP_ij - delta_i)
//   dq_i = scale sum_j dS_ij k_j,  dk_j = scale sum_i dS_ij q_i,
//   dv_j = sum_i p_ij do_i
//
// Every 4-D operand is a strided view (any strides, the last 1: q, k and v
// may be read in place from one [B, S, 3, H, D] projection); lse is
// contiguous. The cuDNN graph is the one cudnn-frontend's SDPA nodes build
// for cuDNN 9: matmul, scale, causal mask (generated row/column indices, a
// comparison and a select), softmax with its "Stats" output (max + log of
// the sum), matmul; the backward graph recomputes P from the stats.
//
// cuDNN is opened with dlopen (libcudnn.so.9, else libcudnn.so, else the
// toolkit's; $LPC_CUDNN_LIBRARY wins when set), as cuBLASLt is: the runtime
// builds and runs without it, and only an artifact with attention ops needs it.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDAATTENTION_H
#define LPC_RUNTIME_CUDAATTENTION_H

#include "lpc/Runtime/CudaDriver.h"
#include "lpc/Runtime/Error.h"
#include "lpc/Runtime/Tensor.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace lpc {
namespace rt {
namespace cuda {

/// Head dimensions cuDNN 9's fused attention takes (both D and Dv): a
/// multiple of kAttentionHeadDimMultiple, at most kAttentionMaxHeadDimSm90 on
/// Hopper and newer, at most kAttentionMaxHeadDimSm80 on Ampere and Ada
/// (cudnn-frontend's support surface, include/cudnn_frontend/node/
/// sdpa_support_surface.h and the SDPA backward node, for cuDNN 9.0-9.19:
/// forward and backward alike).
inline constexpr int64_t kAttentionHeadDimMultiple = 8;
inline constexpr int64_t kAttentionMaxHeadDimSm80 = 128;
inline constexpr int64_t kAttentionMaxHeadDimSm90 = 256;

/// What is computed: shapes, strides (in elements), flags. The strides of
/// lse are implied (contiguous [B, H, Sq]).
struct AttentionDesc {
  bool backward = false;
  DType dtype = DType::BF16; // q, k, v, o, do, dq, dk, dv
  bool causal = false;
  float scale = 1.0f;
  int64_t b = 0, h = 0, sq = 0, skv = 0, d = 0, dv = 0;
  using Strides = std::array<int64_t, 4>;
  Strides q{}, k{}, v{}, o{};
  Strides dO{}, dq{}, dk{}, dV{}; // backward only

  /// "attention bf16 causal, B 4 H 32 Sq 2048 Skv 2048 D 128 Dv 128, scale 0.0884"
  std::string str() const;
  /// Everything a cuDNN plan depends on (not the scale's value: it is a
  /// by-value operand of the plan, but plans are still built per scale).
  std::string key() const;
  /// Non-masked score elements per (batch, head): Sq x Skv, or the count
  /// below the bottom-right diagonal when causal.
  double scoreElements() const;
  /// FLOPs as cuDNN's benchmarks count them (cudnn-frontend,
  /// benchmark/sdpa_benchmark_training): 2 x B x H x scoreElements x
  /// (D + Dv) forward (two GEMMs), x (3 D + 2 Dv) backward (five).
  double flops() const;
};

/// Device pointers of one call (addresses of each view's first element).
struct AttentionOperands {
  CUdeviceptr q = 0, k = 0, v = 0, o = 0, lse = 0;
  CUdeviceptr dO = 0, dq = 0, dk = 0, dV = 0; // backward only
};

/// Checks a description against what the runtime and cuDNN 9 need on any
/// GPU (dtype, sizes, head dims a multiple of 8 and at most 256, last
/// strides 1, strides and offsets 16-byte aligned are the artifact
/// validator's; this checks what a description alone says). Pure.
Error validateAttention(const AttentionDesc &desc);
/// validateAttention plus the pointers: present and 16-byte aligned.
Error validateAttention(const AttentionDesc &desc, const AttentionOperands &ops);

/// The largest D / Dv cuDNN 9's fused attention takes on a GPU of compute
/// capability `ccMajor` (kAttentionMaxHeadDimSm80 or ...Sm90).
int64_t attentionMaxHeadDim(int ccMajor);

/// cuDNN, opened with dlopen on first use (process-wide, thread-safe).
class Cudnn;
Expected<const Cudnn *> loadCudnn();
/// cudnnGetVersion() of the loaded library (91900 = 9.19.0).
size_t cudnnVersion(const Cudnn &lib);
/// The file the library was loaded from (as dlopen was given it).
const std::string &cudnnPath(const Cudnn &lib);

/// Success when cuDNN of version `version` can run `desc` on a GPU of
/// compute capability `ccMajor`.`ccMinor` (the version- and
/// architecture-specific limits of cudnn-frontend's support surface);
/// otherwise says which limit and what to change.
Error checkAttentionSupport(const AttentionDesc &desc, size_t version, int ccMajor,
                            int ccMinor);

/// How far building `desc`'s cuDNN graph got without a GPU.
struct AttentionGraphCheck {
  size_t tensors = 0;    // tensor descriptors finalized
  size_t operations = 0; // operation descriptors finalized
  bool graphFinalized = false; // the operation graph (no handle)
  /// What stopped it after the operation graph ("" when the heuristic ran
  /// too), e.g. the heuristic's error without a device.
  std::string stoppedAt;
  size_t engineConfigs = 0; // heuristic results, when it ran
  bool planFinalized = false; // an execution plan of the first (no handle)
};
/// Builds and destroys `desc`'s cuDNN operation graph (every tensor and
/// operation descriptor, then the graph, without a handle), then asks the
/// heuristic for engine configurations without a device: checks, without a
/// GPU, that the loaded library accepts every attribute the engine sets.
/// An error when a descriptor or the graph is refused; `out` says how far
/// it got (a heuristic that needs a device is not an error).
Error checkAttentionGraph(const Cudnn &lib, const AttentionDesc &desc,
                          AttentionGraphCheck *out = nullptr);

/// Runs attention steps on one Device's stream through cuDNN. A plan (the
/// operation graph, the heuristic's engine configuration, an execution
/// plan) is built once per distinct description, by prepare() (call it for
/// every description before the first run, e.g. when an artifact loads:
/// the workspace is sized and allocated there, outside any graph capture)
/// or by the first run() of it. One workspace serves every plan (they are
/// ordered on the stream). Thread-safe; calls serialize.
class AttentionEngine {
public:
  static Expected<std::unique_ptr<AttentionEngine>> create(Device &device);
  ~AttentionEngine();
  AttentionEngine(const AttentionEngine &) = delete;
  AttentionEngine &operator=(const AttentionEngine &) = delete;

  /// Builds the plan for `desc` (if not yet) and grows the workspace to
  /// what it needs.
  Error prepare(const AttentionDesc &desc);
  /// Validates and queues one attention step on the device's stream
  /// (capturable into a CUDA graph once prepared).
  Error run(const AttentionDesc &desc, const AttentionOperands &ops);

  size_t cachedPlans() const;
  size_t workspaceBytes() const;
  /// The engine the last prepare()/run() chose ("engine 8, workspace 0
  /// bytes, 3 engine configs offered").
  std::string lastPlanInfo() const;

  struct Plan; // defined in Attention.cpp

private:
  AttentionEngine() = default;
  Expected<Plan *> planFor(const AttentionDesc &desc);
  Device *device_ = nullptr;
  const Cudnn *lib_ = nullptr;
  void *handle_ = nullptr; // cudnnHandle_t
  DeviceBuffer workspace_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
  std::string lastPlanInfo_;
};

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDAATTENTION_H
