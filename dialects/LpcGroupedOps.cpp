//===- LpcGroupedOps.cpp - verifiers of the grouped (MoE) GEMM ops --------===//
//
// lpc.grouped_matmul and lpc.grouped_matmul_weight_grad
// (include/lpc/Dialect/LpcGroupedOps.td): the shapes must agree; the
// messages print the types involved, as dialects/LpcOps.cpp's do.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::lpc;

/// Shapes of a grouped GEMM: `lhs` [R, K] and `groups` [R]; checks that
/// they agree and are static (the runtime's call takes them as they are).
static LogicalResult verifyGroupedRows(Operation *op, RankedTensorType lhs,
                                       RankedTensorType groups) {
  if (lhs.getRank() != 2)
    return op->emitOpError() << "lhs must be [rows, K], got " << lhs;
  if (groups.getRank() != 1 || groups.getDimSize(0) != lhs.getDimSize(0))
    return op->emitOpError() << "groups must be [" << lhs.getDimSize(0)
                             << "] (one group per row of lhs), got " << groups;
  return success();
}

LogicalResult GroupedMatmulOp::verify() {
  RankedTensorType lhs = getLhs().getType(), rhs = getRhs().getType(),
                   result = getResult().getType();
  if (failed(verifyGroupedRows(*this, lhs, getGroups().getType())))
    return failure();
  if (rhs.getRank() != 3)
    return emitOpError() << "rhs must be [groups, K, N]"
                         << (getTransposeB() ? " transposed ([groups, N, K])" : "")
                         << ", got " << rhs;
  int64_t k = getTransposeB() ? rhs.getDimSize(2) : rhs.getDimSize(1);
  int64_t n = getTransposeB() ? rhs.getDimSize(1) : rhs.getDimSize(2);
  if (k != lhs.getDimSize(1))
    return emitOpError() << "inner dimensions differ: lhs " << lhs << " has K = "
                         << lhs.getDimSize(1) << ", rhs " << rhs << " has K = " << k;
  SmallVector<int64_t> want = {lhs.getDimSize(0), n};
  if (result.getShape() != ArrayRef<int64_t>(want))
    return emitOpError() << "result must be " << RankedTensorType::get(want, result.getElementType())
                         << ", got " << result;
  return success();
}

LogicalResult GroupedMatmulWeightGradOp::verify() {
  RankedTensorType lhs = getLhs().getType(), rhs = getRhs().getType(),
                   result = getResult().getType();
  if (failed(verifyGroupedRows(*this, lhs, getGroups().getType())))
    return failure();
  if (rhs.getRank() != 2 || rhs.getDimSize(0) != lhs.getDimSize(0))
    return emitOpError() << "rhs must be [" << lhs.getDimSize(0)
                         << ", N] (a row per row of lhs), got " << rhs;
  if (result.getRank() != 3 || result.getDimSize(1) != lhs.getDimSize(1) ||
      result.getDimSize(2) != rhs.getDimSize(1))
    return emitOpError() << "result must be [groups, " << lhs.getDimSize(1) << ", "
                         << rhs.getDimSize(1) << "], got " << result;
  return success();
}
