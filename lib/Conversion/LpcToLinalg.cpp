//===- LpcToLinalg.cpp - --lpc-to-linalg ----------------------------------===//
//
// Lowers lpc ops on tensors to linalg.generic / tensor / arith / math. Each
// op computes in f32 (low-precision operands are extended inside the
// bodies) and rounds its result once to its element type.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "lpc/Conversion/Passes.h"
#include "lpc/Dialect/LpcOps.h"
#include "lpc/Support/SplitMix.h"

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
using namespace mlir::lpc::lowering;

namespace {

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

/// An lpc op that is one math-dialect op per element.
template <class LpcOpT, class MathOpT>
static void addMathUnary(RewritePatternSet &patterns, MLIRContext *ctx) {
  patterns.add<LowerElementwise<LpcOpT>>(
      ctx, [](OpBuilder &b, Location l, LpcOpT, ValueRange v) -> Value {
        return MathOpT::create(b, l, v[0]);
      });
}

/// Integer addition, subtraction and multiplication (the step counter,
/// position ids computed from the token ids), wrapping as PyTorch's.
template <class OpT, class IntOpT>
struct LowerIntBinary : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    if (!isa<IntegerType>(op.getType().getElementType()))
      return failure();
    Value v = elementwise(
        rewriter, op.getLoc(), op.getType(), op->getOperands(),
        [](OpBuilder &b, Location l, ValueRange a) -> SmallVector<Value> {
          return {IntOpT::create(b, l, a[0], a[1])};
        });
    rewriter.replaceOp(op, v);
    return success();
  }
};
using LowerIntAdd = LowerIntBinary<AddOp, arith::AddIOp>;
using LowerIntSub = LowerIntBinary<SubOp, arith::SubIOp>;
using LowerIntMul = LowerIntBinary<MulOp, arith::MulIOp>;

/// lpc.convert: integers (i1 unsigned: 0 or 1) to f32 rounded to nearest,
/// f32 to integers truncated, to i1 by != 0, between integers sign-extended
/// or truncated.
struct LowerConvert : OpRewritePattern<ConvertOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertOp op,
                                PatternRewriter &rewriter) const override {
    Type from = op.getInput().getType().getElementType();
    Type to = op.getType().getElementType();
    Value v = elementwise(
        rewriter, op.getLoc(), op.getType(), op->getOperands(),
        [&](OpBuilder &b, Location l, ValueRange a) -> SmallVector<Value> {
          Value x = a[0];
          if (to.isInteger(1)) {
            if (isa<FloatType>(from))
              return {arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, x,
                                            arith::ConstantOp::create(
                                                b, l, b.getFloatAttr(from, 0.0)))};
            return {arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, x,
                                          arith::ConstantOp::create(
                                              b, l, b.getIntegerAttr(from, 0)))};
          }
          if (isa<FloatType>(to))
            return {from.isInteger(1)
                        ? arith::UIToFPOp::create(b, l, to, x).getResult()
                        : arith::SIToFPOp::create(b, l, to, x).getResult()};
          if (isa<FloatType>(from))
            return {arith::FPToSIOp::create(b, l, to, x)};
          unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
          if (fw == 1)
            return {arith::ExtUIOp::create(b, l, to, x)};
          if (fw < tw)
            return {arith::ExtSIOp::create(b, l, to, x)};
          return {arith::TruncIOp::create(b, l, to, x)};
        });
    rewriter.replaceOp(op, v);
    return success();
  }
};

/// Comparisons: floats widened to f32 (exact for every narrow format, so
/// the result is the comparison in the operands' own type), ordered
/// predicates except `ne` (NaN != anything, as in C and PyTorch).
struct LowerCompare : OpRewritePattern<CompareOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CompareOp op,
                                PatternRewriter &rewriter) const override {
    bool isFloat = isa<FloatType>(op.getLhs().getType().getElementType());
    ComparePredicate p = op.getPredicate();
    Value v = elementwise(
        rewriter, op.getLoc(), op.getType(), op->getOperands(),
        [&](OpBuilder &b, Location l, ValueRange a) -> SmallVector<Value> {
          if (isFloat) {
            using P = arith::CmpFPredicate;
            P fp = p == ComparePredicate::lt   ? P::OLT
                   : p == ComparePredicate::le ? P::OLE
                   : p == ComparePredicate::gt ? P::OGT
                   : p == ComparePredicate::ge ? P::OGE
                   : p == ComparePredicate::eq ? P::OEQ
                                               : P::UNE;
            return {arith::CmpFOp::create(b, l, fp, a[0], a[1])};
          }
          using P = arith::CmpIPredicate;
          P ip = p == ComparePredicate::lt   ? P::slt
                 : p == ComparePredicate::le ? P::sle
                 : p == ComparePredicate::gt ? P::sgt
                 : p == ComparePredicate::ge ? P::sge
                 : p == ComparePredicate::eq ? P::eq
                                             : P::ne;
          return {arith::CmpIOp::create(b, l, ip, a[0], a[1])};
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
    SmallVector<AffineMap> maps = gemmMaps(ctx, a.getRank(), w.getRank(),
                                           op.getTransposeA(),
                                           op.getTransposeB());
    auto accType = RankedTensorType::get(out.getShape(), rewriter.getF32Type());
    Value acc = filled(rewriter, loc, accType, 0.0);
    // Operands go to the GEMM library as they are (f32, bf16, f16; the f16
    // entry point widens them itself, exactly).
    Value lhs = op.getLhs(), rhs = op.getRhs();
    Value sum = generic(
        rewriter, loc, {lhs, rhs}, {maps[0], maps[1]}, acc, maps[2],
        gemmIterators(a.getRank()),
        [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          return {addf(b, l, v[2], mulf(b, l, v[0], v[1]))};
        },
        /*passOutputs=*/true)[0];
    markGemm(sum, op.getTransposeA(), op.getTransposeB());
    if (out.getElementType() != rewriter.getF32Type())
      sum = elementwise(rewriter, loc, out, sum,
                        [](OpBuilder &, Location, ValueRange v)
                            -> SmallVector<Value> { return {v[0]}; });
    rewriter.replaceOp(op, sum);
    return success();
  }
};

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

/// Inverted dropout with the reference's counter-based mask (see
/// ref::dropoutUniform): h = splitmix64(splitmix64(splitmix64(seed) ^ step)
/// ^ index), kept iff (h >> 40) * 2^-24 >= rate, i.e. iff the 24-bit value
/// reaches ceil(rate * 2^24). The step is the train step's `step` state
/// argument (finished updates), so the backward pass and a resumed run see
/// the same masks. Integer code: it vectorizes.
struct LowerDropout : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    auto fn = op->getParentOfType<func::FuncOp>();
    Value stepArg;
    for (unsigned i = 0; fn && i < fn.getNumArguments(); ++i)
      if (auto st = fn.getArgAttrOfType<StringAttr>(i, "lpc.state");
          st && st.getValue() == "step")
        stepArg = fn.getArgument(i);
    if (!stepArg)
      return op.emitError("lpc-to-linalg: lpc.dropout needs the step counter "
                          "of a train step (an argument with lpc.state = "
                          "\"step\"); compile the train step built by "
                          "lpc-autodiff"),
             failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType t = op.getType();
    unsigned rank = t.getRank();
    double rate = op.getRate().convertToDouble();
    double keepScale = 1.0 / (1.0 - rate);
    uint64_t threshold =
        static_cast<uint64_t>(std::ceil(rate * 16777216.0)); // 2^24
    uint64_t seedMix = splitmix64(static_cast<uint64_t>(op.getSeed()));
    auto stepMap = AffineMap::get(rank, 0, {}, ctx);
    Value r = generic(
        rewriter, loc, {op.getInput(), stepArg}, {idMap(ctx, rank), stepMap},
        emptyLike(rewriter, loc, t), idMap(ctx, rank),
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          auto i64c = [&](uint64_t c) -> Value {
            return arith::ConstantOp::create(
                b, l, b.getI64IntegerAttr(static_cast<int64_t>(c)));
          };
          auto mix = [&](Value x) {
            x = arith::AddIOp::create(b, l, x, i64c(kSplitMixIncrement));
            auto step = [&](Value y, uint64_t shift, uint64_t mul) -> Value {
              Value s = arith::XOrIOp::create(
                  b, l, y, arith::ShRUIOp::create(b, l, y, i64c(shift)));
              return mul ? Value(arith::MulIOp::create(b, l, s, i64c(mul))) : s;
            };
            x = step(x, 30, kSplitMixMul1);
            x = step(x, 27, kSplitMixMul2);
            return step(x, 31, 0);
          };
          Value stepV = v[1];
          if (stepV.getType() != b.getI64Type())
            stepV = arith::ExtSIOp::create(b, l, b.getI64Type(), stepV);
          Value perStep =
              mix(arith::XOrIOp::create(b, l, i64c(seedMix), stepV));
          // Row-major element index.
          Value index = i64c(0);
          for (unsigned d = 0; d < rank; ++d) {
            Value id = arith::IndexCastOp::create(
                b, l, b.getI64Type(), linalg::IndexOp::create(b, l, d));
            index = arith::AddIOp::create(
                b, l, arith::MulIOp::create(b, l, index, i64c(t.getDimSize(d))),
                id);
          }
          Value h = mix(arith::XOrIOp::create(b, l, perStep, index));
          Value keep = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::uge,
              arith::ShRUIOp::create(b, l, h, i64c(40)), i64c(threshold));
          // x * keepScale in f64, as the reference computes it.
          Value wide = arith::ExtFOp::create(b, l, b.getF64Type(), v[0]);
          Value scaled = arith::TruncFOp::create(
              b, l, b.getF32Type(),
              arith::MulFOp::create(
                  b, l, wide,
                  arith::ConstantOp::create(b, l, b.getF64FloatAttr(keepScale))));
          return {arith::SelectOp::create(b, l, keep, scaled,
                                          f32Const(b, l, 0.0))};
        })[0];
    rewriter.replaceOp(op, r);
    return success();
  }
};

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
          // 1 - beta^t as -expm1(t ln beta), ln beta taken in double: 1 -
          // powf(f32(beta), t) cancels, and f32(0.999) alone puts 1.3e-5
          // into the second correction, hence into every update (found by
          // lpc-jit --op-check).
          auto biasCorrection = [&](double beta) -> Value {
            Value x = mulf(b, l, step, f32Const(b, l, std::log(beta)));
            return arith::NegFOp::create(b, l, math::ExpM1Op::create(b, l, x));
          };
          Value bc1 = biasCorrection(b1), bc2 = biasCorrection(b2);
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

/// Casts between any float formats (fp8 goes through toF32 / fromF32:
/// integer code, or arith ops with fp8-hardware-cvt); saturating fp8 casts
/// are LowerSaturatingCast's.
struct LowerCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getSaturate())
      return rewriter.notifyMatchFailure(op, "saturating");
    rewriter.replaceOp(op, castTensor(rewriter, op.getLoc(), op.getInput(),
                                      op.getType()));
    return success();
  }
};

/// Reductions may be reassociated: the sums are then vectorized (as every
/// BLAS and PyTorch kernel sums), at a difference from the sequential f32
/// sum that is far below the reference comparisons' tolerances. Only the
/// combining op (the one that reads the accumulator) is flagged; max is
/// exact in any order.
void allowReassociation(linalg::GenericOp g) {
  if (g.getNumReductionLoops() == 0)
    return;
  for (BlockArgument acc : g.getRegionOutputArgs())
    for (Operation *user : acc.getUsers())
      if (isa<arith::AddFOp, arith::MaximumFOp, arith::MinimumFOp>(user))
        if (auto fm = dyn_cast<arith::ArithFastMathInterface>(user))
          user->setAttr(fm.getFastMathAttrName(),
                        arith::FastMathFlagsAttr::get(
                            g.getContext(), arith::FastMathFlags::reassoc));
}

struct LpcToLinalgPass
    : ::mlir::lpc::impl::LpcToLinalgBase<LpcToLinalgPass> {
  using LpcToLinalgBase::LpcToLinalgBase;

  void runOnOperation() override {
    FP8HardwareCvtScope fp8Cvt(fp8HardwareCvt);
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
    addMathUnary<TanhOp, math::TanhOp>(patterns, ctx);
    patterns.add<LowerElementwise<SigmoidOp>>(
        ctx, [](OpBuilder &b, Location l, SigmoidOp, ValueRange v) {
          return sigmoid(b, l, v[0]);
        });
    addMathUnary<ExpOp, math::ExpOp>(patterns, ctx);
    addMathUnary<LogOp, math::LogOp>(patterns, ctx);
    addMathUnary<Log1pOp, math::Log1pOp>(patterns, ctx);
    addMathUnary<Expm1Op, math::ExpM1Op>(patterns, ctx);
    addMathUnary<SinOp, math::SinOp>(patterns, ctx);
    addMathUnary<CosOp, math::CosOp>(patterns, ctx);
    addMathUnary<ErfOp, math::ErfOp>(patterns, ctx);
    addMathUnary<SqrtOp, math::SqrtOp>(patterns, ctx);
    patterns.add<LowerElementwise<RsqrtOp>>(
        ctx, [](OpBuilder &b, Location l, RsqrtOp, ValueRange v) -> Value {
          return divf(b, l, f32Const(b, l, 1.0), math::SqrtOp::create(b, l, v[0]));
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
    patterns.add<LowerIntAdd, LowerIntSub, LowerIntMul, LowerConvert, LowerCompare, LowerConstant, LowerGradSeed, LowerMatmul,
                 LowerReduce<ReduceSumOp>, LowerReduce<ReduceMeanOp>,
                 LowerReduce<ReduceMaxOp>, LowerBiasAdd, LowerCrossEntropy,
                 LowerCrossEntropyGrad, LowerAdamW, LowerSgd, LowerCast,
                 LowerDropout>(ctx);
    populateNormalizationPatterns(patterns);
    populateDataMovementPatterns(patterns);
    populatePrecisionPatterns(patterns, fp8Gemm);
    // Model functions (lpc.param / lpc.input ops) are not executable: the
    // train step and eval functions built from them are.
    FrozenRewritePatternSet frozen(std::move(patterns));
    SmallVector<func::FuncOp> targets, models;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      (fn.getOps<ParamOp>().empty() && fn.getOps<InputOp>().empty() ? targets
                                                                      : models)
          .push_back(fn);
    if (rejectModels && !models.empty()) {
      std::string keep;
      for (func::FuncOp fn : targets)
        if (fn.isPublic())
          keep += (keep.empty() ? "" : ",") + fn.getSymName().str();
      // At the location only: the op itself (a whole model) would be
      // printed with the error.
      InFlightDiagnostic d = mlir::emitError(models.front().getLoc())
                             << "@" << models.front().getSymName()
                             << " is a model function (lpc.param / lpc.input "
                                "ops), which codegen does not compile; ";
      if (keep.empty())
        d << "run --lpc-autodiff (and --lpc-mixed-precision) first and "
             "compile the train step it builds without the model, e.g. "
             "--symbol-privatize=exclude=<train step>,<eval> --symbol-dce";
      else
        d << "compile only the functions built from it: add "
             "--symbol-privatize=exclude="
          << keep << " --symbol-dce before the codegen pipeline";
      return signalPassFailure();
    }
    for (func::FuncOp fn : targets)
      if (failed(applyPatternsGreedily(fn, frozen)))
        return signalPassFailure();
    for (func::FuncOp fn : targets)
      fn.walk([](linalg::GenericOp g) { allowReassociation(g); });
    WalkResult left = getOperation().walk([&](Operation *op) {
      if (auto fn = op->getParentOfType<func::FuncOp>();
          fn && !llvm::is_contained(targets, fn))
        return WalkResult::skip();
      // Fused attention, grouped GEMMs and collectives stay ops:
      // one-shot-bufferize makes them library calls (dialects/
      // AttentionBufferization.cpp, GroupedMatmulBufferization.cpp,
      // CollectiveBufferization.cpp).
      if (isa<StopGradientOp, TrainOrEvalOp>(op)) {
        op->emitError() << "lpc-to-linalg: '" << op->getName()
                        << "' is resolved by lpc-autodiff, which must run first";
        return WalkResult::interrupt();
      }
      if (isa<LpcDialect>(op->getDialect()) &&
          !isa<AttentionOp, AttentionGradOp, GroupedMatmulOp,
               GroupedMatmulWeightGradOp, AllReduceOp, ReduceScatterOp,
               AllGatherOp, ShardOp, AllToAllOp>(op)) {
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
