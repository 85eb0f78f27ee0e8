//===- EvaluatorImpl.h - internals of the reference evaluator ---*- C++ -*-===//
//
// INTERNAL to lib/Reference: not installed, not for use outside this folder.
// Declares the Evaluator class (whose op methods are spread over Evaluator.cpp
// and EvalCompute/EvalTraining/EvalPrecision.cpp) and the helpers they share.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_LIB_REFERENCE_EVALUATORIMPL_H
#define LPC_LIB_REFERENCE_EVALUATORIMPL_H

#include "lpc/Reference/Evaluator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace mlir {
namespace lpc {
namespace ref {
namespace detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

inline int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// Row-major strides of `shape`.
inline std::vector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Calls fn(index, linear) for every multi-index of `shape`, in row-major
/// order (`linear` is the row-major position of `index`).
template <typename Fn>
inline void forEachIndex(ArrayRef<int64_t> shape, Fn fn) {
  int64_t n = product(shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    fn(ArrayRef<int64_t>(index), linear);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// How a reduction over `axes` maps input elements to output elements.
struct ReduceMap {
  std::vector<int64_t> outShape;  // with or without the kept unit dims
  std::vector<int64_t> outOf;     // input linear index -> output linear index
  int64_t numOutputs = 0;
  int64_t groupSize = 1;          // input elements per output element
};

ReduceMap makeReduceMap(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes,
                        bool keepdims); // EvalCompute.cpp

//===----------------------------------------------------------------------===//
// Tensor helpers
//===----------------------------------------------------------------------===//

/// A double tensor of `shape` (dtype set later by `define`).
inline Tensor zeros(ArrayRef<int64_t> shape) {
  Tensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.data.assign(product(shape), 0.0);
  return t;
}

template <typename F> inline Tensor map(const Tensor &x, F f) {
  Tensor out = zeros(x.shape);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[i] = f(x.data[i]);
  return out;
}

template <typename F>
inline Tensor zipWith(const Tensor &a, const Tensor &b, F f) {
  Tensor out = zeros(a.shape);
  for (size_t i = 0; i < a.data.size(); ++i)
    out.data[i] = f(a.data[i], b.data[i]);
  return out;
}

inline std::vector<int64_t> shapeOf(Value v) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

/// lhs x rhs with lpc.matmul's shapes, accumulated in double, unrounded.
Tensor matmulExact(const Tensor &lhs, const Tensor &rhs, bool transposeA,
                   bool transposeB); // EvalCompute.cpp

//===----------------------------------------------------------------------===//
// Scalar functions
//===----------------------------------------------------------------------===//

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

inline constexpr double kGeluTanhCoeff = 0.044715;
inline double sqrt2OverPi() { return std::sqrt(2.0 / M_PI); }

inline double gelu(double x, GeluApproximation approx) {
  if (approx == GeluApproximation::tanh)
    return 0.5 * x *
           (1.0 + std::tanh(sqrt2OverPi() * (x + kGeluTanhCoeff * x * x * x)));
  return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2));
}

/// d gelu(x) / dx.
inline double geluDerivative(double x, GeluApproximation approx) {
  if (approx == GeluApproximation::tanh) {
    double k = sqrt2OverPi();
    double t = std::tanh(k * (x + kGeluTanhCoeff * x * x * x));
    return 0.5 * (1.0 + t) +
           0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * kGeluTanhCoeff * x * x);
  }
  double cdf = 0.5 * (1.0 + std::erf(x * M_SQRT1_2));
  double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
  return cdf + x * pdf;
}

inline double relu(double x) { return std::isnan(x) || x > 0.0 ? x : 0.0; }

//===----------------------------------------------------------------------===//
// Op helpers shared by several files
//===----------------------------------------------------------------------===//

/// max that propagates NaN (as torch.amax does).
inline double maxNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return kNaN;
  return std::max(a, b);
}

/// Linear index in a tensor of `strides` of element `index` of a slice.
inline int64_t sliceSource(ArrayRef<int64_t> index, ArrayRef<int64_t> start,
                           ArrayRef<int64_t> step,
                           ArrayRef<int64_t> strides) {
  int64_t src = 0;
  for (size_t d = 0; d < index.size(); ++d)
    src += (start[d] + index[d] * step[d]) * strides[d];
  return src;
}

/// Checks an embedding id; emits an error at `op` if it is out of range.
inline LogicalResult checkId(Operation *op, double id, int64_t position,
                             int64_t vocab) {
  if (id >= 0 && id < static_cast<double>(vocab))
    return success();
  return op->emitError() << "reference evaluator: id " << (int64_t)id
                         << " at position " << position
                         << " is out of range for a table of " << vocab
                         << " rows";
}

//===----------------------------------------------------------------------===//
// The evaluator
//===----------------------------------------------------------------------===//

class Evaluator {
public:
  Evaluator(const Bindings &bindings, const EvalOptions &opts)
      : bindings(bindings), opts(opts) {}

  FailureOr<std::vector<Tensor>> run(func::FuncOp fn, ArrayRef<Tensor> args);

private:
  LogicalResult evalOp(Operation *op);

  const Tensor &get(Value v) const { return values.find(v)->second; }
  double scalar(Value v) const { return get(v).data.front(); }
  /// Rounds `v` to `t` (f32 only when opts.roundF32).
  double rnd(double v, DType t) const {
    if (t == DType::f32 && !opts.roundF32)
      return v;
    return roundToFormat(v, t);
  }
  /// Records `t` as the value of `result` after checking its shape against
  /// the result type and rounding it to the result's element type.
  LogicalResult define(Value result, Tensor t, bool saturate = false);
  /// Checks that `t` has exactly the type of `v` (for args and bindings).
  LogicalResult checkType(Operation *where, Value v, const Tensor &t,
                          const llvm::Twine &what);
  /// log(sum(exp(row[0..c)))), max-subtracted.
  static double logSumExp(const double *row, int64_t c);
  /// Labels of a cross-entropy op, checked: a class id, or -1 if ignored.
  FailureOr<std::vector<int64_t>>
  crossEntropyLabels(Operation *op, const Tensor &labels, int64_t numClasses,
                     std::optional<uint64_t> ignore);

  // Structure.
  LogicalResult eval(ParamOp op);
  LogicalResult eval(BufferOp op);
  LogicalResult eval(BufferUpdateOp op);
  LogicalResult eval(TrainOrEvalOp op);
  LogicalResult eval(StopGradientOp op);
  LogicalResult eval(InputOp op);
  LogicalResult eval(ConstantOp op);
  LogicalResult eval(arith::ConstantOp op);
  LogicalResult eval(GradSeedOp op);
  LogicalResult evalConstant(Operation *op, Attribute value);
  // Compute.
  LogicalResult eval(MatmulOp op);
  LogicalResult eval(GroupedMatmulOp op);
  LogicalResult eval(GroupedMatmulWeightGradOp op);
  LogicalResult eval(AddOp op);
  LogicalResult eval(SubOp op);
  LogicalResult eval(MulOp op);
  LogicalResult eval(DivOp op);
  LogicalResult eval(BiasAddOp op);
  LogicalResult eval(NegOp op);
  LogicalResult eval(ReluOp op);
  LogicalResult eval(GeluOp op);
  LogicalResult eval(SiluOp op);
  LogicalResult eval(TanhOp op);
  LogicalResult eval(SigmoidOp op);
  LogicalResult eval(ExpOp op);
  LogicalResult eval(LogOp op);
  LogicalResult eval(SqrtOp op);
  LogicalResult eval(RsqrtOp op);
  LogicalResult eval(PowOp op);
  LogicalResult eval(ScaleOp op);
  LogicalResult eval(LayerNormOp op);
  LogicalResult eval(RmsNormOp op);
  LogicalResult eval(SoftmaxOp op);
  LogicalResult eval(LogSoftmaxOp op);
  LogicalResult eval(ReduceSumOp op);
  LogicalResult eval(ReduceMeanOp op);
  LogicalResult eval(ReduceMaxOp op);
  LogicalResult eval(BroadcastOp op);
  LogicalResult eval(ReshapeOp op);
  LogicalResult eval(TransposeOp op);
  LogicalResult eval(SliceOp op);
  LogicalResult eval(ConcatOp op);
  LogicalResult eval(EmbeddingOp op);
  LogicalResult eval(CausalMaskOp op);
  LogicalResult eval(WhereOp op);
  LogicalResult eval(CompareOp op);
  LogicalResult eval(Log1pOp op);
  LogicalResult eval(Expm1Op op);
  LogicalResult eval(SinOp op);
  LogicalResult eval(ConvertOp op);
  LogicalResult eval(CosOp op);
  LogicalResult eval(ErfOp op);
  LogicalResult eval(DropoutOp op);
  // Losses.
  LogicalResult eval(SoftmaxCrossEntropyOp op);
  LogicalResult eval(MseLossOp op);
  // Backward.
  LogicalResult eval(ReluGradOp op);
  LogicalResult eval(GeluGradOp op);
  LogicalResult eval(SiluGradOp op);
  LogicalResult eval(TanhGradOp op);
  LogicalResult eval(SigmoidGradOp op);
  LogicalResult eval(SoftmaxGradOp op);
  LogicalResult eval(LogSoftmaxGradOp op);
  LogicalResult eval(LayerNormGradOp op);
  LogicalResult eval(RmsNormGradOp op);
  LogicalResult eval(AttentionOp op);
  LogicalResult eval(AttentionGradOp op);
  LogicalResult eval(SoftmaxCrossEntropyGradOp op);
  LogicalResult eval(MseLossGradOp op);
  LogicalResult eval(EmbeddingGradOp op);
  LogicalResult eval(ReduceMaxGradOp op);
  LogicalResult eval(SliceGradOp op);
  // Precision.
  LogicalResult eval(CastOp op);
  LogicalResult eval(QuantizeOp op);
  LogicalResult eval(DequantizeOp op);
  LogicalResult eval(AmaxOp op);
  LogicalResult eval(FP8StatsOp op);
  LogicalResult eval(ScaledMatmulOp op);
  LogicalResult eval(LossScaleOp op);
  LogicalResult eval(UnscaleOp op);
  LogicalResult eval(AllFiniteOp op);
  LogicalResult eval(AmaxHistoryPushOp op);
  LogicalResult eval(FP8ComputeScaleOp op);
  LogicalResult eval(LossScaleUpdateOp op);
  // Optimizers.
  LogicalResult eval(SgdOp op);
  LogicalResult eval(AdamWOp op);
  LogicalResult eval(LrScheduleOp op);
  LogicalResult eval(ClipByGlobalNormOp op);
  // Collectives (one process is one rank).
  LogicalResult eval(AllReduceOp op);
  LogicalResult eval(ReduceScatterOp op);
  LogicalResult eval(AllGatherOp op);
  LogicalResult eval(ShardOp op);
  LogicalResult eval(AllToAllOp op);
  LogicalResult eval(WireScaleOp op);

  template <typename OpT, typename F> LogicalResult unary(OpT op, F f) {
    return define(op.getResult(), map(get(op.getInput()), f));
  }
  template <typename OpT, typename F> LogicalResult binary(OpT op, F f) {
    return define(op.getResult(),
                  zipWith(get(op.getLhs()), get(op.getRhs()), f));
  }

  const Bindings &bindings;
  const EvalOptions &opts;
  llvm::DenseMap<Value, Tensor> values;
};

} // namespace detail
} // namespace ref
} // namespace lpc
} // namespace mlir

#endif // LPC_LIB_REFERENCE_EVALUATORIMPL_H
