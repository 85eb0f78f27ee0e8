//===- LowerDataMovement.cpp - reshapes, slices, gathers to linalg/tensor -===//

#include "LoweringUtils.h"
#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::lowering;

namespace {

SmallVector<utils::IteratorType> parallel(unsigned rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

/// A copy through a body that only moves values (no rounding involved).
Value copyWith(OpBuilder &b, Location loc, Value in, AffineMap inMap,
               RankedTensorType out) {
  MLIRContext *ctx = b.getContext();
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{out}, ValueRange{in},
      ValueRange{emptyLike(b, loc, out)},
      ArrayRef<AffineMap>{inMap, idMap(ctx, out.getRank())},
      parallel(out.getRank()),
      [](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, args[0]);
      });
  return op.getResult(0);
}

struct LowerBroadcast : OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    RankedTensorType in = op.getInput().getType(), out = op.getType();
    SmallVector<AffineExpr> e;
    for (auto [i, d] : llvm::enumerate(op.getDims()))
      e.push_back(in.getDimSize(i) == 1 && out.getDimSize(d) != 1
                      ? getAffineConstantExpr(0, ctx)
                      : getAffineDimExpr(d, ctx));
    rewriter.replaceOp(
        op, copyWith(rewriter, op.getLoc(), op.getInput(),
                     AffineMap::get(out.getRank(), 0, e, ctx), out));
    return success();
  }
};

/// A reshape that only splits dimensions becomes tensor.expand_shape and one
/// that only merges them tensor.collapse_shape: bufferized, these stay views
/// of strided buffers (a slice of the fused qkv projection split into heads
/// is read in place), where tensor.reshape needs an identity layout and so
/// a copy of any such slice. Other reshapes keep tensor.reshape.
struct LowerReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType out = op.getType();
    auto in = cast<RankedTensorType>(op.getInput().getType());
    if (out.getRank() > in.getRank()) {
      if (auto re = getReassociationIndicesForReshape(out, in)) {
        rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, out,
                                                           op.getInput(), *re);
        return success();
      }
    } else if (out.getRank() < in.getRank()) {
      if (auto re = getReassociationIndicesForReshape(in, out)) {
        rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
            op, out, op.getInput(), *re);
        return success();
      }
    }
    Value shape = arith::ConstantOp::create(
        rewriter, op.getLoc(),
        DenseElementsAttr::get(
            RankedTensorType::get({out.getRank()}, rewriter.getI64Type()),
            out.getShape()));
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, out, op.getInput(),
                                                   shape);
    return success();
  }
};

struct LowerTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Value init = emptyLike(rewriter, op.getLoc(), op.getType());
    auto t = linalg::TransposeOp::create(rewriter, op.getLoc(), op.getInput(),
                                         init, op.getPermutation());
    rewriter.replaceOp(op, t->getResult(0));
    return success();
  }
};

struct LowerSlice : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType out = op.getType();
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, out, op.getInput(), ValueRange{}, ValueRange{}, ValueRange{},
        op.getStart(), out.getShape(), op.getStep());
    return success();
  }
};

struct LowerSliceGrad : OpRewritePattern<SliceGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceGradOp op,
                                PatternRewriter &rewriter) const override {
    Value zeros = filled(rewriter, op.getLoc(), op.getType(), 0.0);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, op.getGrad(), zeros, ValueRange{}, ValueRange{}, ValueRange{},
        op.getStart(), op.getGrad().getType().getShape(), op.getStep());
    return success();
  }
};

struct LowerConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType out = op.getType();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += out.getRank();
    Value acc = emptyLike(rewriter, op.getLoc(), out);
    int64_t offset = 0;
    for (Value in : op.getInputs()) {
      RankedTensorType t = tt(in);
      SmallVector<int64_t> offsets(out.getRank(), 0), strides(out.getRank(), 1);
      offsets[axis] = offset;
      offset += t.getDimSize(axis);
      acc = tensor::InsertSliceOp::create(rewriter, op.getLoc(), in, acc,
                                          ValueRange{}, ValueRange{},
                                          ValueRange{}, offsets,
                                          t.getShape(), strides);
    }
    rewriter.replaceOp(op, acc);
    return success();
  }
};

/// out[i..., d] = table[ids[i...], d] (a gather in the body). An id
/// outside [0, V) (data out of range, an index computed out of range) reads
/// zeros instead of memory outside the table, as its gradient adds nothing
/// for it; the reference evaluator refuses such an id.
struct LowerEmbedding : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    RankedTensorType out = op.getType();
    unsigned rank = out.getRank();
    Value table = op.getTable();
    SmallVector<AffineExpr> idExprs;
    for (unsigned i = 0; i + 1 < rank; ++i)
      idExprs.push_back(getAffineDimExpr(i, ctx));
    auto g = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{out}, ValueRange{op.getIndices()},
        ValueRange{emptyLike(rewriter, op.getLoc(), out)},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, idExprs, ctx),
                            idMap(ctx, rank)},
        parallel(rank), [&](OpBuilder &b, Location l, ValueRange args) {
          Value id = args[0];
          Type it = id.getType();
          int64_t vocab = cast<RankedTensorType>(table.getType()).getDimSize(0);
          Value first =
              arith::ConstantOp::create(b, l, b.getIntegerAttr(it, 0));
          Value inRange = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, id, first),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, id,
                                    arith::ConstantOp::create(
                                        b, l, b.getIntegerAttr(it, vocab))));
          Value safe = arith::SelectOp::create(b, l, inRange, id, first);
          Value row = arith::IndexCastOp::create(b, l, b.getIndexType(), safe);
          Value col = linalg::IndexOp::create(b, l, rank - 1);
          Value v = tensor::ExtractOp::create(b, l, table, ValueRange{row, col});
          Value zero = arith::ConstantOp::create(
              b, l, b.getZeroAttr(v.getType()));
          linalg::YieldOp::create(b, l,
                                  arith::SelectOp::create(b, l, inRange, v, zero)
                                      .getResult());
        });
    rewriter.replaceOp(op, g.getResult(0));
    return success();
  }
};

/// table[ids[n], d] += grad[n, d] for n = 0, 1, ... in order (the order the
/// reference sums in), as loops over tensors that bufferize in place:
/// O(N * D). Ids outside [0, V) and the padding row contribute nothing, as
/// in the reference.
struct LowerEmbeddingGrad : OpRewritePattern<EmbeddingGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value grad = flatten2d(rewriter, loc, op.getGrad());
    Value ids = flatten1d(rewriter, loc, op.getIndices());
    RankedTensorType out = op.getType();
    int64_t n = tt(grad).getDimSize(0), dim = tt(grad).getDimSize(1);
    int64_t vocab = out.getDimSize(0);
    auto acc = RankedTensorType::get(out.getShape(), rewriter.getF32Type());
    auto cst = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value zero = cst(rewriter, 0), one = cst(rewriter, 1);
    auto rows = scf::ForOp::create(
        rewriter, loc, zero, cst(rewriter, n), one,
        ValueRange{filled(rewriter, loc, acc, 0.0)},
        [&](OpBuilder &b, Location l, Value i, ValueRange iter) {
          Value id = arith::IndexCastOp::create(
              b, l, b.getIndexType(),
              tensor::ExtractOp::create(b, l, ids, ValueRange{i}));
          Value inRange = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, id,
                                    cst(b, 0)),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, id,
                                    cst(b, vocab)));
          if (auto pad = op.getPaddingIdx()) // its row gets no gradient
            inRange = arith::AndIOp::create(
                b, l, inRange,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, id,
                                      cst(b, int64_t(*pad))));
          auto ifOp = scf::IfOp::create(
              b, l, inRange,
              [&](OpBuilder &tb, Location tl) {
                auto cols = scf::ForOp::create(
                    tb, tl, cst(tb, 0), cst(tb, dim), cst(tb, 1),
                    ValueRange{iter[0]},
                    [&](OpBuilder &cb, Location cl, Value j, ValueRange t) {
                      Value g = toF32(cb, cl,
                                      tensor::ExtractOp::create(
                                          cb, cl, grad, ValueRange{i, j}));
                      Value cur = tensor::ExtractOp::create(
                          cb, cl, t[0], ValueRange{id, j});
                      Value upd = tensor::InsertOp::create(
                          cb, cl, addf(cb, cl, cur, g), t[0],
                          ValueRange{id, j});
                      scf::YieldOp::create(cb, cl, upd);
                    });
                scf::YieldOp::create(tb, tl, cols.getResult(0));
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(eb, el, iter[0]);
              });
          scf::YieldOp::create(b, l, ifOp.getResult(0));
        });
    // Different columns never touch the same element: the GPU pipeline
    // runs the columns in parallel, each token loop in order
    // (lpc-parallel-scatter).
    rows->setAttr(kIndependentColumnsAttr, rewriter.getUnitAttr());
    rewriter.replaceOp(op, castTensor(rewriter, loc, rows.getResult(0), out));
    return success();
  }
};

struct LowerCausalMask : OpRewritePattern<CausalMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CausalMaskOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType t = op.getType();
    unsigned rank = t.getRank();
    int64_t shift = t.getShape().back() - t.getDimSize(rank - 2);
    double fill = op.getFill().convertToDouble();
    Value r = elementwise(
        rewriter, op.getLoc(), t, op.getInput(),
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value i = linalg::IndexOp::create(b, l, rank - 2);
          Value j = linalg::IndexOp::create(b, l, rank - 1);
          Value lim = arith::AddIOp::create(
              b, l, i, arith::ConstantIndexOp::create(b, l, shift));
          Value masked =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, j, lim);
          return {arith::SelectOp::create(b, l, masked, f32Const(b, l, fill),
                                          v[0])};
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct LowerWhere : OpRewritePattern<WhereOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WhereOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType t = op.getType();
    // Values move unchanged (also integers and fp8): select on the raw
    // elements, no f32 round trip.
    MLIRContext *ctx = op.getContext();
    unsigned rank = t.getRank();
    auto g = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{t},
        ValueRange{op.getCond(), op.getOnTrue(), op.getOnFalse()},
        ValueRange{emptyLike(rewriter, op.getLoc(), t)},
        SmallVector<AffineMap>(4, idMap(ctx, rank)), parallel(rank),
        [](OpBuilder &b, Location l, ValueRange a) {
          linalg::YieldOp::create(b, l,
                                  Value(arith::SelectOp::create(b, l, a[0], a[1], a[2])));
        });
    rewriter.replaceOp(op, g.getResult(0));
    return success();
  }
};

} // namespace

void mlir::lpc::lowering::populateDataMovementPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerBroadcast, LowerReshape, LowerTranspose, LowerSlice,
               LowerSliceGrad, LowerConcat, LowerEmbedding, LowerEmbeddingGrad,
               LowerCausalMask, LowerWhere>(patterns.getContext());
}
