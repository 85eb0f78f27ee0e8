//===- CudaEstimate.h - a cost model of CUDA artifacts ----------*- C++ -*-===//
//
// What a train step compiled to a CUDA artifact (docs/cuda-artifact.md)
// should cost on an H200, op by op, without a GPU: how a change is judged
// before one is lent (lpc-cuda-check --estimate; docs/cost-model.md has the
// method, the constants' sources and the limits). A model, not a
// measurement:
//
//   Expected<Artifact> art = loadArtifact(path);
//   FunctionEstimate e = estimateFunction(art->functions[0], Scenario::Mid);
//   e.seconds, e.classes(), e.gemmGroups(), e.ops[i].seconds ...
//
// The ops run in order on one stream (replayed as one CUDA graph), so the
// step is the serial sum of the ops. Per op: a fixed per-node cost plus
//   GEMM    max(2 M N K batch / (achieved rate of its format x a shape
//           factor), bytes of A, B, C / DRAM bandwidth)
//   copy    2 x bytes / DRAM bandwidth
//   attention max(FLOPs (AttentionDesc::flops) / achieved cuDNN rate,
//           bytes of q, k, v, o, lse (, do, dq, dk, dv) / DRAM bandwidth)
//   kernel  max(bytes read + written / DRAM bandwidth,
//               its serial loop's latency chain,
//               L2 sectors of its scalar byte loads (FP8 transposes),
//               a sector per partial-sector store: a sector a warp's
//               stores touch without filling it (found by running the
//               kernel's index arithmetic per lane, PtxWarp.h))
// with what a kernel reads and writes and its loop length from the
// artifact's "access" / "serial_iters" (lpc-gpu-launch-info).
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDAESTIMATE_H
#define LPC_RUNTIME_CUDAESTIMATE_H

#include "lpc/Runtime/CudaArtifact.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {

/// Low: every constant at its optimistic end (a short step); high: the
/// pessimistic end.
enum class Scenario : uint8_t { Low, Mid, High };
const char *scenarioName(Scenario s);

/// The model's constants in one scenario (Estimate.cpp's table says where
/// each comes from).
struct CostConstants {
  double bf16Flops;      // dense BF16 (and F16) GEMMs, large shapes, FLOP/s
  double fp8Flops;       // dense FP8 GEMMs with fast accumulation
  double fp8SplitFactor; // FP8 with the promoted (split) accumulator: x this
  double tf32Flops;      // F32 GEMMs on TF32 tensor cores
  double f32Flops;       // F32 GEMMs without tensor cores
  double dramBytesPerS;  // streaming kernels and copies
  double nodeSeconds;    // fixed cost of one graph node (kernel, GEMM, copy)
  double l2LatencyS;     // a dependent load that hits L2
  double dramLatencyS;   // a dependent load from DRAM under load
  double sectorBytesPerS; // L2 -> SM sectors, for scalar byte gathers
  double columnStoreBytesPerS; // sectors of partial-sector stores (the
                               // FP8 transposed copies of each lane's own
                               // rows), fitted to an H200 run
  // cuDNN fused attention (BF16/F16), achieved FLOP/s as cuDNN's benchmarks
  // count them (AttentionDesc::flops): forward and backward, without and
  // with the causal mask.
  double attnFwdFlops, attnBwdFlops, attnFwdCausalFlops, attnBwdCausalFlops;
};
const CostConstants &costConstants(Scenario s);

/// The modelled machine (the same in every scenario).
struct Machine {
  static constexpr int sms = 132;            // H200 SXM (GH100, as H100 SXM)
  static constexpr int threadsPerSm = 2048;  // resident threads per SM
  static constexpr uint64_t l2ResidentBytes = uint64_t(32) << 20;
  static constexpr int sectorBytes = 32;     // one L2 sector
  static constexpr int gemmTileM = 128, gemmTileN = 256; // cuBLASLt's large tile
};

struct OpCost {
  size_t index = 0;       // in the function's ops
  std::string label;      // "launch k_3", "gemm", "copy"
  std::string cls;        // the class (see classes())
  bool fp8Machinery = false; // a non-GEMM op whose every output only feeds
                             // FP8 GEMM operands/scales or FP8 state/metrics
  double readBytes = 0, writeBytes = 0;
  double flops = 0;       // GEMMs and attention
  int64_t threads = 0;    // launches: grid x block
  int64_t serialIters = 0;
  double seconds = 0;     // including the fixed per-node cost
  const char *bound = ""; // "DRAM", "latency", "L2 sectors", "col stores",
                          // "compute", "fixed"
  // GEMMs: the shape and the precision name ("BF16", "FP8 fast-acc", ...).
  int64_t batch = 0, m = 0, n = 0, k = 0;
  std::string precision, cType;
};

struct ClassTotal {
  std::string cls;
  size_t count = 0;
  double bytes = 0, seconds = 0;
  bool fp8Machinery = false;
};

struct GemmGroup {
  std::string precision, cType;
  int64_t batch = 0, m = 0, n = 0, k = 0;
  size_t count = 0;
  double flops = 0, seconds = 0;
};

struct FunctionEstimate {
  std::string function;
  Scenario scenario = Scenario::Mid;
  std::vector<OpCost> ops;
  double seconds = 0;               // the step: the serial sum
  double gemmSeconds = 0, copySeconds = 0, launchSeconds = 0;
  double attentionSeconds = 0;      // attention and attention_backward
  double fixedSeconds = 0;          // the per-node part of all of them
  double fp8MachinerySeconds = 0;
  size_t launches = 0, gemms = 0, copies = 0, fp8MachineryOps = 0;
  size_t attentions = 0;
  /// Collective steps: their local memory traffic only (the link time
  /// depends on the ranks and the fabric: bench/README.md's ring model).
  size_t collectives = 0;
  double collectiveSeconds = 0, collectiveBytes = 0; // bytes: each op's payload
  /// False when some launch lacks "access" (an artifact from before it):
  /// then every view counts once as read and nothing is FP8 machinery.
  bool accessKnown = true;

  size_t nodes() const { return ops.size(); }
  /// Per class, most expensive first.
  std::vector<ClassTotal> classes() const;
  /// GEMMs of one shape, precision and C type, most expensive first.
  std::vector<GemmGroup> gemmGroups() const;
};

FunctionEstimate estimateFunction(const ArtifactFunction &function, Scenario scenario);

/// The function an estimate is about: the one named `name`, else the
/// train step (a name ending in "_train_step"), else the first; null if
/// the artifact has none or no function is named `name`.
const ArtifactFunction *estimatedFunction(const Artifact &artifact,
                                          const std::string &name = "");

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDAESTIMATE_H
