//===- LpcAssignPrecision.cpp - --lpc-assign-precision --------------------===//
//
// Decides a precision for every lpc compute op (see Passes.td for the rules)
// and records the decision and its reason as attributes; lpc-insert-casts
// then changes the types.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Passes/PrecisionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCASSIGNPRECISION
#include "lpc/Passes/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

struct LpcAssignPrecisionPass
    : ::mlir::lpc::impl::LpcAssignPrecisionBase<LpcAssignPrecisionPass> {
  using Base::Base;

  Precision low = Precision::bf16;
  llvm::StringSet<> alwaysLow, keepFP32, follow;
  llvm::DenseSet<unsigned> overridden; // GemmRole values run in bf16

  LogicalResult parseOptions(ModuleOp module) {
    if (policy == "no" || policy == "fp32")
      low = Precision::fp32;
    else if (policy == "fp16")
      low = Precision::fp16;
    else if (policy == "bf16" || policy == "fp8")
      low = Precision::bf16;
    else
      return module.emitError()
             << "lpc-assign-precision: unknown policy '" << policy
             << "' (expected no, fp16, bf16 or fp8)";
    if (fp8Format != "hybrid" && fp8Format != "e4m3")
      return module.emitError()
             << "lpc-assign-precision: unknown fp8-format '" << fp8Format
             << "' (expected hybrid or e4m3)";
    for (const std::string &r : overrideLinearPrecision) {
      std::optional<GemmRole> role = symbolizeGemmRole(r);
      if (!role)
        return module.emitError()
               << "lpc-assign-precision: unknown GEMM role '" << r
               << "' in override-linear-precision (expected fprop, dgrad, "
                  "wgrad)";
      overridden.insert(static_cast<unsigned>(*role));
    }
    auto fill = [&](llvm::StringSet<> &set, ArrayRef<std::string> names,
                    StringRef opt) -> LogicalResult {
      for (const std::string &n : names) {
        if (!RegisteredOperationName::lookup(n, module.getContext()))
          return module.emitError() << "lpc-assign-precision: " << opt
                                    << ": unknown op '" << n << "'";
        set.insert(n);
      }
      return success();
    };
    if (failed(fill(alwaysLow, alwaysLowOps, "always-low")) ||
        failed(fill(keepFP32, keepFP32Ops, "keep-fp32")) ||
        failed(fill(follow, followOps, "follow")))
      return failure();
    return success();
  }

  PrecisionClass classOf(Operation *op) {
    StringRef name = op->getName().getStringRef();
    if (alwaysLow.contains(name))
      return PrecisionClass::AlwaysLow;
    if (keepFP32.contains(name))
      return PrecisionClass::KeepFP32;
    if (follow.contains(name))
      return PrecisionClass::Follow;
    return getPrecisionClass(op);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(parseOptions(module)))
      return signalPassFailure();
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(assign(fn)))
        return signalPassFailure();
  }

  LogicalResult assign(func::FuncOp fn);
  void decideFP8(MatmulOp op, const llvm::DenseSet<Value> &grads,
                 std::string &reason);
};

/// Losses produce the training signal: never below fp32.
bool isLoss(Operation *op) {
  return isa<SoftmaxCrossEntropyOp, MseLossOp, SoftmaxCrossEntropyGradOp,
             MseLossGradOp>(op);
}

bool hasFloatTensor(Operation *op) {
  auto isFloat = [](Value v) { return bool(floatElementType(v)); };
  return llvm::any_of(op->getOperands(), isFloat) ||
         llvm::any_of(op->getResults(), isFloat);
}

void LpcAssignPrecisionPass::decideFP8(MatmulOp op,
                                       const llvm::DenseSet<Value> &grads,
                                       std::string &reason) {
  GemmRole role = roleOf(op);
  StringRef roleName = stringifyGemmRole(role);
  StringRef lhsParam = tracedParamName(op.getLhs());
  StringRef rhsParam = tracedParamName(op.getRhs());
  bool linear = role == GemmRole::wgrad || !lhsParam.empty() ||
                !rhsParam.empty();
  if (!linear) {
    reason = llvm::formatv("fp8 policy: {0} GEMM of activations (not a linear "
                           "layer) stays bf16",
                           roleName);
    return;
  }
  if (overridden.contains(static_cast<unsigned>(role))) {
    reason = llvm::formatv("fp8 policy: override-linear-precision keeps {0} "
                           "in bf16",
                           roleName);
    return;
  }
  GemmDims d = gemmDims(op);
  if (d.k % 16 != 0 || d.n % 16 != 0) {
    reason = llvm::formatv("fp8 fallback to bf16: K = {0}, N = {1} not both "
                           "multiples of 16",
                           d.k, d.n);
    return;
  }
  if (d.m * d.n * d.k < fp8MinMNK) {
    reason = llvm::formatv("fp8 fallback to bf16: M*N*K = {0} < fp8-min-mnk "
                           "= {1}",
                           d.m * d.n * d.k, static_cast<int64_t>(fp8MinMNK));
    return;
  }
  auto formatOf = [&](Value v) {
    if (fp8Format == "hybrid" && grads.contains(v))
      return Precision::fp8_e5m2;
    return Precision::fp8_e4m3;
  };
  Precision a = formatOf(op.getLhs()), b = formatOf(op.getRhs());
  if (a == Precision::fp8_e5m2 && b == Precision::fp8_e5m2) {
    reason = "fp8 policy: both operands are gradients (E5M2 x E5M2 is not "
             "supported); stays bf16";
    return;
  }
  MLIRContext *ctx = op.getContext();
  op->setAttr(LpcDialect::getFP8OperandsAttrName(),
              ArrayAttr::get(ctx, {PrecisionAttr::get(ctx, a),
                                   PrecisionAttr::get(ctx, b)}));
  auto fmt = [](Precision p) {
    return p == Precision::fp8_e4m3 ? "E4M3" : "E5M2";
  };
  reason = llvm::formatv("fp8 {0} GEMM ({1} x {2}), bf16 output", roleName,
                         fmt(a), fmt(b));
}

LogicalResult LpcAssignPrecisionPass::assign(func::FuncOp fn) {
  MLIRContext *ctx = fn.getContext();
  llvm::DenseSet<Value> grads;
  if (policy == "fp8")
    grads = gradientValues(fn);

  // Precision of each value produced by an assigned op.
  DenseMap<Value, Precision> produced;
  WalkResult walk = fn.walk([&](Operation *op) -> WalkResult {
    PrecisionClass cls = classOf(op);
    if (cls != PrecisionClass::AlwaysLow && cls != PrecisionClass::Follow &&
        cls != PrecisionClass::KeepFP32)
      return WalkResult::advance();
    if (!hasFloatTensor(op))
      return WalkResult::advance();
    op->removeAttr(LpcDialect::getFP8OperandsAttrName());

    Precision p = Precision::fp32;
    std::string reason;
    if (auto pin = op->getAttrOfType<PrecisionAttr>(
            LpcDialect::getPrecisionPinAttrName())) {
      p = pin.getValue();
      if (isFP8(getElementTypeFor(ctx, p)))
        return op->emitError()
               << "lpc-assign-precision: fp8 pins are not supported; pin "
                  "bf16/fp16/fp32 and use policy=fp8 for FP8 GEMMs";
      if (isLoss(op) && p != Precision::fp32)
        return op->emitError() << "lpc-assign-precision: losses run in fp32; "
                                  "cannot pin '"
                               << op->getName() << "' to "
                               << stringifyPrecision(p);
      reason = "pinned by lpc.precision";
    } else if (low == Precision::fp32) {
      reason = "policy no: fp32";
    } else if (cls == PrecisionClass::AlwaysLow) {
      p = low;
      reason = llvm::formatv("always-low: {0} with fp32 accumulation",
                             stringifyPrecision(low));
      if (auto mm = dyn_cast<MatmulOp>(op); mm && policy == "fp8")
        decideFP8(mm, grads, reason);
    } else {
      // Votes of the computed float inputs (params, data and constants do
      // not vote).
      bool anyFP32 = false, anyLow = false, mixedLow = false;
      std::optional<Precision> lowSeen;
      for (Value v : op->getOperands()) {
        auto it = produced.find(v);
        if (it == produced.end())
          continue;
        if (it->second == Precision::fp32) {
          anyFP32 = true;
        } else {
          anyLow = true;
          if (lowSeen && *lowSeen != it->second)
            mixedLow = true;
          lowSeen = it->second;
        }
      }
      if (cls == PrecisionClass::KeepFP32) {
        if (relaxBF16Reductions && isBF16Relaxable(op) &&
            low == Precision::bf16 && anyLow && !anyFP32 && !mixedLow) {
          p = Precision::bf16;
          reason = "bf16 relaxes sum/mean (bf16 has fp32's range)";
        } else {
          reason = "keep-fp32";
        }
      } else if (anyFP32 || mixedLow) {
        reason = mixedLow ? "follow: mixed low-precision inputs, promoted"
                          : "follow: an input is fp32";
      } else if (anyLow) {
        p = *lowSeen;
        reason = llvm::formatv("follow: inputs are {0}", stringifyPrecision(p));
      } else {
        reason = "follow: no computed input (params, data, constants)";
      }
    }
    op->setAttr(LpcDialect::getAssignedAttrName(), PrecisionAttr::get(ctx, p));
    op->setAttr(LpcDialect::getReasonAttrName(), StringAttr::get(ctx, reason));
    for (Value r : op->getResults())
      if (floatElementType(r))
        produced[r] = p;
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

} // namespace
