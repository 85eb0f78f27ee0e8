//===- LpcFP8Scaling.cpp - --lpc-fp8-scaling ------------------------------===//
//
// Rewrites the matmuls chosen for FP8 into scaled FP8 GEMMs: quantize with a
// per-tensor scale, record amax, keep the amax history and update the scale
// (Transformer Engine's delayed scaling), or scale from the tensor's own amax
// (current scaling). See Passes.td for the state contract.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Passes/PrecisionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCFP8SCALING
#include "lpc/Passes/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

/// Strips ops that keep the set of values (moves, and casts to f32 of
/// bf16/f16 values, which are exact), so that x, reshape(x) and the f32 copy
/// of a bf16 x share one scale and one amax.
Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto cast = dyn_cast<CastOp>(def)) {
      Type from = cast.getInput().getType().getElementType();
      if (!cast.getType().getElementType().isF32() ||
          !(from.isBF16() || from.isF16()))
        break;
    } else if (!isa<ReshapeOp, TransposeOp>(def)) {
      break;
    }
    v = def->getOperand(0);
  }
  return v;
}

/// The parameter whose weight-gradient a GEMM computes: follows the result
/// through casts, sums, reshapes, unscaling and clipping to an optimizer op.
StringRef gradientOwner(Value v) {
  SmallVector<Value> work{v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    if (!seen.insert(cur).second)
      continue;
    for (OpOperand &use : cur.getUses()) {
      Operation *user = use.getOwner();
      if (isa<AdamWOp, SgdOp>(user))
        return tracedParamName(user->getOperand(0));
      if (auto clip = dyn_cast<ClipByGlobalNormOp>(user)) {
        work.push_back(clip.getClipped()[use.getOperandNumber()]);
        continue;
      }
      if (auto ret = dyn_cast<func::ReturnOp>(user)) {
        auto fn = ret->getParentOfType<func::FuncOp>();
        if (auto n = fn.getResultAttrOfType<StringAttr>(
                use.getOperandNumber(), kNameAttr))
          return n.getValue();
        continue;
      }
      if (isa<CastOp, AddOp, ReshapeOp, TransposeOp, UnscaleOp>(user))
        work.push_back(user->getResult(0));
    }
  }
  return {};
}

/// Scaling state of one FP8 tensor (a root value in one format).
struct TensorScale {
  Value scale;    // used to quantize this step
  Value scaleInv; // 1 / scale
};

struct LpcFP8ScalingPass
    : ::mlir::lpc::impl::LpcFP8ScalingBase<LpcFP8ScalingPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (scaling != "delayed" && scaling != "current") {
      module.emitError() << "lpc-fp8-scaling: unknown scaling '" << scaling
                         << "' (expected delayed or current)";
      return signalPassFailure();
    }
    if (amaxComputeAlgo != "max" && amaxComputeAlgo != "most_recent") {
      module.emitError() << "lpc-fp8-scaling: unknown amax-compute-algo '"
                         << amaxComputeAlgo << "' (expected max or most_recent)";
      return signalPassFailure();
    }
    if (margin < 0 || interval < 1 || amaxHistoryLen < 1) {
      module.emitError() << "lpc-fp8-scaling: need margin >= 0, interval >= 1 "
                            "and amax-history-len >= 1";
      return signalPassFailure();
    }
    for (const std::string &r : fastAccum)
      if (!symbolizeGemmRole(r)) {
        module.emitError() << "lpc-fp8-scaling: unknown GEMM role '" << r
                           << "' in fast-accum (expected fprop, dgrad, wgrad)";
        return signalPassFailure();
      }
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(rewrite(fn)))
        return signalPassFailure();
  }

  bool isFastAccum(GemmRole role) {
    if (fastAccum.empty())
      return role == GemmRole::fprop;
    return llvm::is_contained(fastAccum, stringifyGemmRole(role).str());
  }

  LogicalResult rewrite(func::FuncOp fn);
};

LogicalResult LpcFP8ScalingPass::rewrite(func::FuncOp fn) {
  SmallVector<MatmulOp> gemms;
  fn.walk([&](MatmulOp op) {
    if (op->hasAttr(LpcDialect::getFP8OperandsAttrName()))
      gemms.push_back(op);
  });
  if (gemms.empty())
    return success();

  MLIRContext *ctx = fn.getContext();
  OpBuilder b(ctx);
  BlockArgument step = findStateArgument(fn, "step");
  bool delayed = scaling == "delayed" && step;
  llvm::DenseSet<Value> grads = gradientValues(fn);
  auto f32Scalar = RankedTensorType::get({}, b.getF32Type());
  auto historyType = RankedTensorType::get({amaxHistoryLen}, b.getF32Type());
  AmaxComputeAlgo algo = amaxComputeAlgo == "max" ? AmaxComputeAlgo::max
                                                  : AmaxComputeAlgo::most_recent;

  // Constants at the top of the function.
  b.setInsertionPointToStart(&fn.getBody().front());
  Location fnLoc = fn.getLoc();
  Value one = ConstantOp::create(
      b, fnLoc, DenseElementsAttr::get(f32Scalar, b.getF32FloatAttr(1.0f)));
  Value zeroStep;
  if (!delayed)
    zeroStep = ConstantOp::create(
        b, fnLoc,
        DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                               b.getI64IntegerAttr(0)));

  DenseMap<std::pair<Value, unsigned>, TensorScale> scales; // (root, format)
  DenseMap<std::pair<Value, unsigned>, Value> quantized;    // (value, format)
  llvm::StringSet<> usedNames;
  SmallVector<std::pair<Value, DictionaryAttr>> newResults;
  SmallVector<std::tuple<Value, StringRef, std::string>> metrics; // fp8 stats
  unsigned anonymous = 0;
  // Delayed scaling under reduce-amax: each tensor's local amax and the
  // history update that is to read the global one.
  struct PendingAmax {
    Value local;
    AmaxHistoryPushOp push;
    FP8ComputeScaleOp next;
  };
  SmallVector<PendingAmax> batchedAmax;

  auto stateAttrs = [&](StringRef state, StringRef name, bool init) {
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr(kStateAttr, b.getStringAttr(state)),
        b.getNamedAttr(kNameAttr, b.getStringAttr(name))};
    if (init)
      attrs.push_back(b.getNamedAttr(kInitAttr, b.getF64FloatAttr(1.0)));
    return b.getDictionaryAttr(attrs);
  };

  // The name of an FP8 tensor: its parameter, or the weight of the GEMM
  // that first uses it + ".input" / ".grad_output".
  auto nameFor = [&](Value root, MatmulOp gemm, unsigned operand) {
    std::string name;
    StringRef param = tracedParamName(root);
    if (!param.empty()) {
      name = param.str();
    } else {
      StringRef weight = tracedParamName(gemm->getOperand(1 - operand));
      if (weight.empty() && roleOf(gemm) == GemmRole::wgrad)
        weight = gradientOwner(gemm.getResult());
      std::string base = weight.empty()
                             ? "gemm" + std::to_string(anonymous++)
                             : weight.str();
      name = base + (grads.contains(root) ? ".grad_output" : ".input");
    }
    std::string unique = name;
    for (int i = 1; usedNames.contains(unique); ++i)
      unique = name + "#" + std::to_string(i);
    usedNames.insert(unique);
    return unique;
  };

  for (MatmulOp gemm : gemms) {
    auto formats = gemm->getAttrOfType<ArrayAttr>(
        LpcDialect::getFP8OperandsAttrName());
    Value q[2], inv[2];
    for (unsigned i = 0; i < 2; ++i) {
      Value x = gemm->getOperand(i);
      Precision fmt = cast<PrecisionAttr>(formats[i]).getValue();
      Type fp8 = getElementTypeFor(ctx, fmt);
      Value root = rootOf(x);
      auto key = std::make_pair(root, static_cast<unsigned>(fmt));
      auto it = scales.find(key);
      if (it == scales.end()) {
        b.setInsertionPoint(gemm);
        Location loc = x.getLoc();
        std::string name = nameFor(root, gemm, i);
        Value amax = AmaxOp::create(b, loc, root);
        // Data parallelism: every rank takes the global amax, so that the
        // scales (and the FP8 copies) agree on all ranks. Train steps only
        // (they have a step): evaluation runs on one rank, where a
        // collective would wait for the others forever. With delayed
        // scaling nothing but the history reads it in this step: all of them
        // go in one collective at the end (batchedAmax below). A parameter
        // (through reshapes, transposes, broadcasts, casts) is replicated:
        // every rank holds the same bits (the same initialization, the same
        // averaged gradients, the same optimizer), so its amax already
        // agrees and needs no collective; under current scaling that saves
        // one latency-bound collective per FP8 weight per step.
        const bool replicated = !tracedParamName(root).empty();
        const bool reduce = reduceAmax && step && !replicated;
        if (reduce && !delayed)
          amax = AllReduceOp::create(
                     b, loc, amax.getType(), amax,
                     AllReduceKindAttr::get(ctx, AllReduceKind::max),
                     PrecisionAttr::get(ctx, Precision::fp32))
                     .getResult();
        TensorScale ts;
        if (delayed) {
          auto scaleArg = addStateArgument(
              fn, f32Scalar, stateAttrs("fp8_scale", name, true),
              NameLoc::get(b.getStringAttr(name + ".fp8_scale"), loc));
          auto histArg = addStateArgument(
              fn, historyType, stateAttrs("fp8_amax_history", name, false),
              NameLoc::get(b.getStringAttr(name + ".amax_history"), loc));
          if (failed(scaleArg) || failed(histArg))
            return fn.emitError("lpc-fp8-scaling: cannot add state");
          auto push = AmaxHistoryPushOp::create(
              b, loc, *histArg, amax, AmaxComputeAlgoAttr::get(ctx, algo));
          auto next = FP8ComputeScaleOp::create(
              b, loc, f32Scalar, push.getScaleAmax(), *scaleArg, step,
              PrecisionAttr::get(ctx, fmt), b.getI64IntegerAttr(margin),
              b.getI64IntegerAttr(interval));
          if (reduce)
            batchedAmax.push_back({amax, push, next});
          newResults.push_back({next, stateAttrs("fp8_scale", name, false)});
          newResults.push_back(
              {push.getNewHistory(),
               stateAttrs("fp8_amax_history", name, false)});
          ts.scale = *scaleArg;
        } else {
          ts.scale = FP8ComputeScaleOp::create(
              b, loc, f32Scalar, amax, one, zeroStep,
              PrecisionAttr::get(ctx, fmt), b.getI64IntegerAttr(margin),
              b.getI64IntegerAttr(1));
        }
        {
          // Delayed scaling: the GEMMs need only the inverse of the scale
          // of earlier steps, computed at the top, so that nothing of this
          // step's amax, history and next scale is on the way to them (the
          // GPU back end defers that work to the end of the step and merges
          // it over all tensors: lpc-merge-independent-kernels).
          OpBuilder::InsertionGuard guard(b);
          if (delayed)
            b.setInsertionPointAfter(one.getDefiningOp());
          ts.scaleInv = DivOp::create(b, loc, one, ts.scale);
        }
        // How much of the tensor this step's scale clips or flushes to
        // zero: the numbers to watch when tuning margin and history.
        auto stats = FP8StatsOp::create(b, loc, f32Scalar, f32Scalar, root,
                                        ts.scale, PrecisionAttr::get(ctx, fmt));
        metrics.push_back({stats.getSaturated(), "fp8_saturated", name});
        metrics.push_back({stats.getUnderflow(), "fp8_underflow", name});
        it = scales.insert({key, ts}).first;
      }
      auto qkey = std::make_pair(x, static_cast<unsigned>(fmt));
      Value qv = quantized.lookup(qkey);
      if (!qv) {
        b.setInsertionPoint(gemm);
        auto xt = cast<RankedTensorType>(x.getType());
        qv = QuantizeOp::create(b, x.getLoc(), xt.clone(fp8), x,
                                it->second.scale);
        quantized[qkey] = qv;
      }
      q[i] = qv;
      inv[i] = it->second.scaleInv;
    }
    b.setInsertionPoint(gemm);
    GemmRole role = roleOf(gemm);
    // The GEMM's output type is its assigned precision (bf16 under the fp8
    // policy); users that expect the old type get a cast, which folds away
    // when they wanted the assigned type anyway.
    RankedTensorType outType = gemm.getType();
    if (auto assigned = gemm->getAttrOfType<PrecisionAttr>(
            LpcDialect::getAssignedAttrName()))
      outType = outType.clone(getElementTypeFor(ctx, assigned.getValue()));
    auto scaled = ScaledMatmulOp::create(
        b, gemm.getLoc(), outType, q[0], q[1], inv[0], inv[1],
        /*bias=*/Value(), gemm.getTransposeA(), gemm.getTransposeB(),
        isFastAccum(role), b.getF32Type(),
        GemmRoleAttr::get(ctx, role));
    if (auto reason = gemm->getAttr(LpcDialect::getReasonAttrName()))
      scaled->setAttr(LpcDialect::getReasonAttrName(), reason);
    Value result = scaled.getResult();
    if (outType != gemm.getType())
      result = CastOp::create(b, gemm.getLoc(), gemm.getType(), result);
    gemm.replaceAllUsesWith(result);
    gemm.erase();
  }
  // The batched amax reduction: every tensor's amax in one vector, one
  // collective (a latency per step instead of one per tensor), and each
  // history update moved after it. Nothing else reads them in this step.
  if (!batchedAmax.empty()) {
    Operation *ret = fn.getBody().front().getTerminator();
    b.setInsertionPoint(ret);
    Location loc = batchedAmax.front().push.getLoc();
    int64_t n = batchedAmax.size();
    auto one = RankedTensorType::get({1}, b.getF32Type());
    SmallVector<Value> pieces;
    for (PendingAmax &p : batchedAmax)
      pieces.push_back(ReshapeOp::create(b, loc, one, p.local));
    Value all = n == 1 ? pieces.front()
                       : ConcatOp::create(b, loc, pieces, b.getI64IntegerAttr(0))
                             .getResult();
    Value reduced =
        AllReduceOp::create(b, loc, all.getType(), all,
                            AllReduceKindAttr::get(ctx, AllReduceKind::max),
                            PrecisionAttr::get(ctx, Precision::fp32))
            .getResult();
    for (auto [i, p] : llvm::enumerate(batchedAmax)) {
      int64_t at = int64_t(i);
      Value piece = n == 1 ? reduced
                           : SliceOp::create(b, loc, reduced, {at}, {at + 1}, {1})
                                 .getResult();
      Value global = ReshapeOp::create(b, loc, f32Scalar, piece);
      p.push->moveBefore(ret);
      p.next->moveBefore(ret);
      p.push.getAmaxMutable().assign(global);
    }
  }
  for (auto &[value, attrs] : newResults)
    if (failed(addStateResult(fn, value, attrs)))
      return fn.emitError("lpc-fp8-scaling: cannot add state result");
  // Metrics go last, named by metric and tensor.
  for (auto &[value, metric, name] : metrics)
    if (failed(addMetricResult(fn, value, metric, name)))
      return fn.emitError("lpc-fp8-scaling: cannot add the metric results");
  return success();
}

} // namespace
