//===- NativeWireCollectives.cpp - bf16 / fp16 collectives on the GPU -----===//
//
// lpc-native-wire-collectives (Passes.td): a narrow comm_precision of an
// f32 collective becomes a collective of a narrow tensor between two casts,
// which the CUDA artifact runs as an NCCL collective of that type.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"
#include "lpc/Dialect/LpcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCNATIVEWIRECOLLECTIVES
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

/// The element type a wire format moves natively, or null (fp32: nothing to
/// do; FP8: no GPU form).
Type nativeType(MLIRContext *ctx, Precision wire) {
  switch (wire) {
  case Precision::bf16:
    return BFloat16Type::get(ctx);
  case Precision::fp16:
    return Float16Type::get(ctx);
  default:
    return nullptr;
  }
}

struct NativeWireCollectives
    : lpc::impl::LpcNativeWireCollectivesBase<NativeWireCollectives> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<AllReduceOp, ReduceScatterOp, AllGatherOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      if (failed(rewrite(op)))
        return signalPassFailure();
  }

  LogicalResult rewrite(Operation *op) {
    Value input = op->getOperand(0);
    auto inType = cast<RankedTensorType>(input.getType());
    Precision wire = Precision::fp32;
    if (auto ar = dyn_cast<AllReduceOp>(op))
      wire = ar.getCommPrecision();
    else if (auto rs = dyn_cast<ReduceScatterOp>(op))
      wire = rs.getCommPrecision();
    else
      wire = cast<AllGatherOp>(op).getCommPrecision();
    if (wire == Precision::fp32 || !inType.getElementType().isF32())
      return success();
    Type narrow = nativeType(op->getContext(), wire);
    if (!narrow)
      return op->emitError()
             << "comm_precision " << stringifyPrecision(wire)
             << " has no GPU form yet (the CPU's shared FP8 scale and f32 "
                "rank-order sums are not NCCL steps): use fp32, bf16 or fp16";
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    Value x = CastOp::create(b, loc, inType.clone(narrow), input).getResult();
    Type narrowOut = outType.clone(narrow);
    Value y;
    if (auto ar = dyn_cast<AllReduceOp>(op))
      y = AllReduceOp::create(b, loc, narrowOut, x, ar.getKindAttr(),
                              ar.getCommPrecisionAttr())
              .getResult();
    else if (auto rs = dyn_cast<ReduceScatterOp>(op))
      y = ReduceScatterOp::create(b, loc, narrowOut, x, rs.getKindAttr(),
                                  rs.getRanksAttr(), rs.getCommPrecisionAttr())
              .getResult();
    else {
      auto ag = cast<AllGatherOp>(op);
      y = AllGatherOp::create(b, loc, narrowOut, x, ag.getRanksAttr(),
                              ag.getCommPrecisionAttr())
              .getResult();
    }
    Value back = CastOp::create(b, loc, outType, y).getResult();
    op->getResult(0).replaceAllUsesWith(back);
    op->erase();
    return success();
  }
};

} // namespace
