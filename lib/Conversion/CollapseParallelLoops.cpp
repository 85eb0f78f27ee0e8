//===- CollapseParallelLoops.cpp - --lpc-collapse-parallel-loops ----------===//
//
// The GPU pipeline tiles parallel loops into blocks of 256 threads along
// their first dimension only (scf-parallel-loop-tiling) and maps the other
// dimensions to the grid. For a [1, 2048, 4096] elementwise kernel that is
// blocks of 256 threads of which one works (the batch dimension has size
// 1), eight million blocks, and grid dimensions past CUDA's y/z limit of
// 65535 for longer ones. Collapsing each outermost scf.parallel into one
// dimension first gives ceil(N / 256) full blocks along x, with the last
// dimension fastest: neighbouring threads take neighbouring elements of the
// innermost dimension (coalesced reads and writes for row-major buffers).
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCCOLLAPSEPARALLELLOOPS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {
struct LpcCollapseParallelLoopsPass
    : ::mlir::lpc::impl::LpcCollapseParallelLoopsBase<
          LpcCollapseParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk([&](scf::ParallelOp p) {
      if (p.getNumLoops() > 1 && !p->getParentOfType<scf::ParallelOp>())
        loops.push_back(p);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp p : loops) {
      std::vector<unsigned> all(p.getNumLoops());
      std::iota(all.begin(), all.end(), 0u);
      rewriter.setInsertionPoint(p);
      collapseParallelLoops(rewriter, p, {all});
    }
  }
};
} // namespace
