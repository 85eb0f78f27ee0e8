//===- Passes.h - lpc lowerings ---------------------------------*- C++ -*-===//
#ifndef LPC_CONVERSION_PASSES_H
#define LPC_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace lpc {

#define GEN_PASS_DECL
#include "lpc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lpc/Conversion/Passes.h.inc"

/// lpc-to-linalg, fusion, bufferization and lowering to the LLVM dialect,
/// ready for translation to LLVM IR. Functions with llvm.emit_c_interface
/// get a C interface; results become out-parameters. With
/// `profile`, lpc-profile-marks brackets every top-level op with a timer call.
/// With `parallelMinWork` > 0, loop nests of at least that many innermost
/// iterations become lpc_rt_parallel_for calls (lpc-outline-parallel-loops).
/// With `gpuLoopPasses`, the GPU pipeline's loop stage
/// (gpuLoopPassesPipeline) and GEMM lowering run too: a way to check
/// their semantics against the reference without a GPU; they split down to
/// the smallest sizes (so that small test models exercise every case), or
/// with `gpuSizes` at the GPU pipeline's own sizes.
void buildCPUCodegenPipeline(OpPassManager &pm, bool profile = false,
                             int64_t parallelMinWork = 65536,
                             bool gpuLoopPasses = false, bool gpuSizes = false);
/// The GPU pipeline's lpc-split-reductions options.
inline constexpr const char *kGPUSplitOptions = "max-parts=262144 max-serial=32";
/// The front end both code generators share, as pipeline text: lpc ->
/// linalg, elementwise fusion, bufferization with out-params. With
/// `fp8HardwareCvt`, FP8 conversions stay arith ops for a back end that has
/// instructions for them (lpc-to-linalg{fp8-hardware-cvt}). With
/// `parallelColumnsMinWork` > 0 (threaded host code), lpc-parallel-columns
/// runs before bufferization with that min-work. With `gpuLoops` (the GPU
/// pipeline, and the CPU's check of its loop stage), elementwise ops join
/// the full reductions that read the same tensor
/// (lpc-fuse-sibling-reductions{elementwise}; lpc-split-reductions then
/// writes them in its partial pass).
std::string lpcToBuffersPipeline(bool fp8HardwareCvt = false,
                                 bool fp8Gemm = false,
                                 int64_t parallelColumnsMinWork = 0,
                                 bool gpuLoops = false);
/// Registers it as the `lpc-cpu-codegen` pipeline (lpc-opt).
void registerCPUCodegenPipeline();
/// The GPU pipeline's loop stage, as pipeline text: two-level reductions
/// (lpc-split-reductions{splitOptions}), parallel dimensions first,
/// transposes of the last two dimensions as tiles of 16-byte rows
/// (lpc-tile-transposes), parallel loops, the embedding gradient's columns
/// and token chunks in parallel (lpc-parallel-scatter{scatterOptions}),
/// accumulators in registers, elementwise loops taking 16 bytes of their
/// narrowest type per iteration (lpc-widen-parallel-loops), parallel loops
/// collapsed to one dimension, the serial rest as one-iteration loops
/// (lpc-gpu-serial-kernels). Also
/// run on the CPU by lpc-jit --gpu-loop-passes to check their semantics
/// against the reference. `baseAlign`: the alignment every buffer's start
/// has (the CUDA runtime's 16; 0 on the CPU, where lpc-jit's buffers promise
/// none), for lpc-fuse-cast-transposes to state on its accesses.
std::string gpuLoopPassesPipeline(llvm::StringRef splitOptions = "",
                                  llvm::StringRef scatterOptions = "",
                                  int64_t baseAlign = 0);
/// Registers `lpc-gpu-codegen{chip=sm_90}`: non-GEMM functions to PTX
/// kernels (lib/Conversion/GPUPipeline.cpp; the start of the CUDA back end).
void registerGPUCodegenPipeline();
/// The text of that pipeline for `chip`, or why it cannot run (an unknown
/// chip, no libdevice).
llvm::Expected<std::string> gpuCodegenPipeline(llvm::StringRef chip,
                                               llvm::StringRef libdevice);
/// CUDA's libdevice.10.bc that CMake found ("" if none).
const char *defaultLibdevice();
/// NN of an NVIDIA chip name "sm_NN" (or "sm_NNa", "sm_NNf"), or nullopt.
std::optional<unsigned> parseSMVersion(llvm::StringRef chip);
/// The first chip with FP8 conversion instructions (lpc-fp8-to-nvvm).
constexpr unsigned kFirstFP8Chip = 89;
/// On an scf.for: its body's one inner scf.for (possibly under an scf.if)
/// touches, in different iterations, different elements of every buffer it
/// accesses, so the inner loop may run in parallel outside the outer one
/// (set by the embedding gradient's lowering; lpc-parallel-scatter).
inline constexpr llvm::StringLiteral kIndependentColumnsAttr =
    "lpc.independent_columns";
/// On an scf.parallel: each iteration already takes a tile shaped for wide
/// accesses (lpc-fuse-cast-transposes), so lpc-widen-parallel-loops leaves
/// it as it is.
inline constexpr llvm::StringLiteral kTiledAttr = "lpc_tiled";

} // namespace lpc
} // namespace mlir

#endif // LPC_CONVERSION_PASSES_H
