//===- Pipelines.h - lpc pass pipelines -------------------------*- C++ -*-===//
#ifndef LPC_PIPELINES_PIPELINES_H
#define LPC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
namespace lpc {

/// Options of the lpc-mixed-precision pipeline: one policy choice (as
/// Accelerate's mixed_precision) plus every option of the passes it runs.
struct MixedPrecisionOptions
    : public PassPipelineOptions<MixedPrecisionOptions> {
  Option<std::string> policy{*this, "policy",
                             llvm::cl::desc("no | fp16 | bf16 | fp8"),
                             llvm::cl::init("bf16")};
  // lpc-assign-precision
  ListOption<std::string> alwaysLow{
      *this, "always-low", llvm::cl::desc("op names treated as always-low")};
  ListOption<std::string> keepFP32{*this, "keep-fp32",
                                   llvm::cl::desc("op names kept in fp32")};
  ListOption<std::string> follow{
      *this, "follow", llvm::cl::desc("op names that follow their inputs")};
  Option<bool> relaxBF16Reductions{
      *this, "relax-bf16-reductions",
      llvm::cl::desc("let sum/mean follow bf16 inputs"), llvm::cl::init(true)};
  // FP8 recipe (Transformer Engine's knobs)
  Option<std::string> fp8Format{*this, "fp8-format",
                                llvm::cl::desc("hybrid | e4m3"),
                                llvm::cl::init("hybrid")};
  Option<std::string> scaling{*this, "scaling",
                              llvm::cl::desc("delayed | current"),
                              llvm::cl::init("delayed")};
  Option<int64_t> margin{*this, "margin", llvm::cl::desc("FP8 scale margin"),
                         llvm::cl::init(0)};
  Option<int64_t> interval{*this, "interval",
                           llvm::cl::desc("FP8 scale update interval"),
                           llvm::cl::init(1)};
  Option<int64_t> amaxHistoryLen{*this, "amax-history-len",
                                 llvm::cl::desc("FP8 amax history length"),
                                 llvm::cl::init(1024)};
  Option<std::string> amaxComputeAlgo{*this, "amax-compute-algo",
                                      llvm::cl::desc("max | most_recent"),
                                      llvm::cl::init("max")};
  Option<bool> reduceAmax{
      *this, "reduce-amax",
      llvm::cl::desc("each FP8 amax is the max over the ranks of a "
                     "data-parallel run (lpc.all_reduce max)"),
      llvm::cl::init(false)};
  ListOption<std::string> overrideLinearPrecision{
      *this, "override-linear-precision",
      llvm::cl::desc("GEMM roles of linear layers kept in bf16")};
  ListOption<std::string> fastAccum{
      *this, "fast-accum",
      llvm::cl::desc("GEMM roles with fast FP8 accumulation (default fprop)")};
  Option<int64_t> fp8MinMNK{*this, "fp8-min-mnk",
                            llvm::cl::desc("smallest M*N*K run in fp8"),
                            llvm::cl::init(2097152)};
  // lpc-loss-scaling
  Option<std::string> lossScaling{
      *this, "loss-scaling",
      llvm::cl::desc("auto (dynamic for fp16, off otherwise) | dynamic | "
                     "static | off"),
      llvm::cl::init("auto")};
  Option<double> initScale{*this, "init-scale",
                           llvm::cl::desc("initial dynamic loss scale"),
                           llvm::cl::init(65536.0)};
  Option<double> growthFactor{*this, "growth-factor",
                              llvm::cl::desc("loss-scale growth factor"),
                              llvm::cl::init(2.0)};
  Option<double> backoffFactor{*this, "backoff-factor",
                               llvm::cl::desc("loss-scale back-off factor"),
                               llvm::cl::init(0.5)};
  Option<int64_t> growthInterval{
      *this, "growth-interval",
      llvm::cl::desc("clean steps before the loss scale grows"),
      llvm::cl::init(2000)};
  Option<double> staticScale{*this, "static-scale",
                             llvm::cl::desc("loss scale in static mode"),
                             llvm::cl::init(1024.0)};
};

/// Adds assign-precision, insert-casts, fp8-scaling (fp8 policy) and
/// loss-scaling (per `loss-scaling`) with clean-ups to `pm` (on a module).
LogicalResult buildMixedPrecisionPipeline(OpPassManager &pm,
                                          const MixedPrecisionOptions &opts);

/// Registers `lpc-mixed-precision` for lpc-opt.
void registerLpcPipelines();

} // namespace lpc
} // namespace mlir

#endif // LPC_PIPELINES_PIPELINES_H
