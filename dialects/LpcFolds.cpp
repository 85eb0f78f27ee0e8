//===- LpcFolds.cpp - folders and canonicalizations of lpc ops ------------===//
//
// Only exact rewrites live here: each one gives bit-identical results for
// every input (including NaN, inf and signed zero). Rewrites that change
// rounding (e.g. merging two scales) belong to a pass with an option.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::lpc;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// neg(neg(x)) = x: negation only flips the sign bit.
OpFoldResult NegOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return {};
}

/// pow(x, 1) = x.
OpFoldResult PowOp::fold(FoldAdaptor) {
  if (getExponent().isExactlyValue(1.0))
    return getInput();
  return {};
}

/// scale(x, 1) = x.
OpFoldResult ScaleOp::fold(FoldAdaptor) {
  if (getFactor().isExactlyValue(1.0))
    return getInput();
  return {};
}

namespace {
/// scale(x, -1) -> neg(x): multiplying by -1 is exact, neg is cheaper and
/// exposes neg(neg(x)) folds.
struct ScaleByMinusOneToNeg : OpRewritePattern<ScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaleOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getFactor().isExactlyValue(-1.0))
      return failure();
    // Keep discardable attributes such as the user's lpc.precision pin.
    auto neg = NegOp::create(rewriter, op.getLoc(), op.getInput());
    neg->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, neg);
    return success();
  }
};
} // namespace

void ScaleOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<ScaleByMinusOneToNeg>(context);
}

/// Broadcasting to the operand's own type is the identity.
OpFoldResult BroadcastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

/// reshape(x) to x's type is x; reshape(reshape(x)) is one reshape.
OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    if (inner.getInput().getType() == getType())
      return inner.getInput();
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

/// transpose with the identity permutation is x; transpose(transpose(x))
/// composes into one permutation.
OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  auto isIdentity = [](ArrayRef<int64_t> p) {
    for (auto [i, v] : llvm::enumerate(p))
      if ((int64_t)i != v)
        return false;
    return true;
  };
  if (isIdentity(perm))
    return getInput();
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    // result[i] = mid[perm[i]] = x[inner[perm[i]]]
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(innerPerm[p]);
    if (isIdentity(composed))
      return inner.getInput();
    setPermutation(composed);
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

/// A slice covering the whole tensor with step 1 is the identity.
OpFoldResult SliceOp::fold(FoldAdaptor) {
  RankedTensorType in = getInput().getType();
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (getStart()[i] != 0 || getLimit()[i] != in.getDimSize(i) ||
        getStep()[i] != 1)
      return {};
  return getInput();
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

/// Dropout with rate 0 keeps every element and scales by 1.
OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (getRate().isZero())
    return getInput();
  return {};
}

/// True when every value of `from` (NaN and inf included) is exactly a value
/// of `to`, so converting from -> to never rounds.
static bool isExactWidening(Type from, Type to) {
  auto f = dyn_cast<FloatType>(from), t = dyn_cast<FloatType>(to);
  if (!f || !t)
    return false;
  // isRepresentableBy ignores non-finite behaviour: f8E4M3FN has no inf.
  if (isa<Float8E4M3FNType>(t) && !isa<Float8E4M3FNType>(f))
    return false;
  return llvm::APFloatBase::isRepresentableBy(f.getFloatSemantics(),
                                              t.getFloatSemantics());
}

/// cast(x : T -> T) is x. cast(cast(x : S -> M) : M -> D) is cast(x : S -> D)
/// when S -> M is exact (so the first cast never rounds); it is x when D = S.
OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto inner = getInput().getDefiningOp<CastOp>();
  if (!inner)
    return {};
  Type src = inner.getInput().getType().getElementType();
  Type mid = inner.getType().getElementType();
  if (!isExactWidening(src, mid))
    return {};
  if (inner.getInput().getType() == getType())
    return inner.getInput();
  getInputMutable().assign(inner.getInput());
  return getResult();
}

namespace {
/// cast(reshape(x)) -> reshape(cast(x)) for narrowing casts: the same
/// elements, converted the same way. The autodiff pass reshapes saved
/// activations for the weight gradient GEMMs ([B, S, D] -> [B*S, D]) and
/// lpc-insert-casts then casts the reshape, while the forward already casts x
/// itself; with the cast next to x, CSE keeps one of the two (one pass over
/// the activation fewer, and the forward's producer can fuse with its only
/// remaining consumer). The shared cast then lives until the backward in
/// place of x, which is wider. A widening cast is left where it is: sharing
/// it would keep the wide copy alive through the step instead of the narrow
/// x (+1 GiB for the d4096 GPT block's fp8 step on the GPU).
struct CastOfReshape : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto reshape = op.getInput().getDefiningOp<ReshapeOp>();
    if (!reshape)
      return failure();
    Value x = reshape.getInput();
    auto xType = cast<RankedTensorType>(x.getType());
    auto elt = op.getType().getElementType();
    if (elt.getIntOrFloatBitWidth() >=
        xType.getElementType().getIntOrFloatBitWidth())
      return failure();
    auto early = CastOp::create(rewriter, op.getLoc(), xType.clone(elt), x,
                               op.getSaturate());
    early->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    auto moved = ReshapeOp::create(rewriter, reshape.getLoc(), op.getType(),
                                   early.getResult());
    moved->setDiscardableAttrs(reshape->getDiscardableAttrDictionary());
    // A reshape's assigned precision is its element type's (it follows its
    // input); keep that true for lpc-insert-casts if it runs later, and the
    // rule's text with it.
    if (moved->hasAttr(LpcDialect::getAssignedAttrName())) {
      moved->removeAttr(LpcDialect::getAssignedAttrName());
      moved->removeAttr(LpcDialect::getReasonAttrName());
      if (std::optional<Precision> p = getPrecisionFor(elt)) {
        moved->setAttr(LpcDialect::getAssignedAttrName(),
                       PrecisionAttr::get(getContext(), *p));
        moved->setAttr(LpcDialect::getReasonAttrName(),
                       rewriter.getStringAttr("follow: inputs are " +
                                              stringifyPrecision(*p)));
      }
    }
    rewriter.replaceOp(op, moved.getResult());
    return success();
  }
};
} // namespace

void CastOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<CastOfReshape>(context);
}

/// quantize(cast(x)) = quantize(x) when the cast is exact: x * scale is the
/// same product, rounded once to fp8.
OpFoldResult QuantizeOp::fold(FoldAdaptor) {
  auto inner = getInput().getDefiningOp<CastOp>();
  if (!inner || !isExactWidening(inner.getInput().getType().getElementType(),
                                 inner.getType().getElementType()))
    return {};
  getInputMutable().assign(inner.getInput());
  return getResult();
}

namespace {
/// quantize(reshape(x), s) -> reshape(quantize(x, s)): the same elements
/// quantized the same way. The weight-gradient GEMMs read the forward's
/// activations reshaped ([B, S, D] -> [B*S, D]) and quantized with the
/// forward's scale; next to x, CSE keeps one FP8 copy for both GEMMs (one
/// cast pass and one buffer fewer; FP8 is the narrowest copy to keep).
struct QuantizeOfReshape : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto reshape = op.getInput().getDefiningOp<ReshapeOp>();
    if (!reshape)
      return failure();
    Value x = reshape.getInput();
    auto xType = cast<RankedTensorType>(x.getType());
    auto early = QuantizeOp::create(
        rewriter, op.getLoc(), xType.clone(op.getType().getElementType()), x,
        op.getScale());
    early->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    auto moved = ReshapeOp::create(rewriter, reshape.getLoc(), op.getType(),
                                   early.getResult());
    rewriter.replaceOp(op, moved.getResult());
    return success();
  }
};

/// fp8_stats(reshape(x), s) = fp8_stats(x, s): fractions over all elements.
struct FP8StatsOfReshape : OpRewritePattern<FP8StatsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FP8StatsOp op,
                                PatternRewriter &rewriter) const override {
    auto reshape = op.getInput().getDefiningOp<ReshapeOp>();
    if (!reshape)
      return failure();
    rewriter.modifyOpInPlace(
        op, [&] { op.getInputMutable().assign(reshape.getInput()); });
    return success();
  }
};
} // namespace

void QuantizeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<QuantizeOfReshape>(context);
}

void FP8StatsOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<FP8StatsOfReshape>(context);
}

/// amax(cast(x)) = amax(x) when the cast is exact; amax(reshape(x)) =
/// amax(x).
OpFoldResult AmaxOp::fold(FoldAdaptor) {
  if (auto reshape = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(reshape.getInput());
    return getResult();
  }
  auto inner = getInput().getDefiningOp<CastOp>();
  if (!inner || !isExactWidening(inner.getInput().getType().getElementType(),
                                 inner.getType().getElementType()))
    return {};
  getInputMutable().assign(inner.getInput());
  return getResult();
}
