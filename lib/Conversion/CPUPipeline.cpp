//===- CPUPipeline.cpp - lpc -> LLVM dialect for the host JIT -------------===//
//
// Upstream passes after lpc-to-linalg: bufferization with results turned
// into caller-provided out-parameters (so a train step writes its new state
// into buffers the runtime owns), GEMM library calls, loops (the large nests
// outlined for the runtime's threads), and the LLVM dialect; LLVM's
// vectorizers run later, in the JIT (CPUBackend.cpp).
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;

// Fewest elements a partial of a split full reduction reduces on the host
// (a thread's chunk is at least one).
static constexpr int64_t kCPUSplitMinWork = 4096;

// Shared with the GPU pipeline (GPUPipeline.cpp).
static const char *kToBuffers =
    "canonicalize,cse,lpc-fuse-elementwise{multi-use=true},canonicalize,cse,"
    "lpc-fuse-sibling-reductions,cse,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "func.func(lpc-distinct-results),"
    "buffer-results-to-out-params{modify-public-functions hoist-static-allocs},"
    "buffer-deallocation-pipeline";

std::string mlir::lpc::lpcToBuffersPipeline(bool fp8HardwareCvt,
                                            bool fp8Gemm,
                                            int64_t parallelColumnsMinWork,
                                            bool gpuLoops) {
  std::string toBuffers = kToBuffers;
  // Host only: a broadcast producer (a bias's cast) stays its own loop
  // rather than being recomputed for every row.
  if (!gpuLoops)
    toBuffers.replace(toBuffers.find("lpc-fuse-elementwise{multi-use=true}"),
                      strlen("lpc-fuse-elementwise{multi-use=true}"),
                      "lpc-fuse-elementwise{multi-use=true broadcast=false}");
  if (gpuLoops)
    toBuffers.replace(toBuffers.find("lpc-fuse-sibling-reductions"),
                      strlen("lpc-fuse-sibling-reductions"),
                      "lpc-fuse-sibling-reductions{elementwise=true}");
  // Host only: the GPU's loop stage splits reductions its own way.
  if (parallelColumnsMinWork > 0)
    toBuffers.insert(toBuffers.find("one-shot-bufferize"),
                     "lpc-parallel-columns{min-work=" +
                         std::to_string(parallelColumnsMinWork) +
                         "},canonicalize,");
  return std::string("lpc-to-linalg{reject-models=true fp8-hardware-cvt=") +
         (fp8HardwareCvt ? "true" : "false") +
         " fp8-gemm=" + (fp8Gemm ? "true" : "false") + "}," + toBuffers;
}

// Parallel dimensions as scf.parallel (lpc-parallel-columns' scf.forall
// too), the large top-level nests outlined for the runtime's threads
// (lpc-lower-parallel-calls at the end). Without threads there is no
// scf.forall (lpc-parallel-columns only runs with them).
static const char *kToParallelLoops =
    "scf-forall-to-parallel,lpc-strided-copy-to-loops,"
    "func.func(convert-linalg-to-parallel-loops),";
static const char *kToSequentialLoops =
    "lpc-strided-copy-to-loops,"
    "func.func(convert-linalg-to-loops),";

static const char *kToLLVM =
    "lower-affine,convert-scf-to-cf,"
    "arith-expand{include-bf16=true},"
    "lpc-math-approximation,"
    "expand-strided-metadata,lower-affine,"
    "finalize-memref-to-llvm{use-aligned-alloc},"
    // LLVM intrinsics first (sqrt, fma, floor, ...: they vectorize), libm
    // for what is left (powf of lpc.pow).
    "convert-math-to-llvm,"
    "convert-math-to-libm,"
    "convert-arith-to-llvm,"
    "convert-index-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-func-to-llvm,"
    "reconcile-unrealized-casts";

void mlir::lpc::buildCPUCodegenPipeline(OpPassManager &pm, bool profile,
                                        int64_t parallelMinWork,
                                        bool gpuLoopPasses, bool gpuSizes) {
  // --gpu-loop-passes also takes the GPU's GEMM lowering: FP8 GEMMs as
  // TN calls, which the CPU library runs too, and constant operands copied
  // by a loop nest first.
  std::string pipeline =
      lpcToBuffersPipeline(/*fp8HardwareCvt=*/false, gpuLoopPasses,
                           /*parallelColumnsMinWork=*/gpuLoopPasses
                               ? 0
                               : parallelMinWork,
                           /*gpuLoops=*/gpuLoopPasses) +
      (gpuLoopPasses ? ",lpc-gemm-to-calls{fp8=true device-operands=true}"
                     : ",lpc-gemm-to-calls");
  // With threads: full reductions whose result the order cannot change (an
  // amax, FP8 saturation/underflow counts) as partials over contiguous runs
  // in parallel, then one small combine; otherwise each is one thread's
  // loop over the whole tensor. Float sums keep their order.
  if (parallelMinWork > 0 && !gpuLoopPasses)
    pipeline += ",func.func(lpc-split-reductions{contiguous=true exact=true "
                "row-parts=1 min-parts=2 max-parts=256 min-work=" +
                std::to_string(kCPUSplitMinWork) + "})";
  if (profile)
    pipeline += ",lpc-profile-marks";
  pipeline += ",";
  // The GPU pipeline's loop stage, to check its semantics against the
  // reference (lpc-jit --gpu-loop-passes); splitting down to two partials
  // of two elements, rows of 4, and again past 4 partials, so that small
  // test models exercise it all.
  if (gpuLoopPasses)
    pipeline += "lpc-strided-copy-to-loops," +
                (gpuSizes ? gpuLoopPassesPipeline(kGPUSplitOptions)
                          : gpuLoopPassesPipeline(
                                "min-parts=2 min-work=2 max-serial=4 min-row=4",
                                "min-chunk=2")) +
                ",";
  if (parallelMinWork > 0)
    pipeline += std::string(gpuLoopPasses ? "" : kToParallelLoops) +
                "lpc-outline-parallel-loops{min-work=" +
                std::to_string(parallelMinWork) + "},";
  else if (!gpuLoopPasses)
    pipeline += kToSequentialLoops;
  // A function of thousands of loop nests (recurrent layers unrolled) as
  // many small ones: LLVM's compile time grows with the square of a
  // function's loops.
  pipeline += "lpc-outline-serial-loops,";
  pipeline += kToLLVM;
  // Thread-pool calls for the parallel bodies, noalias for all bodies.
  pipeline += ",lpc-lower-parallel-calls";
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error("lpc: the CPU codegen pipeline does not parse "
                             "(are the upstream passes registered?)");
}

namespace {
struct CPUCodegenOptions : public PassPipelineOptions<CPUCodegenOptions> {
  Option<bool> profile{*this, "profile",
                       llvm::cl::desc("insert lpc-profile-marks timer calls"),
                       llvm::cl::init(false)};
  Option<int64_t> parallelMinWork{
      *this, "parallel-min-work",
      llvm::cl::desc("loop nests of at least this many innermost iterations "
                     "run on the runtime's threads (0: none)"),
      llvm::cl::init(65536)};
};
} // namespace

void mlir::lpc::registerCPUCodegenPipeline() {
  PassPipelineRegistration<CPUCodegenOptions>(
      "lpc-cpu-codegen",
      "The host JIT's lowering of a train step (a module holding just the "
      "functions to compile): lpc-to-linalg, bufferization with out-params, "
      "GEMM library calls, loops, the LLVM dialect",
      [](OpPassManager &pm, const CPUCodegenOptions &o) {
        buildCPUCodegenPipeline(pm, o.profile, o.parallelMinWork);
      });
}
