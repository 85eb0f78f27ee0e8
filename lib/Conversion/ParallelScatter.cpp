//===- ParallelScatter.cpp - --lpc-parallel-scatter -----------------------===//
//
// The embedding gradient is a scatter-add, table[ids[n], j] += grad[n, j],
// lowered as a loop over the tokens n (in order: the reference's summation
// order) around a loop over the columns j. On the GPU the outer loop would
// be one thread's work (8192 tokens x 4096 columns for the large GPT
// block). Its lowering marks it lpc.independent_columns: different columns
// never touch the same element. So the column loop can go outside, as an
// scf.parallel: a thread per column, each running the token loop in the
// original order (the same sums, bit for bit), neighbouring threads on
// neighbouring columns.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCPARALLELSCATTER
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {
struct LpcParallelScatterPass
    : ::mlir::lpc::impl::LpcParallelScatterBase<LpcParallelScatterPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> outers;
    getOperation()->walk([&](scf::ForOp f) {
      if (f->hasAttr(lpc::kIndependentColumnsAttr))
        outers.push_back(f);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp outer : outers) {
      // Only on buffers (no loop-carried values) and with one inner loop
      // whose bounds are known outside.
      SmallVector<scf::ForOp> inners;
      outer.getBody()->walk([&](scf::ForOp f) { inners.push_back(f); });
      if (outer.getNumResults() != 0 || inners.size() != 1 ||
          inners[0].getNumResults() != 0)
        continue;
      scf::ForOp inner = inners[0];
      if (llvm::any_of(inner.getOperands(), [&](Value v) {
            return outer->isAncestor(v.getParentRegion()->getParentOp());
          }))
        continue;
      rewriter.setInsertionPoint(outer);
      auto par = scf::ParallelOp::create(
          rewriter, outer.getLoc(), ValueRange{inner.getLowerBound()},
          ValueRange{inner.getUpperBound()}, ValueRange{inner.getStep()});
      rewriter.setInsertionPointToStart(par.getBody());
      IRMapping map;
      auto copy = cast<scf::ForOp>(rewriter.clone(*outer, map));
      copy->removeAttr(lpc::kIndependentColumnsAttr);
      // The inner loop's body in place of the inner loop, its index now
      // the parallel loop's.
      auto innerCopy = cast<scf::ForOp>(map.lookup(inner.getOperation()));
      Block *body = innerCopy.getBody();
      rewriter.eraseOp(body->getTerminator());
      rewriter.inlineBlockBefore(body, innerCopy,
                                 ValueRange{par.getInductionVars()[0]});
      rewriter.eraseOp(innerCopy);
      rewriter.eraseOp(outer);
    }
  }
};
} // namespace
