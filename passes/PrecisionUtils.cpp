//===- PrecisionUtils.cpp - helpers shared by the precision passes --------===//

#include "lpc/Passes/PrecisionUtils.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::lpc;

StringRef mlir::lpc::tracedParamName(Value v) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (!fn)
        return {};
      auto state =
          fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kStateAttr);
      auto name =
          fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kNameAttr);
      if (state && name && state.getValue() == "param")
        return name.getValue();
      return {};
    }
    Operation *def = v.getDefiningOp();
    if (auto p = dyn_cast<ParamOp>(def))
      return p.getName();
    if (!isa<ReshapeOp, TransposeOp, BroadcastOp, CastOp>(def))
      return {};
    v = def->getOperand(0);
  }
}

llvm::DenseSet<Value> mlir::lpc::gradientValues(func::FuncOp fn) {
  llvm::DenseSet<Value> grads;
  fn.walk([&](Operation *op) {
    bool seeded = isa<GradSeedOp>(op) ||
                  llvm::any_of(op->getOperands(),
                               [&](Value v) { return grads.contains(v); });
    if (seeded)
      for (Value r : op->getResults())
        grads.insert(r);
  });
  return grads;
}

GemmRole mlir::lpc::roleOf(Operation *op) {
  if (auto attr = op->getAttrOfType<GemmRoleAttr>("role"))
    return attr.getValue();
  return GemmRole::fprop;
}

GemmDims mlir::lpc::gemmDims(MatmulOp op) {
  RankedTensorType lhs = op.getLhs().getType(), out = op.getType();
  int64_t r = lhs.getRank();
  GemmDims d;
  d.k = lhs.getDimSize(op.getTransposeA() ? r - 2 : r - 1);
  d.n = out.getShape().back();
  d.m = out.getNumElements() / d.n;
  return d;
}

FloatType mlir::lpc::floatElementType(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? dyn_cast<FloatType>(t.getElementType()) : FloatType();
}

FailureOr<BlockArgument> mlir::lpc::addStateArgument(func::FuncOp fn,
                                                     Type type,
                                                     DictionaryAttr attrs,
                                                     Location loc) {
  unsigned index = fn.getNumArguments();
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (fn.getArgAttr(i, kInputAttr)) {
      index = i;
      break;
    }
  if (failed(fn.insertArgument(index, type, attrs, loc)))
    return failure();
  return fn.getArgument(index);
}

LogicalResult mlir::lpc::addStateResult(func::FuncOp fn, Value value,
                                        DictionaryAttr attrs) {
  unsigned index = fn.getNumResults();
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    if (fn.getResultAttr(i, kMetricAttr)) {
      index = i;
      break;
    }
  if (failed(fn.insertResult(index, value.getType(), attrs)))
    return failure();
  fn.walk([&](func::ReturnOp ret) {
    SmallVector<Value> operands(ret.getOperands());
    operands.insert(operands.begin() + index, value);
    ret->setOperands(operands);
  });
  return success();
}

BlockArgument mlir::lpc::findStateArgument(func::FuncOp fn, StringRef state,
                                           StringRef name) {
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto s = fn.getArgAttrOfType<StringAttr>(i, kStateAttr);
    auto n = fn.getArgAttrOfType<StringAttr>(i, kNameAttr);
    if (s && s.getValue() == state &&
        (name.empty() || (n && n.getValue() == name)))
      return fn.getArgument(i);
  }
  return {};
}

LogicalResult mlir::lpc::writeReport(StringRef text, StringRef outputFile,
                                     StringRef passName) {
  if (outputFile == "-") {
    llvm::errs() << text;
    return success();
  }
  if (llvm::Error err = llvm::writeToOutput(
          outputFile, [&](llvm::raw_ostream &out) -> llvm::Error {
            out << text;
            return llvm::Error::success();
          })) {
    // The error text names the file; a module location would only say
    // <unknown> or dump the module.
    llvm::errs() << "error: " << passName << ": cannot write "
                 << llvm::toString(std::move(err)) << "\n";
    return failure();
  }
  return success();
}

std::string mlir::lpc::humanBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? llvm::formatv("{0} B", bytes).str()
                : llvm::formatv("{0:f2} {1}", v, units[u]).str();
}

std::string mlir::lpc::padRight(StringRef s, size_t width) {
  std::string out = s.str();
  if (out.size() < width)
    out.append(width - out.size(), ' ');
  return out;
}

LogicalResult mlir::lpc::addMetricResult(func::FuncOp fn, Value value,
                                         StringRef metric, StringRef name) {
  Builder b(fn.getContext());
  SmallVector<NamedAttribute> attrs{
      b.getNamedAttr(kMetricAttr, b.getStringAttr(metric))};
  if (!name.empty())
    attrs.push_back(b.getNamedAttr(kNameAttr, b.getStringAttr(name)));
  unsigned index = fn.getNumResults();
  if (failed(fn.insertResult(index, value.getType(),
                             b.getDictionaryAttr(attrs))))
    return failure();
  fn.walk([&](func::ReturnOp ret) { ret->insertOperands(index, value); });
  return success();
}
