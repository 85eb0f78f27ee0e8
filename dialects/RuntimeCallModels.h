//===- RuntimeCallModels.h - lpc ops bufferized into runtime calls -*- C++ -*-===//
//
// The ops with no loop nest (lpc.attention, lpc.attention_grad,
// lpc.all_reduce) bufferize into calls of the runtime's C-interface entry
// points: they read their operands where they are and write new buffers.
// What their bufferization models share.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_DIALECTS_RUNTIMECALLMODELS_H
#define LPC_DIALECTS_RUNTIMECALLMODELS_H

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace lpc {

/// The model of an op that reads every tensor operand, writes none and
/// aliases nothing: its results are new buffers. ConcreteModel adds
/// bufferize().
template <typename ConcreteModel, typename OpT>
struct ReadOnlyCallModel
    : bufferization::BufferizableOpInterface::ExternalModel<ConcreteModel,
                                                            OpT> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const bufferization::AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const bufferization::AnalysisState &) const {
    return false;
  }
  bufferization::AliasingValueList
  getAliasingValues(Operation *, OpOperand &,
                    const bufferization::AnalysisState &) const {
    return {};
  }
};

/// A call of the private C-interface function `name` (declared in the
/// module on first use) with `operands`, before `op`'s insertion point.
inline void callRuntimeEntry(RewriterBase &b, Operation *op, StringRef name,
                             ValueRange operands) {
  auto module = op->getParentOfType<ModuleOp>();
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder mb(module.getBodyRegion());
    fn = func::FuncOp::create(mb, module.getLoc(), name,
                              mb.getFunctionType(operands.getTypes(), {}));
    fn.setPrivate();
    fn->setAttr("llvm.emit_c_interface", mb.getUnitAttr());
  }
  func::CallOp::create(b, op->getLoc(), fn, operands);
}

/// The suffix of an entry point for floating-point element type `t`: f32,
/// bf16 or f16 (the types the entry points come in).
inline StringRef runtimeTypeSuffix(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isBF16())
    return "bf16";
  return "f16";
}

/// A new row-major, 64-byte aligned buffer of `t`'s shape and element type.
inline Value newRowMajorBuffer(RewriterBase &b, Location loc, ShapedType t) {
  return memref::AllocOp::create(
      b, loc, MemRefType::get(t.getShape(), t.getElementType()),
      b.getI64IntegerAttr(64));
}

/// `v` (a memref) itself when its layout is row-major, else a row-major
/// copy of it.
inline Value rowMajor(RewriterBase &b, Location loc, Value v) {
  auto t = cast<MemRefType>(v.getType());
  if (t.getLayout().isIdentity())
    return v;
  Value copy = newRowMajorBuffer(b, loc, t);
  memref::CopyOp::create(b, loc, v, copy);
  return copy;
}

} // namespace lpc
} // namespace mlir

#endif // LPC_DIALECTS_RUNTIMECALLMODELS_H
