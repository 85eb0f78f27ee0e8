//===- FuseElementwise.cpp - --lpc-fuse-elementwise -----------------------===//
//
// Elementwise producers fused into their consumer, on tensors, before
// bufferization: one loop nest instead of several and no intermediate
// buffer. GEMMs are never fused (they become library calls).
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCFUSEELEMENTWISE
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {
struct LpcFuseElementwisePass
    : ::mlir::lpc::impl::LpcFuseElementwiseBase<LpcFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          Operation *consumer = fused->getOwner();
          return producer && producer->hasOneUse() &&
                 !producer->hasAttr("lpc_gemm") &&
                 !consumer->hasAttr("lpc_gemm");
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
