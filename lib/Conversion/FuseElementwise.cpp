//===- FuseElementwise.cpp - --lpc-fuse-elementwise -----------------------===//
//
// Elementwise producers fused into their consumer, on tensors, before
// bufferization: one loop nest instead of several and no intermediate
// buffer. GEMMs are never fused (they become library calls); on the host,
// neither are producers read through a broadcast (broadcast=false).
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
bool isGemm(Operation *op) { return op->hasAttr("lpc_gemm"); }

/// A producer with other users fused into one consumer, its results kept
/// as extra results of the fused op, which its other users then read: one
/// pass writes both, and nothing is computed twice. (Upstream's pattern
/// leaves those users on the producer, which then fuses into each of them
/// again: the producer's work done once per user.) Only where that stays a
/// plain elementwise loop and valid IR: the consumer has no reduction loops
/// and reads the producer's result element for element (identity maps: no
/// broadcast, which would store each element many times, and no transposed
/// walk) through one operand, and every other user comes after the consumer
/// (the fused op, at the consumer's place, must dominate them).
struct FuseKeepingProducerResults
    : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool fusable(OpOperand &fused) {
    auto producer = fused.get().getDefiningOp<linalg::GenericOp>();
    auto consumer = cast<linalg::GenericOp>(fused.getOwner());
    if (!producer || producer->hasOneUse() || isGemm(producer) ||
        isGemm(consumer) || consumer.getNumReductionLoops() != 0 ||
        !linalg::areElementwiseOpsFusable(&fused))
      return false;
    if (!consumer.getMatchingIndexingMap(&fused).isIdentity())
      return false;
    for (OpOperand &init : producer.getDpsInitsMutable())
      if (!producer.getMatchingIndexingMap(&init).isIdentity())
        return false;
    for (OpOperand &other : consumer->getOpOperands())
      if (&other != &fused && other.get().getDefiningOp() == producer)
        return false;
    Block *block = consumer->getBlock();
    if (producer->getBlock() != block)
      return false;
    for (Operation *user : producer->getUsers()) {
      if (user == consumer.getOperation())
        continue;
      Operation *at = block->findAncestorOpInBlock(*user);
      if (!at || at == consumer.getOperation() ||
          !consumer->isBeforeInBlock(at))
        return false;
    }
    return true;
  }

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &operand : consumer->getOpOperands()) {
      if (!fusable(operand))
        continue;
      Operation *producer = operand.get().getDefiningOp();
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [from, to] : fused->replacements)
        rewriter.replaceAllUsesWith(from, to);
      rewriter.eraseOp(consumer);
      rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

struct LpcFuseElementwisePass
    : ::mlir::lpc::impl::LpcFuseElementwiseBase<LpcFuseElementwisePass> {
  using LpcFuseElementwiseBase::LpcFuseElementwiseBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    const bool fuseBroadcasts = broadcast;
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [fuseBroadcasts](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          if (!producer || !producer->hasOneUse() || isGemm(producer) ||
              isGemm(fused->getOwner()))
            return false;
          // A broadcast read: some of the consumer's loops do not index the
          // producer's result, so fused it would run once per their
          // iterations.
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          return fuseBroadcasts || !consumer ||
                 consumer.getMatchingIndexingMap(fused).getNumResults() >=
                     consumer.getNumLoops();
        });
    if (multiUse)
      patterns.add<FuseKeepingProducerResults>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
