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
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::lpc;

static std::string joined(const llvm::cl::list<std::string> &list) {
  return llvm::join(list.begin(), list.end(), ",");
}

LogicalResult
mlir::lpc::buildMixedPrecisionPipeline(OpPassManager &pm,
                                       const MixedPrecisionOptions &o) {
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
