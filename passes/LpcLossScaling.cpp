//===- LpcLossScaling.cpp - --lpc-loss-scaling ----------------------------===//
//
// Loss scaling for train steps (PyTorch GradScaler): scales the backward
// seed, unscales the gradients before clipping and the optimizer, and in
// dynamic mode skips non-finite steps and updates the scale (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Passes/PrecisionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <cfloat>
#include <cmath>
#include <limits>

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCLOSSSCALING
#include "lpc/Passes/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

constexpr StringLiteral kScaleState = "loss_scale";
constexpr StringLiteral kTrackerState = "loss_scale_growth_tracker";

enum class Mode { dynamic, staticScale, off };

/// Positive and finite once rounded to f32 (the scale is an f32 tensor).
bool isValidScale(double s) {
  return std::isfinite(s) && s <= double(FLT_MAX) && static_cast<float>(s) > 0;
}

/// (new, old) pairs of an optimizer op: the values a skipped step keeps.
SmallVector<std::pair<Value, Value>> optimizerUpdates(Operation *op) {
  if (auto a = dyn_cast<AdamWOp>(op))
    return {{a.getNewParam(), a.getParam()},
            {a.getNewExpAvg(), a.getExpAvg()},
            {a.getNewExpAvgSq(), a.getExpAvgSq()}};
  auto s = cast<SgdOp>(op);
  return {{s.getNewParam(), s.getParam()},
          {s.getNewMomentumBuffer(), s.getMomentumBuffer()}};
}

OpOperand &gradOperand(Operation *op) {
  if (auto a = dyn_cast<AdamWOp>(op))
    return a.getGradMutable();
  return cast<SgdOp>(op).getGradMutable();
}

struct LpcLossScalingPass
    : ::mlir::lpc::impl::LpcLossScalingBase<LpcLossScalingPass> {
  using Base::Base;

  Mode parsedMode = Mode::dynamic;

  LogicalResult parseOptions(ModuleOp module) {
    if (mode == "dynamic")
      parsedMode = Mode::dynamic;
    else if (mode == "static")
      parsedMode = Mode::staticScale;
    else if (mode == "off")
      parsedMode = Mode::off;
    else
      return module.emitError() << "lpc-loss-scaling: unknown mode '" << mode
                                << "' (expected dynamic, static or off)";
    if (!isValidScale(initScale))
      return module.emitError()
             << "lpc-loss-scaling: init-scale must be positive and finite in "
                "f32, got "
             << initScale;
    if (!isValidScale(staticScale))
      return module.emitError()
             << "lpc-loss-scaling: static-scale must be positive and finite "
                "in f32, got "
             << staticScale;
    if (!(growthFactor > 1.0 && std::isfinite(growthFactor)))
      return module.emitError()
             << "lpc-loss-scaling: growth-factor must be > 1, got "
             << growthFactor;
    if (!(backoffFactor > 0.0 && backoffFactor < 1.0))
      return module.emitError()
             << "lpc-loss-scaling: backoff-factor must be in (0, 1), got "
             << backoffFactor;
    if (growthInterval < 1)
      return module.emitError()
             << "lpc-loss-scaling: growth-interval must be >= 1, got "
             << static_cast<int64_t>(growthInterval);
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(parseOptions(module)))
      return signalPassFailure();
    if (parsedMode == Mode::off)
      return;
    SmallVector<func::FuncOp> fns(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : fns)
      if (!fn.isExternal() && failed(scaleFunction(fn)))
        return signalPassFailure();
  }

  LogicalResult scaleFunction(func::FuncOp fn);
  LogicalResult scaleGradientFunction(func::FuncOp fn,
                                      ArrayRef<GradSeedOp> seeds, bool scaled);
};

/// A gradient function (lpc-autodiff optimizer=none) returns gradients
/// {lpc.state = "grad"} instead of updating parameters. It has no state to
/// keep a dynamic scale in, so it is scaled by a constant (init-scale in
/// dynamic mode, static-scale in static mode) and its returned gradients are
/// unscaled: the low-precision backward sees the same values as the first
/// step of a train step. Forward models (no seed) are left alone.
LogicalResult
LpcLossScalingPass::scaleGradientFunction(func::FuncOp fn,
                                          ArrayRef<GradSeedOp> seeds,
                                          bool scaled) {
  if (seeds.empty() || scaled)
    return success();
  if (seeds.size() > 1)
    return seeds[1]->emitError()
           << "lpc-loss-scaling: @" << fn.getSymName()
           << " has more than one backward seed (lpc.grad_seed)";
  auto ret = dyn_cast<func::ReturnOp>(fn.getBody().back().getTerminator());
  if (!ret)
    return success();
  SmallVector<unsigned> gradResults;
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    if (auto st = fn.getResultAttrOfType<StringAttr>(i, kStateAttr);
        st && st.getValue() == "grad")
      gradResults.push_back(i);
  if (gradResults.empty())
    return success();
  GradSeedOp seed = seeds.front();
  OpBuilder b(seed.getContext());
  b.setInsertionPointAfter(seed);
  auto f32Scalar = RankedTensorType::get({}, b.getF32Type());
  double value = parsedMode == Mode::dynamic ? initScale : staticScale;
  Value scale = ConstantOp::create(
      b, NameLoc::get(b.getStringAttr("loss_scale"), seed.getLoc()),
      DenseElementsAttr::get(f32Scalar, b.getF32FloatAttr(value)));
  auto scaledSeed = LossScaleOp::create(b, seed.getLoc(), seed, scale);
  seed.getResult().replaceAllUsesExcept(scaledSeed, scaledSeed);
  b.setInsertionPoint(ret);
  for (unsigned i : gradResults) {
    Value g = ret.getOperand(i);
    ret.setOperand(i, UnscaleOp::create(b, g.getLoc(), g, scale));
  }
  return success();
}

LogicalResult LpcLossScalingPass::scaleFunction(func::FuncOp fn) {
  SmallVector<GradSeedOp> seeds;
  SmallVector<Operation *> optimizers;
  bool scaled = false;
  fn.walk([&](Operation *op) {
    if (auto seed = dyn_cast<GradSeedOp>(op))
      seeds.push_back(seed);
    else if (isa<AdamWOp, SgdOp>(op))
      optimizers.push_back(op);
    else if (isa<LossScaleOp, UnscaleOp>(op))
      scaled = true;
  });
  if (optimizers.empty())
    return scaleGradientFunction(fn, seeds, scaled);
  // Already loss-scaled: never scale twice.
  if (scaled || findStateArgument(fn, kScaleState))
    return success();
  if (seeds.empty())
    return optimizers.front()->emitError()
           << "lpc-loss-scaling: @" << fn.getSymName()
           << " updates parameters (" << optimizers.front()->getName()
           << ") but has no backward pass to scale (no lpc.grad_seed); "
              "lpc-autodiff builds none when the loss depends on no "
              "parameter";
  if (seeds.size() > 1)
    return seeds[1].emitError()
           << "lpc-loss-scaling: @" << fn.getSymName()
           << " has more than one backward seed (lpc.grad_seed)";
  if (!fn.getBody().hasOneBlock())
    return fn.emitError() << "lpc-loss-scaling: the train step @"
                          << fn.getSymName() << " must have a single block";
  Block &body = fn.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return fn.emitError() << "lpc-loss-scaling: the train step @"
                          << fn.getSymName() << " must end in func.return";

  GradSeedOp seed = seeds.front();

  MLIRContext *ctx = fn.getContext();
  OpBuilder b(ctx);
  auto f32Scalar = RankedTensorType::get({}, Float32Type::get(ctx));
  auto i64Scalar = RankedTensorType::get({}, IntegerType::get(ctx, 64));
  auto i1Scalar = RankedTensorType::get({}, IntegerType::get(ctx, 1));
  bool dynamic = parsedMode == Mode::dynamic;
  Location fnLoc = fn.getLoc();

  // The scale: state (dynamic) or a constant next to the seed (static).
  Value scale, tracker;
  if (dynamic) {
    auto scaleAttrs = b.getDictionaryAttr(
        {b.getNamedAttr(kStateAttr, b.getStringAttr(kScaleState)),
         b.getNamedAttr(kInitAttr, b.getF64FloatAttr(initScale))});
    auto trackerAttrs = b.getDictionaryAttr(
        b.getNamedAttr(kStateAttr, b.getStringAttr(kTrackerState)));
    FailureOr<BlockArgument> s =
        addStateArgument(fn, f32Scalar, scaleAttrs,
                         NameLoc::get(b.getStringAttr(kScaleState), fnLoc));
    if (failed(s))
      return fn.emitError(
          "lpc-loss-scaling: cannot add the loss_scale argument");
    FailureOr<BlockArgument> t =
        addStateArgument(fn, i64Scalar, trackerAttrs,
                         NameLoc::get(b.getStringAttr(kTrackerState), fnLoc));
    if (failed(t))
      return fn.emitError("lpc-loss-scaling: cannot add the growth tracker "
                          "argument");
    scale = *s;
    tracker = *t;
    b.setInsertionPointAfter(seed);
  } else {
    b.setInsertionPointAfter(seed);
    scale = ConstantOp::create(
        b, NameLoc::get(b.getStringAttr("loss_scale"), seed.getLoc()),
        DenseElementsAttr::get(f32Scalar, b.getF32FloatAttr(staticScale)));
  }

  // Scale the seed: every gradient is computed from it.
  auto scaledSeed = LossScaleOp::create(b, seed.getLoc(), seed, scale);
  seed.getResult().replaceAllUsesExcept(scaledSeed, scaledSeed);

  // Gradient operands to unscale: the clip's operands when the optimizer
  // reads clipped gradients, else the optimizer's own grad operand.
  SmallVector<OpOperand *> sites;
  llvm::SetVector<Operation *> clips;
  for (Operation *opt : optimizers) {
    OpOperand &g = gradOperand(opt);
    if (auto clip = g.get().getDefiningOp<ClipByGlobalNormOp>())
      clips.insert(clip);
    else
      sites.push_back(&g);
  }
  for (Operation *clip : clips)
    for (OpOperand &o : clip->getOpOperands())
      sites.push_back(&o);
  llvm::stable_sort(sites, [](OpOperand *x, OpOperand *y) {
    return x->getOwner() != y->getOwner() &&
           x->getOwner()->isBeforeInBlock(y->getOwner());
  });
  // One unscale per gradient value, right before its first consumer.
  llvm::MapVector<Value, Value> unscaled;
  for (OpOperand *site : sites) {
    Value g = site->get();
    Value &u = unscaled[g];
    if (!u) {
      b.setInsertionPoint(site->getOwner());
      u = UnscaleOp::create(b, site->getOwner()->getLoc(), g, scale);
    }
    site->set(u);
  }
  if (!dynamic)
    return success();

  // Skip the update when a gradient is not finite: before the return, or
  // before the first op other than the return that reads an update
  // (lpc-data-parallel{zero=1}'s gathers of the updated blocks).
  Location loc = NameLoc::get(b.getStringAttr("loss_scaling"), fnLoc);
  b.setInsertionPoint(ret);
  for (Operation *opt : optimizers)
    for (auto [updated, old] : optimizerUpdates(opt))
      for (Operation *user : updated.getUsers())
        if (user != ret.getOperation() && user->getBlock() == ret->getBlock() &&
            user->isBeforeInBlock(&*b.getInsertionPoint()))
          b.setInsertionPoint(user);
  SmallVector<Value> checked;
  for (auto &entry : unscaled)
    checked.push_back(entry.second);
  Value finite = AllFiniteOp::create(b, loc, checked);
  bool sharded = false;
  fn.walk([&](ReduceScatterOp) { sharded = true; });
  if (sharded) {
    // ZeRO-1: each rank checked only its blocks of the gradients; the step
    // is skipped on every rank when any rank saw a non-finite value.
    auto pin = [&](Operation *op) {
      op->setAttr(LpcDialect::getPrecisionPinAttrName(),
                  PrecisionAttr::get(b.getContext(), Precision::fp32));
      return op->getResult(0);
    };
    Value zero = ConstantOp::create(
        b, loc, DenseElementsAttr::get(f32Scalar, b.getF32FloatAttr(0)));
    Value inf = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            f32Scalar, b.getF32FloatAttr(std::numeric_limits<float>::infinity())));
    Value bad = pin(WhereOp::create(b, loc, finite, zero, inf));
    Value any = AllReduceOp::create(
        b, loc, f32Scalar, bad,
        AllReduceKindAttr::get(b.getContext(), AllReduceKind::max),
        PrecisionAttr::get(b.getContext(), Precision::fp32));
    finite = AllFiniteOp::create(b, loc, ValueRange{any});
  }
  DenseMap<Type, Value> masks;
  auto maskFor = [&](RankedTensorType t) -> Value {
    auto maskType = t.clone(b.getI1Type());
    if (maskType == i1Scalar)
      return finite;
    Value &m = masks[maskType];
    if (!m)
      m = BroadcastOp::create(b, loc, maskType, finite, ArrayRef<int64_t>{});
    return m;
  };
  for (Operation *opt : optimizers)
    for (auto [updated, old] : optimizerUpdates(opt)) {
      auto sel = WhereOp::create(
          b, opt->getLoc(), maskFor(cast<RankedTensorType>(updated.getType())),
          updated, old);
      updated.replaceAllUsesExcept(sel, sel);
    }
  // The step counter advances only when the update is applied.
  BlockArgument oldStep = findStateArgument(fn, "step");
  for (unsigned i = 0; i < fn.getNumResults(); ++i) {
    auto state = fn.getResultAttrOfType<StringAttr>(i, kStateAttr);
    if (!oldStep || !state || state.getValue() != "step" ||
        ret.getOperand(i).getType() != oldStep.getType())
      continue;
    Value newStep = ret.getOperand(i);
    ret.setOperand(
        i, WhereOp::create(b, loc,
                           maskFor(cast<RankedTensorType>(newStep.getType())),
                           newStep, oldStep));
  }

  auto update = LossScaleUpdateOp::create(
      b, loc, f32Scalar, tracker.getType(), scale, tracker, finite,
      b.getF64FloatAttr(growthFactor), b.getF64FloatAttr(backoffFactor),
      b.getI64IntegerAttr(growthInterval));
  auto falseV = ConstantOp::create(
      b, loc, DenseElementsAttr::get(i1Scalar, b.getBoolAttr(false)));
  auto trueV = ConstantOp::create(
      b, loc, DenseElementsAttr::get(i1Scalar, b.getBoolAttr(true)));
  Value skipped = WhereOp::create(b, loc, finite, falseV, trueV);

  if (failed(addStateResult(fn, update.getNewScale(),
                            b.getDictionaryAttr(b.getNamedAttr(
                                kStateAttr, b.getStringAttr(kScaleState))))) ||
      failed(addStateResult(fn, update.getNewGrowthTracker(),
                            b.getDictionaryAttr(b.getNamedAttr(
                                kStateAttr, b.getStringAttr(kTrackerState))))))
    return fn.emitError("lpc-loss-scaling: cannot add the state results");
  // Metrics go last.
  if (failed(addMetricResult(fn, scale, "loss_scale")) ||
      failed(addMetricResult(fn, skipped, "skipped")))
    return fn.emitError("lpc-loss-scaling: cannot add the metric results");
  return success();
}

} // namespace
