//===- LpcDataParallel.cpp - --lpc-data-parallel --------------------------===//
//
// Averages the gradients that reach the optimizer, and the loss metric, over
// the ranks of a data-parallel run with lpc.all_reduce (mean): gradients in
// buckets (one flat tensor per bucket, one collective each) in the chosen
// communication precision, the loss in FP32. With zero=1 (ZeRO stage 1) the
// gradients are reduce-scattered instead, each rank updates its block of
// every parameter with its block of the optimizer state, and the updated
// blocks are all-gathered. See Passes.td for the IR before and after.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Passes/PrecisionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
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
    if (zero != 0 && zero != 1) {
      getOperation().emitError()
          << "lpc-data-parallel: zero must be 0 or 1 (ZeRO stage), got "
          << int64_t(zero);
      return signalPassFailure();
    }
    if (ranks < 1) {
      getOperation().emitError()
          << "lpc-data-parallel: ranks must be >= 1, got " << int64_t(ranks);
      return signalPassFailure();
    }
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (isTrainStep(fn)) {
        if (zero == 0)
          runOnStep(fn);
        else if (failed(runZero(fn, *wirePrecision())))
          return signalPassFailure();
      }
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

  /// Gradient buckets: consecutive values in the order the backward defines
  /// them (the last layer's first), each up to bucket-mb of f32 bytes; a
  /// larger one is a bucket of its own.
  SmallVector<SmallVector<Value>> bucketsOf(SmallVector<Value> values) const {
    llvm::stable_sort(values, [&](Value a, Value b) {
      Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
      if (!x || !y) // block arguments come first
        return !x && y;
      if (x == y) // results of one op (a layernorm's two gradients)
        return cast<OpResult>(a).getResultNumber() <
               cast<OpResult>(b).getResultNumber();
      return x->isBeforeInBlock(y);
    });
    const double capBytes = bucketMb * 1024.0 * 1024.0;
    SmallVector<SmallVector<Value>> buckets;
    double filled = 0;
    for (Value g : values) {
      double bytes =
          4.0 * double(cast<RankedTensorType>(g.getType()).getNumElements());
      if (buckets.empty() || filled + bytes > capBytes) {
        buckets.emplace_back();
        filled = 0;
      }
      buckets.back().push_back(g);
      filled += bytes;
    }
    return buckets;
  }

  static Operation *pinned(Operation *op) {
    // Gradients and parameters move as f32 values: these copies must not be
    // put in a low precision by lpc-assign-precision.
    op->setAttr(LpcDialect::getPrecisionPinAttrName(),
                PrecisionAttr::get(op->getContext(), Precision::fp32));
    return op;
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
    SmallVector<SmallVector<Value>> buckets = bucketsOf(topLevel);
    for (Value g : nested)
      buckets.push_back({g});
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

    averageLoss(fn);
  }

  /// zero=1: each optimizer op updates this rank's block of its parameter
  /// (Passes.td). The blocks of a parameter of n elements: its elements in
  /// row-major order, padded with zeros to N K (K = ceil(n / N)), as
  /// [N, K]; rank r's block is row r.
  LogicalResult runZero(func::FuncOp fn, Precision wire) {
    MLIRContext *ctx = fn.getContext();
    Block &body = fn.getBody().front();
    const int64_t n = ranks;
    bool done = false;
    fn.walk([&](ShardOp) { done = true; });
    if (done) // already sharded: running the pass twice changes nothing
      return success();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    auto fail = [&](Operation *op, const Twine &why) {
      return op->emitError() << "lpc-data-parallel: zero=1: " << why;
    };

    // The optimizer ops, their gradients (the clip's operands when they
    // are clipped), state arguments and the results they return.
    struct Update {
      Operation *op;
      Value grad;            // the whole gradient, before any clip
      RankedTensorType type; // the parameter's
      int64_t k = 0;         // elements per rank
      int64_t offset = 0;    // first column in the bucket's [N, S]
      Value shard;           // this rank's block of the averaged gradient
      SmallVector<unsigned> stateArgs, stateResults; // per state operand
    };
    SmallVector<Update> updates;
    llvm::MapVector<Value, SmallVector<unsigned>> byGrad;
    ClipByGlobalNormOp clip;
    WalkResult walk = fn.walk([&](Operation *op) {
      if (!isa<AdamWOp, SgdOp>(op))
        return WalkResult::advance();
      Update u{op, op->getOperand(1),
               cast<RankedTensorType>(op->getOperand(0).getType())};
      if (auto c = u.grad.getDefiningOp<ClipByGlobalNormOp>()) {
        if (clip && c != clip) {
          fail(op, "the optimizer ops read two different gradient clips");
          return WalkResult::interrupt();
        }
        clip = c;
        u.grad = c.getOperand(cast<OpResult>(u.grad).getResultNumber());
      } else if (clip) {
        fail(op, "some optimizer ops read clipped gradients and some do not");
        return WalkResult::interrupt();
      }
      if (op->getBlock() != &body || u.grad.getParentBlock() != &body) {
        fail(op, "the optimizer op and its gradient must be in the step's "
                 "top-level block");
        return WalkResult::interrupt();
      }
      int64_t elems = u.type.getNumElements();
      u.k = (elems + n - 1) / n;
      // State operands (after param and grad) and their results (after the
      // new parameter): function arguments in, returned out, nothing else.
      unsigned states = isa<AdamWOp>(op) ? 2 : 1;
      for (unsigned s = 0; s < states; ++s) {
        auto arg = dyn_cast<BlockArgument>(op->getOperand(2 + s));
        Value res = op->getResult(1 + s);
        if (!arg || arg.getOwner() != &body ||
            !fn.getArgAttr(arg.getArgNumber(), "lpc.state") ||
            !arg.hasOneUse() || !res.hasOneUse() ||
            *res.getUsers().begin() != ret.getOperation()) {
          fail(op, "each optimizer state operand must be a state argument of "
                   "the step used by this op only, its update returned and "
                   "used by nothing else");
          return WalkResult::interrupt();
        }
        u.stateArgs.push_back(arg.getArgNumber());
        u.stateResults.push_back(res.getUses().begin()->getOperandNumber());
      }
      for (Operation *user : op->getResult(0).getUsers())
        if (user != ret.getOperation()) {
          fail(op, "the updated parameter may only be returned (it is "
                   "gathered from every rank after the update)");
          return WalkResult::interrupt();
        }
      byGrad[u.grad].push_back(updates.size());
      updates.push_back(std::move(u));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    if (clip)
      for (OpResult r : clip.getClipped()) {
        // A clipped gradient no update reads would still count in the norm
        // here but not in the rebuilt clip over the updates' blocks.
        if (r.use_empty())
          return fail(clip, "a clipped gradient is read by no optimizer op");
        for (Operation *user : r.getUsers())
          if (!isa<AdamWOp, SgdOp>(user))
            return fail(clip, "a clipped gradient is read by something other "
                              "than the optimizer");
      }

    OpBuilder b(ctx);
    auto i64 = [&](ArrayRef<int64_t> v) { return SmallVector<int64_t>(v); };
    auto f32 = [&](ArrayRef<int64_t> shape) {
      return RankedTensorType::get(shape, b.getF32Type());
    };
    auto value = [](Operation *op) { return pinned(op)->getResult(0); };
    // x (any shape, f32) as [N, K]: flattened, padded with zeros.
    auto toBlocks = [&](Value x, int64_t k) -> Value {
      auto t = cast<RankedTensorType>(x.getType());
      int64_t elems = t.getNumElements();
      Value v = x;
      if (t != f32({elems}))
        v = value(ReshapeOp::create(b, x.getLoc(), f32({elems}), v));
      if (n * k != elems) {
        Value zeros = ConstantOp::create(
            b, x.getLoc(),
            DenseElementsAttr::get(f32({n * k - elems}), b.getF32FloatAttr(0)));
        v = value(ConcatOp::create(b, x.getLoc(), ValueRange{v, zeros},
                                   b.getI64IntegerAttr(0)));
      }
      return value(ReshapeOp::create(b, x.getLoc(), f32({n, k}), v));
    };
    auto vec = [&](Value x, int64_t k) -> Value { // [1, K] -> [K]
      return value(ReshapeOp::create(b, x.getLoc(), f32({k}), x));
    };
    // The later (in the block) of two ops; null counts as earliest.
    auto later = [](Operation *a, Operation *c) {
      return !a || (c && a->isBeforeInBlock(c)) ? c : a;
    };

    // Gradients: per bucket one [N, S] tensor, each update's blocks a
    // column range, one reduce-scatter; this rank's blocks cut out of it
    // right after it.
    SmallVector<Value> grads;
    for (auto &[g, _] : byGrad)
      grads.push_back(g);
    SmallVector<SmallVector<Value>> buckets = bucketsOf(grads);
    SmallVector<SmallVector<unsigned>> members(buckets.size());
    SmallVector<Location> bucketLocs;
    Operation *lastShard = nullptr;
    for (auto [index, bucket] : llvm::enumerate(buckets)) {
      Value last = bucket.back();
      if (Operation *def = last.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(&body);
      SmallVector<Value> cols;
      SmallVector<Location> locs;
      int64_t width = 0;
      for (Value g : bucket)
        for (unsigned i : byGrad[g]) {
          Update &u = updates[i];
          u.offset = width;
          width += u.k;
          cols.push_back(toBlocks(g, u.k));
          members[index].push_back(i);
          locs.push_back(g.getLoc());
        }
      Location loc = b.getFusedLoc(locs);
      bucketLocs.push_back(loc);
      Value all = cols.size() == 1 ? cols.front()
                                   : value(ConcatOp::create(
                                         b, loc, cols, b.getI64IntegerAttr(1)));
      auto rs = ReduceScatterOp::create(
          b, loc, f32({1, width}), all,
          AllReduceKindAttr::get(ctx, AllReduceKind::mean),
          b.getI64IntegerAttr(n), PrecisionAttr::get(ctx, wire));
      rs->setAttr(kBucketAttr, b.getI64IntegerAttr(int64_t(index)));
      for (unsigned i : members[index]) {
        Update &u = updates[i];
        u.shard = vec(value(SliceOp::create(b, u.op->getLoc(), rs.getResult(),
                                            i64({0, u.offset}),
                                            i64({1, u.offset + u.k}),
                                            i64({1, 1}))),
                      u.k);
        lastShard = later(lastShard, u.shard.getDefiningOp());
      }
    }

    // Clipping: the norm over every rank's blocks. Each rank adds the
    // squares of its blocks (the padding adds 0), an all-reduce sums them,
    // and the other ranks' part enters the clip as one more operand,
    // sqrt(total - mine) (total >= mine: f32 sums of non-negative terms
    // round monotonically). The clip stays an lpc.clip_by_global_norm over
    // the blocks, so lpc-loss-scaling unscales its operands (that one too:
    // it scales as the gradients do) before the norm, as without ZeRO.
    if (clip) {
      b.setInsertionPointAfter(lastShard);
      Location loc = clip.getLoc();
      Value mine;
      for (Update &u : updates) {
        Value sq = value(MulOp::create(b, loc, u.shard, u.shard));
        Value s = value(ReduceSumOp::create(b, loc, sq, i64({0}),
                                            /*keepdims=*/false));
        mine = mine ? value(AddOp::create(b, loc, mine, s)) : s;
      }
      Value total =
          AllReduceOp::create(b, loc, f32({}), mine,
                              AllReduceKindAttr::get(ctx, AllReduceKind::sum),
                              PrecisionAttr::get(ctx, Precision::fp32))
              .getResult();
      Value others = value(SqrtOp::create(
          b, loc, value(SubOp::create(b, loc, total, mine))));
      others = value(ReshapeOp::create(b, loc, f32({1}), others));
      SmallVector<Value> operands;
      for (Update &u : updates)
        operands.push_back(u.shard);
      operands.push_back(others);
      auto sharded = ClipByGlobalNormOp::create(b, loc, operands,
                                                clip.getMaxNormAttr());
      for (auto [i, u] : llvm::enumerate(updates))
        u.shard = sharded.getClipped()[i];
      lastShard = sharded;
      clip.getNorm().replaceAllUsesWith(sharded.getNorm());
    }

    // Each update on this rank's blocks, where the old op was (or after
    // its gradient block, when that comes later).
    SmallVector<Type> argTypes(fn.getArgumentTypes());
    SmallVector<Operation *> updated(updates.size());
    for (auto [i, u] : llvm::enumerate(updates)) {
      Operation *op = u.op;
      Operation *def = clip ? lastShard : u.shard.getDefiningOp();
      if (op->isBeforeInBlock(def))
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPoint(op);
      Location l = op->getLoc();
      Value p = vec(ShardOp::create(b, l, f32({1, u.k}),
                                    toBlocks(op->getOperand(0), u.k),
                                    b.getI64IntegerAttr(n))
                        .getResult(),
                    u.k);
      Operation *nu = b.clone(*op);
      nu->setOperand(0, p);
      nu->setOperand(1, u.shard);
      for (Value r : nu->getResults())
        r.setType(f32({u.k}));
      auto whole = DenseI64ArrayAttr::get(ctx, u.type.getShape());
      for (auto [s, argNo] : llvm::enumerate(u.stateArgs)) {
        body.getArgument(argNo).setType(f32({u.k}));
        argTypes[argNo] = f32({u.k});
        fn.setArgAttr(argNo, "lpc.shard_of", whole);
        fn.setArgAttr(argNo, "lpc.shard_ranks", b.getI64IntegerAttr(n));
        fn.setResultAttr(u.stateResults[s], "lpc.shard_of", whole);
        fn.setResultAttr(u.stateResults[s], "lpc.shard_ranks",
                         b.getI64IntegerAttr(n));
        ret->setOperand(u.stateResults[s], nu->getResult(1 + s));
      }
      updated[i] = nu;
    }

    // The updated blocks to every rank, in fp32, one all-gather per bucket
    // at the end of the step (after every update: lpc-loss-scaling may
    // still put a skip of the update between an update and its gather);
    // each parameter cut back out of its column range.
    b.setInsertionPoint(ret);
    for (auto [index, bucket] : llvm::enumerate(members)) {
      Location loc = bucketLocs[index];
      SmallVector<Value> rows;
      int64_t width = 0;
      for (unsigned i : bucket) {
        rows.push_back(value(ReshapeOp::create(b, updated[i]->getLoc(),
                                               f32({1, updates[i].k}),
                                               updated[i]->getResult(0))));
        width += updates[i].k;
      }
      Value row = rows.size() == 1 ? rows.front()
                                   : value(ConcatOp::create(
                                         b, loc, rows, b.getI64IntegerAttr(1)));
      Value gathered =
          AllGatherOp::create(b, loc, f32({n, width}), row,
                              b.getI64IntegerAttr(n),
                              PrecisionAttr::get(ctx, Precision::fp32))
              .getResult();
      for (unsigned i : bucket) {
        Update &u = updates[i];
        Location l = u.op->getLoc();
        int64_t elems = u.type.getNumElements();
        Value v = value(SliceOp::create(b, l, gathered, i64({0, u.offset}),
                                        i64({n, u.offset + u.k}), i64({1, 1})));
        v = value(ReshapeOp::create(b, l, f32({n * u.k}), v));
        if (n * u.k != elems)
          v = value(SliceOp::create(b, l, v, i64({0}), i64({elems}), i64({1})));
        if (v.getType() != u.type)
          v = value(ReshapeOp::create(b, l, u.type, v));
        u.op->getResult(0).replaceAllUsesWith(v);
      }
    }
    for (Update &u : updates)
      u.op->erase();
    if (clip)
      clip->erase();
    fn.setType(FunctionType::get(ctx, argTypes, ret->getOperandTypes()));
    averageLoss(fn);
    return success();
  }

  /// The loss metric, averaged in fp32 (it is what rank 0 reports).
  static void averageLoss(func::FuncOp fn) {
    MLIRContext *ctx = fn.getContext();
    Block &body = fn.getBody().front();
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
