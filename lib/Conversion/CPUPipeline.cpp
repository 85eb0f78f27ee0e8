//===- CPUPipeline.cpp - lpc -> LLVM dialect for the host JIT -------------===//
//
// Upstream passes after lpc-to-linalg: bufferization with results turned
// into caller-provided out-parameters (so a train step writes its new state
// into buffers the runtime owns), loops, and the LLVM dialect. Vectorization
// and GEMM library calls come later; this pipeline is the correct baseline.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static const char *kCPUPipeline =
    "lpc-to-linalg,canonicalize,cse,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-results-to-out-params{modify-public-functions hoist-static-allocs},"
    "buffer-deallocation-pipeline,"
    "lpc-gemm-to-calls,"
    "func.func(convert-linalg-to-loops),"
    "lower-affine,convert-scf-to-cf,"
    "arith-expand{include-bf16=true},"
    "convert-math-to-libm,"
    "expand-strided-metadata,"
    "finalize-memref-to-llvm,"
    "convert-math-to-llvm,"
    "convert-arith-to-llvm,"
    "convert-index-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-func-to-llvm,"
    "reconcile-unrealized-casts";

void mlir::lpc::buildCPUCodegenPipeline(OpPassManager &pm) {
  if (failed(parsePassPipeline(kCPUPipeline, pm, llvm::errs())))
    llvm::report_fatal_error("lpc: the CPU codegen pipeline does not parse "
                             "(are the upstream passes registered?)");
}
