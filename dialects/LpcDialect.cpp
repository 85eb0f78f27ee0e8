//===- LpcDialect.cpp - lpc dialect registration and attributes -----------===//

#include "lpc/Dialect/LpcDialect.h"
#include "lpc/Dialect/LpcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::lpc;

#include "lpc/Dialect/LpcDialect.cpp.inc"
#include "lpc/Dialect/LpcEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "lpc/Dialect/LpcAttrs.cpp.inc"

void LpcDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "lpc/Dialect/LpcOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "lpc/Dialect/LpcAttrs.cpp.inc"
      >();
  attachAttentionBufferization(getContext());
  attachCollectiveBufferization(getContext());
  attachGroupedMatmulBufferization(getContext());
}

Operation *LpcDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

/// Checks the user-written precision pin `lpc.precision = #lpc.precision<..>`.
/// Discardable lpc attributes: the user's precision pin and the records of
/// the precision passes.
LogicalResult LpcDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  PrecisionClass cls = getPrecisionClass(op);
  bool compute = cls == PrecisionClass::AlwaysLow ||
                 cls == PrecisionClass::Follow ||
                 cls == PrecisionClass::KeepFP32;
  if (name == getPrecisionPinAttrName() || name == getAssignedAttrName()) {
    if (!isa<PrecisionAttr>(value))
      return op->emitError() << "'" << name
                             << "' must be a #lpc.precision<...> attribute, "
                                "got "
                             << value;
    if (cls == PrecisionClass::Fixed)
      return op->emitError() << "'" << name << "' cannot pin '"
                             << op->getName()
                             << "': its precision is fixed by its types";
    if (!compute)
      return op->emitError() << "'" << name
                             << "' applies only to lpc compute ops, not '"
                             << op->getName() << "'";
    return success();
  }
  if (name == getReasonAttrName()) {
    if (!isa<StringAttr>(value) || !(compute || isa<ScaledMatmulOp>(op)))
      return op->emitError() << "'" << name
                             << "' must be a string on an lpc compute op or "
                                "lpc.scaled_matmul";
    return success();
  }
  if (name == getFP8OperandsAttrName()) {
    auto arr = dyn_cast<ArrayAttr>(value);
    bool ok = arr && arr.size() == 2 && isa<MatmulOp>(op);
    if (ok)
      for (Attribute a : arr) {
        auto p = dyn_cast<PrecisionAttr>(a);
        ok &= p && (p.getValue() == Precision::fp8_e4m3 ||
                    p.getValue() == Precision::fp8_e5m2);
      }
    if (ok && cast<PrecisionAttr>(arr[0]).getValue() == Precision::fp8_e5m2 &&
        cast<PrecisionAttr>(arr[1]).getValue() == Precision::fp8_e5m2)
      return op->emitError() << "'" << name
                             << "': E5M2 x E5M2 is not a valid FP8 GEMM";
    if (!ok)
      return op->emitError()
             << "'" << name
             << "' must be [lhs, rhs] fp8 precisions on an lpc.matmul";
    return success();
  }
  if (name == "lpc.profile_labels") {
    // Written by lpc-profile-marks on the module: one label per mark id.
    auto arr = dyn_cast<ArrayAttr>(value);
    if (!isa<ModuleOp>(op) || !arr ||
        !llvm::all_of(arr, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError() << "'" << name
                             << "' must be an array of strings on a module";
    return success();
  }
  if (name.starts_with("lpc.parallel_")) {
    // Written by lpc-outline-parallel-loops on the functions it outlines
    // (_noalias and _params by lpc-outline-serial-loops too).
    StringRef want = name == "lpc.parallel_body"       ? "a unit"
                     : name == "lpc.parallel_noalias" ? "an i64 array"
                                                       : "an integer";
    bool ok = name == "lpc.parallel_body"      ? isa<UnitAttr>(value)
              : name == "lpc.parallel_noalias" ? isa<DenseI64ArrayAttr>(value)
              : name == "lpc.parallel_grain" || name == "lpc.parallel_params"
                  ? isa<IntegerAttr>(value)
                  : false;
    if (!isa<FunctionOpInterface>(op) || !ok)
      return op->emitError() << "'" << name << "' must be " << want
                             << " attribute on a function (lpc.parallel_body, "
                                "_grain, _params, _noalias)";
    return success();
  }
  if (name == "lpc.serial_body") {
    // Written by lpc-outline-serial-loops on the functions it outlines.
    if (!isa<UnitAttr>(value) || !isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << name
                             << "' must be a unit attribute on a function";
    return success();
  }
  if (name == "lpc.independent_columns") {
    // Written by the embedding gradient's lowering (lpc-parallel-scatter).
    if (!isa<UnitAttr>(value) || op->getName().getStringRef() != "scf.for")
      return op->emitError() << "'" << name
                             << "' must be a unit attribute on an scf.for";
    return success();
  }
  if (name == "lpc.bucket") {
    // Written by lpc-data-parallel on a gradient bucket's collective.
    auto index = dyn_cast<IntegerAttr>(value);
    if (!isa<AllReduceOp, ReduceScatterOp>(op) || !index || index.getInt() < 0)
      return op->emitError() << "'" << name
                             << "' must be an index >= 0 on an lpc.all_reduce "
                                "or lpc.reduce_scatter";
    return success();
  }
  return op->emitError() << "unknown lpc attribute '" << name
                         << "' (known: lpc.precision, lpc.assigned, "
                            "lpc.reason, lpc.fp8, lpc.profile_labels, "
                            "lpc.parallel_*, lpc.serial_body, "
                            "lpc.independent_columns, lpc.bucket)";
}

PrecisionClass mlir::lpc::getPrecisionClass(Operation *op) {
  if (op->hasTrait<OpTrait::AlwaysLowPrecision>())
    return PrecisionClass::AlwaysLow;
  if (op->hasTrait<OpTrait::KeepFP32Precision>())
    return PrecisionClass::KeepFP32;
  if (op->hasTrait<OpTrait::FollowPrecision>())
    return PrecisionClass::Follow;
  if (op->hasTrait<OpTrait::FixedPrecision>())
    return PrecisionClass::Fixed;
  return PrecisionClass::Unknown;
}

bool mlir::lpc::isBF16Relaxable(Operation *op) {
  return op->hasTrait<OpTrait::BF16RelaxablePrecision>();
}

StringRef mlir::lpc::stringifyPrecisionClass(PrecisionClass cls) {
  switch (cls) {
  case PrecisionClass::AlwaysLow:
    return "always-low";
  case PrecisionClass::Follow:
    return "follow";
  case PrecisionClass::KeepFP32:
    return "keep-fp32";
  case PrecisionClass::Fixed:
    return "fixed";
  case PrecisionClass::Unknown:
    return "unknown";
  }
  llvm_unreachable("unknown precision class");
}

Type mlir::lpc::getElementTypeFor(MLIRContext *ctx, Precision p) {
  Builder b(ctx);
  switch (p) {
  case Precision::fp32:
    return b.getF32Type();
  case Precision::fp16:
    return b.getF16Type();
  case Precision::bf16:
    return b.getBF16Type();
  case Precision::fp8_e4m3:
    return b.getType<Float8E4M3FNType>();
  case Precision::fp8_e5m2:
    return b.getType<Float8E5M2Type>();
  }
  llvm_unreachable("unknown precision");
}

std::optional<Precision> mlir::lpc::getPrecisionFor(Type t) {
  return llvm::TypeSwitch<Type, std::optional<Precision>>(t)
      .Case([](Float32Type) { return Precision::fp32; })
      .Case([](Float16Type) { return Precision::fp16; })
      .Case([](BFloat16Type) { return Precision::bf16; })
      .Case([](Float8E4M3FNType) { return Precision::fp8_e4m3; })
      .Case([](Float8E5M2Type) { return Precision::fp8_e5m2; })
      .Default([](Type) { return std::nullopt; });
}

bool mlir::lpc::isFP8(Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); }
