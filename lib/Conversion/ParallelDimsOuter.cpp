//===- ParallelDimsOuter.cpp - --lpc-parallel-dims-outer
//-------------------===//
//
// For code generators that map parallel loops to threads (the GPU): a
// linalg.generic whose parallel dimensions come after a reduction dimension
// (a bias gradient summed over tokens: [reduction, reduction, parallel])
// becomes one with the parallel dimensions first, so that
// convert-linalg-to-parallel-loops makes an outer scf.parallel (one thread
// per output element, reading consecutive addresses across threads) instead
// of a sequential outer loop. The order of each element's reduction is
// unchanged (interchangeGenericOp permutes loops, not operations).
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCPARALLELDIMSOUTER
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {
struct LpcParallelDimsOuterPass
    : ::mlir::lpc::impl::LpcParallelDimsOuterBase<LpcParallelDimsOuterPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp g) { generics.push_back(g); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp g : generics) {
      SmallVector<unsigned> parallel, reduction;
      for (auto [i, it] : llvm::enumerate(g.getIteratorTypesArray()))
        (linalg::isParallelIterator(it) ? parallel : reduction).push_back(i);
      if (parallel.empty() || reduction.empty() ||
          parallel.back() < reduction.front())
        continue; // nothing to move, or already parallel-first
      // interchangeVector[i] = the old loop that becomes loop i.
      SmallVector<unsigned> order(parallel);
      order.append(reduction.begin(), reduction.end());
      rewriter.setInsertionPoint(g);
      if (failed(linalg::interchangeGenericOp(rewriter, g, order))) {
        g.emitError("lpc-parallel-dims-outer: cannot interchange the loops");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
