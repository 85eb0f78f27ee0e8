//===- LpcDataParallel.cpp - --lpc-data-parallel --------------------------===//
//
// Averages the gradients that reach the optimizer, and the loss metric, over
// the ranks of a data-parallel run with lpc.all_reduce (mean): gradients in
// buckets (one flat tensor per bucket, one collective each) in the chosen
// communication precision, the loss in FP32. See Passes.td for the IR before
// and after.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Passes/PrecisionUtils.h"

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
    if (!wirePrecision()) {
      getOperation().emitError()
          << "lpc-data-parallel: unknown comm-precision '" << commPrecision
          << "' (expected fp32, bf16, fp16, fp8_e4m3, fp8_e5m2 or fp8)";
      return signalPassFailure();
    }
    if (!(bucketMb >= 0)) {
      getOperation().emitError() << "lpc-data-parallel: bucket-mb must be >= 0, got "
                                 << bucketMb;
      return signalPassFailure();
    }
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

  /// The comm-precision option as a Precision. "fp8" is E4M3: with one
  /// scale per bucket, its extra mantissa bit halves the rounding of
  /// every gradient, and a bucket's gradients fit its range (measured in
  /// docs/training.md: E5M2 moved the MLP's loss 3.7x further from fp32
  /// communication's).
  std::optional<Precision> wirePrecision() const {
    if (commPrecision == "fp8")
      return Precision::fp8_e4m3;
    return symbolizePrecision(commPrecision);
  }

  void runOnStep(func::FuncOp fn) {
    MLIRContext *ctx = fn.getContext();
    Precision wire = *wirePrecision();
    // The gradient values to average: those that reach an optimizer op, or
    // the operands of the clip they come from (found as the definition of
    // the gradient: casts of the loss-scaling and precision passes may
    // already sit between the clip and the optimizer).
    llvm::SmallPtrSet<Operation *, 4> clips;
    SmallVector<OpOperand *> uses;
    fn.walk([&](Operation *op) {
      OpOperand *use = nullptr;
      if (auto a = dyn_cast<AdamWOp>(op))
        use = &a.getGradMutable();
      else if (auto s = dyn_cast<SgdOp>(op))
        use = &s.getGradMutable();
      if (!use)
        return;
      if (auto clip = use->get().getDefiningOp<ClipByGlobalNormOp>()) {
        if (clips.insert(clip).second)
          for (OpOperand &in : clip->getOpOperands())
            uses.push_back(&in);
        return;
      }
      uses.push_back(use);
    });
    SmallVector<Value> grads;
    llvm::DenseMap<Value, Value> reduced;
    for (OpOperand *use : uses) {
      Value g = use->get();
      if (isReduced(g) || reduced.count(g))
        continue;
      reduced[g] = Value();
      grads.push_back(g);
    }
    // Buckets of consecutive gradients in the order the backward defines
    // them (the last layer's first), each up to bucket-mb of f32 bytes; a
    // larger gradient is a bucket of its own. Gradients defined outside the
    // step's top-level block get one collective each, after their
    // definition.
    Block &body = fn.getBody().front();
    SmallVector<Value> topLevel, nested;
    for (Value g : grads)
      (g.getParentBlock() == &body ? topLevel : nested).push_back(g);
    llvm::stable_sort(topLevel, [&](Value a, Value b) {
      Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
      if (!x || !y) // block arguments come first
        return !x && y;
      return x->isBeforeInBlock(y);
    });
    const double capBytes = bucketMb * 1024.0 * 1024.0;
    SmallVector<SmallVector<Value>> buckets;
    double filled = 0;
    for (Value g : topLevel) {
      double bytes =
          4.0 * double(cast<RankedTensorType>(g.getType()).getNumElements());
      if (buckets.empty() || filled + bytes > capBytes) {
        buckets.emplace_back();
        filled = 0;
      }
      buckets.back().push_back(g);
      filled += bytes;
    }
    for (Value g : nested)
      buckets.push_back({g});

    auto pinned = [&](Operation *op) {
      // Gradients are averaged from f32 values: the bucket's copies must
      // not be put in a low precision by lpc-assign-precision.
      op->setAttr(LpcDialect::getPrecisionPinAttrName(),
                  PrecisionAttr::get(ctx, Precision::fp32));
      return op;
    };
    for (auto [index, bucket] : llvm::enumerate(buckets)) {
      auto numbered = [&, index = index](Value mean) {
        mean.getDefiningOp()->setAttr(kBucketAttr,
                                      IntegerAttr::get(IntegerType::get(ctx, 64),
                                                       int64_t(index)));
        return mean;
      };
      // After the last definition of the bucket's gradients.
      Value last = bucket.back();
      OpBuilder b(ctx);
      if (Operation *def = last.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(cast<BlockArgument>(last).getOwner());
      if (bucket.size() == 1) {
        reduced[last] = numbered(createMean(b, last.getLoc(), last, wire));
        continue;
      }
      Location loc = b.getFusedLoc(llvm::to_vector(
          llvm::map_range(bucket, [](Value v) { return v.getLoc(); })));
      SmallVector<Value> flat;
      for (Value g : bucket) {
        int64_t n = cast<RankedTensorType>(g.getType()).getNumElements();
        auto flatType = RankedTensorType::get({n}, b.getF32Type());
        flat.push_back(g.getType() == flatType
                           ? g
                           : pinned(ReshapeOp::create(b, g.getLoc(), flatType,
                                                      g))
                                 ->getResult(0));
      }
      Value all = pinned(ConcatOp::create(b, loc, flat, b.getI64IntegerAttr(0)))
                      ->getResult(0);
      Value mean = numbered(createMean(b, loc, all, wire));
      int64_t at = 0;
      for (Value g : bucket) {
        auto t = cast<RankedTensorType>(g.getType());
        int64_t n = t.getNumElements();
        Value piece =
            pinned(SliceOp::create(b, g.getLoc(), mean, {at}, {at + n}, {1}))
                ->getResult(0);
        reduced[g] = piece.getType() == t
                         ? piece
                         : pinned(ReshapeOp::create(b, g.getLoc(), t, piece))
                               ->getResult(0);
        at += n;
      }
    }
    for (OpOperand *use : uses)
      if (Value r = reduced.lookup(use->get()))
        use->set(r);

    // The loss metric, in fp32 (it is what rank 0 reports).
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    for (unsigned i = 0; i < fn.getNumResults(); ++i) {
      auto metric = fn.getResultAttrOfType<StringAttr>(i, "lpc.metric");
      Value loss = ret->getOperand(i);
      if (!metric || metric.getValue() != "loss" ||
          loss.getDefiningOp<AllReduceOp>())
        continue;
      OpBuilder b(ctx);
      if (Operation *def = loss.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(&body);
      ret->setOperand(i, createMean(b, loss.getLoc(), loss, Precision::fp32));
    }
  }

  /// Whether `v` already comes out of a collective: an lpc.all_reduce, or
  /// a piece of a bucket's (slice, reshape), so that running the pass
  /// twice changes nothing more.
  static bool isReduced(Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (isa<AllReduceOp>(def))
        return true;
      if (!isa<ReshapeOp, SliceOp>(def))
        return false;
      v = def->getOperand(0);
    }
    return false;
  }

  static Value createMean(OpBuilder &b, Location loc, Value v,
                          Precision wire) {
    MLIRContext *ctx = b.getContext();
    return AllReduceOp::create(b, loc, v.getType(), v,
                               AllReduceKindAttr::get(ctx, AllReduceKind::mean),
                               PrecisionAttr::get(ctx, wire))
        .getResult();
  }
};

} // namespace
