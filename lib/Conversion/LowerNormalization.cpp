//===- LowerNormalization.cpp - norms, softmax, losses to linalg ----------===//
//
// Row-wise ops become reductions over the normalized axis into f32
// statistics, then one elementwise pass that broadcasts them back.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::lowering;

namespace {

using Axes = llvm::SmallSet<int64_t, 4>;

/// Max and sum(exp(x - max)) along `axis` (f32, axis dropped).
std::pair<Value, Value> softmaxStats(OpBuilder &b, Location loc, Value x,
                                     int64_t axis) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType t = tt(x);
  unsigned rank = t.getRank();
  Axes axes = axisSet({axis}, rank);
  // The integer-key max of reduceF32 (it vectorizes; maximumf does not).
  Value mx = reduceF32(b, loc, x, {axis}, -INFINITY, /*isMax=*/true,
                       RankedTensorType());
  Value sum = reduceBody(
      b, loc, t, axes, {x, mx}, {idMap(ctx, rank), dropDims(ctx, rank, axes)},
      {0.0},
      [](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
        return {addf(nb, l, v[2],
                     math::ExpOp::create(nb, l, subf(nb, l, v[0], v[1])))};
      })[0];
  return {mx, sum};
}

template <typename OpT>
struct LowerSoftmax : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    constexpr bool isLog = std::is_same_v<OpT, LogSoftmaxOp>;
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType t = op.getType();
    unsigned rank = t.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    Axes axes = axisSet({axis}, rank);
    auto [mx, sum] = softmaxStats(rewriter, loc, op.getInput(), axis);
    AffineMap red = dropDims(ctx, rank, axes);
    SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
    Value y = generic(
        rewriter, loc, {op.getInput(), mx, sum}, {idMap(ctx, rank), red, red},
        emptyLike(rewriter, loc, t), idMap(ctx, rank), its,
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value d = subf(b, l, v[0], v[1]);
          if (isLog)
            return {subf(b, l, d, math::LogOp::create(b, l, v[2]))};
          return {divf(b, l, math::ExpOp::create(b, l, d), v[2])};
        })[0];
    rewriter.replaceOp(op, y);
    return success();
  }
};

template <typename OpT>
struct LowerSoftmaxGrad : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    constexpr bool isLog = std::is_same_v<OpT, LogSoftmaxGradOp>;
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType t = op.getType();
    unsigned rank = t.getRank();
    Axes axes = axisSet({static_cast<int64_t>(op.getAxis())}, rank);
    AffineMap id = idMap(ctx, rank), red = dropDims(ctx, rank, axes);
    // softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g).
    Value s = reduceBody(
        rewriter, loc, t, axes, {op.getGrad(), op.getOutput()}, {id, id}, {0.0},
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          return {addf(b, l, v[2], isLog ? v[0] : mulf(b, l, v[0], v[1]))};
        })[0];
    SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
    Value dx = generic(
        rewriter, loc, {op.getGrad(), op.getOutput(), s}, {id, id, red},
        emptyLike(rewriter, loc, t), id, its,
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          if (isLog)
            return {subf(b, l, v[0],
                         mulf(b, l, math::ExpOp::create(b, l, v[1]), v[2]))};
          return {mulf(b, l, v[1], subf(b, l, v[0], v[2]))};
        })[0];
    rewriter.replaceOp(op, dx);
    return success();
  }
};

/// Mean and 1/sqrt(var + eps) (layernorm) or 1/sqrt(mean(x^2) + eps)
/// (rmsnorm) over the last axis, f32 with the last dim dropped.
std::pair<Value, Value> normStats(OpBuilder &b, Location loc, Value x,
                                  double eps, bool rms) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType t = tt(x);
  unsigned rank = t.getRank();
  Axes axes = axisSet({-1}, rank);
  double inv = 1.0 / double(t.getShape().back());
  AffineMap id = idMap(ctx, rank), red = dropDims(ctx, rank, axes);
  Value mean;
  if (!rms) {
    Value sum = reduceBody(b, loc, t, axes, x, id, {0.0},
                           [](OpBuilder &nb, Location l, ValueRange v)
                               -> SmallVector<Value> {
                             return {addf(nb, l, v[0], v[1])};
                           })[0];
    mean = castTensor(b, loc, sum, tt(sum), inv);
  }
  SmallVector<Value> ins{x};
  SmallVector<AffineMap> maps{id};
  if (!rms) {
    ins.push_back(mean);
    maps.push_back(red);
  }
  Value sq = reduceBody(
      b, loc, t, axes, ins, maps, {0.0},
      [&](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
        Value d = rms ? v[0] : subf(nb, l, v[0], v[1]);
        return {addf(nb, l, v.back(), mulf(nb, l, d, d))};
      })[0];
  Value rstd = elementwise(
      b, loc, tt(sq), sq,
      [&](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
        // 1/sqrt: libm has no rsqrtf for math-to-libm to call.
        return {divf(nb, l, f32Const(nb, l, 1.0),
                     math::SqrtOp::create(
                         nb, l,
                         addf(nb, l, mulf(nb, l, v[0], f32Const(nb, l, inv)),
                              f32Const(nb, l, eps))))};
      });
  return {mean, rstd};
}

template <typename OpT>
struct LowerNorm : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    constexpr bool rms = std::is_same_v<OpT, RmsNormOp>;
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType t = op.getType();
    unsigned rank = t.getRank();
    auto [mean, rstd] = normStats(rewriter, loc, op.getInput(),
                                  op.getEpsilon().convertToDouble(), rms);
    Axes axes = axisSet({-1}, rank);
    AffineMap id = idMap(ctx, rank), red = dropDims(ctx, rank, axes);
    AffineMap last = keepMap(ctx, rank, {int64_t(rank) - 1});
    SmallVector<Value> ins{op.getInput(), rstd, op.getGamma()};
    SmallVector<AffineMap> maps{id, red, last};
    if constexpr (!rms) {
      ins.push_back(op.getBeta());
      maps.push_back(last);
      ins.push_back(mean);
      maps.push_back(red);
    }
    SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
    Value y = generic(
        rewriter, loc, ins, maps, emptyLike(rewriter, loc, t), id, its,
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value xhat = rms ? mulf(b, l, v[0], v[1])
                           : mulf(b, l, subf(b, l, v[0], v[4]), v[1]);
          Value y = mulf(b, l, xhat, v[2]);
          return {rms ? y : addf(b, l, y, v[3])};
        })[0];
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// Gradients of layernorm / rmsnorm over the last axis:
///   dxhat = dy * gamma; dx = rstd * (dxhat - [mean(dxhat)] - xhat *
///   mean(dxhat * xhat)); dgamma = sum_rows(dy * xhat); dbeta = sum_rows(dy).
template <typename OpT>
struct LowerNormGrad : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    constexpr bool rms = std::is_same_v<OpT, RmsNormGradOp>;
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType t = op.getInput().getType();
    unsigned rank = t.getRank();
    double inv = 1.0 / double(t.getShape().back());
    auto [mean, rstd] = normStats(rewriter, loc, op.getInput(),
                                  op.getEpsilon().convertToDouble(), rms);
    Axes lastAxis = axisSet({-1}, rank);
    AffineMap id = idMap(ctx, rank), red = dropDims(ctx, rank, lastAxis);
    AffineMap last = keepMap(ctx, rank, {int64_t(rank) - 1});
    // xhat(v) from x, rstd [, mean].
    auto xhatOf = [&](OpBuilder &b, Location l, Value x, Value r, Value m) {
      return rms ? mulf(b, l, x, r) : mulf(b, l, subf(b, l, x, m), r);
    };
    SmallVector<Value> ins{op.getGrad(), op.getInput(), op.getGamma(), rstd};
    SmallVector<AffineMap> maps{id, id, last, red};
    if constexpr (!rms) {
      ins.push_back(mean);
      maps.push_back(red);
    }
    // Row sums of dxhat and dxhat * xhat.
    SmallVector<Value> sums = reduceBody(
        rewriter, loc, t, lastAxis, ins, maps, {0.0, 0.0},
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          unsigned n = rms ? 4 : 5;
          Value xhat = xhatOf(b, l, v[1], v[3], rms ? Value() : v[4]);
          Value dxhat = mulf(b, l, v[0], v[2]);
          return {addf(b, l, v[n], dxhat),
                  addf(b, l, v[n + 1], mulf(b, l, dxhat, xhat))};
        });
    SmallVector<Value> dxIns(ins);
    SmallVector<AffineMap> dxMaps(maps);
    dxIns.append({sums[0], sums[1]});
    dxMaps.append({red, red});
    SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
    Value dx = generic(
        rewriter, loc, dxIns, dxMaps, emptyLike(rewriter, loc, t), id, its,
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          unsigned n = rms ? 4 : 5;
          Value xhat = xhatOf(b, l, v[1], v[3], rms ? Value() : v[4]);
          Value dxhat = mulf(b, l, v[0], v[2]);
          Value c = f32Const(b, l, inv);
          Value r = subf(b, l, dxhat, mulf(b, l, xhat, mulf(b, l, v[n + 1], c)));
          if (!rms)
            r = subf(b, l, r, mulf(b, l, v[n], c));
          return {mulf(b, l, v[3], r)};
        })[0];
    // Parameter gradients: sums over every dim but the last.
    Axes rows;
    for (unsigned i = 0; i + 1 < rank; ++i)
      rows.insert(i);
    SmallVector<Value> pins{op.getGrad(), op.getInput(), rstd};
    SmallVector<AffineMap> pmaps{id, id, red};
    if constexpr (!rms) {
      pins.push_back(mean);
      pmaps.push_back(red);
    }
    SmallVector<Value> pg = reduceBody(
        rewriter, loc, t, rows, pins, pmaps,
        rms ? SmallVector<double>{0.0} : SmallVector<double>{0.0, 0.0},
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          unsigned n = rms ? 3 : 4;
          Value xhat = xhatOf(b, l, v[1], v[2], rms ? Value() : v[3]);
          SmallVector<Value> r{addf(b, l, v[n], mulf(b, l, v[0], xhat))};
          if (!rms)
            r.push_back(addf(b, l, v[n + 1], v[0]));
          return r;
        });
    RankedTensorType gt = op.getGamma().getType();
    SmallVector<Value> results{dx, castTensor(rewriter, loc, pg[0], gt)};
    if (!rms)
      results.push_back(castTensor(rewriter, loc, pg[1], gt));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Sum of (p - t)^2 (over the count for mean) and its gradient.
struct LowerMse : OpRewritePattern<MseLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MseLossOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    RankedTensorType t = op.getPrediction().getType();
    unsigned rank = t.getRank();
    Value s = reduceBody(
        rewriter, op.getLoc(), t, allAxes(rank), {op.getPrediction(), op.getTarget()},
        {idMap(ctx, rank), idMap(ctx, rank)}, {0.0},
        [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value d = subf(b, l, v[0], v[1]);
          return {addf(b, l, v[2], mulf(b, l, d, d))};
        })[0];
    double f = op.getReduction() == LossReduction::mean
                   ? 1.0 / double(t.getNumElements())
                   : 1.0;
    rewriter.replaceOp(op, castTensor(rewriter, op.getLoc(), s,
                                      tt(s), f));
    return success();
  }
};

struct LowerMseGrad : OpRewritePattern<MseLossGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MseLossGradOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType t = op.getType();
    double f = 2.0 * (op.getReduction() == LossReduction::mean
                          ? 1.0 / double(t.getNumElements())
                          : 1.0);
    Value r = elementwise(
        rewriter, op.getLoc(), t,
        {op.getPrediction(), op.getTarget(), op.getGrad()},
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          return {mulf(b, l, mulf(b, l, subf(b, l, v[0], v[1]), v[2]),
                       f32Const(b, l, f))};
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Routes the gradient to the positions equal to the maximum, split evenly
/// between ties.
struct LowerReduceMaxGrad : OpRewritePattern<ReduceMaxGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceMaxGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType t = op.getInput().getType();
    unsigned rank = t.getRank();
    Axes axes = axisSet(op.getAxes(), rank);
    // Map from the input dims to the (possibly keepdims) reduced operands.
    SmallVector<AffineExpr> e;
    for (unsigned i = 0; i < rank; ++i) {
      if (!axes.contains(i))
        e.push_back(getAffineDimExpr(i, ctx));
      else if (op.getKeepdims())
        e.push_back(getAffineConstantExpr(0, ctx));
    }
    AffineMap red = AffineMap::get(rank, 0, e, ctx), id = idMap(ctx, rank);
    Value count = reduceBody(
        rewriter, loc, t, axes, {op.getInput(), op.getOutput()}, {id, red},
        {0.0},
        [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value eq = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                           v[0], v[1]);
          return {addf(b, l, v[2],
                       arith::SelectOp::create(b, l, eq, f32Const(b, l, 1.0),
                                               f32Const(b, l, 0.0)))};
        })[0];
    SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
    Value dx = generic(
        rewriter, loc, {op.getInput(), op.getOutput(), op.getGrad(), count},
        {id, red, red, dropDims(ctx, rank, axes)}, emptyLike(rewriter, loc, t),
        id, its,
        [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value eq = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                           v[0], v[1]);
          return {arith::SelectOp::create(b, l, eq, divf(b, l, v[2], v[3]),
                                          f32Const(b, l, 0.0))};
        })[0];
    rewriter.replaceOp(op, dx);
    return success();
  }
};

} // namespace

void mlir::lpc::lowering::populateNormalizationPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerSoftmax<SoftmaxOp>, LowerSoftmax<LogSoftmaxOp>,
               LowerSoftmaxGrad<SoftmaxGradOp>,
               LowerSoftmaxGrad<LogSoftmaxGradOp>, LowerNorm<LayerNormOp>,
               LowerNorm<RmsNormOp>, LowerNormGrad<LayerNormGradOp>,
               LowerNormGrad<RmsNormGradOp>, LowerMse, LowerMseGrad,
               LowerReduceMaxGrad>(patterns.getContext());
}
