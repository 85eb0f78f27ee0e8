//===- FuseSiblingReductions.cpp - --lpc-fuse-sibling-reductions ----------===//
//
// Full reductions (every loop a reduction: an amax, the FP8 saturation and
// underflow counts, a loss) that read the same tensor become one
// linalg.generic with all their outputs: the tensor is read once instead of
// once per reduction, and on the GPU each level of the split reduction is
// one kernel for all of them. FP8 delayed scaling reads each quantized
// tensor for its amax and again for its statistics; fused, the statistics
// cost no extra pass.
//
// Two generics fuse when they have the same loop ranges, share an input
// read through the same indexing map, and the later one does not depend on
// the earlier one (current scaling's statistics use the scale computed
// from the amax: they stay apart). The fused op takes the earlier one's
// place; what the later one's operands need that is defined between them
// (fills of its accumulators) moves up with it, which only side-effect-free
// ops may. Each output's body is the one it had: same arithmetic, same
// order.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCFUSESIBLINGREDUCTIONS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

/// A full reduction on tensors with static loop ranges.
bool isFullReduction(linalg::GenericOp g) {
  return g.hasPureTensorSemantics() && g.getNumParallelLoops() == 0 &&
         g.getNumLoops() > 0 && !g->hasAttr("lpc_gemm") &&
         llvm::none_of(g.getStaticLoopRanges(), ShapedType::isDynamic);
}

/// An elementwise generic on tensors (every loop parallel) whose outputs are
/// written once per iteration (indexed by every loop in order, old value
/// unread): it can become write-once outputs of a full reduction over the
/// same loops.
bool isElementwise(linalg::GenericOp g) {
  if (!g.hasPureTensorSemantics() || g.getNumReductionLoops() != 0 ||
      g.getNumLoops() == 0 || g->hasAttr("lpc_gemm") ||
      llvm::any_of(g.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  for (OpOperand &out : g.getDpsInitsMutable())
    if (!g.getMatchingIndexingMap(&out).isIdentity() ||
        !g.getMatchingBlockArgument(&out).use_empty())
      return false;
  return true;
}

/// True when `a` and `b` read some value through the same map.
bool shareAnInput(linalg::GenericOp a, linalg::GenericOp b) {
  for (OpOperand *x : a.getDpsInputOperands())
    for (OpOperand *y : b.getDpsInputOperands())
      if (x->get() == y->get() &&
          a.getMatchingIndexingMap(x) == b.getMatchingIndexingMap(y))
        return true;
  return false;
}

/// The ops of `b`'s block, after `a`, that `b`'s operands are computed
/// from (in block order), or failure if `b` depends on `a` or one of them
/// has side effects (it could not move above `a`).
FailureOr<SmallVector<Operation *>> toHoist(linalg::GenericOp a,
                                            linalg::GenericOp b) {
  Block *block = a->getBlock();
  BackwardSliceOptions opts;
  opts.inclusive = false;
  opts.omitUsesFromAbove = false; // a value a region captures counts too
  // Only this block's ops between a and b matter; the rest dominates a.
  opts.filter = [&](Operation *op) {
    Operation *anc = block->findAncestorOpInBlock(*op);
    return anc && !anc->isBeforeInBlock(a) && anc != a.getOperation();
  };
  SetVector<Operation *> slice;
  if (failed(getBackwardSlice(b.getOperation(), &slice, opts)))
    return failure();
  // The filter stops at a itself: look for a use of a's results instead
  // (in b, or in an op b's operands come from, regions included).
  auto usesA = [&](Operation *op) {
    return op
        ->walk([&](Operation *nested) {
          for (Value v : nested->getOperands())
            if (v.getDefiningOp() == a.getOperation())
              return WalkResult::interrupt();
          return WalkResult::advance();
        })
        .wasInterrupted();
  };
  if (usesA(b))
    return failure();
  SmallVector<Operation *> ops;
  for (Operation *op : slice) {
    if (usesA(op))
      return failure();
    if (op->getBlock() != block)
      continue; // nested in an op of the slice: moves with it
    if (!isMemoryEffectFree(op))
      return failure();
    ops.push_back(op);
  }
  llvm::sort(ops, [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  return ops;
}

/// One generic computing the outputs of `a`, then those of `b`, at `a`.
linalg::GenericOp fuse(linalg::GenericOp a, linalg::GenericOp b) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> inMaps;
  // Block argument index in the fused op of each input of a and b.
  SmallVector<unsigned> aArg, bArg;
  auto addInput = [&](linalg::GenericOp g, OpOperand *in) -> unsigned {
    AffineMap m = g.getMatchingIndexingMap(in);
    for (auto [i, v] : llvm::enumerate(inputs))
      if (v == in->get() && inMaps[i] == m)
        return i;
    inputs.push_back(in->get());
    inMaps.push_back(m);
    return inputs.size() - 1;
  };
  for (OpOperand *in : a.getDpsInputOperands())
    aArg.push_back(addInput(a, in));
  for (OpOperand *in : b.getDpsInputOperands())
    bArg.push_back(addInput(b, in));
  SmallVector<Value> inits;
  SmallVector<AffineMap> maps = inMaps;
  for (linalg::GenericOp g : {a, b})
    for (OpOperand &out : g.getDpsInitsMutable()) {
      inits.push_back(out.get());
      maps.push_back(g.getMatchingIndexingMap(&out));
    }
  unsigned nIn = inputs.size(), nA = a.getNumDpsInits();
  OpBuilder builder(a);
  // Every loop a reduction (one of them is a full reduction; an
  // elementwise op's outputs are written once per iteration either way).
  SmallVector<utils::IteratorType> iters(a.getNumLoops(),
                                         utils::IteratorType::reduction);
  auto fused = linalg::GenericOp::create(
      builder, a.getLoc(), TypeRange(ValueRange(inits)), inputs, inits, maps,
      iters,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        SmallVector<Value> yielded;
        auto cloneBody = [&](linalg::GenericOp g, ArrayRef<unsigned> argOf,
                             unsigned firstOut) {
          IRMapping map;
          Block &body = g.getRegion().front();
          for (unsigned i = 0; i < argOf.size(); ++i)
            map.map(body.getArgument(i), args[argOf[i]]);
          for (unsigned i = 0; i < g.getNumDpsInits(); ++i)
            map.map(body.getArgument(argOf.size() + i),
                    args[nIn + firstOut + i]);
          for (Operation &op : body.without_terminator())
            nb.clone(op, map);
          for (Value v : body.getTerminator()->getOperands())
            yielded.push_back(map.lookupOrDefault(v));
        };
        cloneBody(a, aArg, 0);
        cloneBody(b, bArg, nA);
        linalg::YieldOp::create(nb, loc, yielded);
      });
  a->replaceAllUsesWith(fused->getResults().take_front(nA));
  b->replaceAllUsesWith(fused->getResults().drop_front(nA));
  a.erase();
  b.erase();
  return fused;
}

struct LpcFuseSiblingReductionsPass
    : ::mlir::lpc::impl::LpcFuseSiblingReductionsBase<
          LpcFuseSiblingReductionsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *b) { blocks.push_back(b); });
    for (Block *block : blocks) {
      bool changed = true;
      while (changed) {
        changed = false;
        SmallVector<linalg::GenericOp> gs;
        for (Operation &op : *block)
          if (auto g = dyn_cast<linalg::GenericOp>(op);
              g && (isFullReduction(g) || (elementwise && isElementwise(g))))
            gs.push_back(g);
        for (size_t i = 0; i < gs.size() && !changed; ++i)
          for (size_t j = i + 1; j < gs.size() && !changed; ++j) {
            linalg::GenericOp a = gs[i], b = gs[j];
            // At least one full reduction (two elementwise ops are
            // lpc-fuse-elementwise's business).
            if ((!isFullReduction(a) && !isFullReduction(b)) ||
                a.getStaticLoopRanges() != b.getStaticLoopRanges() ||
                !shareAnInput(a, b))
              continue;
            FailureOr<SmallVector<Operation *>> hoist = toHoist(a, b);
            if (failed(hoist))
              continue;
            for (Operation *op : *hoist)
              op->moveBefore(a);
            fuse(a, b);
            changed = true;
          }
      }
    }
  }
};

} // namespace
