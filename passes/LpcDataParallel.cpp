//===- LpcDataParallel.cpp - --lpc-data-parallel --------------------------===//
//
// Averages the gradients that reach the optimizer, and the loss metric, over
// the ranks of a data-parallel run with lpc.all_reduce (mean), in FP32, one
// collective per gradient (no buckets yet). See Passes.td for the IR before
// and after.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCDATAPARALLEL
#include "lpc/Passes/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

struct LpcDataParallelPass
    : ::mlir::lpc::impl::LpcDataParallelBase<LpcDataParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (isTrainStep(fn))
        runOnStep(fn);
  }

  /// A train step returns state ({lpc.state}) and updates it with an
  /// optimizer op.
  static bool isTrainStep(func::FuncOp fn) {
    if (fn.isExternal())
      return false;
    bool state = false;
    for (unsigned i = 0; i < fn.getNumResults(); ++i)
      state = state || fn.getResultAttr(i, "lpc.state");
    bool optimizer = false;
    fn.walk([&](Operation *op) {
      if (isa<AdamWOp, SgdOp>(op))
        optimizer = true;
    });
    return state && optimizer;
  }

  void runOnStep(func::FuncOp fn) {
    // One reduction per gradient value, placed right after its definition
    // (so that it dominates every use this pass rewrites).
    llvm::DenseMap<Value, Value> reduced;
    auto mean = [&](Value g) -> Value {
      if (g.getDefiningOp<AllReduceOp>())
        return g;
      auto it = reduced.find(g);
      if (it != reduced.end())
        return it->second;
      OpBuilder b(fn.getContext());
      if (Operation *def = g.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(cast<BlockArgument>(g).getOwner());
      Value r = AllReduceOp::create(
                    b, g.getLoc(), g.getType(), g,
                    AllReduceKindAttr::get(fn.getContext(), AllReduceKind::mean),
                    PrecisionAttr::get(fn.getContext(), Precision::fp32))
                    .getResult();
      reduced[g] = r;
      return r;
    };
    llvm::SmallPtrSet<Operation *, 4> clips;
    SmallVector<OpOperand *> gradOperands;
    fn.walk([&](Operation *op) {
      if (auto a = dyn_cast<AdamWOp>(op))
        gradOperands.push_back(&a.getGradMutable());
      else if (auto s = dyn_cast<SgdOp>(op))
        gradOperands.push_back(&s.getGradMutable());
    });
    for (OpOperand *use : gradOperands) {
      Value g = use->get();
      // Through casts of the loss-scaling and precision passes that may
      // already sit between the clip and the optimizer: the clip is found
      // as the definition of the gradient.
      if (auto clip = g.getDefiningOp<ClipByGlobalNormOp>()) {
        if (clips.insert(clip).second)
          for (OpOperand &in : clip->getOpOperands())
            in.set(mean(in.get()));
        continue;
      }
      use->set(mean(g));
    }
    // The loss metric.
    auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
    for (unsigned i = 0; i < fn.getNumResults(); ++i) {
      auto metric = fn.getResultAttrOfType<StringAttr>(i, "lpc.metric");
      if (!metric || metric.getValue() != "loss")
        continue;
      ret->setOperand(i, mean(ret->getOperand(i)));
    }
  }
};

} // namespace
