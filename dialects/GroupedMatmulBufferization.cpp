//===- GroupedMatmulBufferization.cpp - grouped GEMMs become library calls -===//
//
// lpc.grouped_matmul and lpc.grouped_matmul_weight_grad have no loop-nest
// lowering: the group of each row is data, so each group's GEMM is a call
// into the GEMM library at run time (runtime/gemm/GroupedGemm.cpp).
// lpc-to-linalg leaves them as they are; one-shot-bufferize turns each into
// a call through this model, with row-major operands (a copy only when a
// view is not) and a new row-major result:
//
//   lpc_rt_grouped_gemm_<t>(x [R, K], w [G, K, N] | [G, N, K], groups [R],
//                           y [R, N], transB)
//   lpc_rt_grouped_gemm_wgrad_<t>(x [R, K], dy [R, N], groups [R],
//                                 dw [G, K, N])
//
// with <t> = f32 | bf16 | f16.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"

#include "RuntimeCallModels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::bufferization;

namespace {

/// `v` row-major, cast to dynamic sizes: the type the entry points take.
Value dynamicRowMajor(RewriterBase &b, Location loc, Value v) {
  v = rowMajor(b, loc, v);
  auto t = cast<MemRefType>(v.getType());
  SmallVector<int64_t> dyn(t.getRank(), ShapedType::kDynamic);
  return memref::CastOp::create(b, loc, MemRefType::get(dyn, t.getElementType()), v);
}

template <typename OpT>
struct GroupedMatmulModel : ReadOnlyCallModel<GroupedMatmulModel<OpT>, OpT> {
  LogicalResult bufferize(Operation *op, RewriterBase &b,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto concrete = cast<OpT>(op);
    Location loc = op->getLoc();
    b.setInsertionPoint(op);
    SmallVector<Value> args;
    for (Value operand : {concrete.getLhs(), concrete.getRhs(), concrete.getGroups()}) {
      FailureOr<Value> m = getBuffer(b, operand, options, state);
      if (failed(m))
        return failure();
      args.push_back(dynamicRowMajor(b, loc, *m));
    }
    auto resultType = cast<RankedTensorType>(concrete.getResult().getType());
    Value result = newRowMajorBuffer(b, loc, resultType);
    args.push_back(dynamicRowMajor(b, loc, result));
    constexpr bool isGrad = std::is_same_v<OpT, GroupedMatmulWeightGradOp>;
    if constexpr (!isGrad)
      args.push_back(arith::ConstantOp::create(
          b, loc, b.getI64IntegerAttr(concrete.getTransposeB() ? 1 : 0)));
    std::string name = (Twine("lpc_rt_grouped_gemm_") + (isGrad ? "wgrad_" : "") +
                        runtimeTypeSuffix(resultType.getElementType()))
                           .str();
    callRuntimeEntry(b, op, name, args);
    replaceOpWithBufferizedValues(b, op, result);
    return success();
  }
};

} // namespace

void mlir::lpc::attachGroupedMatmulBufferization(MLIRContext *ctx) {
  GroupedMatmulOp::attachInterface<GroupedMatmulModel<GroupedMatmulOp>>(*ctx);
  GroupedMatmulWeightGradOp::attachInterface<
      GroupedMatmulModel<GroupedMatmulWeightGradOp>>(*ctx);
}
