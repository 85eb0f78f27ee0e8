//===- LpcOps.cpp - verifiers and shape inference of lpc ops --------------===//
//
// Diagnostics name the offending operand and print the types involved, so a
// user who wrote a model by hand can find the mistake from the message alone.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lpc;

/// Normalizes a possibly negative axis against `rank`; nullopt if out of range.
static std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

static std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

//===----------------------------------------------------------------------===//
// Model structure
//===----------------------------------------------------------------------===//

/// The lpc.param or lpc.buffer named `name` in the function around `op`
/// that comes first (in walk order).
static Operation *firstNamedState(Operation *op, StringRef name) {
  Operation *first = nullptr;
  if (auto fn = op->getParentOfType<FunctionOpInterface>())
    fn->walk([&](Operation *other) {
      if (first)
        return;
      if (auto p = dyn_cast<ParamOp>(other); p && p.getName() == name)
        first = other;
      if (auto b = dyn_cast<BufferOp>(other); b && b.getName() == name)
        first = other;
    });
  return first;
}

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  InitKind init = getInit();
  auto onlyFor = [&](StringRef attr, bool allowed,
                     StringRef kinds) -> LogicalResult {
    if (allowed || !(*this)->hasAttr(attr))
      return success();
    return emitOpError() << "attribute '" << attr << "' only applies to "
                         << kinds << " initializers, not '"
                         << stringifyInitKind(init) << "'";
  };
  bool isNormal = init == InitKind::normal;
  bool isUniform = init == InitKind::uniform;
  bool isFan = init == InitKind::xavier_uniform ||
               init == InitKind::xavier_normal ||
               init == InitKind::kaiming_uniform ||
               init == InitKind::kaiming_normal;
  if (failed(onlyFor("std", isNormal, "normal")) ||
      failed(onlyFor("mean", isNormal, "normal")) ||
      failed(onlyFor("low", isUniform, "uniform")) ||
      failed(onlyFor("high", isUniform, "uniform")) ||
      failed(onlyFor("value", init == InitKind::constant, "constant")) ||
      failed(onlyFor("gain", isFan, "xavier/kaiming")))
    return failure();
  if (init == InitKind::constant && !getValue())
    return emitOpError("'constant' initializer needs a 'value' attribute");
  for (StringRef attr : {"std", "mean", "low", "high", "value", "gain"})
    if (auto a = (*this)->getAttrOfType<FloatAttr>(attr);
        a && !std::isfinite(a.getValueAsDouble()))
      return emitOpError() << "'" << attr << "' must be finite, got "
                           << a.getValueAsDouble();
  auto opt = [](FloatAttr a, double dflt) {
    return a ? a.getValueAsDouble() : dflt;
  };
  if (double std = opt(getStdAttr(), 1.0); !(std > 0.0))
    return emitOpError() << "'std' must be positive, got " << std;
  if (double gain = opt(getGainAttr(), 1.0); !(gain > 0.0))
    return emitOpError() << "'gain' must be positive, got " << gain;
  double low = opt(getLowAttr(), -1.0), high = opt(getHighAttr(), 1.0);
  if (isUniform && !(low < high))
    return emitOpError() << "'uniform' initializer needs low < high, got ["
                         << low << ", " << high << ")";
  RankedTensorType type = getResult().getType();
  if (isFan && type.getRank() < 2)
    return emitOpError() << "'" << stringifyInitKind(init)
                         << "' needs a tensor of rank >= 2 (fan-in, fan-out), "
                            "got "
                         << type;
  if (!type.hasStaticShape())
    return emitOpError() << "parameter shape must be static, got " << type;

  // Names identify parameters (and buffers) in checkpoints: they must be
  // unique.
  if (Operation *first = firstNamedState(*this, getName());
      first && first != getOperation()) {
    InFlightDiagnostic diag = emitOpError()
                              << "duplicate parameter name '" << getName()
                              << "'";
    diag.attachNote(first->getLoc()) << "first declared here";
    return diag;
  }
  return success();
}

LogicalResult BufferOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  RankedTensorType type = getResult().getType();
  if (!type.hasStaticShape())
    return emitOpError() << "buffer shape must be static, got " << type;
  double v = getValue().convertToDouble();
  if (!std::isfinite(v))
    return emitOpError() << "'value' must be finite, got " << v;
  if (type.getElementType().isInteger() && v != std::trunc(v))
    return emitOpError() << "'value' of an integer buffer must be a whole "
                            "number, got "
                         << v;
  // Names identify buffers next to parameters in checkpoints.
  if (Operation *first = firstNamedState(*this, getName());
      first && first != getOperation()) {
    InFlightDiagnostic diag = emitOpError() << "duplicate name '" << getName()
                                            << "' (a parameter or buffer)";
    diag.attachNote(first->getLoc()) << "first declared here";
    return diag;
  }
  return success();
}

LogicalResult BufferUpdateOp::verify() {
  auto buffer = dyn_cast_or_null<BufferOp>(firstNamedState(*this, getName()));
  if (!buffer)
    return emitOpError() << "updates '" << getName()
                         << "', which no lpc.buffer of this function declares";
  if (buffer.getType() != getValue().getType())
    return emitOpError() << "value of type " << getValue().getType()
                         << " for buffer '" << getName() << "' of type "
                         << buffer.getType();
  BufferUpdateOp first;
  (*this)->getParentOfType<FunctionOpInterface>()->walk(
      [&](BufferUpdateOp other) {
        if (!first && other.getName() == getName())
          first = other;
      });
  if (first != *this) {
    InFlightDiagnostic diag = emitOpError() << "a second update of buffer '"
                                            << getName() << "'";
    diag.attachNote(first.getLoc()) << "first update here";
    return diag;
  }
  return success();
}

LogicalResult InputOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  RankedTensorType type = getResult().getType();
  Type elt = type.getElementType();
  bool wantInt = getKind() == InputKind::labels || getKind() == InputKind::tokens;
  if (wantInt && !elt.isSignlessInteger(32) && !elt.isSignlessInteger(64))
    return emitOpError() << "'" << stringifyInputKind(getKind())
                         << "' inputs must have an integer element type "
                            "(i32 or i64), got "
                         << type;
  if (!wantInt && !isa<FloatType>(elt))
    return emitOpError() << "'" << stringifyInputKind(getKind())
                         << "' inputs must have a float element type, got "
                         << type;
  if (!type.hasStaticShape() || type.getRank() < 1)
    return emitOpError() << "inputs need a static shape with a leading batch "
                            "dimension, got "
                         << type;
  if (Operation *scope = (*this)->getParentOp()) {
    InputOp first;
    scope->walk([&](InputOp other) {
      if (!first && other.getName() == getName())
        first = other;
    });
    if (first && first != *this) {
      InFlightDiagnostic diag = emitOpError()
                                << "duplicate input name '" << getName() << "'";
      diag.attachNote(first.getLoc()) << "first declared here";
      return diag;
    }
  }
  return success();
}

ParseResult ConstantOp::parse(OpAsmParser &parser, OperationState &result) {
  Attribute value;
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseAttribute(value))
    return failure();
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements)
    return parser.emitError(loc, "expected a dense elements attribute with a "
                                 "tensor type, e.g. dense<1.0> : tensor<4xf32>");
  result.addAttribute("value", elements);
  result.addTypes(elements.getType());
  return success();
}

void ConstantOp::print(OpAsmPrinter &p) {
  p.printOptionalAttrDict((*this)->getAttrs(), /*elidedAttrs=*/{"value"});
  p << ' ';
  p.printAttribute(getValue());
}

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError() << "value type " << getValue().getType()
                         << " differs from result type " << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
mlir::lpc::inferMatmulShape(std::optional<Location> loc, StringRef opName,
                            RankedTensorType lhs, RankedTensorType rhs,
                            bool transposeA, bool transposeB) {
  std::string prefix = ("'" + opName + "' op ").str();
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOptionalError(loc, prefix, "operands must have rank >= 2, got ", lhs,
                             " and ", rhs);
  int64_t lr = lhs.getRank(), rr = rhs.getRank();
  if (rr != 2 && rr != lr)
    return emitOptionalError(
        loc, prefix, "rhs must be a matrix or have the same rank as lhs (",
        lhs, "), got ", rhs);
  for (int64_t i = 0; i < rr - 2; ++i)
    if (lhs.getDimSize(i) != rhs.getDimSize(i))
      return emitOptionalError(loc, prefix, "batch dimension ", i, " differs: ", lhs,
                               " vs ", rhs);
  int64_t m = lhs.getDimSize(lr - (transposeA ? 1 : 2));
  int64_t ka = lhs.getDimSize(lr - (transposeA ? 2 : 1));
  int64_t kb = rhs.getDimSize(rr - (transposeB ? 1 : 2));
  int64_t n = rhs.getDimSize(rr - (transposeB ? 2 : 1));
  if (ka != kb && !ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb))
    return emitOptionalError(loc, prefix,
                             "contraction dimensions differ: lhs ", lhs,
                             (transposeA ? " (transposed)" : ""), " has K = ",
                             ka, " but rhs ", rhs,
                             (transposeB ? " (transposed)" : ""), " has K = ",
                             kb);
  SmallVector<int64_t> shape(lhs.getShape().take_front(lr - 2));
  shape.push_back(m);
  shape.push_back(n);
  return shape;
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(loc, "'lpc.matmul' op operand element types "
                                  "differ (",
                             lhs.getElementType(), " vs ",
                             rhs.getElementType(), "); insert lpc.cast");
  auto shape = inferMatmulShape(loc, MatmulOp::getOperationName(), lhs, rhs, adaptor.getTransposeA(),
                                adaptor.getTransposeB());
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// The shape rules shared by lpc.attention and lpc.attention_grad: query
/// [L..., Sq, D], key [L..., Skv, D], value [L..., Skv, Dv], `result`
/// [L..., Sq, Dv] of query's type, lse [L..., Sq], mask [Sq, Skv].
static LogicalResult verifyAttention(Operation *op, RankedTensorType q,
                                     RankedTensorType k, RankedTensorType v,
                                     RankedTensorType result, StringRef resultName,
                                     RankedTensorType lse, Value mask,
                                     std::optional<APFloat> scale) {
  auto err = [&]() { return op->emitOpError(); };
  if (q.getRank() < 2)
    return err() << "query must have rank >= 2 ([batch..., Sq, D]), got "
                 << q;
  if (k.getRank() != q.getRank() || v.getRank() != q.getRank())
    return err() << "query, key and value must have the same rank, got " << q
                 << ", " << k << ", " << v;
  Type elt = q.getElementType();
  if (k.getElementType() != elt || v.getElementType() != elt)
    return err() << "query, key and value must have the same element type, "
                    "got "
                 << q << ", " << k << ", " << v << "; insert lpc.cast";
  if (isa<Float8E4M3FNType, Float8E5M2Type>(elt))
    return err() << "FP8 attention is not supported (" << elt
                 << "): run it in bf16, f16 or f32";
  int64_t r = q.getRank();
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  if (qs.drop_back(2) != ks.drop_back(2) || qs.drop_back(2) != vs.drop_back(2))
    return err() << "query, key and value must have the same leading "
                    "(batch) dims, got "
                 << q << ", " << k << ", " << v;
  if (qs[r - 1] != ks[r - 1])
    return err() << "query and key must have the same last dim (D), got " << q
                 << " and " << k;
  if (ks[r - 2] != vs[r - 2])
    return err() << "key and value must have the same number of keys (dim "
                 << r - 2 << "), got " << k << " and " << v;
  SmallVector<int64_t> want(qs.begin(), qs.end());
  want.back() = vs[r - 1];
  if (result.getShape() != ArrayRef<int64_t>(want) ||
      result.getElementType() != elt)
    return err() << resultName << " must be "
                 << RankedTensorType::get(want, elt) << " ([batch..., Sq, Dv] "
                 << "of query's type), got " << result;
  if (lse.getShape() != qs.drop_back())
    return err() << "lse must be "
                 << RankedTensorType::get(qs.drop_back(), lse.getElementType())
                 << " ([batch..., Sq]), got " << lse;
  if (mask) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (m.getShape() != ArrayRef<int64_t>{qs[r - 2], ks[r - 2]})
      return err() << "mask must be [Sq, Skv] = [" << qs[r - 2] << ", "
                   << ks[r - 2] << "] (shared by every batch and head), got "
                   << m;
  }
  if (scale && !scale->isFinite())
    return err() << "scale must be finite";
  return success();
}

static double attentionScale(std::optional<APFloat> scale,
                             RankedTensorType q) {
  if (scale)
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(q.getShape().back()));
}

LogicalResult AttentionOp::verify() {
  return verifyAttention(*this, getQuery().getType(), getKey().getType(),
                         getValue().getType(), getResult().getType(),
                         "result", getLse().getType(), getMask(), getScale());
}
double AttentionOp::getScaleValue() {
  return attentionScale(getScale(), getQuery().getType());
}

LogicalResult AttentionGradOp::verify() {
  if (getGrad().getType() != getResult().getType())
    return emitOpError() << "grad must have the type of result, got "
                         << getGrad().getType() << " and "
                         << getResult().getType();
  return verifyAttention(*this, getQuery().getType(), getKey().getType(),
                         getValue().getType(), getResult().getType(),
                         "result", getLse().getType(), getMask(), getScale());
}
double AttentionGradOp::getScaleValue() {
  return attentionScale(getScale(), getQuery().getType());
}

LogicalResult ScaledMatmulOp::verify() {
  Type a = getLhs().getType().getElementType();
  Type b = getRhs().getType().getElementType();
  if (isa<Float8E5M2Type>(a) && isa<Float8E5M2Type>(b))
    return emitOpError("E5M2 x E5M2 is not supported (FP8 tensor cores and "
                       "cuBLASLt reject it); quantize one operand to E4M3");
  if (!getAccType().isF32())
    return emitOpError() << "accumulation type must be f32, got "
                         << getAccType();
  auto shape = inferMatmulShape(getLoc(), getOperationName(), getLhs().getType(),
                                getRhs().getType(), getTransposeA(),
                                getTransposeB());
  if (failed(shape))
    return failure();
  RankedTensorType result = getResult().getType();
  if (result.getShape() != ArrayRef<int64_t>(*shape))
    return emitOpError() << "result shape "
                         << typeStr(result) << " does not match the product "
                         << "shape " << RankedTensorType::get(*shape, result.getElementType());
  if (Value bias = getBias()) {
    auto bt = cast<RankedTensorType>(bias.getType());
    if (bt.getElementType() != result.getElementType())
      return emitOpError() << "bias element type " << bt.getElementType()
                           << " differs from the result's "
                           << result.getElementType();
    if (bt.getRank() != 1 || bt.getDimSize(0) != result.getShape().back())
      return emitOpError() << "bias must be rank 1 with the result's last "
                              "dimension ("
                           << result.getShape().back() << "), got " << bt;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult BiasAddOp::verify() {
  RankedTensorType in = getInput().getType(), bias = getBias().getType();
  if (in.getRank() < 1)
    return emitOpError() << "input must have rank >= 1, got " << in;
  if (bias.getRank() != 1 || bias.getDimSize(0) != in.getShape().back())
    return emitOpError() << "bias must be rank 1 with the input's last "
                            "dimension ("
                         << in.getShape().back() << "), got " << bias;
  if (bias.getElementType() != in.getElementType())
    return emitOpError() << "bias element type " << bias.getElementType()
                         << " differs from input element type "
                         << in.getElementType() << "; insert lpc.cast";
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

static LogicalResult verifyNormAffine(Operation *op, RankedTensorType in,
                                      Value affine, StringRef what) {
  auto t = cast<RankedTensorType>(affine.getType());
  if (in.getRank() < 1)
    return op->emitOpError() << "input must have rank >= 1, got " << in;
  if (t.getRank() != 1 || t.getDimSize(0) != in.getShape().back())
    return op->emitOpError() << what << " must be rank 1 with the input's "
                             << "last dimension (" << in.getShape().back()
                             << "), got " << t;
  if (t.getElementType() != in.getElementType())
    return op->emitOpError() << what << " element type " << t.getElementType()
                             << " differs from input element type "
                             << in.getElementType() << "; insert lpc.cast";
  return success();
}

static LogicalResult verifyEpsilon(Operation *op, double eps) {
  if (!(eps > 0.0))
    return op->emitOpError() << "epsilon must be positive, got " << eps;
  return success();
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyNormAffine(*this, getInput().getType(), getGamma(),
                              "gamma")) ||
      failed(verifyNormAffine(*this, getInput().getType(), getBeta(), "beta")))
    return failure();
  return verifyEpsilon(*this, getEpsilon().convertToDouble());
}

LogicalResult RmsNormOp::verify() {
  if (failed(verifyNormAffine(*this, getInput().getType(), getGamma(),
                              "gamma")))
    return failure();
  return verifyEpsilon(*this, getEpsilon().convertToDouble());
}

static LogicalResult verifyAxis(Operation *op, int64_t axis,
                                RankedTensorType type) {
  if (!normalizeAxis(axis, type.getRank()))
    return op->emitOpError() << "axis " << axis << " is out of range for "
                             << type << " (valid: " << -type.getRank()
                             << " to " << type.getRank() - 1 << ")";
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput().getType());
}
LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput().getType());
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static LogicalResult inferReduce(StringRef opName, std::optional<Location> loc,
                                 Type inputType, ArrayRef<int64_t> axes,
                                 bool keepdims, SmallVectorImpl<Type> &results) {
  auto in = cast<RankedTensorType>(inputType);
  if (axes.empty())
    return emitOptionalError(loc, "'", opName,
                             "' op needs at least one axis to reduce");
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t axis : axes) {
    auto norm = normalizeAxis(axis, in.getRank());
    if (!norm)
      return emitOptionalError(loc, "'", opName, "' op axis ", axis,
                               " is out of range for ", in);
    if (!seen.insert(*norm).second)
      return emitOptionalError(loc, "'", opName, "' op axis ", axis,
                               " is repeated");
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    if (!seen.contains(i))
      shape.push_back(in.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

#define LPC_REDUCE_INFER(OP)                                                   \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &results) {         \
    return inferReduce(OP::getOperationName(), loc,                            \
                       adaptor.getInput().getType(), adaptor.getAxes(),        \
                       adaptor.getKeepdims(), results);                        \
  }
LPC_REDUCE_INFER(ReduceSumOp)
LPC_REDUCE_INFER(ReduceMeanOp)
LPC_REDUCE_INFER(ReduceMaxOp)
#undef LPC_REDUCE_INFER

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  RankedTensorType in = getInput().getType(), out = getResult().getType();
  ArrayRef<int64_t> dims = getDims();
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "element type changes from "
                         << in.getElementType() << " to "
                         << out.getElementType();
  if ((int64_t)dims.size() != in.getRank())
    return emitOpError() << "needs one entry in 'dims' per operand dimension ("
                         << in.getRank() << "), got " << dims.size();
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= out.getRank())
      return emitOpError() << "dims[" << i << "] = " << d
                           << " is out of range for result " << out;
    if (i > 0 && d <= dims[i - 1])
      return emitOpError("'dims' must be strictly increasing");
    int64_t src = in.getDimSize(i), dst = out.getDimSize(d);
    if (src != 1 && src != dst)
      return emitOpError() << "operand dimension " << i << " (size " << src
                           << ") must be 1 or equal result dimension " << d
                           << " (size " << dst << ")";
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = getInput().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "element type changes from "
                         << in.getElementType() << " to "
                         << out.getElementType() << "; use lpc.cast";
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return emitOpError("needs static shapes");
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "element count changes: " << in << " has "
                         << in.getNumElements() << " elements, " << out
                         << " has " << out.getNumElements();
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if ((int64_t)perm.size() != in.getRank())
    return emitOptionalError(loc, "'lpc.transpose' op permutation has ",
                             perm.size(), " entries but the input ", in,
                             " has rank ", in.getRank());
  SmallVector<bool> seen(in.getRank(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOptionalError(loc, "'lpc.transpose' op [", perm,
                               "] is not a permutation of 0..",
                               in.getRank() - 1);
    seen[p] = true;
    shape.push_back(in.getDimSize(p));
  }
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

static FailureOr<SmallVector<int64_t>>
inferSliceShape(std::optional<Location> loc, StringRef opName,
                RankedTensorType in, ArrayRef<int64_t> start,
                ArrayRef<int64_t> limit, ArrayRef<int64_t> step) {
  int64_t rank = in.getRank();
  if ((int64_t)start.size() != rank || (int64_t)limit.size() != rank ||
      (int64_t)step.size() != rank)
    return emitOptionalError(loc, "'", opName,
                             "' op start, limit and step need ", rank,
                             " entries each (the rank of ", in, ")");
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t size = in.getDimSize(i);
    if (step[i] < 1)
      return emitOptionalError(loc, "'", opName, "' op step[", i,
                               "] must be >= 1, got ", step[i]);
    if (start[i] < 0 || start[i] > limit[i] || limit[i] > size)
      return emitOptionalError(loc, "'", opName, "' op dimension ", i,
                               ": need 0 <= start <= limit <= ", size,
                               ", got [", start[i], ", ", limit[i], ")");
    // ceil((limit - start) / step), without overflow for any step.
    int64_t n = limit[i] - start[i];
    shape.push_back(n == 0 ? 0 : (n - 1) / step[i] + 1);
  }
  return shape;
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  auto shape = inferSliceShape(loc, "lpc.slice", in, adaptor.getStart(),
                               adaptor.getLimit(), adaptor.getStep());
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, in.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(loc, "'lpc.concat' op needs at least one input");
  auto first = cast<RankedTensorType>(inputs.front().getType());
  auto axis = normalizeAxis(adaptor.getAxis(), first.getRank());
  if (!axis)
    return emitOptionalError(loc, "'lpc.concat' op axis ",
                             (int64_t)adaptor.getAxis(),
                             " is out of range for ", first);
  SmallVector<int64_t> shape(first.getShape());
  for (auto [i, v] : llvm::enumerate(inputs.drop_front())) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getElementType() != first.getElementType() ||
        t.getRank() != first.getRank())
      return emitOptionalError(loc, "'lpc.concat' op input ", i + 1, " (", t,
                               ") differs in rank or element type from input "
                               "0 (",
                               first, ")");
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (d == *axis)
        continue;
      if (t.getDimSize(d) != first.getDimSize(d))
        return emitOptionalError(loc, "'lpc.concat' op input ", i + 1, " (", t,
                                 ") differs from input 0 (", first,
                                 ") in dimension ", d,
                                 ", which is not the concatenation axis");
    }
    if (ShapedType::isDynamic(shape[*axis]) ||
        ShapedType::isDynamic(t.getDimSize(*axis)))
      shape[*axis] = ShapedType::kDynamic;
    else
      shape[*axis] += t.getDimSize(*axis);
  }
  results.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto table = cast<RankedTensorType>(adaptor.getTable().getType());
  auto ids = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (table.getRank() != 2)
    return emitOptionalError(loc, "'lpc.embedding' op table must be "
                                  "[vocab, dim], got ",
                             table);
  SmallVector<int64_t> shape(ids.getShape());
  shape.push_back(table.getDimSize(1));
  results.push_back(RankedTensorType::get(shape, table.getElementType()));
  return success();
}

LogicalResult CausalMaskOp::verify() {
  RankedTensorType t = getInput().getType();
  if (t.getRank() < 2)
    return emitOpError() << "needs rank >= 2 ([..., queries, keys]), got " << t;
  int64_t q = t.getDimSize(t.getRank() - 2), k = t.getShape().back();
  if (q > k)
    return emitOpError() << "needs queries <= keys in the last two "
                            "dimensions, got "
                         << q << " > " << k;
  return success();
}

LogicalResult WhereOp::verify() {
  if (getCond().getType().getShape() != getOnTrue().getType().getShape())
    return emitOpError() << "condition shape " << getCond().getType()
                         << " differs from value shape "
                         << getOnTrue().getType();
  return success();
}

LogicalResult CompareOp::verify() {
  if (getResult().getType().getShape() != getLhs().getType().getShape())
    return emitOpError() << "result shape " << getResult().getType()
                         << " differs from operand shape "
                         << getLhs().getType();
  return success();
}

LogicalResult DropoutOp::verify() {
  double rate = getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return emitOpError() << "rate must be in [0, 1), got " << rate;
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// Labels shape [...] against logits [..., C].
static LogicalResult verifyLabels(Operation *op, RankedTensorType logits,
                                  RankedTensorType labels) {
  if (logits.getRank() < 1 || labels.getRank() != logits.getRank() - 1 ||
      labels.getShape() != logits.getShape().drop_back())
    return op->emitOpError() << "labels must have the logits' shape without "
                                "the class dimension: logits "
                             << logits << ", labels " << labels;
  return success();
}

static LogicalResult verifyIgnoreIndex(Operation *op, IntegerAttr attr,
                                       RankedTensorType logits) {
  if (!attr)
    return success();
  int64_t ignore = attr.getValue().getSExtValue();
  if (ignore >= 0 && ignore < logits.getShape().back())
    return op->emitOpError()
           << "ignore_index " << ignore << " is a valid class id (0.."
           << logits.getShape().back() - 1
           << "); use a negative value such as -100";
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::verify() {
  RankedTensorType logits = getLogits().getType();
  if (failed(verifyLabels(*this, logits, getLabels().getType())))
    return failure();
  return verifyIgnoreIndex(*this, getIgnoreIndexAttr(), logits);
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxGradOp::verify() {
  return verifyAxis(*this, getAxis(), getGrad().getType());
}
LogicalResult LogSoftmaxGradOp::verify() {
  return verifyAxis(*this, getAxis(), getGrad().getType());
}

LogicalResult SoftmaxCrossEntropyGradOp::verify() {
  RankedTensorType logits = getLogits().getType();
  if (failed(verifyLabels(*this, logits, getLabels().getType())))
    return failure();
  return verifyIgnoreIndex(*this, getIgnoreIndexAttr(), logits);
}

LogicalResult LayerNormGradOp::verify() {
  if (failed(verifyNormAffine(*this, getInput().getType(), getGamma(),
                              "gamma")))
    return failure();
  return verifyEpsilon(*this, getEpsilon().convertToDouble());
}

LogicalResult RmsNormGradOp::verify() {
  if (failed(verifyNormAffine(*this, getInput().getType(), getGamma(),
                              "gamma")))
    return failure();
  return verifyEpsilon(*this, getEpsilon().convertToDouble());
}

LogicalResult ReduceMaxGradOp::verify() {
  SmallVector<Type> inferred;
  if (failed(inferReduce(getOperationName(), getLoc(), getInput().getType(),
                         getAxes(), getKeepdims(), inferred)))
    return failure();
  if (inferred.front() != getOutput().getType())
    return emitOpError() << "output " << getOutput().getType()
                         << " is not the reduction of " << getInput().getType()
                         << " over the axes (" << inferred.front() << ")";
  return success();
}

/// lpc.embedding's and lpc.embedding_grad's padding_idx: a row of the table.
static LogicalResult verifyPaddingIdx(Operation *op,
                                      std::optional<uint64_t> pad,
                                      int64_t rows) {
  if (pad && !ShapedType::isDynamic(rows) && *pad >= uint64_t(rows))
    return op->emitOpError() << "padding_idx " << *pad
                             << " is not a row of the " << rows
                             << "-row table";
  return success();
}

LogicalResult EmbeddingGradOp::verify() {
  RankedTensorType grad = getGrad().getType(), ids = getIndices().getType(),
                   out = getResult().getType();
  SmallVector<int64_t> want(ids.getShape());
  if (out.getRank() != 2)
    return emitOpError() << "result must be the [vocab, dim] table, got "
                         << out;
  want.push_back(out.getDimSize(1));
  if (grad.getShape() != ArrayRef<int64_t>(want) ||
      grad.getElementType() != out.getElementType())
    return emitOpError() << "grad " << grad
                         << " must be indices.shape x [dim] of " << out;
  return verifyPaddingIdx(*this, getPaddingIdx(), out.getDimSize(0));
}

LogicalResult EmbeddingOp::verify() {
  return verifyPaddingIdx(*this, getPaddingIdx(),
                          getTable().getType().getDimSize(0));
}

LogicalResult SliceGradOp::verify() {
  RankedTensorType grad = getGrad().getType(), out = getResult().getType();
  if (grad.getElementType() != out.getElementType())
    return emitOpError() << "element type changes from "
                         << grad.getElementType() << " to "
                         << out.getElementType();
  auto shape = inferSliceShape(getLoc(), "lpc.slice_grad", out, getStart(),
                               getLimit(), getStep());
  if (failed(shape))
    return failure();
  if (grad.getShape() != ArrayRef<int64_t>(*shape))
    return emitOpError() << "grad " << grad << " does not match the slice of "
                         << out << " (" << RankedTensorType::get(*shape, out.getElementType()) << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Precision ops
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  RankedTensorType in = getInput().getType(), out = getResult().getType();
  if (in.getShape() != out.getShape())
    return emitOpError() << "changes the shape from " << in << " to " << out
                         << "; a cast only changes the element type";
  if (getSaturate() && !isFP8(out.getElementType()))
    return emitOpError() << "'saturate' applies only to fp8 results, not "
                         << out.getElementType();
  return success();
}

LogicalResult ConvertOp::verify() {
  RankedTensorType in = getInput().getType(), out = getResult().getType();
  if (in.getShape() != out.getShape())
    return emitOpError() << "changes the shape from " << in << " to " << out
                         << "; a conversion only changes the element type";
  if (in.getElementType() == out.getElementType())
    return emitOpError() << "converts " << in.getElementType()
                         << " to itself";
  return success();
}

LogicalResult QuantizeOp::verify() {
  if (getInput().getType().getShape() != getResult().getType().getShape())
    return emitOpError() << "changes the shape from " << getInput().getType()
                         << " to " << getResult().getType();
  return success();
}

LogicalResult FP8StatsOp::verify() {
  Precision f = getFormat();
  if (f != Precision::fp8_e4m3 && f != Precision::fp8_e5m2)
    return emitOpError() << "format must be fp8_e4m3 or fp8_e5m2, got "
                         << stringifyPrecision(f);
  return success();
}

LogicalResult DequantizeOp::verify() {
  if (getInput().getType().getShape() != getResult().getType().getShape())
    return emitOpError() << "changes the shape from " << getInput().getType()
                         << " to " << getResult().getType();
  return success();
}

LogicalResult AllFiniteOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location>, Adaptor,
                                            SmallVectorImpl<Type> &results) {
  results.push_back(RankedTensorType::get({}, IntegerType::get(ctx, 1)));
  return success();
}

LogicalResult AllFiniteOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  return success();
}

LogicalResult FP8ComputeScaleOp::verify() {
  Precision f = getFormat();
  if (f != Precision::fp8_e4m3 && f != Precision::fp8_e5m2)
    return emitOpError() << "format must be fp8_e4m3 or fp8_e5m2, got "
                         << stringifyPrecision(f);
  if (static_cast<int64_t>(getMargin()) < 0)
    return emitOpError("margin must be >= 0");
  if (static_cast<int64_t>(getInterval()) < 1)
    return emitOpError("interval must be >= 1");
  return success();
}

LogicalResult LossScaleUpdateOp::verify() {
  if (!(getGrowthFactor().convertToDouble() > 1.0))
    return emitOpError("growth_factor must be > 1");
  double b = getBackoffFactor().convertToDouble();
  if (!(b > 0.0 && b < 1.0))
    return emitOpError("backoff_factor must be in (0, 1)");
  if (static_cast<int64_t>(getGrowthInterval()) < 1)
    return emitOpError("growth_interval must be >= 1");
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

static LogicalResult verifyUnitInterval(Operation *op, StringRef name,
                                        double v, bool closedAtOne) {
  if (!(v >= 0.0 && (closedAtOne ? v <= 1.0 : v < 1.0)))
    return op->emitOpError() << name << " must be in [0, 1"
                             << (closedAtOne ? "]" : ")") << ", got " << v;
  return success();
}

LogicalResult SgdOp::verify() {
  if (failed(verifyUnitInterval(*this, "momentum",
                                getMomentum().convertToDouble(), true)) ||
      failed(verifyUnitInterval(*this, "dampening",
                                getDampening().convertToDouble(), true)))
    return failure();
  if (!(getWeightDecay().convertToDouble() >= 0.0))
    return emitOpError("weight_decay must be >= 0");
  if (getNesterov() && (getMomentum().convertToDouble() <= 0.0 ||
                        getDampening().convertToDouble() != 0.0))
    return emitOpError("nesterov momentum needs momentum > 0 and zero "
                       "dampening");
  return success();
}

LogicalResult AdamWOp::verify() {
  if (failed(verifyUnitInterval(*this, "beta1", getBeta1().convertToDouble(),
                                false)) ||
      failed(verifyUnitInterval(*this, "beta2", getBeta2().convertToDouble(),
                                false)))
    return failure();
  if (!(getEps().convertToDouble() > 0.0))
    return emitOpError("eps must be positive");
  if (!(getWeightDecay().convertToDouble() >= 0.0))
    return emitOpError("weight_decay must be >= 0");
  return success();
}

LogicalResult LrScheduleOp::verify() {
  double base = getBaseLr().convertToDouble(),
         minLr = getMinLr().convertToDouble();
  if (!(base >= 0.0) || !(minLr >= 0.0) || minLr > base)
    return emitOpError() << "needs 0 <= min_lr <= base_lr, got min_lr = "
                         << minLr << ", base_lr = " << base;
  // I64Attr getters return uint64_t: compare as signed.
  int64_t warmup = getWarmupSteps(), total = getTotalSteps();
  if (warmup < 0 || total < 0)
    return emitOpError("warmup_steps and total_steps must be >= 0");
  if (getKind() != LrScheduleKind::constant && total <= warmup)
    return emitOpError() << "'" << stringifyLrScheduleKind(getKind())
                         << "' decay needs total_steps > warmup_steps, got "
                         << total << " <= " << warmup;
  return success();
}

LogicalResult ClipByGlobalNormOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location>, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  for (Value g : adaptor.getGrads())
    results.push_back(g.getType());
  results.push_back(RankedTensorType::get({}, Float32Type::get(ctx)));
  return success();
}

LogicalResult ClipByGlobalNormOp::verify() {
  if (getGrads().empty())
    return emitOpError("needs at least one gradient");
  if (!(getMaxNorm().convertToDouble() > 0.0))
    return emitOpError() << "max_norm must be positive, got "
                         << getMaxNorm().convertToDouble();
  return success();
}

/// The reducing collectives' wire rule: a narrow format needs kind mean
/// (the runtime sums the narrow values in f32 and divides by the ranks).
static LogicalResult verifyWireKind(Operation *op, Precision wire,
                                    AllReduceKind kind) {
  if (wire != Precision::fp32 && kind != AllReduceKind::mean)
    return op->emitOpError()
           << "comm_precision " << stringifyPrecision(wire) << " needs "
           << "kind mean (" << stringifyAllReduceKind(kind)
           << " communicates in fp32 only)";
  return success();
}

/// A bf16, f16 (or, for lpc.all_gather, FP8) collective, the GPU's
/// native-wire form, names its own type as the wire; the result has the
/// input's element type.
static LogicalResult verifyWireType(Operation *op, Type in, Type out,
                                    Precision wire) {
  Type e = cast<RankedTensorType>(in).getElementType();
  if (cast<RankedTensorType>(out).getElementType() != e)
    return op->emitOpError() << "the result " << out
                             << " must have the input's element type " << e;
  if (e.isF32())
    return success();
  Precision own = *getPrecisionFor(e); // a float type (the op's constraint)
  if (wire != own)
    return op->emitOpError()
           << "a " << e << " input travels as itself: comm_precision must be "
           << stringifyPrecision(own) << ", not " << stringifyPrecision(wire);
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyWireKind(*this, getCommPrecision(), getKind())))
    return failure();
  if (getKind() != AllReduceKind::any_nonfinite &&
      failed(verifyWireType(*this, getInput().getType(), getResult().getType(),
                            getCommPrecision())))
    return failure();
  if (getKind() == AllReduceKind::any_nonfinite &&
      !getInput().getType().getElementType().isF32())
    return emitOpError() << "any_nonfinite tests an f32 input, got "
                         << getInput().getType();
  auto in = getInput().getType();
  auto out = getResult().getType();
  if (getKind() == AllReduceKind::any_nonfinite) {
    if (out.getRank() != 0 || !out.getElementType().isInteger(1))
      return emitOpError() << "any_nonfinite gives a tensor<i1>, got " << out;
    return success();
  }
  if (out != in)
    return emitOpError() << stringifyAllReduceKind(getKind())
                         << " gives the input's type " << in << ", got " << out;
  return success();
}

/// The shape rule both sharding collectives share: `whole` is `ranks` times
/// `part` along dimension 0, every other dimension equal. Written with a
/// division so that a huge `ranks` cannot overflow.
static LogicalResult verifyRankBlocks(Operation *op, RankedTensorType whole,
                                      RankedTensorType part, int64_t ranks,
                                      StringRef wholeName,
                                      StringRef partName) {
  if (whole.getRank() == 0)
    return op->emitOpError() << "needs a " << wholeName
                             << " of rank >= 1 (its dimension 0 is split "
                                "between the ranks), got "
                             << whole;
  if (part.getRank() != whole.getRank())
    return op->emitOpError() << "the " << partName << " " << part
                             << " must have the rank of the " << wholeName
                             << " " << whole;
  for (int64_t d = 1; d < whole.getRank(); ++d)
    if (whole.getDimSize(d) != part.getDimSize(d))
      return op->emitOpError() << "the " << partName << " " << part
                               << " must match the " << wholeName << " "
                               << whole << " in dimension " << d;
  int64_t w = whole.getDimSize(0), p = part.getDimSize(0);
  if (ShapedType::isDynamic(w) || ShapedType::isDynamic(p) || w % ranks != 0 ||
      w / ranks != p)
    return op->emitOpError()
           << "dimension 0 of the " << wholeName << " (" << w << ") must be "
           << ranks << " (ranks) times that of the " << partName << " (" << p
           << ")";
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  if (getKind() == AllReduceKind::any_nonfinite)
    return emitOpError() << "kind must be sum, mean or max (any_nonfinite is "
                            "lpc.all_reduce's)";
  if (failed(verifyWireKind(*this, getCommPrecision(), getKind())) ||
      failed(verifyWireType(*this, getInput().getType(), getResult().getType(),
                            getCommPrecision())))
    return failure();
  return verifyRankBlocks(*this, getInput().getType(), getResult().getType(),
                          getRanks(), "input", "result");
}

LogicalResult AllGatherOp::verify() {
  if (failed(verifyWireType(*this, getInput().getType(), getResult().getType(),
                            getCommPrecision())))
    return failure();
  return verifyRankBlocks(*this, getResult().getType(), getInput().getType(),
                          getRanks(), "result", "input");
}

LogicalResult AllToAllOp::verify() {
  auto t = getInput().getType();
  if (t.getRank() == 0)
    return emitOpError() << "needs an input of rank >= 1 (its dimension 0 "
                            "is split between the ranks), got "
                         << t;
  int64_t d = t.getDimSize(0);
  if (ShapedType::isDynamic(d) || d % getRanks() != 0)
    return emitOpError() << "dimension 0 of the input (" << d
                         << ") must be a multiple of " << getRanks()
                         << " (ranks)";
  return success();
}

LogicalResult WireScaleOp::verify() {
  if (getFormat() != Precision::fp8_e4m3 && getFormat() != Precision::fp8_e5m2)
    return emitOpError() << "format must be fp8_e4m3 or fp8_e5m2 (the "
                            "other wire formats need no scale), got "
                         << stringifyPrecision(getFormat());
  return success();
}

LogicalResult ShardOp::verify() {
  return verifyRankBlocks(*this, getInput().getType(), getResult().getType(),
                          getRanks(), "input", "result");
}

#define GET_OP_CLASSES
#include "lpc/Dialect/LpcOps.cpp.inc"
