//===- CudaArtifact.h - compiled train steps for the GPU --------*- C++ -*-===//
//
// The CUDA artifact (docs/cuda-artifact.md, format version 2): what the
// compiler writes for a GPU and the runtime runs without LLVM/MLIR. This
// header has its plain structs, the parser and the validator, and
// CudaFunction, which runs one function of an artifact on a Device
// (attention steps through an AttentionCallback, the 5-argument create()):
//
//   Expected<Artifact> art = loadArtifact(path);     // parsed + validated
//   Expected<std::unique_ptr<CudaFunction>> fn = CudaFunction::create(
//       dev, art->functions[0],
//       [&](const GemmDesc &d, const GemmOperands &o) { return gemm->run(d, o); },
//       path);
//   if (Error e = (*fn)->run(argPtrs, resultPtrs)) ...  // queued on dev's stream
//
// Validation happens before anything runs: every index, every view's
// extreme elements against its space, GEMM shapes, kernels present in their
// module's PTX with the parameter sizes the launch passes, attention shapes,
// strides and cuDNN's head-dim limits. Messages name the
// place: "model.json: function 'mlp_train_step', op 12 (launch k3): param 0:
// view of buffer 4 reaches byte 4096 of 2048".
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDAARTIFACT_H
#define LPC_RUNTIME_CUDAARTIFACT_H

#include "lpc/Runtime/CudaAttention.h"
#include "lpc/Runtime/CudaDriver.h"
#include "lpc/Runtime/CudaGemm.h"
#include "lpc/Runtime/CudaNccl.h"
#include "lpc/Runtime/Error.h"
#include "lpc/Runtime/Slot.h"
#include "lpc/Runtime/Tensor.h"
#include "lpc/Runtime/Trainer.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {

/// The format version this runtime reads.
inline constexpr int kArtifactVersion = 2;
/// Every argument and result a function runs on starts at a multiple of
/// this many bytes: the compiler's kernels assume it (lpc-align-kernel-args)
/// and CudaFunction::run checks it. (Device allocations are 256-aligned.)
inline constexpr uint64_t kArtifactPointerAlign = 16;

/// One argument or result: a contiguous row-major tensor.
/// An argument or result (the trainer's Slot; its byteSize() is SIZE_MAX
/// for shapes whose size overflows, which validate() rejects).
using ArtifactSlot = Slot;

/// A temporary at `offset` in the function's arena.
struct ArtifactBuffer {
  uint64_t offset = 0, bytes = 0;
};

struct ArtifactModule {
  std::string name, ptx;
};

enum class ViewSpace : uint8_t { Arg, Result, Buffer };
/// "arg", "result", "buffer".
const char *viewSpaceName(ViewSpace space);

/// A strided view of an argument, result or buffer, in elements of
/// `elemBytes` bytes.
struct View {
  ViewSpace space = ViewSpace::Arg;
  uint64_t index = 0;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
  uint32_t elemBytes = 4;

  int64_t numElements() const; // product of sizes (validated not to overflow)
  /// Row-major with no gaps (strides of size-1 dimensions do not matter).
  bool isContiguous() const;
};

/// A kernel parameter: a view (3 + 2 * rank kernel parameters) or a scalar.
struct LaunchParam {
  enum class Kind : uint8_t { View, I64, I32, F32, F64 };
  Kind kind = Kind::I64;
  View view;         // Kind::View
  int64_t i = 0;     // I64, I32 (range-checked when parsed)
  double f = 0;      // F32, F64
};

struct LaunchOp {
  uint64_t module = 0;
  std::string kernel;
  Dim3 grid, block;
  unsigned sharedBytes = 0;
  std::vector<LaunchParam> params;
  /// Kernel parameters the launch passes (a view counts 3 + 2 * rank).
  size_t kernelParamCount() const;
  /// Bytes of the parameter block cuLaunchKernel builds (each parameter
  /// at its natural alignment).
  size_t kernelParamBytes() const;

  /// For the cost model (CudaEstimate.h), optional in the file: what the
  /// kernel does with each param (AccessRead | AccessWrite; 0 for scalars
  /// and untouched views), empty when the artifact does not say ...
  static constexpr uint8_t AccessRead = 1, AccessWrite = 2;
  std::vector<uint8_t> access;
  /// ... and the loop iterations one thread runs in sequence.
  std::optional<int64_t> serialIters;
};

/// C = op(A) x op(B) (CudaGemm.h's conventions; validate() derives M, N, K
/// and batch from the views).
struct GemmOp {
  View a, b, c;
  /// FP8 only, both or neither: rank-0 F32 views of the A and B
  /// dequantization factors (cuBLASLt's A/B scale pointers).
  std::optional<View> aScale, bScale;
  /// Rank-1 [N] view of gemmBiasType() added to every row of C (cuBLASLt's
  /// bias epilogue); lpc writes it for F32 C only.
  std::optional<View> bias;
  DType aType = DType::F32, bType = DType::F32, cType = DType::F32;
  bool transA = false, transB = false, broadcastB = false;
  bool tf32 = false;      // F32: TF32 tensor cores
  bool fastAccum = false; // FP8: no periodic promotion of the accumulator
  /// The GemmDesc of this op (meaningful once the views are validated).
  GemmDesc desc() const;
};

struct CopyOp {
  View src, dst;
};

/// Scaled dot-product attention ("attention") or its gradient
/// ("attention_backward"), CudaAttention.h's semantics: q, k, v, o (and
/// do, dq, dk, dv) are rank-4 views of `dtype` with the last stride 1, lse
/// a contiguous [B, H, Sq] F32 view (written forward, read backward).
struct AttentionOp {
  bool backward = false;
  DType dtype = DType::BF16;
  bool causal = false;
  double scale = 1.0;
  View q, k, v, o, lse;
  View dO, dq, dk, dv; // backward only
  /// The AttentionDesc of this op (meaningful once the views are validated).
  AttentionDesc desc() const;
};

/// A collective of a data-parallel step (CudaNccl.h's CollectiveDesc):
/// "all_reduce", "reduce_scatter", "all_gather", "all_to_all" or "shard",
/// with contiguous `in` and `out` views of `dtype` whose sizes fit the kind
/// and `ranks` (an all_to_all's share no bytes).
struct CollectiveOp {
  CollectiveKind kind = CollectiveKind::AllReduce;
  CollectiveReduce reduce = CollectiveReduce::Sum;
  DType dtype = DType::F32;
  int64_t ranks = 0; // 0: any (all_reduce); else the count it was built for
  View in, out;
  /// The CollectiveDesc of this op (meaningful once the views are validated).
  CollectiveDesc desc() const;
};

using ArtifactOp = std::variant<LaunchOp, GemmOp, CopyOp, AttentionOp, CollectiveOp>;
/// "launch k3", "gemm", "copy", "attention", "attention_backward",
/// "all_reduce sum", "reduce_scatter mean", "all_gather", "all_to_all",
/// "shard": how messages name an op.
std::string opLabel(const ArtifactOp &op);

struct ArtifactFunction {
  std::string name;
  std::vector<ArtifactSlot> args, results;
  uint64_t arenaBytes = 0;
  std::vector<ArtifactBuffer> buffers;
  std::vector<ArtifactModule> modules;
  std::vector<ArtifactOp> ops;

  /// Checks everything run() relies on; `source` starts messages (the file).
  Error validate(const std::string &source = "artifact") const;
};

/// The "train" section: what the runtime-only lpc-run needs to train the
/// artifact (lpc-run --emit-artifact writes it).
struct ArtifactTraining {
  ModelInfo model;
  TrainOptions options; // mixed precision, pipeline, lr and its schedule
  int64_t totalSteps = 0; // the schedule's horizon it was compiled for
};

struct Artifact {
  std::string source; // the file (or what the caller named the text)
  std::string chip;   // "sm_90"
  std::string producer;
  std::vector<ArtifactFunction> functions;
  std::optional<ArtifactTraining> train; // absent: the artifact has none

  Error validate() const;
  /// The function named `name`; nullptr if absent.
  const ArtifactFunction *find(std::string_view name) const;
};

/// Kernel parameter bytes no launch may exceed (CUDA 12.1+ on Volta and
/// later); validate() checks it, checkLaunchLimits() the device's own.
inline constexpr size_t kMaxKernelParamBytes = 32764;

/// What one device lets a launch use.
struct LaunchLimits {
  size_t paramBytes = 4096;          // kernel parameter bytes
  size_t sharedPerBlock = 48 << 10;  // static + dynamic shared memory by default
  size_t sharedPerBlockOptin = 48 << 10; // ... opted in to (dynamic part)
};
/// The limits of a device (its shared memory attributes) with a driver of
/// `driverVersion`: 32764 parameter bytes from CUDA 12.1 on sm_70+, else 4096.
LaunchLimits launchLimits(const DeviceInfo &info, int driverVersion);
/// Checks every launch of `f` (validated) against `limits`: its parameter
/// bytes, and its static shared memory (`staticShared(op)`, the loaded
/// kernel's) plus the launch's dynamic shared memory. Messages name the op
/// and both figures.
Error checkLaunchLimits(const ArtifactFunction &f, const LaunchLimits &limits,
                        const std::function<size_t(size_t op)> &staticShared,
                        const std::string &source = "artifact");

/// Parses artifact JSON (structure, types, dtype names, format and
/// version); does not validate. `source` names the text in messages.
Expected<Artifact> parseArtifact(std::string_view json,
                                 const std::string &source = "artifact");
/// Reads, parses and validates the file at `path`.
Expected<Artifact> loadArtifact(const std::string &path);

/// How CudaFunction runs GEMMs: GemmEngine::run in production; tests pass
/// a host reference. Called in op order; the GEMM must be queued on the
/// Device's stream (or be done when it returns).
using GemmCallback = std::function<Error(const GemmDesc &, const GemmOperands &)>;
/// How CudaFunction runs attention steps: AttentionEngine::run in
/// production; tests pass a host stand-in (AttentionReference.h). Called in
/// op order; the step must be queued on the Device's stream (or be done
/// when it returns).
using AttentionCallback =
    std::function<Error(const AttentionDesc &, const AttentionOperands &)>;
/// How CudaFunction runs collective steps: runCollective() with the run's
/// NcclComm (or none, one rank) in production. Called in op order; queued
/// on the Device's stream.
using CollectiveCallback =
    std::function<Error(const CollectiveDesc &, const CollectiveOperands &)>;
/// Everything a function's non-kernel steps go through; each is needed iff
/// the function has such steps.
struct StepCallbacks {
  GemmCallback gemm;
  AttentionCallback attention;
  CollectiveCallback collective;
};

/// One artifact function ready to run on a Device: modules loaded, kernels
/// resolved, the arena allocated once. Not thread-safe (one caller at a
/// time, like the Device's stream it queues on). Drop it before the Device.
class CudaFunction {
public:
  /// Validates `function`, loads its modules and allocates its arena.
  static Expected<std::unique_ptr<CudaFunction>>
  create(Device &device, const ArtifactFunction &function, GemmCallback gemm,
         const std::string &source = "artifact");
  /// ... with attention steps run by `attention` (needed iff the function
  /// has attention ops).
  static Expected<std::unique_ptr<CudaFunction>>
  create(Device &device, const ArtifactFunction &function, GemmCallback gemm,
         AttentionCallback attention, const std::string &source = "artifact");
  /// ... with every kind of step (collectives too).
  static Expected<std::unique_ptr<CudaFunction>>
  create(Device &device, const ArtifactFunction &function, StepCallbacks steps,
         const std::string &source = "artifact");
  ~CudaFunction();
  CudaFunction(const CudaFunction &) = delete;
  CudaFunction &operator=(const CudaFunction &) = delete;

  const ArtifactFunction &function() const { return function_; }
  CUdeviceptr arena() const { return arena_.get(); }

  /// Queues every op on the device's stream (returns without waiting;
  /// with LPC_CUDA_SYNC_OPS=1 it waits after each, to name a faulting op).
  /// One device block per argument and result, each of at least the slot's
  /// byteSize(). After captureGraph(), a call with the captured pointers
  /// replays the graph instead.
  Error run(const std::vector<CUdeviceptr> &args,
            const std::vector<CUdeviceptr> &results);

  /// run() on host memory: copies every argument to a device block (kept
  /// for later calls), runs, and copies every result back (waits).
  Error runHost(const std::vector<const void *> &args,
                const std::vector<void *> &results);

  /// Captures the ops, with the pointers of the last run() (or runHost()),
  /// into a CUDA graph that later run()s with those pointers launch. The
  /// GEMM and attention callbacks must be capturable (GemmEngine::run is;
  /// AttentionEngine::run is once prepared). Up to
  /// kMaxGraphs pointer sets keep their graphs (a train step whose state
  /// blocks alternate has two); capturing one more drops the oldest.
  static constexpr size_t kMaxGraphs = 2;
  Error captureGraph();
  bool hasGraph() const { return !graphs_.empty(); }
  /// Whether the last run's pointers have a graph.
  bool lastRunHasGraph() const;

  /// Op timing (lpc-run --profile-ops): from now on every run() records a
  /// CUDA event before each op and after the last, waits for the run, and
  /// adds each op's time (event to event, so the gap before the next op
  /// counts too) to opMilliseconds() once `skipRuns` runs have passed
  /// (warm-up: module loading, cuBLASLt's first plans). No graph is
  /// captured or replayed while it is on: captureGraph() fails.
  Error enableOpTiming(int64_t skipRuns);
  bool opTiming() const { return !opEvents_.empty(); }
  /// Per op, summed over timedRuns() runs.
  const std::vector<double> &opMilliseconds() const { return opMs_; }
  int64_t timedRuns() const { return timedRuns_; }

private:
  CudaFunction(Device &device, const ArtifactFunction &function,
               StepCallbacks steps, const std::string &source);
  Error opError(size_t op, const Error &e) const;
  Error checkArity(const std::string &where, size_t args, size_t results) const;
  Error queueOps(const std::vector<CUdeviceptr> &args,
                 const std::vector<CUdeviceptr> &results);
  CUdeviceptr base(const View &view, const std::vector<CUdeviceptr> &args,
                   const std::vector<CUdeviceptr> &results) const;

  /// A launch's parameter values, one 8-byte slot per kernel parameter,
  /// and the pointer array (null-terminated) cuLaunchKernel reads.
  struct PackedLaunch {
    CUfunction function = nullptr;
    std::vector<uint64_t> values;
    std::vector<void *> pointers;
    /// Slot pairs (allocated, aligned) that take a view's base address.
    std::vector<std::pair<size_t, const View *>> bases;
  };

  Device &device_;
  ArtifactFunction function_;
  StepCallbacks steps_;
  std::string source_;
  std::vector<Module> modules_;
  std::vector<PackedLaunch> launches_; // one per op (empty for non-launches)
  DeviceBuffer arena_;
  std::vector<CUdeviceptr> lastArgs_, lastResults_;
  bool ran_ = false;
  // LPC_CUDA_SYNC_OPS=1: wait after every op (outside graph capture), so a
  // fault is reported by the op that caused it (scripts/gpu-check.sh).
  bool syncOps_ = false, capturing_ = false;
  struct CapturedGraph {
    std::vector<CUdeviceptr> args, results;
    Graph graph;
  };
  std::vector<CapturedGraph> graphs_; // oldest first
  const CapturedGraph *graphFor(const std::vector<CUdeviceptr> &args,
                                const std::vector<CUdeviceptr> &results) const;
  std::vector<DeviceBuffer> hostArgBlocks_, hostResultBlocks_;
  // enableOpTiming: one event per op and one after the last.
  std::vector<StreamEvent> opEvents_;
  std::vector<double> opMs_;
  int64_t timingSkip_ = 0, timedRuns_ = 0;
  Error addOpTimes();
};

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDAARTIFACT_H
