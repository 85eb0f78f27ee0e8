//===- NativeWireCollectives.cpp - narrow wire formats on the GPU ---------===//
//
// lpc-native-wire-collectives (Passes.td): a narrow comm_precision of an
// f32 collective becomes collectives that NCCL can run. bf16 / fp16: the
// same collective of a narrow tensor between two casts (NCCL reduces in
// that type). FP8: the CPU runtime's algorithm spelled out in ops, so that
// kernels do the arithmetic and NCCL only moves bytes: a shared
// power-of-two scale (amax, an f32 max over the ranks, lpc.wire_scale),
// quantize, an all_to_all of the FP8 blocks, f32 sums in rank order, the
// rounded mean all-gathered as FP8, dequantize.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"
#include "lpc/Dialect/LpcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCNATIVEWIRECOLLECTIVES
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

bool isFP8(Precision p) {
  return p == Precision::fp8_e4m3 || p == Precision::fp8_e5m2;
}

/// Builds the FP8 form of one collective at the builder's insertion point.
struct FP8Wire {
  OpBuilder &b;
  Location loc;
  Precision format;

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }
  Value splat(ArrayRef<int64_t> shape, double v) {
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(f32(shape), b.getF32FloatAttr(v)));
  }
  Value reshape(Value v, RankedTensorType t) {
    if (v.getType() == t)
      return v;
    return ReshapeOp::create(b, loc, t, v);
  }
  /// `x` (f32) as a 1-D tensor of its elements.
  Value flat(Value x) {
    auto t = cast<RankedTensorType>(x.getType());
    return reshape(x, t.clone({t.getNumElements()}));
  }

  /// The scale every rank shares, and its inverse: the amax of each rank's
  /// `x`, non-finite made +inf (NCCL's max need not propagate NaN), the max
  /// over the ranks, lpc.wire_scale (NaN when it is infinite).
  std::pair<Value, Value> sharedScale(Value x) {
    Value a = AmaxOp::create(b, loc, x);
    Value inf = splat({}, INFINITY);
    Value finite = CompareOp::create(
        b, loc, RankedTensorType::get({}, b.getI1Type()), ComparePredicate::lt,
        a, inf);
    a = WhereOp::create(b, loc, f32({}), finite, a, inf);
    Value all = AllReduceOp::create(
        b, loc, f32({}), a,
        AllReduceKindAttr::get(b.getContext(), AllReduceKind::max),
        PrecisionAttr::get(b.getContext(), Precision::fp32));
    Value s = WireScaleOp::create(b, loc, all,
                                  PrecisionAttr::get(b.getContext(), format));
    Value inv = DivOp::create(b, loc, splat({}, 1.0), s);
    return {s, inv};
  }

  /// The wire format's element type.
  Type fp8() { return getElementTypeFor(b.getContext(), format); }

  Value quantize(Value x, Value scale) {
    auto t = cast<RankedTensorType>(x.getType());
    return QuantizeOp::create(b, loc, t.clone(fp8()), x, scale);
  }

  /// Rank r's block of the f32 sums over the ranks of their blocks r:
  /// `q` holds this rank's `ranks` blocks of FP8 values, [ranks, k]. The
  /// sums start from rank 0's value and add in rank order (reduce_sum over
  /// dimension 0, the same order on every back end), then / ranks.
  Value meanOfBlocks(Value q, int64_t ranks, int64_t k) {
    Value moved = AllToAllOp::create(b, loc, q.getType(), q,
                                     b.getI64IntegerAttr(ranks));
    Value wide = CastOp::create(b, loc, f32({ranks, k}), moved);
    Value sum = ReduceSumOp::create(b, loc, f32({k}), wide,
                                    b.getDenseI64ArrayAttr({0}), UnitAttr());
    return DivOp::create(b, loc, sum, splat({k}, double(ranks)));
  }

  /// lpc.all_reduce mean of `x` over `ranks` ranks (> 1).
  Value allReduceMean(Value x, int64_t ranks) {
    auto t = cast<RankedTensorType>(x.getType());
    int64_t n = t.getNumElements(), k = (n + ranks - 1) / ranks;
    Value v = flat(x);
    auto [s, inv] = sharedScale(v);
    if (k * ranks > n) // padded with +0, as the CPU runtime pads
      v = ConcatOp::create(b, loc, f32({k * ranks}),
                           ValueRange{v, splat({k * ranks - n}, 0.0)},
                           b.getI64IntegerAttr(0));
    Value q = reshape(quantize(v, s), RankedTensorType::get({ranks, k}, fp8()));
    // The mean rounds to the format once more before it travels back.
    Value mine = quantize(meanOfBlocks(q, ranks, k), splat({}, 1.0));
    Value all = AllGatherOp::create(
        b, loc, cast<RankedTensorType>(mine.getType()).clone({k * ranks}),
        mine, b.getI64IntegerAttr(ranks),
        PrecisionAttr::get(b.getContext(), format));
    Value y = DequantizeOp::create(b, loc, f32({k * ranks}), all, inv);
    if (k * ranks > n)
      y = SliceOp::create(b, loc, y, {0}, {n}, {1});
    return reshape(y, t);
  }

  /// lpc.reduce_scatter mean: `x` is `ranks` blocks along dimension 0; the
  /// result (`outType`) is this rank's block of the mean, not rounded again.
  Value reduceScatterMean(Value x, RankedTensorType outType, int64_t ranks) {
    int64_t k = outType.getNumElements();
    Value v = flat(x);
    auto [s, inv] = sharedScale(v);
    Value q = reshape(quantize(v, s), RankedTensorType::get({ranks, k}, fp8()));
    Value mean = meanOfBlocks(q, ranks, k);
    Value unscale = BroadcastOp::create(b, loc, f32({k}), inv,
                                        b.getDenseI64ArrayAttr({}));
    return reshape(MulOp::create(b, loc, mean, unscale), outType);
  }

  /// lpc.all_gather: every rank's `x` rounded with the shared scale.
  Value allGather(Value x, RankedTensorType outType, int64_t ranks) {
    auto [s, inv] = sharedScale(flat(x));
    Value q = quantize(x, s);
    Value all = AllGatherOp::create(
        b, loc, outType.clone(fp8()), q, b.getI64IntegerAttr(ranks),
        PrecisionAttr::get(b.getContext(), format));
    return DequantizeOp::create(b, loc, outType, all, inv);
  }
};

struct NativeWireCollectives
    : lpc::impl::LpcNativeWireCollectivesBase<NativeWireCollectives> {
  using Base::Base;

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
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    Value y;
    if (isFP8(wire)) {
      FailureOr<Value> r = rewriteFP8(b, op, wire, outType);
      if (failed(r))
        return failure();
      y = *r;
    } else {
      Type narrow = getElementTypeFor(op->getContext(), wire);
      Value x = CastOp::create(b, loc, inType.clone(narrow), input).getResult();
      Type narrowOut = outType.clone(narrow);
      if (auto ar = dyn_cast<AllReduceOp>(op))
        y = AllReduceOp::create(b, loc, narrowOut, x, ar.getKindAttr(),
                                ar.getCommPrecisionAttr())
                .getResult();
      else if (auto rs = dyn_cast<ReduceScatterOp>(op))
        y = ReduceScatterOp::create(b, loc, narrowOut, x, rs.getKindAttr(),
                                    rs.getRanksAttr(),
                                    rs.getCommPrecisionAttr())
                .getResult();
      else {
        auto ag = cast<AllGatherOp>(op);
        y = AllGatherOp::create(b, loc, narrowOut, x, ag.getRanksAttr(),
                                ag.getCommPrecisionAttr())
                .getResult();
      }
      y = CastOp::create(b, loc, outType, y).getResult();
    }
    op->getResult(0).replaceAllUsesWith(y);
    op->erase();
    return success();
  }

  /// The FP8 form. The sharding collectives carry their rank count; the
  /// all-reduce takes the pass's `ranks` (the rank count decides where each
  /// rank's block of the sums starts). One rank sends nothing and rounds
  /// nothing (the ops' meaning): the sharding ones become their fp32 form;
  /// the all-reduce an fp32 all_to_all built for one rank, a copy that
  /// makes the runtime refuse a run on more ranks (its FP8 wire would need
  /// other blocks).
  FailureOr<Value> rewriteFP8(OpBuilder &b, Operation *op, Precision wire,
                              RankedTensorType outType) {
    Location loc = op->getLoc();
    Value x = op->getOperand(0);
    FP8Wire w{b, loc, wire};
    auto fp32 = PrecisionAttr::get(b.getContext(), Precision::fp32);
    if (auto rs = dyn_cast<ReduceScatterOp>(op)) {
      if (rs.getRanks() == 1)
        return ReduceScatterOp::create(b, loc, outType, x, rs.getKindAttr(),
                                       rs.getRanksAttr(), fp32)
            .getResult();
      return w.reduceScatterMean(x, outType, rs.getRanks());
    }
    if (auto ag = dyn_cast<AllGatherOp>(op)) {
      if (ag.getRanks() == 1)
        return AllGatherOp::create(b, loc, outType, x, ag.getRanksAttr(), fp32)
            .getResult();
      return w.allGather(x, outType, ag.getRanks());
    }
    if (ranks < 1)
      return op->emitError()
             << "comm_precision " << stringifyPrecision(wire)
             << " on the GPU is built for a rank count (each rank adds its "
                "block of the FP8 values): run lpc-native-wire-collectives "
                "with ranks=N before lpc-gpu-codegen (lpc-run passes its "
                "own)";
    if (ranks == 1) {
      Value f = w.flat(x);
      Value moved = AllToAllOp::create(b, loc, f.getType(), f,
                                       b.getI64IntegerAttr(1));
      return w.reshape(moved, outType);
    }
    return w.allReduceMean(x, ranks);
  }
};

} // namespace
