//===- LpcToLinalg.cpp - --lpc-to-linalg ----------------------------------===//
//
// Lowers lpc ops on tensors to linalg.generic / tensor / arith / math. Each
// op computes in f32 (low-precision operands are extended inside the
// bodies) and rounds its result once to its element type.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"
#include "lpc/Dialect/LpcOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallSet.h"

#include <cmath>

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCTOLINALG
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

RankedTensorType tt(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Extends a scalar to f32 (floats) inside a body.
Value toF32(OpBuilder &b, Location loc, Value v) {
  Type t = v.getType();
  if (t.isF32() || !isa<FloatType>(t))
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

/// Rounds an f32 scalar to `t` inside a body.
Value fromF32(OpBuilder &b, Location loc, Value v, Type t) {
  if (v.getType() == t)
    return v;
  if (isa<FloatType>(t))
    return arith::TruncFOp::create(b, loc, t, v);
  return v;
}

Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value emptyLike(OpBuilder &b, Location loc, RankedTensorType t) {
  return tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType());
}

/// A tensor of `t` filled with `v` (in t's element type).
Value filled(OpBuilder &b, Location loc, RankedTensorType t, double v) {
  Value init = emptyLike(b, loc, t);
  Value c;
  if (isa<FloatType>(t.getElementType()))
    c = arith::ConstantOp::create(b, loc,
                                  b.getFloatAttr(t.getElementType(), v));
  else
    c = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(t.getElementType(), (int64_t)v));
  return linalg::FillOp::create(b, loc, c, init).getResult(0);
}

using BodyFn =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

/// A linalg.generic over `domainRank` loops. `inputMaps` / `outputMaps` map
/// the loops to each operand; the body gets the inputs extended to f32 (and
/// the outputs' current values, for reductions) and returns f32 values that
/// are rounded to the outputs' element types.
SmallVector<Value> generic(OpBuilder &b, Location loc, ValueRange inputs,
                           ArrayRef<AffineMap> inputMaps, ValueRange outputs,
                           ArrayRef<AffineMap> outputMaps,
                           ArrayRef<utils::IteratorType> iterators,
                           BodyFn body, bool passOutputs = false) {
  SmallVector<AffineMap> maps(inputMaps);
  llvm::append_range(maps, outputMaps);
  SmallVector<Type> resultTypes;
  for (Value o : outputs)
    resultTypes.push_back(o.getType());
  auto op = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, outputs, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> in;
        for (Value a : args.take_front(inputs.size()))
          in.push_back(toF32(nb, nloc, a));
        if (passOutputs)
          for (Value a : args.drop_front(inputs.size()))
            in.push_back(toF32(nb, nloc, a));
        SmallVector<Value> res = body(nb, nloc, in);
        SmallVector<Value> yields;
        for (auto [r, o] : llvm::zip(res, outputs))
          yields.push_back(fromF32(nb, nloc, r,
                                   tt(o).getElementType()));
        linalg::YieldOp::create(nb, nloc, yields);
      });
  return SmallVector<Value>(op.getResults());
}

/// Elementwise op of same-shaped operands (0-d tensors broadcast).
Value elementwise(OpBuilder &b, Location loc, RankedTensorType out,
                  ValueRange inputs, BodyFn body) {
  unsigned rank = out.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(tt(in).getRank() == 0 && rank != 0
                       ? AffineMap::get(rank, 0, {}, ctx)
                       : AffineMap::getMultiDimIdentityMap(rank, ctx));
  SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
  return generic(b, loc, inputs, maps, emptyLike(b, loc, out),
                 AffineMap::getMultiDimIdentityMap(rank, ctx), its, body)[0];
}

/// Scalar helpers used in bodies.
Value mulf(OpBuilder &b, Location l, Value x, Value y) {
  return arith::MulFOp::create(b, l, x, y);
}
Value addf(OpBuilder &b, Location l, Value x, Value y) {
  return arith::AddFOp::create(b, l, x, y);
}
Value subf(OpBuilder &b, Location l, Value x, Value y) {
  return arith::SubFOp::create(b, l, x, y);
}
Value divf(OpBuilder &b, Location l, Value x, Value y) {
  return arith::DivFOp::create(b, l, x, y);
}
Value sigmoid(OpBuilder &b, Location l, Value x) {
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  return divf(b, l, f32Const(b, l, 1.0), addf(b, l, f32Const(b, l, 1.0), e));
}

/// GELU and its derivative (erf and tanh forms), as the reference.
Value gelu(OpBuilder &b, Location l, Value x, GeluApproximation approx) {
  Value half = f32Const(b, l, 0.5), one = f32Const(b, l, 1.0);
  if (approx == GeluApproximation::erf) {
    Value e = math::ErfOp::create(b, l, mulf(b, l, x, f32Const(b, l, M_SQRT1_2)));
    return mulf(b, l, mulf(b, l, half, x), addf(b, l, one, e));
  }
  Value x3 = mulf(b, l, x, mulf(b, l, x, x));
  Value inner = mulf(b, l, f32Const(b, l, std::sqrt(2.0 / M_PI)),
                     addf(b, l, x, mulf(b, l, f32Const(b, l, 0.044715), x3)));
  Value t = math::TanhOp::create(b, l, inner);
  return mulf(b, l, mulf(b, l, half, x), addf(b, l, one, t));
}

Value geluGrad(OpBuilder &b, Location l, Value x, GeluApproximation approx) {
  Value half = f32Const(b, l, 0.5), one = f32Const(b, l, 1.0);
  if (approx == GeluApproximation::erf) {
    // 0.5 (1 + erf(x/sqrt2)) + x * exp(-x^2/2) / sqrt(2 pi)
    Value cdf = mulf(b, l, half,
                     addf(b, l, one,
                          math::ErfOp::create(
                              b, l, mulf(b, l, x, f32Const(b, l, M_SQRT1_2)))));
    Value pdf = mulf(b, l, f32Const(b, l, 1.0 / std::sqrt(2.0 * M_PI)),
                     math::ExpOp::create(
                         b, l, mulf(b, l, f32Const(b, l, -0.5),
                                    mulf(b, l, x, x))));
    return addf(b, l, cdf, mulf(b, l, x, pdf));
  }
  Value c = f32Const(b, l, std::sqrt(2.0 / M_PI));
  Value k = f32Const(b, l, 0.044715);
  Value x2 = mulf(b, l, x, x);
  Value inner = mulf(b, l, c, addf(b, l, x, mulf(b, l, k, mulf(b, l, x2, x))));
  Value t = math::TanhOp::create(b, l, inner);
  Value dinner =
      mulf(b, l, c, addf(b, l, one, mulf(b, l, f32Const(b, l, 3.0), mulf(b, l, k, x2))));
  Value sech2 = subf(b, l, one, mulf(b, l, t, t));
  return addf(b, l, mulf(b, l, half, addf(b, l, one, t)),
              mulf(b, l, mulf(b, l, half, x), mulf(b, l, sech2, dinner)));
}

template <typename OpT>
struct LowerElementwise : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  using Fn = std::function<Value(OpBuilder &, Location, OpT, ValueRange)>;
  LowerElementwise(MLIRContext *ctx, Fn fn)
      : OpRewritePattern<OpT>(ctx), fn(std::move(fn)) {}
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    auto out = cast<RankedTensorType>(op->getResult(0).getType());
    if (!isa<FloatType>(out.getElementType()))
      return failure();
    Value v = elementwise(
        rewriter, op.getLoc(), out, op->getOperands(),
        [&](OpBuilder &b, Location l, ValueRange a) -> SmallVector<Value> {
          return {fn(b, l, op, a)};
        });
    rewriter.replaceOp(op, v);
    return success();
  }
  Fn fn;
};

/// Integer addition (the step counter).
struct LowerIntAdd : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<IntegerType>(op.getType().getElementType()))
      return failure();
    Value v = elementwise(
        rewriter, op.getLoc(), op.getType(), op->getOperands(),
        [](OpBuilder &b, Location l, ValueRange a) -> SmallVector<Value> {
          return {arith::AddIOp::create(b, l, a[0], a[1])};
        });
    rewriter.replaceOp(op, v);
    return success();
  }
};

struct LowerConstant : OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rewriter) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense)
      return rewriter.notifyMatchFailure(op, "only dense constants");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, dense);
    return success();
  }
};

struct LowerGradSeed : OpRewritePattern<GradSeedOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GradSeedOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::get(op.getType(), rewriter.getF32FloatAttr(1.0f)));
    return success();
  }
};

/// (Batched) GEMM as a linalg.generic accumulating in f32, rounded once.
struct LowerMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType a = op.getLhs().getType(), w = op.getRhs().getType(),
                     out = op.getType();
    int64_t rank = out.getRank(), batch = rank - 2;
    // Loops: batch..., m, n, k.
    unsigned nLoops = rank + 1;
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineExpr m = d(batch), n = d(batch + 1), k = d(batch + 2);
    SmallVector<AffineExpr> aExprs, wExprs, oExprs;
    for (int64_t i = 0; i < batch; ++i) {
      aExprs.push_back(d(i));
      oExprs.push_back(d(i));
      if (w.getRank() == a.getRank())
        wExprs.push_back(d(i));
    }
    aExprs.append(op.getTransposeA() ? SmallVector<AffineExpr>{k, m}
                                     : SmallVector<AffineExpr>{m, k});
    wExprs.append(op.getTransposeB() ? SmallVector<AffineExpr>{n, k}
                                     : SmallVector<AffineExpr>{k, n});
    oExprs.append({m, n});
    auto accType = RankedTensorType::get(out.getShape(), rewriter.getF32Type());
    Value acc = filled(rewriter, loc, accType, 0.0);
    SmallVector<utils::IteratorType> its(nLoops, utils::IteratorType::parallel);
    its.back() = utils::IteratorType::reduction;
    Value sum = generic(
        rewriter, loc, {op.getLhs(), op.getRhs()},
        {AffineMap::get(nLoops, 0, aExprs, ctx),
         AffineMap::get(nLoops, 0, wExprs, ctx)},
        acc, AffineMap::get(nLoops, 0, oExprs, ctx), its,
        [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          return {addf(b, l, v[2], mulf(b, l, v[0], v[1]))};
        },
        /*passOutputs=*/true)[0];
    if (out.getElementType() != rewriter.getF32Type())
      sum = elementwise(rewriter, loc, out, sum,
                        [](OpBuilder &, Location, ValueRange v)
                            -> SmallVector<Value> { return {v[0]}; });
    rewriter.replaceOp(op, sum);
    return success();
  }
};

/// Reductions over `axes` into f32 accumulators; returns the f32 result in
/// the reduced shape (keepdims applied by the caller).
struct Reduced {
  Value value;                 // f32 tensor of the reduced shape
  SmallVector<AffineExpr> out; // output expressions over the input dims
};

Value reduceF32(OpBuilder &b, Location loc, Value input,
                ArrayRef<int64_t> axesIn, double init, bool isMax,
                RankedTensorType reducedType) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType in = tt(input);
  int64_t rank = in.getRank();
  llvm::SmallSet<int64_t, 4> axes;
  for (int64_t a : axesIn)
    axes.insert(a < 0 ? a + rank : a);
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> its;
  for (int64_t i = 0; i < rank; ++i) {
    if (axes.contains(i)) {
      its.push_back(utils::IteratorType::reduction);
    } else {
      its.push_back(utils::IteratorType::parallel);
      outExprs.push_back(getAffineDimExpr(i, ctx));
    }
  }
  auto accType = RankedTensorType::get(
      [&] {
        SmallVector<int64_t> s;
        for (int64_t i = 0; i < rank; ++i)
          if (!axes.contains(i))
            s.push_back(in.getDimSize(i));
        return s;
      }(),
      b.getF32Type());
  Value acc = filled(b, loc, accType, init);
  Value r = generic(
      b, loc, input, AffineMap::getMultiDimIdentityMap(rank, ctx), acc,
      AffineMap::get(rank, 0, outExprs, ctx), its,
      [&](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
        if (isMax)
          return {arith::MaximumFOp::create(nb, l, v[0], v[1])};
        return {addf(nb, l, v[0], v[1])};
      },
      /*passOutputs=*/true)[0];
  if (reducedType && reducedType.getShape() != accType.getShape())
    r = tensor::ReshapeOp::create(
        b, loc, reducedType.clone(b.getF32Type()), r,
        arith::ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(
                RankedTensorType::get({reducedType.getRank()},
                                      b.getI64Type()),
                ArrayRef<int64_t>(reducedType.getShape()))));
  return r;
}

Value castTensor(OpBuilder &b, Location loc, Value v, RankedTensorType to,
                 double factor = 1.0) {
  if (v.getType() == to && factor == 1.0)
    return v;
  return elementwise(b, loc, to, v,
                     [&](OpBuilder &nb, Location l, ValueRange a)
                         -> SmallVector<Value> {
                       if (factor == 1.0)
                         return {a[0]};
                       return {mulf(nb, l, a[0], f32Const(nb, l, factor))};
                     });
}

template <typename OpT>
struct LowerReduce : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    bool isMax = std::is_same_v<OpT, ReduceMaxOp>;
    bool isMean = std::is_same_v<OpT, ReduceMeanOp>;
    RankedTensorType in = op.getInput().getType(), out = op.getType();
    Value r = reduceF32(rewriter, op.getLoc(), op.getInput(), op.getAxes(),
                        isMax ? -INFINITY : 0.0, isMax, out);
    double factor = 1.0;
    if (isMean)
      factor = double(out.getNumElements()) / double(in.getNumElements());
    rewriter.replaceOp(op, castTensor(rewriter, op.getLoc(), r, out, factor));
    return success();
  }
};

/// Broadcasts a reduced f32 tensor (over all dims but `keep`) back.
AffineMap keepMap(MLIRContext *ctx, unsigned rank, ArrayRef<int64_t> keep) {
  SmallVector<AffineExpr> e;
  for (int64_t k : keep)
    e.push_back(getAffineDimExpr(k, ctx));
  return AffineMap::get(rank, 0, e, ctx);
}

struct LowerBiasAdd : OpRewritePattern<BiasAddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BiasAddOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    RankedTensorType out = op.getType();
    unsigned rank = out.getRank();
    SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
    Value r = generic(
        rewriter, op.getLoc(), {op.getInput(), op.getBias()},
        {AffineMap::getMultiDimIdentityMap(rank, ctx),
         keepMap(ctx, rank, {int64_t(rank) - 1})},
        emptyLike(rewriter, op.getLoc(), out),
        AffineMap::getMultiDimIdentityMap(rank, ctx), its,
        [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          return {addf(b, l, v[0], v[1])};
        })[0];
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Cross-entropy over [..., C] logits flattened to [N, C]: returns the
/// per-row logsumexp (f32 [N]) computed stably.
std::pair<Value, Value> rowMaxAndLse(OpBuilder &b, Location loc,
                                     Value logits2d) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType t = tt(logits2d);
  int64_t n = t.getDimSize(0);
  auto rowType = RankedTensorType::get({n}, b.getF32Type());
  Value mx = reduceF32(b, loc, logits2d, {1}, -INFINITY, true, rowType);
  AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap row = keepMap(ctx, 2, {0});
  Value sum = generic(
      b, loc, {logits2d, mx}, {id2, row}, filled(b, loc, rowType, 0.0), row,
      {utils::IteratorType::parallel, utils::IteratorType::reduction},
      [](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
        return {addf(nb, l, v[2],
                     math::ExpOp::create(nb, l, subf(nb, l, v[0], v[1])))};
      },
      true)[0];
  Value lse = elementwise(
      b, loc, rowType, {mx, sum},
      [](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
        return {addf(nb, l, v[0], math::LogOp::create(nb, l, v[1]))};
      });
  return {mx, lse};
}

Value flatten2d(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = tt(v);
  int64_t c = t.getShape().back();
  int64_t n = t.getNumElements() / c;
  auto to = RankedTensorType::get({n, c}, t.getElementType());
  if (t == to)
    return v;
  SmallVector<ReassociationIndices> re(2);
  for (int64_t i = 0; i + 1 < t.getRank(); ++i)
    re[0].push_back(i);
  re[1].push_back(t.getRank() - 1);
  if (t.getRank() == 1)
    return tensor::ExpandShapeOp::create(b, loc, to, v,
                                         ArrayRef<ReassociationIndices>{{0, 1}});
  return tensor::CollapseShapeOp::create(b, loc, to, v, re);
}

Value flatten1d(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = tt(v);
  auto to = RankedTensorType::get({t.getNumElements()}, t.getElementType());
  if (t == to)
    return v;
  ReassociationIndices all;
  for (int64_t i = 0; i < t.getRank(); ++i)
    all.push_back(i);
  if (t.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, to, v,
                                         ArrayRef<ReassociationIndices>{});
  return tensor::CollapseShapeOp::create(b, loc, to, v,
                                         ArrayRef<ReassociationIndices>{all});
}

/// Weight of each row: 1 unless its label is ignore_index; and the count.
struct CEParts {
  Value mx, lse, labels; // [N] f32, [N] f32, [N] int
  int64_t n, c;
};

struct LowerCrossEntropy : OpRewritePattern<SoftmaxCrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value logits = flatten2d(rewriter, loc, op.getLogits());
    Value labels = flatten1d(rewriter, loc, op.getLabels());
    auto [mx, lse] = rowMaxAndLse(rewriter, loc, logits);
    (void)mx;
    std::optional<int64_t> ignore;
    if (auto a = op.getIgnoreIndexAttr())
      ignore = a.getValue().getSExtValue();
    // Per row: (lse - logit[label]) * valid, and valid; summed.
    auto scalar = RankedTensorType::get({}, rewriter.getF32Type());
    AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
    AffineMap row = keepMap(ctx, 2, {0});
    AffineMap none = AffineMap::get(2, 0, {}, ctx);
    SmallVector<Value> sums = generic(
        rewriter, loc, {logits, labels, lse}, {id2, row, row},
        ValueRange{filled(rewriter, loc, scalar, 0.0),
                   filled(rewriter, loc, scalar, 0.0)},
        {none, none},
        {utils::IteratorType::reduction, utils::IteratorType::reduction},
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value c = linalg::IndexOp::create(b, l, 1);
          Value label = arith::IndexCastOp::create(b, l, b.getIndexType(), v[1]);
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, c,
                                            label);
          Value valid = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
          if (ignore)
            valid = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ne, v[1],
                arith::ConstantOp::create(
                    b, l, b.getIntegerAttr(v[1].getType(), *ignore)));
          Value take = arith::AndIOp::create(b, l, hit, valid);
          Value term = subf(b, l, v[2], v[0]);
          Value zero = f32Const(b, l, 0.0);
          Value loss = addf(b, l, v[3],
                            arith::SelectOp::create(b, l, take, term, zero));
          Value cnt = addf(b, l, v[4],
                           arith::SelectOp::create(b, l, take,
                                                   f32Const(b, l, 1.0), zero));
          return {loss, cnt};
        },
        /*passOutputs=*/true);
    Value result = sums[0];
    if (op.getReduction() == LossReduction::mean)
      result = elementwise(
          rewriter, loc, scalar, {sums[0], sums[1]},
          [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
            Value one = f32Const(b, l, 1.0);
            return {divf(b, l, v[0], arith::MaximumFOp::create(b, l, v[1], one))};
          });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LowerCrossEntropyGrad : OpRewritePattern<SoftmaxCrossEntropyGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value logits = flatten2d(rewriter, loc, op.getLogits());
    Value labels = flatten1d(rewriter, loc, op.getLabels());
    RankedTensorType l2 = tt(logits);
    auto [mx, lse] = rowMaxAndLse(rewriter, loc, logits);
    (void)mx;
    std::optional<int64_t> ignore;
    if (auto a = op.getIgnoreIndexAttr())
      ignore = a.getValue().getSExtValue();
    AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
    AffineMap row = keepMap(ctx, 2, {0});
    AffineMap none = AffineMap::get(2, 0, {}, ctx);
    auto scalar = RankedTensorType::get({}, rewriter.getF32Type());
    // Count of rows that count (mean).
    Value count;
    if (op.getReduction() == LossReduction::mean) {
      count = generic(
          rewriter, loc, labels, keepMap(ctx, 1, {0}),
          filled(rewriter, loc, scalar, 0.0), AffineMap::get(1, 0, {}, ctx),
          {utils::IteratorType::reduction},
          [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
            Value one = f32Const(b, l, 1.0);
            if (!ignore)
              return {addf(b, l, v[1], one)};
            Value valid = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ne, v[0],
                arith::ConstantOp::create(
                    b, l, b.getIntegerAttr(v[0].getType(), *ignore)));
            return {addf(b, l, v[1],
                         arith::SelectOp::create(b, l, valid, one,
                                                 f32Const(b, l, 0.0)))};
          },
          true)[0];
    } else {
      count = filled(rewriter, loc, scalar, 1.0);
    }
    auto outType = l2.clone(tt(op.getResult()).getElementType());
    Value d = generic(
        rewriter, loc, {logits, labels, lse, op.getGrad(), count},
        {id2, row, row, none, none}, emptyLike(rewriter, loc, outType), id2,
        {utils::IteratorType::parallel, utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value p = math::ExpOp::create(b, l, subf(b, l, v[0], v[2]));
          Value c = linalg::IndexOp::create(b, l, 1);
          Value label = arith::IndexCastOp::create(b, l, b.getIndexType(), v[1]);
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, c,
                                            label);
          Value zero = f32Const(b, l, 0.0);
          Value g = subf(b, l, p,
                         arith::SelectOp::create(b, l, hit, f32Const(b, l, 1.0),
                                                 zero));
          Value scale = divf(b, l, v[3],
                             arith::MaximumFOp::create(b, l, v[4],
                                                       f32Const(b, l, 1.0)));
          Value r = mulf(b, l, g, scale);
          if (ignore) {
            Value valid = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ne, v[1],
                arith::ConstantOp::create(
                    b, l, b.getIntegerAttr(v[1].getType(), *ignore)));
            r = arith::SelectOp::create(b, l, valid, r, zero);
          }
          return {r};
        })[0];
    RankedTensorType want = tt(op.getResult());
    if (tt(d) != want)
      d = tensor::ExpandShapeOp::create(
          rewriter, loc, want, d,
          [&] {
            SmallVector<ReassociationIndices> re(2);
            for (int64_t i = 0; i + 1 < want.getRank(); ++i)
              re[0].push_back(i);
            re[1].push_back(want.getRank() - 1);
            return re;
          }());
    rewriter.replaceOp(op, d);
    return success();
  }
};

/// AdamW with scalar step and lr operands (0-d tensors).
struct LowerAdamW : OpRewritePattern<AdamWOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AdamWOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType t = op.getParam().getType();
    unsigned rank = t.getRank();
    double b1 = op.getBeta1().convertToDouble(),
           b2 = op.getBeta2().convertToDouble(),
           eps = op.getEps().convertToDouble(),
           wd = op.getWeightDecay().convertToDouble();
    // Bias corrections from the step, computed once (scalars).
    auto scalar = RankedTensorType::get({}, rewriter.getF32Type());
    Value stepF = elementwise(
        rewriter, loc, scalar, op.getStep(),
        [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          if (isa<FloatType>(v[0].getType()))
            return {v[0]};
          return {arith::SIToFPOp::create(b, l, b.getF32Type(), v[0])};
        });
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap none = AffineMap::get(rank, 0, {}, ctx);
    SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
    SmallVector<Value> outs = {emptyLike(rewriter, loc, t),
                               emptyLike(rewriter, loc, t),
                               emptyLike(rewriter, loc, t)};
    SmallVector<Value> r = generic(
        rewriter, loc,
        {op.getParam(), op.getGrad(), op.getExpAvg(), op.getExpAvgSq(), stepF,
         op.getLr()},
        {id, id, id, id, none, none}, outs, {id, id, id}, its,
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value one = f32Const(b, l, 1.0);
          Value lr = v[5], step = v[4];
          Value p = mulf(b, l, v[0], subf(b, l, one, mulf(b, l, lr, f32Const(b, l, wd))));
          Value m = addf(b, l, mulf(b, l, f32Const(b, l, b1), v[2]),
                         mulf(b, l, f32Const(b, l, 1.0 - b1), v[1]));
          Value s = addf(b, l, mulf(b, l, f32Const(b, l, b2), v[3]),
                         mulf(b, l, f32Const(b, l, 1.0 - b2),
                              mulf(b, l, v[1], v[1])));
          Value bc1 = subf(b, l, one,
                           math::PowFOp::create(b, l, f32Const(b, l, b1), step));
          Value bc2 = subf(b, l, one,
                           math::PowFOp::create(b, l, f32Const(b, l, b2), step));
          Value denom = addf(b, l, math::SqrtOp::create(b, l, divf(b, l, s, bc2)),
                             f32Const(b, l, eps));
          Value upd = divf(b, l, divf(b, l, m, bc1), denom);
          return {subf(b, l, p, mulf(b, l, lr, upd)), m, s};
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct LowerSgd : OpRewritePattern<SgdOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SgdOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType t = op.getParam().getType();
    unsigned rank = t.getRank();
    double mom = op.getMomentum().convertToDouble(),
           damp = op.getDampening().convertToDouble(),
           wd = op.getWeightDecay().convertToDouble();
    bool nesterov = op.getNesterov();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap none = AffineMap::get(rank, 0, {}, ctx);
    SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
    SmallVector<Value> r = generic(
        rewriter, loc,
        {op.getParam(), op.getGrad(), op.getMomentumBuffer(), op.getLr()},
        {id, id, id, none},
        ValueRange{emptyLike(rewriter, loc, t), emptyLike(rewriter, loc, t)},
        {id, id}, its,
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value g = addf(b, l, v[1], mulf(b, l, f32Const(b, l, wd), v[0]));
          Value buf = v[2];
          if (mom != 0.0) {
            buf = addf(b, l, mulf(b, l, f32Const(b, l, mom), v[2]),
                       mulf(b, l, f32Const(b, l, 1.0 - damp), g));
            g = nesterov ? addf(b, l, g, mulf(b, l, f32Const(b, l, mom), buf))
                         : buf;
          }
          return {subf(b, l, v[0], mulf(b, l, v[3], g)), buf};
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct LowerCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    if (isFP8(op.getType().getElementType()) ||
        isFP8(op.getInput().getType().getElementType()))
      return rewriter.notifyMatchFailure(op, "fp8 casts are not lowered yet");
    rewriter.replaceOp(op, castTensor(rewriter, op.getLoc(), op.getInput(),
                                      op.getType()));
    return success();
  }
};

struct LpcToLinalgPass
    : ::mlir::lpc::impl::LpcToLinalgBase<LpcToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    using GA = GeluApproximation;
    patterns.add<LowerElementwise<AddOp>>(
        ctx, [](OpBuilder &b, Location l, AddOp, ValueRange v) {
          return addf(b, l, v[0], v[1]);
        });
    patterns.add<LowerElementwise<SubOp>>(
        ctx, [](OpBuilder &b, Location l, SubOp, ValueRange v) {
          return subf(b, l, v[0], v[1]);
        });
    patterns.add<LowerElementwise<MulOp>>(
        ctx, [](OpBuilder &b, Location l, MulOp, ValueRange v) {
          return mulf(b, l, v[0], v[1]);
        });
    patterns.add<LowerElementwise<DivOp>>(
        ctx, [](OpBuilder &b, Location l, DivOp, ValueRange v) {
          return divf(b, l, v[0], v[1]);
        });
    patterns.add<LowerElementwise<NegOp>>(
        ctx, [](OpBuilder &b, Location l, NegOp, ValueRange v) -> Value {
          return arith::NegFOp::create(b, l, v[0]);
        });
    patterns.add<LowerElementwise<ScaleOp>>(
        ctx, [](OpBuilder &b, Location l, ScaleOp op, ValueRange v) {
          return mulf(b, l, v[0],
                      f32Const(b, l, op.getFactor().convertToDouble()));
        });
    patterns.add<LowerElementwise<ReluOp>>(
        ctx, [](OpBuilder &b, Location l, ReluOp, ValueRange v) -> Value {
          return arith::MaximumFOp::create(b, l, v[0], f32Const(b, l, 0.0));
        });
    patterns.add<LowerElementwise<GeluOp>>(
        ctx, [](OpBuilder &b, Location l, GeluOp op, ValueRange v) {
          return gelu(b, l, v[0], op.getApproximation());
        });
    patterns.add<LowerElementwise<SiluOp>>(
        ctx, [](OpBuilder &b, Location l, SiluOp, ValueRange v) {
          return mulf(b, l, v[0], sigmoid(b, l, v[0]));
        });
    patterns.add<LowerElementwise<TanhOp>>(
        ctx, [](OpBuilder &b, Location l, TanhOp, ValueRange v) -> Value {
          return math::TanhOp::create(b, l, v[0]);
        });
    patterns.add<LowerElementwise<SigmoidOp>>(
        ctx, [](OpBuilder &b, Location l, SigmoidOp, ValueRange v) {
          return sigmoid(b, l, v[0]);
        });
    patterns.add<LowerElementwise<ExpOp>>(
        ctx, [](OpBuilder &b, Location l, ExpOp, ValueRange v) -> Value {
          return math::ExpOp::create(b, l, v[0]);
        });
    patterns.add<LowerElementwise<LogOp>>(
        ctx, [](OpBuilder &b, Location l, LogOp, ValueRange v) -> Value {
          return math::LogOp::create(b, l, v[0]);
        });
    patterns.add<LowerElementwise<SqrtOp>>(
        ctx, [](OpBuilder &b, Location l, SqrtOp, ValueRange v) -> Value {
          return math::SqrtOp::create(b, l, v[0]);
        });
    patterns.add<LowerElementwise<RsqrtOp>>(
        ctx, [](OpBuilder &b, Location l, RsqrtOp, ValueRange v) -> Value {
          return math::RsqrtOp::create(b, l, v[0]);
        });
    patterns.add<LowerElementwise<PowOp>>(
        ctx, [](OpBuilder &b, Location l, PowOp op, ValueRange v) -> Value {
          return math::PowFOp::create(
              b, l, v[0], f32Const(b, l, op.getExponent().convertToDouble()));
        });
    patterns.add<LowerElementwise<ReluGradOp>>(
        ctx, [](OpBuilder &b, Location l, ReluGradOp, ValueRange v) -> Value {
          Value pos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                            v[1], f32Const(b, l, 0.0));
          return arith::SelectOp::create(b, l, pos, v[0], f32Const(b, l, 0.0));
        });
    patterns.add<LowerElementwise<GeluGradOp>>(
        ctx, [](OpBuilder &b, Location l, GeluGradOp op, ValueRange v) {
          return mulf(b, l, v[0], geluGrad(b, l, v[1], op.getApproximation()));
        });
    patterns.add<LowerElementwise<SiluGradOp>>(
        ctx, [](OpBuilder &b, Location l, SiluGradOp, ValueRange v) {
          Value s = sigmoid(b, l, v[1]);
          Value one = f32Const(b, l, 1.0);
          return mulf(b, l, v[0],
                      mulf(b, l, s,
                           addf(b, l, one, mulf(b, l, v[1], subf(b, l, one, s)))));
        });
    patterns.add<LowerElementwise<TanhGradOp>>(
        ctx, [](OpBuilder &b, Location l, TanhGradOp, ValueRange v) {
          return mulf(b, l, v[0],
                      subf(b, l, f32Const(b, l, 1.0), mulf(b, l, v[1], v[1])));
        });
    patterns.add<LowerElementwise<SigmoidGradOp>>(
        ctx, [](OpBuilder &b, Location l, SigmoidGradOp, ValueRange v) {
          return mulf(b, l, v[0],
                      mulf(b, l, v[1], subf(b, l, f32Const(b, l, 1.0), v[1])));
        });
    patterns.add<LowerElementwise<LossScaleOp>>(
        ctx, [](OpBuilder &b, Location l, LossScaleOp, ValueRange v) {
          return mulf(b, l, v[0], v[1]);
        });
    patterns.add<LowerElementwise<UnscaleOp>>(
        ctx, [](OpBuilder &b, Location l, UnscaleOp, ValueRange v) {
          // x * (1/scale), the reciprocal rounded to f32 (GradScaler).
          return mulf(b, l, v[0], divf(b, l, f32Const(b, l, 1.0), v[1]));
        });
    (void)sizeof(GA);
    patterns.add<LowerIntAdd, LowerConstant, LowerGradSeed, LowerMatmul,
                 LowerReduce<ReduceSumOp>, LowerReduce<ReduceMeanOp>,
                 LowerReduce<ReduceMaxOp>, LowerBiasAdd, LowerCrossEntropy,
                 LowerCrossEntropyGrad, LowerAdamW, LowerSgd, LowerCast>(ctx);
    // Model functions (lpc.param / lpc.input ops) are not executable: the
    // train step and eval functions built from them are.
    FrozenRewritePatternSet frozen(std::move(patterns));
    SmallVector<func::FuncOp> targets;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn.getOps<ParamOp>().empty() && fn.getOps<InputOp>().empty())
        targets.push_back(fn);
    for (func::FuncOp fn : targets)
      if (failed(applyPatternsGreedily(fn, frozen)))
        return signalPassFailure();
    WalkResult left = getOperation().walk([&](Operation *op) {
      if (auto fn = op->getParentOfType<func::FuncOp>();
          fn && !llvm::is_contained(targets, fn))
        return WalkResult::skip();
      if (isa<LpcDialect>(op->getDialect())) {
        op->emitError() << "lpc-to-linalg: no CPU lowering for '"
                        << op->getName() << "' yet";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
