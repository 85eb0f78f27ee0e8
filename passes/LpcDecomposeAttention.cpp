//===- LpcDecomposeAttention.cpp - --lpc-decompose-attention --------------===//
//
// lpc.attention as the unfused graph (GEMM, scale, mask, softmax, GEMM)
// where no fused kernel runs it: the CUDA artifact's attention steps are
// cuDNN's, which take bf16/f16 without a mask and head dims that are
// multiples of 8 up to 128. Runs before lpc-autodiff, so the backward of the
// unfused graph is the usual one.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCDECOMPOSEATTENTION
#include "lpc/Passes/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

/// Whether the CUDA artifact's cuDNN step runs `op` under `policy`.
bool cudnnRuns(AttentionOp op, StringRef policy) {
  if (policy == "no" || op.getMask())
    return false;
  if (auto pin = op->getAttrOfType<PrecisionAttr>(
          LpcDialect::getPrecisionPinAttrName());
      pin && pin.getValue() == Precision::fp32)
    return false;
  int64_t d = op.getQuery().getType().getShape().back();
  int64_t dv = op.getValue().getType().getShape().back();
  for (int64_t h : {d, dv})
    if (h % 8 != 0 || h > 128)
      return false;
  int64_t r = op.getQuery().getType().getRank();
  // cuDNN up to 9.15 has no attention backward for a key length that is not
  // a multiple of 128 (without a padding mask), and CUDA 13.0's cuDNN is
  // 9.14 (seen on an H200): the runtime refuses such a step, so it is
  // decomposed here.
  if (op.getKey().getType().getDimSize(r - 2) % 128 != 0)
    return false;
  if (op.getCausal() && op.getQuery().getType().getDimSize(r - 2) >
                            op.getKey().getType().getDimSize(r - 2))
    return false;
  return op.getScaleValue() != 0.0;
}

LogicalResult decompose(AttentionOp op) {
  RankedTensorType q = op.getQuery().getType(), k = op.getKey().getType();
  int64_t r = q.getRank(), sq = q.getDimSize(r - 2), skv = k.getDimSize(r - 2);
  if (op.getCausal() && sq > skv)
    return op.emitError() << "lpc-decompose-attention: causal attention with "
                             "more queries ("
                          << sq << ") than keys (" << skv
                          << ") leaves rows without a key; the unfused graph "
                             "cannot express it";
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<int64_t> sShape(q.getShape().drop_back());
  sShape.push_back(skv);
  auto sType = RankedTensorType::get(sShape, q.getElementType());
  Value s = MatmulOp::create(b, loc, sType, op.getQuery(), op.getKey(),
                             /*transpose_a=*/false, /*transpose_b=*/true,
                             GemmRoleAttr());
  s = ScaleOp::create(b, loc, s, llvm::APFloat(op.getScaleValue()));
  if (Value mask = op.getMask()) {
    Value m = mask;
    if (!q.getElementType().isF32())
      m = CastOp::create(
          b, loc, cast<RankedTensorType>(mask.getType()).clone(q.getElementType()),
          mask);
    SmallVector<int64_t> dims{r - 2, r - 1};
    m = BroadcastOp::create(b, loc, sType, m, dims);
    s = AddOp::create(b, loc, s, m);
  }
  if (op.getCausal())
    s = CausalMaskOp::create(
        b, loc, s,
        llvm::APFloat::getInf(llvm::APFloat::IEEEdouble(), /*Negative=*/true));
  Value p = SoftmaxOp::create(b, loc, s, /*axis=*/-1);
  Value o = MatmulOp::create(b, loc, op.getResult().getType(), p,
                             op.getValue(), false, false, GemmRoleAttr());
  op.getResult().replaceAllUsesWith(o);
  if (!op.getLse().use_empty()) {
    // lse = max + log(sum(exp(s - max))) over the keys, in f32.
    Value s32 = s;
    if (!q.getElementType().isF32())
      s32 = CastOp::create(b, loc, sType.clone(b.getF32Type()), s);
    SmallVector<int64_t> axes{r - 1};
    Value mx = ReduceMaxOp::create(b, loc, s32, axes, /*keepdims=*/false);
    SmallVector<int64_t> lead;
    for (int64_t i = 0; i < r - 1; ++i)
      lead.push_back(i);
    Value mxB = BroadcastOp::create(
        b, loc, cast<RankedTensorType>(s32.getType()), mx, lead);
    Value e = ExpOp::create(b, loc, SubOp::create(b, loc, s32, mxB));
    Value sum = ReduceSumOp::create(b, loc, e, axes, /*keepdims=*/false);
    Value lse = AddOp::create(b, loc, mx, LogOp::create(b, loc, sum));
    op.getLse().replaceAllUsesWith(lse);
  }
  op.erase();
  return success();
}

struct LpcDecomposeAttentionPass
    : ::mlir::lpc::impl::LpcDecomposeAttentionBase<LpcDecomposeAttentionPass> {
  using LpcDecomposeAttentionBase::LpcDecomposeAttentionBase;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Pass::initializeOptions(options, errorHandler)))
      return failure();
    if (!llvm::is_contained({"no", "bf16", "fp16", "fp8"}, StringRef(policy)))
      return errorHandler("lpc-decompose-attention: policy='" + policy +
                          "' (allowed: no, bf16, fp16, fp8)");
    return success();
  }

  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) {
      if (!cudnnRuns(op, policy))
        ops.push_back(op);
    });
    for (AttentionOp op : ops)
      if (failed(decompose(op)))
        return signalPassFailure();
  }
};

} // namespace
