//===- LpcTraits.h - precision-class traits of lpc ops ---------*- C++ -*-===//
//
// Each lpc op declares in ODS the precision class it belongs to. The
// precision passes ask `getPrecisionClass(op)` instead of keeping lists of op
// names.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_DIALECT_LPCTRAITS_H
#define LPC_DIALECT_LPCTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir {
namespace lpc {
namespace OpTrait {

template <typename ConcreteType>
class AlwaysLowPrecision
    : public ::mlir::OpTrait::TraitBase<ConcreteType, AlwaysLowPrecision> {};
template <typename ConcreteType>
class FollowPrecision
    : public ::mlir::OpTrait::TraitBase<ConcreteType, FollowPrecision> {};
template <typename ConcreteType>
class KeepFP32Precision
    : public ::mlir::OpTrait::TraitBase<ConcreteType, KeepFP32Precision> {};
template <typename ConcreteType>
class BF16RelaxablePrecision
    : public ::mlir::OpTrait::TraitBase<ConcreteType, BF16RelaxablePrecision> {
};
template <typename ConcreteType>
class FixedPrecision
    : public ::mlir::OpTrait::TraitBase<ConcreteType, FixedPrecision> {};

} // namespace OpTrait

/// The precision classes of DESIGN.md section 3 (TensorFlow's allow / infer+
/// clear / deny painter; TVM's ALWAYS / FOLLOW / NEVER).
enum class PrecisionClass {
  AlwaysLow, ///< matmul-like: low precision, FP32 accumulation
  Follow,    ///< follows the precision of its inputs
  KeepFP32,  ///< numerically sensitive: FP32
  Fixed,     ///< structure / precision / optimizer ops: as written
  Unknown,   ///< not an lpc op
};

/// The class an op declared in ODS; Unknown for ops of other dialects.
PrecisionClass getPrecisionClass(Operation *op);
/// True for KeepFP32 ops that a BF16 policy may relax (sum, mean).
bool isBF16Relaxable(Operation *op);
llvm::StringRef stringifyPrecisionClass(PrecisionClass cls);

} // namespace lpc
} // namespace mlir

#endif // LPC_DIALECT_LPCTRAITS_H
