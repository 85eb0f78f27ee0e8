//===- EvalPrecision.cpp - reference evaluation of precision ops ----------===//
//
// Mixed-precision ops: casts, FP8 quantize/dequantize, amax and amax history,
// scaled matmul, FP8 scale computation, and loss scaling (scale, unscale,
// all_finite, dynamic loss-scale update).
//
//===----------------------------------------------------------------------===//

#include "EvaluatorImpl.h"

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::ref;

namespace mlir {
namespace lpc {
namespace ref {
namespace detail {

//===----------------------------------------------------------------------===//
// Precision
//===----------------------------------------------------------------------===//

LogicalResult Evaluator::eval(CastOp op) {
  return define(op.getResult(), get(op.getInput()), op.getSaturate());
}

LogicalResult Evaluator::eval(QuantizeOp op) {
  double scale = scalar(op.getScale());
  return define(op.getResult(),
                map(get(op.getInput()),
                    [&](double x) {
                      // f32 product first, as every backend computes it.
                      return static_cast<double>(static_cast<float>(x * scale));
                    }),
                /*saturate=*/true);
}

LogicalResult Evaluator::eval(DequantizeOp op) {
  double scaleInv = scalar(op.getScaleInv());
  return define(op.getResult(), map(get(op.getInput()), [&](double q) {
                  return q * scaleInv;
                }));
}

LogicalResult Evaluator::eval(AmaxOp op) {
  double amax = 0.0;
  for (double x : get(op.getInput()).data)
    amax = maxNaN(amax, std::fabs(x));
  Tensor out = zeros({});
  out.data[0] = amax;
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(ScaledMatmulOp op) {
  double sa = scalar(op.getLhsScaleInv()), sb = scalar(op.getRhsScaleInv());
  Tensor a = map(get(op.getLhs()), [&](double q) { return q * sa; });
  Tensor b = map(get(op.getRhs()), [&](double q) { return q * sb; });
  Tensor out = matmulExact(a, b, op.getTransposeA(), op.getTransposeB());
  if (Value biasValue = op.getBias()) {
    const Tensor &bias = get(biasValue);
    int64_t n = bias.numElements();
    for (size_t i = 0; i < out.data.size(); ++i)
      out.data[i] += bias.data[i % n];
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(LossScaleOp op) {
  double scale = scalar(op.getScale());
  return define(op.getResult(),
                map(get(op.getInput()), [&](double x) { return x * scale; }));
}

LogicalResult Evaluator::eval(UnscaleOp op) {
  // GradScaler: inv_scale = scale.double().reciprocal().float().
  double inv = roundToFormat(1.0 / scalar(op.getScale()), DType::f32);
  return define(op.getResult(),
                map(get(op.getInput()), [&](double x) { return x * inv; }));
}

LogicalResult Evaluator::eval(AllFiniteOp op) {
  bool finite = true;
  for (Value v : op.getInputs())
    for (double x : get(v).data)
      finite = finite && std::isfinite(x);
  Tensor out = zeros({});
  out.data[0] = finite ? 1.0 : 0.0;
  return define(op.getResult(), std::move(out));
}

/// The reference is one process, so one rank: sum, mean and max over one
/// rank are the input; any_nonfinite is the input's non-finite test.
LogicalResult Evaluator::eval(AllReduceOp op) {
  const Tensor &x = get(op.getInput());
  if (op.getKind() != AllReduceKind::any_nonfinite)
    return define(op.getResult(), x);
  bool bad = false;
  for (double v : x.data)
    bad = bad || !std::isfinite(v);
  Tensor out = zeros({});
  out.data[0] = bad ? 1.0 : 0.0;
  return define(op.getResult(), std::move(out));
}

/// The sharding collectives: one rank holds the whole tensor, and the
/// reference, one process, cannot stand for several.
template <typename Op> static LogicalResult oneRankOnly(Op op) {
  if (op.getRanks() == 1)
    return success();
  return op.emitError() << "reference evaluator: " << op->getName()
                        << " is built for " << op.getRanks()
                        << " ranks; the reference runs one process (ranks(1))";
}

LogicalResult Evaluator::eval(ReduceScatterOp op) {
  if (failed(oneRankOnly(op)))
    return failure();
  return define(op.getResult(), get(op.getInput()));
}

LogicalResult Evaluator::eval(AllGatherOp op) {
  if (failed(oneRankOnly(op)))
    return failure();
  return define(op.getResult(), get(op.getInput()));
}

LogicalResult Evaluator::eval(ShardOp op) {
  if (failed(oneRankOnly(op)))
    return failure();
  return define(op.getResult(), get(op.getInput()));
}

LogicalResult Evaluator::eval(AllToAllOp op) {
  if (failed(oneRankOnly(op)))
    return failure();
  return define(op.getResult(), get(op.getInput()));
}

/// In double, as the CPU runtime's FP8 wire computes it (Comm.cpp).
LogicalResult Evaluator::eval(WireScaleOp op) {
  double amax = scalar(op.getAmax());
  double fmax = op.getFormat() == Precision::fp8_e4m3 ? 448.0 : 57344.0;
  Tensor out = zeros({});
  if (!std::isfinite(amax))
    out.data[0] = NAN;
  else if (amax == 0.0)
    out.data[0] = 1.0;
  else
    out.data[0] = std::ldexp(
        1.0, std::min(int(std::floor(std::log2(fmax / std::fabs(amax)))), 126));
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(AmaxHistoryPushOp op) {
  const Tensor &history = get(op.getHistory());
  double amax = scalar(op.getAmax());
  // [amax, history[0], ..., history[L-2]]: the oldest entry drops out.
  Tensor pushed = zeros(history.shape);
  pushed.data[0] = amax;
  for (size_t i = 1; i < pushed.data.size(); ++i)
    pushed.data[i] = history.data[i - 1];
  double scaleAmax = amax;
  if (op.getAlgo() == AmaxComputeAlgo::max)
    for (double a : pushed.data)
      scaleAmax = maxNaN(scaleAmax, a);
  Tensor out = zeros({});
  out.data[0] = scaleAmax;
  if (failed(define(op.getNewHistory(), std::move(pushed))))
    return failure();
  return define(op.getScaleAmax(), std::move(out));
}

LogicalResult Evaluator::eval(FP8StatsOp op) {
  double scale = scalar(op.getScale());
  DType fmt = op.getFormat() == Precision::fp8_e5m2 ? DType::f8e5m2
                                                     : DType::f8e4m3;
  double fp8Max = maxFinite(fmt);
  // Half the smallest subnormal: 2^-10 (E4M3), 2^-17 (E5M2); a tie rounds
  // to the even neighbour, zero.
  double halfMinSub = std::ldexp(1.0, fmt == DType::f8e5m2 ? -17 : -10);
  const Tensor &x = get(op.getInput());
  double saturated = 0, underflow = 0;
  for (double xi : x.data) {
    double v = static_cast<float>(xi * scale);
    if (std::fabs(v) > fp8Max)
      ++saturated;
    else if (xi != 0.0 && std::fabs(v) <= halfMinSub)
      ++underflow;
  }
  double n = std::max<int64_t>(x.numElements(), 1);
  Tensor sat = zeros({}), under = zeros({});
  sat.data[0] = roundToFormat(saturated / n, DType::f32);
  under.data[0] = roundToFormat(underflow / n, DType::f32);
  if (failed(define(op.getSaturated(), std::move(sat))))
    return failure();
  return define(op.getUnderflow(), std::move(under));
}

LogicalResult Evaluator::eval(FP8ComputeScaleOp op) {
  double amax = scalar(op.getAmax()), scale = scalar(op.getScale());
  auto step = static_cast<int64_t>(scalar(op.getStep()));
  auto interval = static_cast<int64_t>(op.getInterval());
  double fp8Max = maxFinite(op.getFormat() == Precision::fp8_e5m2
                                ? DType::f8e5m2
                                : DType::f8e4m3);
  double newScale = scale;
  if ((step + 1) % interval == 0 && amax != 0.0 && std::isfinite(amax)) {
    // Transformer Engine, in f32: (fp8_max / amax) / 2^margin.
    double s = roundToFormat(fp8Max / amax, DType::f32);
    s = roundToFormat(s / std::ldexp(1.0, static_cast<int>(op.getMargin())),
                      DType::f32);
    newScale = std::isinf(s) ? maxFinite(DType::f32) : s;
  }
  Tensor out = zeros({});
  out.data[0] = newScale;
  return define(op.getNewScale(), std::move(out));
}

LogicalResult Evaluator::eval(LossScaleUpdateOp op) {
  // torch._amp_update_scale_.
  double scale = scalar(op.getScale());
  double tracker = scalar(op.getGrowthTracker());
  bool finite = scalar(op.getFinite()) != 0.0;
  if (!finite) {
    scale = roundToFormat(scale * op.getBackoffFactor().convertToDouble(),
                          DType::f32);
    tracker = 0;
  } else if (tracker + 1 == static_cast<double>(op.getGrowthInterval())) {
    double grown = roundToFormat(
        scale * op.getGrowthFactor().convertToDouble(), DType::f32);
    if (std::isfinite(grown))
      scale = grown;
    tracker = 0;
  } else {
    tracker += 1;
  }
  Tensor newScale = zeros({}), newTracker = zeros({});
  newScale.data[0] = scale;
  newTracker.data[0] = tracker;
  if (failed(define(op.getNewScale(), std::move(newScale))))
    return failure();
  return define(op.getNewGrowthTracker(), std::move(newTracker));
}

} // namespace detail
} // namespace ref
} // namespace lpc
} // namespace mlir
