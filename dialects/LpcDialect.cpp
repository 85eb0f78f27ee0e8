//===- LpcDialect.cpp - lpc dialect registration and attributes -----------===//

#include "lpc/Dialect/LpcDialect.h"
#include "lpc/Dialect/LpcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
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
}

Operation *LpcDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

/// Checks the user-written precision pin `lpc.precision = #lpc.precision<..>`.
LogicalResult LpcDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() != getPrecisionPinAttrName())
    return op->emitError() << "unknown lpc attribute '"
                           << attr.getName().getValue()
                           << "'; the only discardable lpc attribute is '"
                           << getPrecisionPinAttrName() << "'";
  if (!isa<PrecisionAttr>(attr.getValue()))
    return op->emitError() << "'" << getPrecisionPinAttrName()
                           << "' must be a #lpc.precision<...> attribute, got "
                           << attr.getValue();
  switch (getPrecisionClass(op)) {
  case PrecisionClass::AlwaysLow:
  case PrecisionClass::Follow:
  case PrecisionClass::KeepFP32:
    return success();
  case PrecisionClass::Fixed:
    return op->emitError() << "'" << getPrecisionPinAttrName()
                           << "' cannot pin '" << op->getName()
                           << "': its precision is fixed by its types";
  case PrecisionClass::Unknown:
    return op->emitError() << "'" << getPrecisionPinAttrName()
                           << "' applies only to lpc compute ops, not '"
                           << op->getName() << "'";
  }
  llvm_unreachable("unknown precision class");
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
