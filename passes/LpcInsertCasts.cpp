//===- LpcInsertCasts.cpp - --lpc-insert-casts ----------------------------===//
//
// Rewrites types to the precisions chosen by lpc-assign-precision, inserting
// one lpc.cast per (value, type) where a producer and a consumer disagree.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Passes/PrecisionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCINSERTCASTS
#include "lpc/Passes/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

/// Operands whose type the op fixes whatever its precision (the incoming
/// loss gradient of the loss backward ops is an f32 scalar; attention's
/// mask and row statistics are f32).
bool isFixedOperand(Operation *op, unsigned index) {
  if (isa<SoftmaxCrossEntropyGradOp, MseLossGradOp>(op))
    return index == 0;
  if (isa<AttentionOp>(op))
    return index == 3; // mask
  if (isa<AttentionGradOp>(op))
    return index >= 5; // lse, mask
  return false;
}

/// Results whose type the op fixes (losses are f32 scalars, attention's lse
/// is f32).
bool isFixedResult(OpResult r) {
  Operation *op = r.getOwner();
  if (isa<AttentionOp>(op))
    return r.getResultNumber() == 1;
  return isa<SoftmaxCrossEntropyOp, MseLossOp>(op);
}

RankedTensorType withElement(Type t, Type elt) {
  return cast<RankedTensorType>(t).clone(elt);
}

struct LpcInsertCastsPass
    : ::mlir::lpc::impl::LpcInsertCastsBase<LpcInsertCastsPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(rewrite(fn)))
        return signalPassFailure();
  }

  LogicalResult rewrite(func::FuncOp fn) {
    OpBuilder b(fn.getContext());
    // Types before this pass: what ops without an assignment expect.
    DenseMap<Value, Type> original;
    fn.walk([&](Operation *op) {
      for (Value r : op->getResults())
        original[r] = r.getType();
    });
    DenseMap<std::pair<Value, Type>, Value> casts;
    auto castTo = [&](Value v, Type type) -> Value {
      if (v.getType() == type)
        return v;
      auto key = std::make_pair(v, type);
      if (Value c = casts.lookup(key))
        return c;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfterValue(v);
      Value c = CastOp::create(b, v.getLoc(), type, v);
      casts[key] = c;
      return c;
    };

    SmallVector<Operation *> ops;
    fn.walk([&](Operation *op) {
      if (op != fn)
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      auto assigned =
          op->getAttrOfType<PrecisionAttr>(LpcDialect::getAssignedAttrName());
      // FP8 GEMMs are left to lpc-fp8-scaling, which quantizes the operands
      // and gives the GEMM its assigned output type: like unassigned ops they
      // see their operands in their original types.
      if (!assigned || op->hasAttr(LpcDialect::getFP8OperandsAttrName())) {
        for (OpOperand &use : op->getOpOperands()) {
          Value v = use.get();
          auto it = original.find(v);
          Type want = it == original.end() ? v.getType() : it->second;
          if (floatElementType(v) && v.getType() != want)
            use.set(castTo(v, want));
        }
        continue;
      }
      Type elt = getElementTypeFor(fn.getContext(), assigned.getValue());
      for (OpOperand &use : op->getOpOperands()) {
          Value v = use.get();
          if (!floatElementType(v) ||
              isFixedOperand(op, use.getOperandNumber()))
            continue;
        use.set(castTo(v, withElement(v.getType(), elt)));
      }
      for (OpResult r : op->getResults())
        if (floatElementType(r) && !isFixedResult(r))
          r.setType(withElement(r.getType(), elt));
      if (failed(mlir::verify(op)))
        return op->emitError("lpc-insert-casts: the op does not verify with "
                             "its assigned precision ")
               << assigned;
    }
    return success();
  }
};

} // namespace
