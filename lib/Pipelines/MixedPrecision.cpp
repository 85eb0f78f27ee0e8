//===- MixedPrecision.cpp - the lpc-mixed-precision pipeline --------------===//
//
// One user-facing choice, like Accelerate's `mixed_precision`, expanded into
// the precision passes with their options. Built from pass pipeline strings
// so that each pass parses and validates its own options.
//
//===----------------------------------------------------------------------===//

#include "lpc/Pipelines/Pipelines.h"
#include "lpc/Passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lpc;

static std::string joined(const llvm::cl::list<std::string> &list) {
  return llvm::join(list.begin(), list.end(), ",");
}

/// Every numeric option is checked whatever the policy (a bad value the
/// policy does not use today is still a mistake worth saying), naming the
/// option, the value and what is allowed.
static LogicalResult checkRanges(const MixedPrecisionOptions &o) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  auto bad = [&](StringRef name, auto value, StringRef allowed) {
    os << "lpc-mixed-precision: option '" << name << "' is ";
    if constexpr (std::is_floating_point_v<decltype(value)>)
      os << llvm::format("%g", value);
    else
      os << value;
    os << "; it must be " << allowed;
  };
  auto finite = [](double v) { return std::isfinite(v); };
  if (o.margin < 0 || o.margin > 64)
    bad("margin", o.margin.getValue(), "an integer in [0, 64]");
  else if (o.interval < 1)
    bad("interval", o.interval.getValue(), "an integer >= 1");
  else if (o.amaxHistoryLen < 1 || o.amaxHistoryLen > (1 << 20))
    bad("amax-history-len", o.amaxHistoryLen.getValue(),
        "an integer in [1, 1048576]");
  else if (o.fp8MinMNK < 0)
    bad("fp8-min-mnk", o.fp8MinMNK.getValue(), "an integer >= 0");
  else if (o.fp8Format != "hybrid" && o.fp8Format != "e4m3")
    bad("fp8-format", "'" + o.fp8Format.getValue() + "'", "hybrid or e4m3");
  else if (o.scaling != "delayed" && o.scaling != "current")
    bad("scaling", "'" + o.scaling.getValue() + "'", "delayed or current");
  else if (o.amaxComputeAlgo != "max" && o.amaxComputeAlgo != "most_recent")
    bad("amax-compute-algo", "'" + o.amaxComputeAlgo.getValue() + "'",
        "max or most_recent");
  else if (!(o.initScale > 0 && finite(o.initScale) && o.initScale <= 3.4e38))
    bad("init-scale", o.initScale.getValue(), "a finite number > 0 (in f32)");
  else if (!(o.staticScale > 0 && finite(o.staticScale) &&
             o.staticScale <= 3.4e38))
    bad("static-scale", o.staticScale.getValue(),
        "a finite number > 0 (in f32)");
  else if (!(o.growthFactor > 1 && finite(o.growthFactor)))
    bad("growth-factor", o.growthFactor.getValue(), "a finite number > 1");
  else if (!(o.backoffFactor > 0 && o.backoffFactor < 1))
    bad("backoff-factor", o.backoffFactor.getValue(), "a number in (0, 1)");
  else if (o.growthInterval < 1)
    bad("growth-interval", o.growthInterval.getValue(), "an integer >= 1");
  if (msg.empty())
    return success();
  llvm::errs() << msg << "\n";
  return failure();
}

LogicalResult
mlir::lpc::buildMixedPrecisionPipeline(OpPassManager &pm,
                                       const MixedPrecisionOptions &o) {
  if (failed(checkRanges(o)))
    return failure();
  std::string policy = o.policy;
  if (policy != "no" && policy != "fp16" && policy != "bf16" &&
      policy != "fp8") {
    llvm::errs() << "lpc-mixed-precision: unknown policy '" << policy
                 << "' (expected no, fp16, bf16 or fp8)\n";
    return failure();
  }
  std::string ls = o.lossScaling;
  if (ls == "auto")
    ls = policy == "fp16" ? "dynamic" : "off";
  if (ls != "dynamic" && ls != "static" && ls != "off") {
    llvm::errs() << "lpc-mixed-precision: unknown loss-scaling '" << ls
                 << "' (expected auto, dynamic, static or off)\n";
    return failure();
  }

  std::string text;
  llvm::raw_string_ostream os(text);
  os << "lpc-assign-precision{policy=" << policy
     << " relax-bf16-reductions=" << (o.relaxBF16Reductions ? "true" : "false")
     << " fp8-format=" << o.fp8Format.getValue()
     << " fp8-min-mnk=" << o.fp8MinMNK.getValue();
  if (!o.alwaysLow.empty())
    os << " always-low=" << joined(o.alwaysLow);
  if (!o.keepFP32.empty())
    os << " keep-fp32=" << joined(o.keepFP32);
  if (!o.follow.empty())
    os << " follow=" << joined(o.follow);
  if (!o.overrideLinearPrecision.empty())
    os << " override-linear-precision=" << joined(o.overrideLinearPrecision);
  os << "},lpc-insert-casts,canonicalize";
  if (policy == "fp8") {
    os << ",lpc-fp8-scaling{scaling=" << o.scaling.getValue()
       << " margin=" << o.margin.getValue()
       << " interval=" << o.interval.getValue()
       << " amax-history-len=" << o.amaxHistoryLen.getValue()
       << " amax-compute-algo=" << o.amaxComputeAlgo.getValue();
    if (!o.fastAccum.empty())
      os << " fast-accum=" << joined(o.fastAccum);
    if (o.reduceAmax)
      os << " reduce-amax=true";
    os << "},canonicalize";
  }
  if (ls != "off")
    os << ",lpc-loss-scaling{mode=" << ls
       << " init-scale=" << o.initScale.getValue()
       << " growth-factor=" << o.growthFactor.getValue()
       << " backoff-factor=" << o.backoffFactor.getValue()
       << " growth-interval=" << o.growthInterval.getValue()
       << " static-scale=" << o.staticScale.getValue() << "},canonicalize";
  os << ",cse";
  return parsePassPipeline(text, pm, llvm::errs());
}

void mlir::lpc::registerLpcPipelines() {
  // registerPassPipeline rather than PassPipelineRegistration, whose builder
  // cannot fail: a bad option must stop lpc-opt with a non-zero exit.
  registerPassPipeline(
      "lpc-mixed-precision",
      "Runs the precision passes for one policy (no | fp16 | bf16 | fp8): "
      "assign-precision, insert-casts, fp8-scaling (fp8), loss-scaling "
      "(dynamic by default for fp16) and clean-ups. Run it after "
      "lpc-autodiff.",
      [](OpPassManager &pm, StringRef optionsStr,
         function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        MixedPrecisionOptions options;
        if (failed(options.parseFromString(optionsStr)))
          return failure();
        return buildMixedPrecisionPipeline(pm, options);
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(MixedPrecisionOptions());
      });
}
