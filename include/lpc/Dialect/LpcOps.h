//===- LpcOps.h - lpc ops, attributes and enums -----------------*- C++ -*-===//
#ifndef LPC_DIALECT_LPCOPS_H
#define LPC_DIALECT_LPCOPS_H

#include "lpc/Dialect/LpcDialect.h"
#include "lpc/Dialect/LpcTraits.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>
#include <limits>

#include "lpc/Dialect/LpcEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "lpc/Dialect/LpcAttrs.h.inc"

#define GET_OP_CLASSES
#include "lpc/Dialect/LpcOps.h.inc"

namespace mlir {
namespace lpc {

/// The element type that stores values of precision `p`.
Type getElementTypeFor(MLIRContext *ctx, Precision p);
/// The precision whose storage type is `t`, if any.
std::optional<Precision> getPrecisionFor(Type t);
/// True for f8E4M3FN and f8E5M2.
bool isFP8(Type t);

/// Shape of `lhs x rhs` for lpc.matmul / lpc.scaled_matmul; emits a
/// diagnostic at `loc` (when given) and fails on a mismatch.
FailureOr<SmallVector<int64_t>>
inferMatmulShape(std::optional<Location> loc, StringRef opName,
                 RankedTensorType lhs, RankedTensorType rhs, bool transposeA,
                 bool transposeB);

/// Makes one-shot-bufferize turn lpc.attention / lpc.attention_grad into
/// calls of the fused attention entry points (dialects/
/// AttentionBufferization.cpp); the dialect does it when it loads.
void attachAttentionBufferization(MLIRContext *ctx);
/// The same for lpc.all_reduce: calls of runtime/comm's collectives
/// (dialects/CollectiveBufferization.cpp).
void attachCollectiveBufferization(MLIRContext *ctx);
/// The same for lpc.grouped_matmul / lpc.grouped_matmul_weight_grad: calls
/// of the CPU grouped GEMM (dialects/GroupedMatmulBufferization.cpp).
void attachGroupedMatmulBufferization(MLIRContext *ctx);

} // namespace lpc
} // namespace mlir

#endif // LPC_DIALECT_LPCOPS_H
