//===- ParallelScatter.cpp - --lpc-parallel-scatter -----------------------===//
//
// The embedding gradient is a scatter-add, table[ids[n], j] += grad[n, j],
// lowered as a loop over the tokens n (in order: the reference's summation
// order) around a loop over the columns j. On the GPU the outer loop would
// be one thread's work (8192 tokens x 4096 columns for the large GPT
// block). Its lowering marks it lpc.independent_columns: different columns
// never touch the same element. So the column loop can go outside, as an
// scf.parallel: a thread per column running the token loop in order (the
// same sums, bit for bit), neighbouring threads on neighbouring columns.
//
// That is still a long serial chain per thread (each step a load and a
// store of the same table element through memory), and few threads. When
// the table's update is an addition and a few copies of the table fit in
// max-partial-bytes, the tokens are also split into P contiguous chunks:
// thread (p, j) sums chunk p of column j into partial table p (zeroed
// first), then a thread per table element adds the P partials to it in
// order of p. The sums are then reassociated (by chunks), as every other
// GPU reduction's.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCPARALLELSCATTER
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

/// table[i, j] = table[i, j] + x in the inner loop's body: its one store,
/// the one load of the same element it adds to.
struct Accumulate {
  Value table;
  memref::LoadOp load;
  memref::StoreOp store;
};

std::optional<Accumulate> accumulateOf(scf::ForOp inner) {
  Accumulate a;
  for (Operation &op : *inner.getBody()) {
    if (auto st = dyn_cast<memref::StoreOp>(op)) {
      if (a.store)
        return std::nullopt;
      a.store = st;
    }
  }
  if (!a.store)
    return std::nullopt;
  a.table = a.store.getMemRef();
  auto mt = dyn_cast<MemRefType>(a.table.getType());
  if (!mt || mt.getRank() != 2 || !mt.hasStaticShape() ||
      !mt.getLayout().isIdentity() || !mt.getElementType().isF32())
    return std::nullopt;
  for (Operation &op : *inner.getBody())
    if (auto ld = dyn_cast<memref::LoadOp>(op); ld && ld.getMemRef() == a.table) {
      if (a.load)
        return std::nullopt;
      a.load = ld;
    }
  if (!a.load || !llvm::equal(a.load.getIndices(), a.store.getIndices()))
    return std::nullopt;
  auto add = a.store.getValueToStore().getDefiningOp<arith::AddFOp>();
  if (!add || !llvm::is_contained(add->getOperands(), a.load.getResult()))
    return std::nullopt;
  return a;
}

struct LpcParallelScatterPass
    : ::mlir::lpc::impl::LpcParallelScatterBase<LpcParallelScatterPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ForOp> outers;
    getOperation()->walk([&](scf::ForOp f) {
      if (f->hasAttr(lpc::kIndependentColumnsAttr))
        outers.push_back(f);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp outer : outers) {
      // Only on buffers (no loop-carried values) and with one inner loop
      // whose bounds are known outside.
      SmallVector<scf::ForOp> inners;
      outer.getBody()->walk([&](scf::ForOp f) { inners.push_back(f); });
      if (outer.getNumResults() != 0 || inners.size() != 1 ||
          inners[0].getNumResults() != 0)
        continue;
      scf::ForOp inner = inners[0];
      if (llvm::any_of(inner.getOperands(), [&](Value v) {
            return outer->isAncestor(v.getParentRegion()->getParentOp());
          }))
        continue;
      std::optional<Accumulate> acc = accumulateOf(inner);
      int64_t parts = acc ? chunks(outer, inner, *acc) : 1;
      Location loc = outer.getLoc();
      rewriter.setInsertionPoint(outer);
      Value partial, p;
      scf::ParallelOp par;
      auto cst = [&](int64_t v) -> Value {
        return arith::ConstantIndexOp::create(rewriter, loc, v);
      };
      int64_t vocab = 0, dim = 0, chunk = 0;
      if (parts > 1) {
        auto mt = cast<MemRefType>(acc->table.getType());
        vocab = mt.getDimSize(0), dim = mt.getDimSize(1);
        chunk = *getConstantIntValue(outer.getUpperBound()) / parts;
        partial = memref::AllocOp::create(
            rewriter, loc,
            MemRefType::get({parts, vocab, dim}, rewriter.getF32Type()));
        auto zero = scf::ParallelOp::create(
            rewriter, loc, ValueRange{cst(0), cst(0), cst(0)},
            ValueRange{cst(parts), cst(vocab), cst(dim)},
            ValueRange{cst(1), cst(1), cst(1)});
        rewriter.setInsertionPointToStart(zero.getBody());
        memref::StoreOp::create(
            rewriter, loc,
            arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0)),
            partial, zero.getInductionVars());
        rewriter.setInsertionPointAfter(zero);
        par = scf::ParallelOp::create(
            rewriter, loc, ValueRange{cst(0), inner.getLowerBound()},
            ValueRange{cst(parts), inner.getUpperBound()},
            ValueRange{cst(1), inner.getStep()});
        p = par.getInductionVars()[0];
      } else {
        par = scf::ParallelOp::create(
            rewriter, loc, ValueRange{inner.getLowerBound()},
            ValueRange{inner.getUpperBound()}, ValueRange{inner.getStep()});
      }
      rewriter.setInsertionPointToStart(par.getBody());
      Value column = par.getInductionVars().back();
      IRMapping map;
      auto copy = cast<scf::ForOp>(rewriter.clone(*outer, map));
      copy->removeAttr(lpc::kIndependentColumnsAttr);
      if (partial) {
        // Chunk p of the tokens.
        rewriter.setInsertionPoint(copy);
        Value lb = arith::MulIOp::create(rewriter, loc, p, cst(chunk));
        Value ub = arith::AddIOp::create(rewriter, loc, lb, cst(chunk));
        copy.setLowerBound(lb);
        copy.setUpperBound(ub);
      }
      // The inner loop's body in place of the inner loop, its index now
      // the parallel loop's.
      auto innerCopy = cast<scf::ForOp>(map.lookup(inner.getOperation()));
      Block *body = innerCopy.getBody();
      rewriter.eraseOp(body->getTerminator());
      rewriter.inlineBlockBefore(body, innerCopy, ValueRange{column});
      rewriter.eraseOp(innerCopy);
      if (partial) {
        // Into partial table p instead of the table.
        auto ld = cast<memref::LoadOp>(map.lookup(acc->load.getOperation()));
        auto st = cast<memref::StoreOp>(map.lookup(acc->store.getOperation()));
        SmallVector<Value> idx{p};
        llvm::append_range(idx, ld.getIndices());
        rewriter.setInsertionPoint(ld);
        rewriter.replaceOp(ld, memref::LoadOp::create(rewriter, loc, partial, idx)
                                   .getResult());
        rewriter.setInsertionPoint(st);
        memref::StoreOp::create(rewriter, loc, st.getValueToStore(), partial, idx);
        rewriter.eraseOp(st);
        // Then each table element adds its partials, in order of p.
        rewriter.setInsertionPointAfter(par);
        auto sum = scf::ParallelOp::create(
            rewriter, loc, ValueRange{cst(0), cst(0)},
            ValueRange{cst(vocab), cst(dim)}, ValueRange{cst(1), cst(1)});
        rewriter.setInsertionPointToStart(sum.getBody());
        SmallVector<Value> vj(sum.getInductionVars());
        Value init = memref::LoadOp::create(rewriter, loc, acc->table, vj);
        auto loop = scf::ForOp::create(
            rewriter, loc, cst(0), cst(parts), cst(1), ValueRange{init},
            [&](OpBuilder &b, Location l, Value q, ValueRange a) {
              Value x = memref::LoadOp::create(b, l, partial,
                                               ValueRange{q, vj[0], vj[1]});
              scf::YieldOp::create(b, l,
                                   ValueRange{arith::AddFOp::create(b, l, a[0], x)});
            });
        memref::StoreOp::create(rewriter, loc, loop.getResult(0), acc->table, vj);
        rewriter.setInsertionPointAfter(sum);
        memref::DeallocOp::create(rewriter, loc, partial);
      }
      rewriter.eraseOp(outer);
    }
  }

  /// Into how many chunks of tokens to split (1: none): a power of two up
  /// to max-parts dividing the token count, chunks of at least min-chunk
  /// tokens, partial tables within max-partial-bytes; only when the inner
  /// loop covers all of the table's columns.
  int64_t chunks(scf::ForOp outer, scf::ForOp inner, const Accumulate &acc) {
    std::optional<int64_t> lo = getConstantIntValue(outer.getLowerBound()),
                           n = getConstantIntValue(outer.getUpperBound()),
                           st = getConstantIntValue(outer.getStep()),
                           jlo = getConstantIntValue(inner.getLowerBound()),
                           jn = getConstantIntValue(inner.getUpperBound()),
                           jst = getConstantIntValue(inner.getStep());
    if (lo != 0 || st != 1 || !n || jlo != 0 || jst != 1 || !jn)
      return 1;
    auto mt = cast<MemRefType>(acc.table.getType());
    if (*jn != mt.getDimSize(1))
      return 1;
    int64_t bytes = mt.getNumElements() * 4, parts = 1;
    while (parts * 2 <= maxParts && *n % (parts * 2) == 0 &&
           *n / (parts * 2) >= minChunk && parts * 2 * bytes <= maxPartialBytes)
      parts *= 2;
    return parts;
  }
};
} // namespace
