//===- AttentionBufferization.cpp - lpc.attention becomes a library call --===//
//
// lpc.attention and lpc.attention_grad have no loop-nest lowering: a fused
// attention is a kernel of its own (runtime/gemm/Attention.cpp on the CPU, a
// cuDNN step in a CUDA artifact). lpc-to-linalg leaves them as they are and
// one-shot-bufferize turns each into a call through this model: operands
// read in place (strided views welcome: the kernels take any strides), the
// results in new row-major buffers, every tensor passed as a rank-4 view
// [B, H, S, D] (lse rank 3, the mask rank 2):
//
//   lpc_rt_attention_fwd_<t>[_mask](q, k, v, [mask], o, lse, causal, scale)
//   lpc_rt_attention_bwd_<t>[_mask](q, k, v, o, do, lse, [mask], dq, dk, dv,
//                                   causal, scale)
//
// with <t> = f32 | bf16 | f16. lib/Backend/GPUArtifact.cpp turns the same
// calls into the artifact's attention steps.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"

#include "RuntimeCallModels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::bufferization;

namespace {

/// `v` (a memref) as a view of rank `rank`: leading unit dims added, or the
/// leading dims collapsed into one (through a row-major copy when its
/// layout is not row-major), then cast to fully dynamic sizes and strides,
/// the type the entry points take.
Value viewOfRank(RewriterBase &b, Location loc, Value v, int64_t rank) {
  auto t = cast<MemRefType>(v.getType());
  int64_t r = t.getRank();
  if (r < rank) {
    SmallVector<ReassociationIndices> re;
    ReassociationIndices first;
    for (int64_t i = 0; i <= rank - r; ++i)
      first.push_back(i);
    re.push_back(first);
    for (int64_t i = rank - r + 1; i < rank; ++i)
      re.push_back({i});
    SmallVector<int64_t> shape(rank - r, 1);
    llvm::append_range(shape, t.getShape());
    v = memref::ExpandShapeOp::create(b, loc, shape, v, re);
  } else if (r > rank) {
    v = rowMajor(b, loc, v);
    SmallVector<ReassociationIndices> re;
    ReassociationIndices lead;
    for (int64_t i = 0; i <= r - rank; ++i)
      lead.push_back(i);
    re.push_back(lead);
    for (int64_t i = r - rank + 1; i < r; ++i)
      re.push_back({i});
    v = memref::CollapseShapeOp::create(b, loc, v, re);
  }
  SmallVector<int64_t> dyn(rank, ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, dyn);
  auto to = MemRefType::get(dyn, t.getElementType(), layout);
  return memref::CastOp::create(b, loc, to, v);
}

/// Operands read in place; the results are new buffers.
template <typename OpT>
struct AttentionModel : ReadOnlyCallModel<AttentionModel<OpT>, OpT> {
  LogicalResult bufferize(Operation *op, RewriterBase &b,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto concrete = cast<OpT>(op);
    Location loc = op->getLoc();
    b.setInsertionPoint(op);
    auto buffer = [&](Value v) -> FailureOr<Value> {
      return getBuffer(b, v, options, state);
    };
    SmallVector<Value> args;
    auto add = [&](Value tensor, int64_t rank) -> LogicalResult {
      FailureOr<Value> m = buffer(tensor);
      if (failed(m))
        return failure();
      args.push_back(viewOfRank(b, loc, *m, rank));
      return success();
    };
    SmallVector<Value> results;
    auto addResult = [&](Value r, int64_t rank) {
      Value m = newRowMajorBuffer(b, loc, cast<RankedTensorType>(r.getType()));
      results.push_back(m);
      args.push_back(viewOfRank(b, loc, m, rank));
    };
    bool isGrad = std::is_same_v<OpT, AttentionGradOp>;
    if (failed(add(concrete.getQuery(), 4)) || failed(add(concrete.getKey(), 4)) ||
        failed(add(concrete.getValue(), 4)))
      return failure();
    if constexpr (std::is_same_v<OpT, AttentionGradOp>) {
      if (failed(add(concrete.getResult(), 4)) ||
          failed(add(concrete.getGrad(), 4)) || failed(add(concrete.getLse(), 3)))
        return failure();
    }
    if (Value mask = concrete.getMask())
      if (failed(add(mask, 2)))
        return failure();
    if constexpr (std::is_same_v<OpT, AttentionGradOp>) {
      addResult(concrete.getGradQuery(), 4);
      addResult(concrete.getGradKey(), 4);
      addResult(concrete.getGradValue(), 4);
    } else {
      addResult(concrete.getResult(), 4);
      addResult(concrete.getLse(), 3);
    }
    args.push_back(arith::ConstantOp::create(
        b, loc, b.getI64IntegerAttr(concrete.getCausal() ? 1 : 0)));
    args.push_back(arith::ConstantOp::create(
        b, loc, b.getF64FloatAttr(concrete.getScaleValue())));
    std::string name = (Twine("lpc_rt_attention_") + (isGrad ? "bwd_" : "fwd_") +
                        runtimeTypeSuffix(concrete.getQuery().getType().getElementType()))
                           .str();
    if (concrete.getMask())
      name += "_mask";
    callRuntimeEntry(b, op, name, args);
    replaceOpWithBufferizedValues(b, op, results);
    return success();
  }
};

} // namespace

void mlir::lpc::attachAttentionBufferization(MLIRContext *ctx) {
  AttentionOp::attachInterface<AttentionModel<AttentionOp>>(*ctx);
  AttentionGradOp::attachInterface<AttentionModel<AttentionGradOp>>(*ctx);
}
