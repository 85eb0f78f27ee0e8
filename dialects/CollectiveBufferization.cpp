//===- CollectiveBufferization.cpp - collectives become runtime calls -----===//
//
// lpc.all_reduce, lpc.reduce_scatter, lpc.all_gather, lpc.shard and
// lpc.all_to_all have no loop nest:
// they are collectives of the runtime
// (runtime/comm, MPI). lpc-to-linalg leaves it and one-shot-bufferize turns
// it into a call through this model: the input read where it is (copied to
// a row-major buffer first when its layout is strided), the result in a new
// row-major buffer, both passed as rank-1 views of their elements:
//
//   lpc_rt_all_reduce_f32(in, out, kind, wire)     kind: sum = 0, mean = 1,
//                                                  max = 2; wire: the
//                                                  comm_precision (Precision's
//                                                  value: fp32 = 0, fp16 = 1,
//                                                  bf16 = 2, e4m3 = 3, e5m2 = 4)
//   lpc_rt_all_reduce_any_nonfinite_f32(in, flag) flag: memref<i1>
//   lpc_rt_reduce_scatter_f32(in, out, kind, wire, ranks)
//   lpc_rt_all_gather_f32(in, out, wire, ranks)     ranks: the op's `ranks`,
//                                                  which the runtime checks
//                                                  against the run's
//   lpc_rt_shard_f32(in, out, ranks)               lpc.shard: a local copy
//   lpc_rt_all_to_all_<t>(in, out, ranks)          lpc.all_to_all: bytes
//
// The entry points copy (or test) the input when the process is one rank.
// A narrow input (the GPU's native-wire form, lpc-native-wire-collectives)
// calls the same entries with `_bf16`, `_f16`, `_f8e4m3` or `_f8e5m2`
// instead of `_f32`: the CUDA artifact's collective steps of that type
// (GPUArtifact.cpp). The CPU runtime has the ones that only move bytes
// (all_gather, all_to_all), not the narrow reductions.
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

#include <type_traits>

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::bufferization;

namespace {

/// `v` (a memref) as `memref<?xT, strided<[?], offset: ?>>` over its
/// elements in row-major order: through a row-major copy when its layout is
/// not the identity.
Value flatView(RewriterBase &b, Location loc, Value v) {
  auto t = cast<MemRefType>(v.getType());
  v = rowMajor(b, loc, v);
  int64_t n = t.getNumElements();
  auto flat = MemRefType::get({n}, t.getElementType());
  SmallVector<int64_t, 1> sizes{n}, strides{1},
      dynStrides{ShapedType::kDynamic};
  Value f = memref::ReinterpretCastOp::create(b, loc, flat, v, int64_t(0),
                                              ArrayRef<int64_t>(sizes),
                                              ArrayRef<int64_t>(strides));
  auto layout = StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                                       dynStrides);
  auto to = MemRefType::get({ShapedType::kDynamic}, t.getElementType(), layout);
  return memref::CastOp::create(b, loc, to, f);
}

/// The runtime's code for a reduction kind (sum = 0, mean = 1, max = 2).
Value kindCode(RewriterBase &b, Location loc, AllReduceKind kind) {
  int64_t code = kind == AllReduceKind::sum    ? 0
                 : kind == AllReduceKind::mean ? 1
                                               : 2;
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(code));
}

/// "_f32", "_bf16", "_f16", "_f8e4m3" or "_f8e5m2": the entry point's
/// suffix for `t`'s elements.
std::string entrySuffix(Type t) {
  Type e = cast<ShapedType>(t).getElementType();
  return e.isBF16()                   ? "_bf16"
         : e.isF16()                  ? "_f16"
         : isa<Float8E4M3FNType>(e) ? "_f8e4m3"
         : isa<Float8E5M2Type>(e)   ? "_f8e5m2"
                                      : "_f32";
}

/// The input read in place; the result is a new buffer.
struct AllReduceModel : ReadOnlyCallModel<AllReduceModel, AllReduceOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &b,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto ar = cast<AllReduceOp>(op);
    Location loc = op->getLoc();
    b.setInsertionPoint(op);
    FailureOr<Value> in = getBuffer(b, ar.getInput(), options, state);
    if (failed(in))
      return failure();
    Value out = newRowMajorBuffer(
        b, loc, cast<RankedTensorType>(ar.getResult().getType()));
    Value inView = flatView(b, loc, *in);
    if (ar.getKind() == AllReduceKind::any_nonfinite) {
      callRuntimeEntry(b, op, "lpc_rt_all_reduce_any_nonfinite_f32", {inView, out});
    } else {
      Value k = kindCode(b, loc, ar.getKind());
      Value wire = arith::ConstantOp::create(
          b, loc, b.getI64IntegerAttr(int64_t(ar.getCommPrecision())));
      callRuntimeEntry(b, op,
                       "lpc_rt_all_reduce" + entrySuffix(ar.getInput().getType()),
                       {inView, flatView(b, loc, out), k, wire});
    }
    replaceOpWithBufferizedValues(b, op, out);
    return success();
  }
};

/// lpc.reduce_scatter, lpc.all_gather, lpc.shard and lpc.all_to_all: the
/// input read in place, the result a new buffer, both flat; then the kind
/// (reduce_scatter only), the wire format (not lpc.shard's or
/// lpc.all_to_all's: nothing is rounded) and the rank count the step was
/// built for.
template <typename OpT>
struct ShardingModel : ReadOnlyCallModel<ShardingModel<OpT>, OpT> {
  LogicalResult bufferize(Operation *op, RewriterBase &b,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto c = cast<OpT>(op);
    Location loc = op->getLoc();
    b.setInsertionPoint(op);
    FailureOr<Value> in = getBuffer(b, c.getInput(), options, state);
    if (failed(in))
      return failure();
    Value out = newRowMajorBuffer(b, loc, c.getResult().getType());
    SmallVector<Value, 5> args{flatView(b, loc, *in), flatView(b, loc, out)};
    auto i64 = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
    };
    std::string entry = "lpc_rt_all_gather";
    if constexpr (std::is_same_v<OpT, ReduceScatterOp>) {
      entry = "lpc_rt_reduce_scatter";
      args.push_back(kindCode(b, loc, c.getKind()));
    }
    if constexpr (std::is_same_v<OpT, ShardOp>)
      entry = "lpc_rt_shard";
    else if constexpr (std::is_same_v<OpT, AllToAllOp>)
      entry = "lpc_rt_all_to_all";
    else
      args.push_back(i64(int64_t(c.getCommPrecision())));
    args.push_back(i64(c.getRanks()));
    callRuntimeEntry(b, op, entry + entrySuffix(c.getInput().getType()), args);
    replaceOpWithBufferizedValues(b, op, out);
    return success();
  }
};

} // namespace

void mlir::lpc::attachCollectiveBufferization(MLIRContext *ctx) {
  AllReduceOp::attachInterface<AllReduceModel>(*ctx);
  ReduceScatterOp::attachInterface<ShardingModel<ReduceScatterOp>>(*ctx);
  AllGatherOp::attachInterface<ShardingModel<AllGatherOp>>(*ctx);
  ShardOp::attachInterface<ShardingModel<ShardOp>>(*ctx);
  AllToAllOp::attachInterface<ShardingModel<AllToAllOp>>(*ctx);
}
