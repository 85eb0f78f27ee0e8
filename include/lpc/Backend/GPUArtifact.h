//===- GPUArtifact.h - compile lpc functions to a CUDA artifact -*- C++ -*-===//
//
// The compiler's half of the CUDA back end: lpc functions on tensors (a
// train step, its eval function) go through lpc-gpu-codegen, and what is
// left on the host (allocations, views, launches, GEMM calls, copies) is
// written as the artifact of docs/cuda-artifact.md, which runtime/cuda runs
// without LLVM/MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_BACKEND_GPUARTIFACT_H
#define LPC_BACKEND_GPUARTIFACT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace mlir {
namespace lpc {
namespace gpu {

struct ArtifactOptions {
  std::string chip = "sm_90";
  /// CUDA's libdevice.10.bc ("": the one CMake found).
  std::string libdevice;
  /// F32 GEMMs on TF32 tensor cores (PyTorch's allow_tf32).
  bool tf32 = false;
  /// Written as the artifact's "train" section when not empty (lpc-run:
  /// the model and settings the runtime-only lpc-run trains with).
  llvm::json::Object train;
};

/// Compiles @names of `module` (the module is not modified) and returns the
/// artifact's JSON text.
llvm::Expected<std::string> compileArtifact(ModuleOp module,
                                            llvm::ArrayRef<std::string> names,
                                            const ArtifactOptions &options);

/// Writes one FUNCTION object of the artifact for `lowered` (a function
/// after lpc-gpu-codegen, whose first `numArgs` arguments are the original
/// ones and the rest its results as out-parameters) from the module holding
/// its gpu.binary ops. `args` / `results` are the slot objects of the
/// original signature; `tf32` marks its F32 GEMMs. Errors name the host op
/// the artifact cannot express.
llvm::Expected<llvm::json::Object>
functionEntry(func::FuncOp lowered, unsigned numArgs, llvm::json::Array args,
              llvm::json::Array results, bool tf32 = false);

/// Bytes per element of a buffer of `t` (i1: one byte, as LLVM stores it).
int64_t elementBytes(Type t);

} // namespace gpu
} // namespace lpc
} // namespace mlir

#endif // LPC_BACKEND_GPUARTIFACT_H
