//===- GPUPipeline.cpp - lpc -> PTX kernels and cuBLASLt calls ------------===//
//
// The CUDA back end's compiler side: a train step becomes GPU kernels
// compiled to PTX by LLVM's NVPTX back end (embedded in a gpu.binary) and a
// host function of allocations, views, device copies, kernel launches and
// GEMM calls (cuBLASLt), which lib/Backend/GPUArtifact.cpp writes out as
// the artifact. lpc-to-linalg and elementwise fusion are shared with the
// CPU pipeline. FP8 conversions use the hardware's cvt instructions from
// sm_89 on (lpc-to-linalg{fp8-hardware-cvt}, then lpc-fp8-to-nvvm in the
// gpu.module), with selects that give the bits of the CPU's integer code,
// which older chips keep; FP8 GEMMs are cuBLASLt FP8 calls there.
//
// The loop stage (gpuLoopPassesPipeline, also run on the CPU by lpc-jit
// --gpu-loop-passes to check it against the reference): first each FP8
// cast also writes the transposed copy an FP8 GEMM needs, tile by tile in
// the same pass over the source (lpc-fuse-cast-transposes); reductions are
// two-level (lpc-split-reductions: partials in parallel, then a small
// combine; rows split so that a warp reads a row's neighbouring elements),
// parallel dimensions go first (lpc-parallel-dims-outer), the other
// transposes of the last two dimensions move a tile of 16 rows of 16 bytes
// per thread (lpc-tile-transposes), the embedding
// gradient's columns run in parallel (lpc-parallel-scatter), accumulators
// stay in registers (lpc-promote-accumulators), every parallel loop is
// collapsed to one dimension (lpc-collapse-parallel-loops: full blocks of
// 256 threads, the innermost dimension fastest) and what is left serial
// (the 0-d scalar code: scales, loss scale, step, learning rate; the final
// steps of full reductions) runs as single-thread kernels
// (lpc-gpu-serial-kernels); adjacent single-thread kernels and the small
// copies between them (the FP8 scale/history bookkeeping, 0-d state
// copies) become one single-thread kernel per run
// (lpc-merge-serial-kernels: at the end of the loop stage, where the
// kernels are still scf.parallel loops in the host function's program
// order, so that lpc-jit --gpu-loop-passes checks it too); last, small
// kernels sink to where their results are needed and the independent ones
// that meet there launch as one (lpc-merge-independent-kernels: the FP8
// tails of every tensor, stage by stage, as multi-tensor kernels).
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
struct GPUCodegenOptions : public PassPipelineOptions<GPUCodegenOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("GPU architecture (sm_80, sm_89, sm_90)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> libdevice{
      *this, "libdevice",
      llvm::cl::desc("CUDA's libdevice.10.bc, linked into the kernels for "
                     "the math functions (default: the one CMake found)"),
      llvm::cl::init(LPC_LIBDEVICE_PATH)};
};
} // namespace

std::string mlir::lpc::gpuLoopPassesPipeline(llvm::StringRef splitOptions,
                                             llvm::StringRef scatterOptions,
                                             int64_t baseAlign) {
  return "func.func(lpc-fuse-cast-transposes{base-align=" + std::to_string(baseAlign) +
         "},lpc-split-reductions{" + splitOptions.str() +
         "},lpc-parallel-dims-outer,lpc-tile-transposes,"
         "convert-linalg-to-parallel-loops,"
         "lpc-parallel-scatter{" + scatterOptions.str() + "},"
         "lpc-promote-accumulators,lpc-widen-parallel-loops,"
         "lpc-collapse-parallel-loops,lpc-gpu-serial-kernels,"
         "lpc-merge-independent-kernels{distinct-args},lpc-merge-serial-kernels)";
}

const char *mlir::lpc::defaultLibdevice() { return LPC_LIBDEVICE_PATH; }

llvm::Expected<std::string>
mlir::lpc::gpuCodegenPipeline(StringRef chip, StringRef libdevice) {
  std::optional<unsigned> sm = lpc::parseSMVersion(chip);
  if (!sm)
    return llvm::createStringError("lpc-gpu-codegen: chip must be sm_XX, got '" +
                                   chip + "'");
  if (libdevice.empty() || !llvm::sys::fs::exists(libdevice))
    return llvm::createStringError(
        "lpc-gpu-codegen: CUDA's libdevice not found ('" + libdevice +
        "'); install the CUDA toolkit or pass libdevice=PATH");
  // The shared front end, with the FP8 conversions left to the hardware
  // where it has them.
  bool fp8Cvt = *sm >= lpc::kFirstFP8Chip;
  // FP8 tensor cores from sm_89 on: FP8 GEMMs as cuBLASLt FP8 calls.
  std::string front = lpcToBuffersPipeline(fp8Cvt, /*fp8Gemm=*/fp8Cvt,
                                           /*parallelColumnsMinWork=*/0,
                                           /*gpuLoops=*/true);
  // LLVM's default PTX for sm_89 (7.8) has the FP8 cvt for sm_90 only.
  std::string features = fp8Cvt && *sm < 90 ? " features=+ptx81" : "";
  // bf16 / fp16 collectives as tensors of that type, for NCCL.
  return "lpc-native-wire-collectives," + front + ","
      // GEMMs become host calls (cuBLASLt in the artifact's schedule).
      // (constant tables they read are copied to device memory first).
      + std::string(fp8Cvt ? "lpc-gemm-to-calls{fp8=true device-operands=true},"
                           : "lpc-gemm-to-calls{device-operands=true},") +
      // Copies between strided views become kernels; the contiguous ones
      // stay memref.copy (device-to-device copies in the artifact).
      "lpc-strided-copy-to-loops," +
      // Full reductions: up to 2^18 partials (an H200 holds 132 x 2048
      // threads at once).
      // Device buffers start 16-byte aligned (lpc-align-kernel-args below).
      gpuLoopPassesPipeline(kGPUSplitOptions, "", /*baseAlign=*/16) + ","
      "func.func(scf-parallel-loop-tiling{parallel-loop-tile-sizes=256 no-min-max-bounds=true}),"
      "func.func(gpu-map-parallel-loops),"
      "func.func(convert-parallel-loops-to-gpu),"
      // Constants become immediates in the kernels instead of parameters
      // (and lpc-fp8-to-nvvm sees the saturating clamps).
      "gpu-launch-sink-index-computations,"
      // Constant tables the kernels read go into the PTX module.
      "lpc-sink-constant-globals,"
      "gpu-kernel-outlining,"
      // One gpu.module (one NVPTX compile, one PTX to load) for them all.
      "lpc-merge-gpu-modules,"
      // What each kernel reads, writes and loops over, for the cost model
      // (while the kernels are still memref-level).
      "lpc-gpu-launch-info,"
      "nvvm-attach-target{chip=" + chip.str() + features +
      " O=3 l=" + libdevice.str() + "},"
      "gpu.module(" + (fp8Cvt ? "lpc-fp8-to-nvvm," : "") +
      // Subviews (lpc-fuse-cast-transposes' row runs) as pointer arithmetic.
      "expand-strided-metadata,lower-affine,convert-scf-to-cf,arith-expand,"
      // exp stays for convert-gpu-to-nvvm: libdevice's __nv_expf (ex2.approx
      // after a range reduction) is far shorter than the polynomial.
      "lpc-math-approximation{keep=math.exp},convert-gpu-to-nvvm,convert-math-to-llvm,"
      "convert-arith-to-llvm,convert-index-to-llvm,lpc-align-kernel-args,"
      "reconcile-unrealized-casts,canonicalize),"
      "gpu-module-to-binary{format=isa},"
      // Launch sizes and scalar arguments fold to constants on the host.
      "func.func(canonicalize,cse)";
}

void mlir::lpc::registerGPUCodegenPipeline() {
  registerPassPipeline(
      "lpc-gpu-codegen",
      "lpc functions -> GPU kernels in PTX (gpu.binary) and a host function "
      "of allocations, views, copies, launches and GEMM calls, for "
      "chip=sm_XX (default sm_90)",
      [](OpPassManager &pm, StringRef optionsStr,
         function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        GPUCodegenOptions o;
        if (failed(o.parseFromString(optionsStr)))
          return failure();
        auto p = gpuCodegenPipeline(o.chip, o.libdevice);
        if (!p)
          return errorHandler(llvm::toString(p.takeError()));
        return parsePassPipeline(*p, pm, llvm::errs());
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(GPUCodegenOptions());
      });
}
