//===- Evaluator.cpp - reference evaluator of lpc functions ---------------===//
//
// The public `evaluate` entry point, Evaluator::run and the op dispatch, and
// the structure ops (params, inputs, constants, grad seed). The other ops live
// in EvalCompute.cpp, EvalTraining.cpp and EvalPrecision.cpp.
//
// One function per op (or family of ops). Each computes its results in double
// from the operand values and hands them to `define`, which checks the shape
// against the result type and rounds every element to the result's element
// type. See Evaluator.h for the numerics the op descriptions leave open.
//
//===----------------------------------------------------------------------===//

#include "lpc/Reference/Evaluator.h"

#include "EvaluatorImpl.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::ref;

namespace mlir {
namespace lpc {
namespace ref {
namespace detail {

static double toDouble(const llvm::APFloat &f) {
  llvm::APFloat d = f;
  bool losesInfo = false;
  d.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return d.convertToDouble();
}

//===----------------------------------------------------------------------===//
// The evaluator
//===----------------------------------------------------------------------===//

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
  if (isFloat(t.dtype) && !opts.roundResults) {
    values[result] = std::move(t);
    return success();
  }
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
      .Case<ParamOp, InputOp, BufferOp, BufferUpdateOp, TrainOrEvalOp, StopGradientOp,
            ConstantOp, arith::ConstantOp, GradSeedOp,
            MatmulOp, GroupedMatmulOp, GroupedMatmulWeightGradOp, AddOp,
            SubOp, MulOp, DivOp, BiasAddOp, NegOp, ReluOp, GeluOp, SiluOp,
            TanhOp, SigmoidOp, ExpOp, LogOp, Log1pOp, Expm1Op, SinOp, CosOp, ErfOp, SqrtOp, RsqrtOp, PowOp, ScaleOp,
            LayerNormOp, RmsNormOp, SoftmaxOp, LogSoftmaxOp, ReduceSumOp,
            ReduceMeanOp, ReduceMaxOp, BroadcastOp, ReshapeOp, TransposeOp,
            SliceOp, ConcatOp, EmbeddingOp, CausalMaskOp, WhereOp, CompareOp,
            ConvertOp,
            DropoutOp,
            SoftmaxCrossEntropyOp, MseLossOp, ReluGradOp, GeluGradOp,
            SiluGradOp, TanhGradOp, SigmoidGradOp, SoftmaxGradOp,
            LogSoftmaxGradOp, LayerNormGradOp, RmsNormGradOp,
            SoftmaxCrossEntropyGradOp, MseLossGradOp, EmbeddingGradOp,
            ReduceMaxGradOp, SliceGradOp, CastOp, QuantizeOp, DequantizeOp,
            AmaxOp, FP8StatsOp, ScaledMatmulOp, LossScaleOp, UnscaleOp, AllFiniteOp,
            AmaxHistoryPushOp, FP8ComputeScaleOp, LossScaleUpdateOp, SgdOp,
            AdamWOp, LrScheduleOp, ClipByGlobalNormOp, AttentionOp,
            AttentionGradOp, AllReduceOp, ReduceScatterOp, AllGatherOp, ShardOp,
            AllToAllOp, WireScaleOp>(
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

// A forward function runs as a training step's forward: a buffer holds its
// bound value (else its `value`), lpc.train_or_eval takes the train side,
// and the update is the training step's result, not the forward's.
LogicalResult Evaluator::eval(BufferOp op) {
  auto it = bindings.find(op.getName().str());
  if (it == bindings.end()) {
    std::optional<DType> dt = dtypeOf(op.getType().getElementType());
    return define(op.getResult(),
                  Tensor::filled(*dt, op.getType().getShape(),
                                 op.getValue().convertToDouble()));
  }
  if (failed(checkType(op, op.getResult(), it->second,
                       "value bound for buffer '" + op.getName() + "'")))
    return failure();
  return define(op.getResult(), it->second);
}

LogicalResult Evaluator::eval(BufferUpdateOp) { return success(); }

LogicalResult Evaluator::eval(TrainOrEvalOp op) {
  return define(op.getResult(), get(op.getTrain()));
}

// The forward's value; the gradient rule lives in lpc-autodiff.
LogicalResult Evaluator::eval(StopGradientOp op) {
  return define(op.getResult(), get(op.getInput()));
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

LogicalResult Evaluator::eval(GradSeedOp op) {
  Tensor one = zeros({});
  one.data[0] = 1.0;
  return define(op.getResult(), std::move(one));
}

} // namespace detail
} // namespace ref
} // namespace lpc
} // namespace mlir

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

FailureOr<std::vector<Tensor>>
mlir::lpc::ref::evaluate(func::FuncOp fn, ArrayRef<Tensor> args,
                         const Bindings &bindings, const EvalOptions &opts) {
  detail::Evaluator evaluator(bindings, opts);
  return evaluator.run(fn, args);
}
