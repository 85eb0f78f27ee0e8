//===- Passes.h - lpc lowerings ---------------------------------*- C++ -*-===//
#ifndef LPC_CONVERSION_PASSES_H
#define LPC_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace lpc {

#define GEN_PASS_DECL
#include "lpc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lpc/Conversion/Passes.h.inc"

/// lpc-to-linalg, bufferization and lowering to the LLVM dialect: the
/// module is then ready for mlir::ExecutionEngine. Functions get
/// llvm.emit_c_interface and their results become out-parameters.
void buildCPUCodegenPipeline(OpPassManager &pm);

} // namespace lpc
} // namespace mlir

#endif // LPC_CONVERSION_PASSES_H
