//===- Evaluator.cpp - reference evaluator of lpc functions ---------------===//
//
// One function per op (or family of ops). Each computes its results in double
// from the operand values and hands them to `define`, which checks the shape
// against the result type and rounds every element to the result's element
// type. See Evaluator.h for the numerics the op descriptions leave open.
//
//===----------------------------------------------------------------------===//

#include "lpc/Reference/Evaluator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::ref;

using llvm::ArrayRef;

static constexpr double kInf = std::numeric_limits<double>::infinity();
static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// Row-major strides of `shape`.
static std::vector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

static int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Calls fn(index, linear) for every multi-index of `shape`, in row-major
/// order (`linear` is the row-major position of `index`).
template <typename Fn>
static void forEachIndex(ArrayRef<int64_t> shape, Fn fn) {
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

/// Calls fn(base, stride, size) for every lane of `shape` along `axis`: the
/// lane's elements are at base + k * stride for k in [0, size).
template <typename Fn>
static void forEachLane(ArrayRef<int64_t> shape, int64_t axis, Fn fn) {
  int64_t outer = product(shape.take_front(axis));
  int64_t size = shape[axis];
  int64_t inner = product(shape.drop_front(axis + 1));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      fn(o * size * inner + i, inner, size);
}

/// How a reduction over `axes` maps input elements to output elements.
struct ReduceMap {
  std::vector<int64_t> outShape;  // with or without the kept unit dims
  std::vector<int64_t> outOf;     // input linear index -> output linear index
  int64_t numOutputs = 0;
  int64_t groupSize = 1;          // input elements per output element
};

static ReduceMap makeReduceMap(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes,
                               bool keepdims) {
  int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes)
    reduced[normalizeAxis(a, rank)] = true;
  ReduceMap map;
  std::vector<int64_t> keptShape; // output dims, reduced ones dropped
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      keptShape.push_back(shape[d]);
    else
      map.groupSize *= shape[d];
    if (!reduced[d] || keepdims)
      map.outShape.push_back(reduced[d] ? 1 : shape[d]);
  }
  // Output stride of each input dim (0 for reduced dims).
  std::vector<int64_t> keptStrides = stridesOf(keptShape), outStride(rank, 0);
  for (int64_t d = 0, k = 0; d < rank; ++d)
    if (!reduced[d])
      outStride[d] = keptStrides[k++];
  map.numOutputs = product(keptShape);
  map.outOf.resize(product(shape));
  forEachIndex(shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t out = 0;
    for (int64_t d = 0; d < rank; ++d)
      out += index[d] * outStride[d];
    map.outOf[linear] = out;
  });
  return map;
}

//===----------------------------------------------------------------------===//
// Tensor helpers
//===----------------------------------------------------------------------===//

/// A double tensor of `shape` (dtype set later by `define`).
static Tensor zeros(ArrayRef<int64_t> shape) {
  Tensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.data.assign(product(shape), 0.0);
  return t;
}

template <typename F> static Tensor map(const Tensor &x, F f) {
  Tensor out = zeros(x.shape);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[i] = f(x.data[i]);
  return out;
}

template <typename F>
static Tensor zipWith(const Tensor &a, const Tensor &b, F f) {
  Tensor out = zeros(a.shape);
  for (size_t i = 0; i < a.data.size(); ++i)
    out.data[i] = f(a.data[i], b.data[i]);
  return out;
}

static std::vector<int64_t> shapeOf(Value v) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

static double toDouble(const llvm::APFloat &f) {
  llvm::APFloat d = f;
  bool losesInfo = false;
  d.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return d.convertToDouble();
}

/// Copies a rows x cols matrix into `dst` (row-major), reading it from `src`
/// as stored: row-major rows x cols, or cols x rows when `transposed`.
static void loadMatrix(const double *src, int64_t rows, int64_t cols,
                       bool transposed, std::vector<double> &dst) {
  dst.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dst[r * cols + c] = transposed ? src[c * rows + r] : src[r * cols + c];
}

/// lhs x rhs with lpc.matmul's shapes, accumulated in double, unrounded.
static Tensor matmulExact(const Tensor &lhs, const Tensor &rhs, bool transposeA,
                          bool transposeB) {
  int64_t lr = lhs.rank(), rr = rhs.rank();
  int64_t m = lhs.shape[lr - (transposeA ? 1 : 2)];
  int64_t k = lhs.shape[lr - (transposeA ? 2 : 1)];
  int64_t n = rhs.shape[rr - (transposeB ? 2 : 1)];
  bool sharedRhs = rr == 2;
  std::vector<int64_t> outShape(lhs.shape.begin(), lhs.shape.end() - 2);
  int64_t batches = product(outShape);
  outShape.push_back(m);
  outShape.push_back(n);
  Tensor out = zeros(outShape);

  std::vector<double> a, b; // the current batch's [m, k] and [k, n]
  for (int64_t batch = 0; batch < batches; ++batch) {
    loadMatrix(lhs.data.data() + batch * m * k, m, k, transposeA, a);
    if (batch == 0 || !sharedRhs)
      loadMatrix(rhs.data.data() + (sharedRhs ? 0 : batch * k * n), k, n,
                 transposeB, b);
    double *c = out.data.data() + batch * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        double aip = a[i * k + p];
        const double *bRow = b.data() + p * n;
        double *cRow = c + i * n;
        for (int64_t j = 0; j < n; ++j)
          cRow[j] += aip * bRow[j];
      }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Scalar functions
//===----------------------------------------------------------------------===//

static double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

static constexpr double kGeluTanhCoeff = 0.044715;
static double sqrt2OverPi() { return std::sqrt(2.0 / M_PI); }

static double gelu(double x, GeluApproximation approx) {
  if (approx == GeluApproximation::tanh)
    return 0.5 * x *
           (1.0 + std::tanh(sqrt2OverPi() * (x + kGeluTanhCoeff * x * x * x)));
  return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2));
}

/// d gelu(x) / dx.
static double geluDerivative(double x, GeluApproximation approx) {
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

static double relu(double x) { return std::isnan(x) || x > 0.0 ? x : 0.0; }

//===----------------------------------------------------------------------===//
// The evaluator
//===----------------------------------------------------------------------===//

namespace {
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
  LogicalResult eval(InputOp op);
  LogicalResult eval(ConstantOp op);
  LogicalResult eval(arith::ConstantOp op);
  LogicalResult eval(GradSeedOp op);
  LogicalResult evalConstant(Operation *op, Attribute value);
  // Compute.
  LogicalResult eval(MatmulOp op);
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
} // namespace

LogicalResult Evaluator::define(Value result, Tensor t, bool saturate) {
  auto type = dyn_cast<RankedTensorType>(result.getType());
  std::optional<DType> dtype =
      type ? dtypeOf(type.getElementType()) : std::nullopt;
  Operation *op = result.getDefiningOp();
  if (!dtype)
    return op->emitError() << "reference evaluator: unsupported result type "
                           << result.getType();
  if (type.getShape() != ArrayRef<int64_t>(t.shape))
    return op->emitError() << "reference evaluator: computed a result of "
                              "shape "
                           << typeString(t) << " for result type " << type;
  t.dtype = *dtype;
  if (t.dtype != DType::f32 || opts.roundF32)
    for (double &x : t.data)
      x = roundToFormat(x, t.dtype, saturate);
  values[result] = std::move(t);
  return success();
}

LogicalResult Evaluator::checkType(Operation *where, Value v, const Tensor &t,
                                   const llvm::Twine &what) {
  auto type = cast<RankedTensorType>(v.getType());
  if (dtypeOf(type.getElementType()) == t.dtype &&
      type.getShape() == ArrayRef<int64_t>(t.shape) &&
      static_cast<int64_t>(t.data.size()) == t.numElements())
    return success();
  return where->emitError() << what << " has type " << typeString(t)
                            << " (" << t.data.size()
                            << " values) but the IR expects " << type;
}

FailureOr<std::vector<Tensor>> Evaluator::run(func::FuncOp fn,
                                              ArrayRef<Tensor> args) {
  if (fn.isExternal())
    return fn.emitError("reference evaluator: function has no body");
  if (!fn.getBody().hasOneBlock())
    return fn.emitError("reference evaluator: only single-block functions "
                        "are supported");
  Block &body = fn.getBody().front();
  if (args.size() != body.getNumArguments())
    return fn.emitError() << "reference evaluator: function takes "
                          << body.getNumArguments() << " arguments, got "
                          << args.size();
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    if (!isa<RankedTensorType>(arg.getType()))
      return fn.emitError() << "reference evaluator: argument #" << i
                            << " is not a ranked tensor";
    if (failed(checkType(fn, arg, args[i], "argument #" + llvm::Twine(i))))
      return failure();
    values[arg] = args[i];
  }
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::vector<Tensor> results;
      for (Value v : ret.getOperands())
        results.push_back(get(v));
      return results;
    }
    if (failed(evalOp(&op)))
      return failure();
  }
  return fn.emitError("reference evaluator: function has no func.return");
}

LogicalResult Evaluator::evalOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<ParamOp, InputOp, ConstantOp, arith::ConstantOp, GradSeedOp,
            MatmulOp, AddOp,
            SubOp, MulOp, DivOp, BiasAddOp, NegOp, ReluOp, GeluOp, SiluOp,
            TanhOp, SigmoidOp, ExpOp, LogOp, SqrtOp, RsqrtOp, PowOp, ScaleOp,
            LayerNormOp, RmsNormOp, SoftmaxOp, LogSoftmaxOp, ReduceSumOp,
            ReduceMeanOp, ReduceMaxOp, BroadcastOp, ReshapeOp, TransposeOp,
            SliceOp, ConcatOp, EmbeddingOp, CausalMaskOp, WhereOp, DropoutOp,
            SoftmaxCrossEntropyOp, MseLossOp, ReluGradOp, GeluGradOp,
            SiluGradOp, TanhGradOp, SigmoidGradOp, SoftmaxGradOp,
            LogSoftmaxGradOp, LayerNormGradOp, RmsNormGradOp,
            SoftmaxCrossEntropyGradOp, MseLossGradOp, EmbeddingGradOp,
            ReduceMaxGradOp, SliceGradOp, CastOp, QuantizeOp, DequantizeOp,
            AmaxOp, ScaledMatmulOp, LossScaleOp, UnscaleOp, AllFiniteOp,
            AmaxHistoryPushOp, FP8ComputeScaleOp, LossScaleUpdateOp, SgdOp,
            AdamWOp, LrScheduleOp, ClipByGlobalNormOp>(
          [&](auto concrete) { return eval(concrete); })
      .Default([&](Operation *other) {
        return other->emitError() << "reference evaluator: unsupported op '"
                                  << other->getName() << "'";
      });
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

LogicalResult Evaluator::eval(ParamOp op) {
  auto it = bindings.find(op.getName().str());
  if (it == bindings.end())
    return op.emitError() << "reference evaluator: no value bound for "
                             "parameter '"
                          << op.getName() << "'";
  if (failed(checkType(op, op.getResult(), it->second,
                       "value bound for parameter '" + op.getName() + "'")))
    return failure();
  return define(op.getResult(), it->second);
}

LogicalResult Evaluator::eval(InputOp op) {
  auto it = bindings.find(op.getName().str());
  if (it == bindings.end())
    return op.emitError() << "reference evaluator: no value bound for input '"
                          << op.getName() << "'";
  if (failed(checkType(op, op.getResult(), it->second,
                       "value bound for input '" + op.getName() + "'")))
    return failure();
  return define(op.getResult(), it->second);
}

LogicalResult Evaluator::eval(ConstantOp op) {
  return evalConstant(op, op.getValue());
}

LogicalResult Evaluator::eval(arith::ConstantOp op) {
  if (!isa<RankedTensorType>(op.getType()))
    return op.emitError("reference evaluator: only tensor constants are "
                        "supported");
  return evalConstant(op, op.getValue());
}

LogicalResult Evaluator::evalConstant(Operation *op, Attribute value) {
  auto elements = dyn_cast<ElementsAttr>(value);
  Value result = op->getResult(0);
  Tensor t = zeros(shapeOf(result));
  Type elt = elements ? elements.getElementType() : Type();
  if (elements && isa<FloatType>(elt)) {
    auto floats = elements.tryGetValues<llvm::APFloat>();
    if (floats) {
      size_t i = 0;
      for (llvm::APFloat f : *floats)
        t.data[i++] = toDouble(f);
      return define(result, std::move(t));
    }
  } else if (elements && isa<IntegerType>(elt)) {
    auto ints = elements.tryGetValues<llvm::APInt>();
    if (ints) {
      bool isBool = elt.isInteger(1);
      size_t i = 0;
      for (llvm::APInt v : *ints)
        t.data[i++] = isBool ? static_cast<double>(v.getZExtValue())
                             : static_cast<double>(v.getSExtValue());
      return define(result, std::move(t));
    }
  }
  return op->emitError() << "reference evaluator: unsupported constant "
                         << value;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

LogicalResult Evaluator::eval(MatmulOp op) {
  return define(op.getResult(),
                matmulExact(get(op.getLhs()), get(op.getRhs()),
                            op.getTransposeA(), op.getTransposeB()));
}

LogicalResult Evaluator::eval(AddOp op) {
  return binary(op, [](double a, double b) { return a + b; });
}
LogicalResult Evaluator::eval(SubOp op) {
  return binary(op, [](double a, double b) { return a - b; });
}
LogicalResult Evaluator::eval(MulOp op) {
  return binary(op, [](double a, double b) { return a * b; });
}
LogicalResult Evaluator::eval(DivOp op) {
  return binary(op, [](double a, double b) { return a / b; });
}

LogicalResult Evaluator::eval(BiasAddOp op) {
  const Tensor &x = get(op.getInput()), &bias = get(op.getBias());
  Tensor out = zeros(x.shape);
  int64_t n = bias.numElements();
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[i] = x.data[i] + bias.data[i % n];
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(NegOp op) {
  return unary(op, [](double x) { return -x; });
}
LogicalResult Evaluator::eval(ReluOp op) { return unary(op, relu); }
LogicalResult Evaluator::eval(GeluOp op) {
  GeluApproximation approx = op.getApproximation();
  return unary(op, [&](double x) { return gelu(x, approx); });
}
LogicalResult Evaluator::eval(SiluOp op) {
  return unary(op, [](double x) { return x * sigmoid(x); });
}
LogicalResult Evaluator::eval(TanhOp op) {
  return unary(op, [](double x) { return std::tanh(x); });
}
LogicalResult Evaluator::eval(SigmoidOp op) { return unary(op, sigmoid); }
LogicalResult Evaluator::eval(ExpOp op) {
  return unary(op, [](double x) { return std::exp(x); });
}
LogicalResult Evaluator::eval(LogOp op) {
  return unary(op, [](double x) { return std::log(x); });
}
LogicalResult Evaluator::eval(SqrtOp op) {
  return unary(op, [](double x) { return std::sqrt(x); });
}
LogicalResult Evaluator::eval(RsqrtOp op) {
  return unary(op, [](double x) { return 1.0 / std::sqrt(x); });
}
LogicalResult Evaluator::eval(PowOp op) {
  double e = op.getExponent().convertToDouble();
  return unary(op, [e](double x) { return std::pow(x, e); });
}
LogicalResult Evaluator::eval(ScaleOp op) {
  double f = op.getFactor().convertToDouble();
  return unary(op, [f](double x) { return x * f; });
}

//===----------------------------------------------------------------------===//
// Normalization, softmax, reductions
//===----------------------------------------------------------------------===//

/// Mean and biased variance of `n` contiguous values.
static std::pair<double, double> meanVar(const double *x, int64_t n) {
  double sum = 0.0;
  for (int64_t k = 0; k < n; ++k)
    sum += x[k];
  double mean = sum / n, sq = 0.0;
  for (int64_t k = 0; k < n; ++k)
    sq += (x[k] - mean) * (x[k] - mean);
  return {mean, sq / n};
}

static double meanSquare(const double *x, int64_t n) {
  double sq = 0.0;
  for (int64_t k = 0; k < n; ++k)
    sq += x[k] * x[k];
  return sq / n;
}

LogicalResult Evaluator::eval(LayerNormOp op) {
  const Tensor &x = get(op.getInput()), &gamma = get(op.getGamma()),
               &beta = get(op.getBeta());
  double eps = op.getEpsilon().convertToDouble();
  int64_t n = x.shape.back(), rows = x.numElements() / n;
  Tensor out = zeros(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * n;
    auto [mean, var] = meanVar(row, n);
    double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t k = 0; k < n; ++k)
      out.data[r * n + k] = (row[k] - mean) * rstd * gamma.data[k] +
                            beta.data[k];
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(RmsNormOp op) {
  const Tensor &x = get(op.getInput()), &gamma = get(op.getGamma());
  double eps = op.getEpsilon().convertToDouble();
  int64_t n = x.shape.back(), rows = x.numElements() / n;
  Tensor out = zeros(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * n;
    double rms = 1.0 / std::sqrt(meanSquare(row, n) + eps);
    for (int64_t k = 0; k < n; ++k)
      out.data[r * n + k] = row[k] * rms * gamma.data[k];
  }
  return define(op.getResult(), std::move(out));
}

/// softmax (or log_softmax) of `x` along `axis`, max-subtracted.
static Tensor softmax(const Tensor &x, int64_t axis, bool log) {
  Tensor out = zeros(x.shape);
  forEachLane(x.shape, normalizeAxis(axis, x.rank()),
              [&](int64_t base, int64_t stride, int64_t size) {
                const double *in = x.data.data();
                double mx = -kInf;
                for (int64_t k = 0; k < size; ++k)
                  mx = std::max(mx, in[base + k * stride]);
                double sum = 0.0;
                for (int64_t k = 0; k < size; ++k)
                  sum += std::exp(in[base + k * stride] - mx);
                for (int64_t k = 0; k < size; ++k) {
                  double shifted = in[base + k * stride] - mx;
                  out.data[base + k * stride] =
                      log ? shifted - std::log(sum) : std::exp(shifted) / sum;
                }
              });
  return out;
}

LogicalResult Evaluator::eval(SoftmaxOp op) {
  return define(op.getResult(),
                softmax(get(op.getInput()), (int64_t)op.getAxis(), false));
}
LogicalResult Evaluator::eval(LogSoftmaxOp op) {
  return define(op.getResult(),
                softmax(get(op.getInput()), (int64_t)op.getAxis(), true));
}

LogicalResult Evaluator::eval(ReduceSumOp op) {
  const Tensor &x = get(op.getInput());
  ReduceMap rm = makeReduceMap(x.shape, op.getAxes(), op.getKeepdims());
  Tensor out = zeros(rm.outShape);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[rm.outOf[i]] += x.data[i];
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(ReduceMeanOp op) {
  const Tensor &x = get(op.getInput());
  ReduceMap rm = makeReduceMap(x.shape, op.getAxes(), op.getKeepdims());
  Tensor out = zeros(rm.outShape);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[rm.outOf[i]] += x.data[i];
  for (double &v : out.data)
    v /= static_cast<double>(rm.groupSize);
  return define(op.getResult(), std::move(out));
}

/// max that propagates NaN (as torch.amax does).
static double maxNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return kNaN;
  return std::max(a, b);
}

LogicalResult Evaluator::eval(ReduceMaxOp op) {
  const Tensor &x = get(op.getInput());
  ReduceMap rm = makeReduceMap(x.shape, op.getAxes(), op.getKeepdims());
  Tensor out = zeros(rm.outShape);
  std::fill(out.data.begin(), out.data.end(), -kInf);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[rm.outOf[i]] = maxNaN(out.data[rm.outOf[i]], x.data[i]);
  return define(op.getResult(), std::move(out));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult Evaluator::eval(BroadcastOp op) {
  const Tensor &x = get(op.getInput());
  ArrayRef<int64_t> dims = op.getDims();
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  Tensor out = zeros(shapeOf(op.getResult()));
  forEachIndex(out.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t src = 0;
    for (int64_t i = 0; i < x.rank(); ++i)
      if (x.shape[i] != 1)
        src += index[dims[i]] * inStrides[i];
    out.data[linear] = x.data[src];
  });
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(ReshapeOp op) {
  Tensor out = get(op.getInput());
  out.shape = shapeOf(op.getResult());
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(TransposeOp op) {
  const Tensor &x = get(op.getInput());
  ArrayRef<int64_t> perm = op.getPermutation();
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  Tensor out = zeros(shapeOf(op.getResult()));
  forEachIndex(out.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i)
      src += index[i] * inStrides[perm[i]];
    out.data[linear] = x.data[src];
  });
  return define(op.getResult(), std::move(out));
}

/// Linear index in a tensor of `strides` of element `index` of a slice.
static int64_t sliceSource(ArrayRef<int64_t> index, ArrayRef<int64_t> start,
                           ArrayRef<int64_t> step,
                           ArrayRef<int64_t> strides) {
  int64_t src = 0;
  for (size_t d = 0; d < index.size(); ++d)
    src += (start[d] + index[d] * step[d]) * strides[d];
  return src;
}

LogicalResult Evaluator::eval(SliceOp op) {
  const Tensor &x = get(op.getInput());
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  Tensor out = zeros(shapeOf(op.getResult()));
  forEachIndex(out.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    out.data[linear] = x.data[sliceSource(index, op.getStart(), op.getStep(),
                                          inStrides)];
  });
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(ConcatOp op) {
  Tensor out = zeros(shapeOf(op.getResult()));
  int64_t axis = normalizeAxis((int64_t)op.getAxis(), out.rank());
  std::vector<int64_t> outStrides = stridesOf(out.shape);
  int64_t offset = 0; // position of the current input along `axis`
  for (Value v : op.getInputs()) {
    const Tensor &x = get(v);
    forEachIndex(x.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
      int64_t dst = offset * outStrides[axis];
      for (int64_t d = 0; d < x.rank(); ++d)
        dst += index[d] * outStrides[d];
      out.data[dst] = x.data[linear];
    });
    offset += x.shape[axis];
  }
  return define(op.getResult(), std::move(out));
}

/// Checks an embedding id; emits an error at `op` if it is out of range.
static LogicalResult checkId(Operation *op, double id, int64_t position,
                             int64_t vocab) {
  if (id >= 0 && id < static_cast<double>(vocab))
    return success();
  return op->emitError() << "reference evaluator: id " << (int64_t)id
                         << " at position " << position
                         << " is out of range for a table of " << vocab
                         << " rows";
}

LogicalResult Evaluator::eval(EmbeddingOp op) {
  const Tensor &table = get(op.getTable()), &ids = get(op.getIndices());
  int64_t vocab = table.shape[0], dim = table.shape[1];
  Tensor out = zeros(shapeOf(op.getResult()));
  for (int64_t p = 0; p < ids.numElements(); ++p) {
    if (failed(checkId(op, ids.data[p], p, vocab)))
      return failure();
    int64_t row = static_cast<int64_t>(ids.data[p]);
    std::copy_n(table.data.begin() + row * dim, dim,
                out.data.begin() + p * dim);
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(CausalMaskOp op) {
  Tensor out = get(op.getInput());
  double fill = op.getFill().convertToDouble();
  int64_t q = out.shape[out.rank() - 2], k = out.shape.back();
  int64_t matrices = out.numElements() / (q * k);
  for (int64_t b = 0; b < matrices; ++b)
    for (int64_t i = 0; i < q; ++i)
      for (int64_t j = 0; j < k; ++j)
        if (j > i + (k - q))
          out.data[(b * q + i) * k + j] = fill;
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(WhereOp op) {
  const Tensor &cond = get(op.getCond()), &a = get(op.getOnTrue()),
               &b = get(op.getOnFalse());
  Tensor out = zeros(a.shape);
  for (size_t i = 0; i < out.data.size(); ++i)
    out.data[i] = cond.data[i] != 0.0 ? a.data[i] : b.data[i];
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(DropoutOp op) {
  const Tensor &x = get(op.getInput());
  double rate = op.getRate().convertToDouble();
  double keepScale = 1.0 / (1.0 - rate);
  Tensor out = zeros(x.shape);
  for (size_t i = 0; i < x.data.size(); ++i)
    if (dropoutUniform(op.getSeed(), opts.step, i) >= rate)
      out.data[i] = x.data[i] * keepScale;
  return define(op.getResult(), std::move(out));
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

double Evaluator::logSumExp(const double *row, int64_t c) {
  double mx = -kInf;
  for (int64_t k = 0; k < c; ++k)
    mx = std::max(mx, row[k]);
  double sum = 0.0;
  for (int64_t k = 0; k < c; ++k)
    sum += std::exp(row[k] - mx);
  return mx + std::log(sum);
}

FailureOr<std::vector<int64_t>>
Evaluator::crossEntropyLabels(Operation *op, const Tensor &labels,
                              int64_t numClasses,
                              std::optional<uint64_t> ignore) {
  std::vector<int64_t> out;
  for (int64_t p = 0; p < labels.numElements(); ++p) {
    auto label = static_cast<int64_t>(labels.data[p]);
    if (ignore && label == static_cast<int64_t>(*ignore)) {
      out.push_back(-1);
      continue;
    }
    if (label < 0 || label >= numClasses)
      return op->emitError() << "reference evaluator: label " << label
                             << " at position " << p
                             << " is out of range for " << numClasses
                             << " classes";
    out.push_back(label);
  }
  return out;
}

LogicalResult Evaluator::eval(SoftmaxCrossEntropyOp op) {
  const Tensor &logits = get(op.getLogits());
  int64_t c = logits.shape.back();
  auto labels = crossEntropyLabels(op, get(op.getLabels()), c,
                                   op.getIgnoreIndex());
  if (failed(labels))
    return failure();
  double total = 0.0;
  int64_t counted = 0;
  for (size_t r = 0; r < labels->size(); ++r) {
    int64_t label = (*labels)[r];
    if (label < 0)
      continue;
    const double *row = logits.data.data() + r * c;
    total += logSumExp(row, c) - row[label];
    ++counted;
  }
  if (op.getReduction() == LossReduction::mean)
    total /= static_cast<double>(counted); // 0/0 = NaN if all are ignored
  Tensor out = zeros({});
  out.data[0] = total;
  return define(op.getLoss(), std::move(out));
}

LogicalResult Evaluator::eval(MseLossOp op) {
  const Tensor &p = get(op.getPrediction()), &t = get(op.getTarget());
  double total = 0.0;
  for (size_t i = 0; i < p.data.size(); ++i)
    total += (p.data[i] - t.data[i]) * (p.data[i] - t.data[i]);
  if (op.getReduction() == LossReduction::mean)
    total /= static_cast<double>(p.numElements());
  Tensor out = zeros({});
  out.data[0] = total;
  return define(op.getLoss(), std::move(out));
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

LogicalResult Evaluator::eval(ReluGradOp op) {
  return define(op.getResult(),
                zipWith(get(op.getGrad()), get(op.getInput()),
                        [](double g, double x) { return x > 0.0 ? g : 0.0; }));
}

LogicalResult Evaluator::eval(GeluGradOp op) {
  GeluApproximation approx = op.getApproximation();
  return define(op.getResult(),
                zipWith(get(op.getGrad()), get(op.getInput()),
                        [&](double g, double x) {
                          return g * geluDerivative(x, approx);
                        }));
}

LogicalResult Evaluator::eval(SiluGradOp op) {
  return define(op.getResult(),
                zipWith(get(op.getGrad()), get(op.getInput()),
                        [](double g, double x) {
                          double s = sigmoid(x);
                          return g * s * (1.0 + x * (1.0 - s));
                        }));
}

LogicalResult Evaluator::eval(TanhGradOp op) {
  return define(op.getResult(),
                zipWith(get(op.getGrad()), get(op.getOutput()),
                        [](double g, double y) { return g * (1.0 - y * y); }));
}

LogicalResult Evaluator::eval(SigmoidGradOp op) {
  return define(op.getResult(),
                zipWith(get(op.getGrad()), get(op.getOutput()),
                        [](double g, double y) { return g * y * (1.0 - y); }));
}

LogicalResult Evaluator::eval(SoftmaxGradOp op) {
  const Tensor &g = get(op.getGrad()), &y = get(op.getOutput());
  Tensor out = zeros(g.shape);
  forEachLane(g.shape, normalizeAxis((int64_t)op.getAxis(), g.rank()),
              [&](int64_t base, int64_t stride, int64_t size) {
                double dot = 0.0;
                for (int64_t k = 0; k < size; ++k)
                  dot += g.data[base + k * stride] * y.data[base + k * stride];
                for (int64_t k = 0; k < size; ++k) {
                  int64_t i = base + k * stride;
                  out.data[i] = y.data[i] * (g.data[i] - dot);
                }
              });
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(LogSoftmaxGradOp op) {
  const Tensor &g = get(op.getGrad()), &y = get(op.getOutput());
  Tensor out = zeros(g.shape);
  forEachLane(g.shape, normalizeAxis((int64_t)op.getAxis(), g.rank()),
              [&](int64_t base, int64_t stride, int64_t size) {
                double sum = 0.0;
                for (int64_t k = 0; k < size; ++k)
                  sum += g.data[base + k * stride];
                for (int64_t k = 0; k < size; ++k) {
                  int64_t i = base + k * stride;
                  out.data[i] = g.data[i] - std::exp(y.data[i]) * sum;
                }
              });
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(LayerNormGradOp op) {
  const Tensor &dy = get(op.getGrad()), &x = get(op.getInput()),
               &gamma = get(op.getGamma());
  double eps = op.getEpsilon().convertToDouble();
  int64_t n = x.shape.back(), rows = x.numElements() / n;
  Tensor dx = zeros(x.shape), dgamma = zeros(gamma.shape),
         dbeta = zeros(gamma.shape);
  std::vector<double> xhat(n), dxhat(n);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * n, *dyRow = dy.data.data() + r * n;
    auto [mean, var] = meanVar(row, n);
    double rstd = 1.0 / std::sqrt(var + eps);
    double meanDxhat = 0.0, meanDxhatXhat = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      xhat[k] = (row[k] - mean) * rstd;
      dxhat[k] = dyRow[k] * gamma.data[k];
      dgamma.data[k] += dyRow[k] * xhat[k];
      dbeta.data[k] += dyRow[k];
      meanDxhat += dxhat[k] / n;
      meanDxhatXhat += dxhat[k] * xhat[k] / n;
    }
    for (int64_t k = 0; k < n; ++k)
      dx.data[r * n + k] =
          rstd * (dxhat[k] - meanDxhat - xhat[k] * meanDxhatXhat);
  }
  if (failed(define(op.getGradInput(), std::move(dx))) ||
      failed(define(op.getGradGamma(), std::move(dgamma))))
    return failure();
  return define(op.getGradBeta(), std::move(dbeta));
}

LogicalResult Evaluator::eval(RmsNormGradOp op) {
  const Tensor &dy = get(op.getGrad()), &x = get(op.getInput()),
               &gamma = get(op.getGamma());
  double eps = op.getEpsilon().convertToDouble();
  int64_t n = x.shape.back(), rows = x.numElements() / n;
  Tensor dx = zeros(x.shape), dgamma = zeros(gamma.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * n, *dyRow = dy.data.data() + r * n;
    double rms = 1.0 / std::sqrt(meanSquare(row, n) + eps); // 1 / rms really
    double meanDxhatX = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      double dxhat = dyRow[k] * gamma.data[k];
      dgamma.data[k] += dyRow[k] * row[k] * rms;
      meanDxhatX += dxhat * row[k] / n;
    }
    // y = x * r * gamma, r = (mean(x^2) + eps)^-1/2, dr/dx_j = -r^3 x_j / n.
    for (int64_t k = 0; k < n; ++k)
      dx.data[r * n + k] = rms * dyRow[k] * gamma.data[k] -
                           row[k] * rms * rms * rms * meanDxhatX;
  }
  if (failed(define(op.getGradInput(), std::move(dx))))
    return failure();
  return define(op.getGradGamma(), std::move(dgamma));
}

LogicalResult Evaluator::eval(SoftmaxCrossEntropyGradOp op) {
  const Tensor &logits = get(op.getLogits());
  int64_t c = logits.shape.back();
  auto labels = crossEntropyLabels(op, get(op.getLabels()), c,
                                   op.getIgnoreIndex());
  if (failed(labels))
    return failure();
  double n = 1.0;
  if (op.getReduction() == LossReduction::mean)
    n = static_cast<double>(
        llvm::count_if(*labels, [](int64_t l) { return l >= 0; }));
  double seed = scalar(op.getGrad());
  Tensor out = zeros(logits.shape);
  for (size_t r = 0; r < labels->size(); ++r) {
    int64_t label = (*labels)[r];
    if (label < 0)
      continue; // ignored positions get 0
    const double *row = logits.data.data() + r * c;
    double lse = logSumExp(row, c);
    for (int64_t k = 0; k < c; ++k) {
      double p = std::exp(row[k] - lse) - (k == label ? 1.0 : 0.0);
      out.data[r * c + k] = seed * p / n;
    }
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(MseLossGradOp op) {
  const Tensor &p = get(op.getPrediction()), &t = get(op.getTarget());
  double n = op.getReduction() == LossReduction::mean
                 ? static_cast<double>(p.numElements())
                 : 1.0;
  double seed = scalar(op.getGrad());
  return define(op.getResult(), zipWith(p, t, [&](double a, double b) {
                  return seed * 2.0 * (a - b) / n;
                }));
}

LogicalResult Evaluator::eval(EmbeddingGradOp op) {
  const Tensor &g = get(op.getGrad()), &ids = get(op.getIndices());
  Tensor out = zeros(shapeOf(op.getResult()));
  int64_t vocab = out.shape[0], dim = out.shape[1];
  for (int64_t p = 0; p < ids.numElements(); ++p) {
    if (failed(checkId(op, ids.data[p], p, vocab)))
      return failure();
    int64_t row = static_cast<int64_t>(ids.data[p]);
    for (int64_t k = 0; k < dim; ++k)
      out.data[row * dim + k] += g.data[p * dim + k];
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(ReduceMaxGradOp op) {
  const Tensor &g = get(op.getGrad()), &x = get(op.getInput()),
               &y = get(op.getOutput());
  ReduceMap rm = makeReduceMap(x.shape, op.getAxes(), op.getKeepdims());
  std::vector<int64_t> ties(rm.numOutputs, 0);
  for (size_t i = 0; i < x.data.size(); ++i)
    if (x.data[i] == y.data[rm.outOf[i]])
      ++ties[rm.outOf[i]];
  Tensor out = zeros(x.shape);
  for (size_t i = 0; i < x.data.size(); ++i) {
    int64_t o = rm.outOf[i];
    if (x.data[i] == y.data[o])
      out.data[i] = g.data[o] / static_cast<double>(ties[o]);
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(SliceGradOp op) {
  const Tensor &g = get(op.getGrad());
  Tensor out = zeros(shapeOf(op.getResult()));
  std::vector<int64_t> outStrides = stridesOf(out.shape);
  forEachIndex(g.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    out.data[sliceSource(index, op.getStart(), op.getStep(), outStrides)] =
        g.data[linear];
  });
  return define(op.getResult(), std::move(out));
}

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

LogicalResult Evaluator::eval(GradSeedOp op) {
  Tensor one = zeros({});
  one.data[0] = 1.0;
  return define(op.getResult(), std::move(one));
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

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

LogicalResult Evaluator::eval(SgdOp op) {
  const Tensor &p = get(op.getParam()), &g = get(op.getGrad()),
               &buf = get(op.getMomentumBuffer());
  double lr = scalar(op.getLr());
  double momentum = op.getMomentum().convertToDouble();
  double dampening = op.getDampening().convertToDouble();
  double wd = op.getWeightDecay().convertToDouble();
  Tensor newP = zeros(p.shape), newBuf = buf;
  for (size_t i = 0; i < p.data.size(); ++i) {
    double d = g.data[i] + wd * p.data[i];
    if (momentum != 0.0) {
      double b = rnd(momentum * buf.data[i] + (1.0 - dampening) * d,
                     DType::f32);
      newBuf.data[i] = b;
      d = op.getNesterov() ? d + momentum * b : b;
    }
    newP.data[i] = p.data[i] - lr * d;
  }
  if (failed(define(op.getNewParam(), std::move(newP))))
    return failure();
  return define(op.getNewMomentumBuffer(), std::move(newBuf));
}

LogicalResult Evaluator::eval(AdamWOp op) {
  const Tensor &p = get(op.getParam()), &g = get(op.getGrad()),
               &m = get(op.getExpAvg()), &v = get(op.getExpAvgSq());
  double t = scalar(op.getStep()), lr = scalar(op.getLr());
  double b1 = op.getBeta1().convertToDouble();
  double b2 = op.getBeta2().convertToDouble();
  double eps = op.getEps().convertToDouble();
  double wd = op.getWeightDecay().convertToDouble();
  double bc1 = 1.0 - std::pow(b1, t), bc2 = 1.0 - std::pow(b2, t);
  Tensor newP = zeros(p.shape), newM = zeros(p.shape), newV = zeros(p.shape);
  for (size_t i = 0; i < p.data.size(); ++i) {
    double gi = g.data[i];
    double mi = rnd(b1 * m.data[i] + (1.0 - b1) * gi, DType::f32);
    double vi = rnd(b2 * v.data[i] + (1.0 - b2) * gi * gi, DType::f32);
    double decayed = p.data[i] * (1.0 - lr * wd);
    newP.data[i] = decayed - lr * (mi / bc1) / (std::sqrt(vi / bc2) + eps);
    newM.data[i] = mi;
    newV.data[i] = vi;
  }
  if (failed(define(op.getNewParam(), std::move(newP))) ||
      failed(define(op.getNewExpAvg(), std::move(newM))))
    return failure();
  return define(op.getNewExpAvgSq(), std::move(newV));
}

LogicalResult Evaluator::eval(LrScheduleOp op) {
  double step = scalar(op.getStep());
  double base = op.getBaseLr().convertToDouble();
  double minLr = op.getMinLr().convertToDouble();
  double warmup = static_cast<double>(op.getWarmupSteps());
  double total = static_cast<double>(op.getTotalSteps());
  double lr;
  if (step < warmup) {
    lr = base * step / std::max(1.0, warmup);
  } else if (op.getKind() == LrScheduleKind::constant) {
    lr = base;
  } else {
    double p = (step - warmup) / std::max(1.0, total - warmup);
    p = std::clamp(p, 0.0, 1.0);
    double decay = op.getKind() == LrScheduleKind::linear
                       ? 1.0 - p
                       : 0.5 * (1.0 + std::cos(M_PI * p));
    lr = minLr + (base - minLr) * decay;
  }
  Tensor out = zeros({});
  out.data[0] = lr;
  return define(op.getLr(), std::move(out));
}

LogicalResult Evaluator::eval(ClipByGlobalNormOp op) {
  double sumSq = 0.0;
  for (Value g : op.getGrads())
    for (double x : get(g).data)
      sumSq += x * x;
  double norm = std::sqrt(sumSq);
  double coef = op.getMaxNorm().convertToDouble() / (norm + 1e-6);
  if (coef > 1.0) // clamp(max=1); a NaN coefficient stays NaN
    coef = 1.0;
  for (auto [g, clipped] : llvm::zip(op.getGrads(), op.getClipped()))
    if (failed(define(clipped, map(get(g), [&](double x) {
                        return x * coef;
                      }))))
      return failure();
  Tensor out = zeros({});
  out.data[0] = norm;
  return define(op.getNorm(), std::move(out));
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

FailureOr<std::vector<Tensor>>
mlir::lpc::ref::evaluate(func::FuncOp fn, ArrayRef<Tensor> args,
                         const Bindings &bindings, const EvalOptions &opts) {
  Evaluator evaluator(bindings, opts);
  return evaluator.run(fn, args);
}
