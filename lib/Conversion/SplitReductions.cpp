//===- SplitReductions.cpp - --lpc-split-reductions -----------------------===//
//
// Two-level reductions for the GPU: a bufferized linalg.generic with only
// reduction dimensions (a loss, an amax, a gradient norm) reduces into 0-d
// buffers, which would be one thread's loop. Its first dimension d0 (size
// n0) is split as d0 = k * P + p: P partial results computed in parallel
// (thread p takes elements p, p + P, ...: neighbouring threads read
// neighbouring addresses), then one small reduction of the P partials into
// the original output. Each output's combiner must be one whose order does
// not matter (an addf allowed to reassociate, max/min, integer and/or/add):
// the partials start from its neutral element and the original output's
// initial value is combined in once, at the end.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCSPLITREDUCTIONS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

/// The neutral element of `combiner` (MLIR's), or null if the order in which
/// it combines may matter.
TypedAttr neutral(Operation *combiner) {
  if (auto add = dyn_cast<arith::AddFOp>(combiner);
      add && !arith::bitEnumContainsAll(add.getFastmath(),
                                        arith::FastMathFlags::reassoc))
    return {};
  if (!isa<arith::AddFOp, arith::MaximumFOp, arith::MaxNumFOp,
           arith::MinimumFOp, arith::MinNumFOp, arith::AddIOp, arith::OrIOp,
           arith::XOrIOp, arith::AndIOp, arith::MaxUIOp, arith::MinUIOp,
           arith::MaxSIOp, arith::MinSIOp>(combiner))
    return {};
  return arith::getNeutralElement(combiner).value_or(TypedAttr());
}

struct LpcSplitReductionsPass
    : ::mlir::lpc::impl::LpcSplitReductionsBase<LpcSplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation()->walk([&](linalg::GenericOp g) {
      if (g.hasPureBufferSemantics() && g.getNumLoops() > 0 &&
          g.getNumReductionLoops() == g.getNumLoops())
        candidates.push_back(g);
    });
    for (linalg::GenericOp g : candidates)
      split(g);
  }

  void split(linalg::GenericOp g) {
    SmallVector<int64_t> ranges = g.getStaticLoopRanges();
    if (ShapedType::isDynamic(ranges[0]))
      return;
    // P: the largest power of two up to maxParts dividing n0.
    int64_t n0 = ranges[0], parts = 1;
    while (parts * 2 <= maxParts && n0 % (parts * 2) == 0)
      parts *= 2;
    if (parts < minParts)
      return;
    Block &body = g.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    // Each output: 0-d, combined once by a recognised combiner.
    SmallVector<Operation *> combiners;
    SmallVector<TypedAttr> neutrals;
    for (OpOperand &out : g.getDpsInitsMutable()) {
      auto mt = dyn_cast<MemRefType>(out.get().getType());
      if (!mt || mt.getRank() != 0)
        return;
      BlockArgument acc = g.getMatchingBlockArgument(&out);
      Value yielded =
          yield.getOperand(out.getOperandNumber() - g.getNumDpsInputs());
      Operation *combiner = yielded.getDefiningOp();
      if (!combiner || combiner->getBlock() != &body || !acc.hasOneUse() ||
          *acc.getUsers().begin() != combiner ||
          combiner->getNumOperands() != 2 || !yielded.hasOneUse())
        return;
      TypedAttr n = neutral(combiner);
      if (!n)
        return;
      combiners.push_back(combiner);
      neutrals.push_back(n);
    }

    MLIRContext *ctx = &getContext();
    Location loc = g.getLoc();
    unsigned nLoops = g.getNumLoops();
    // New loops: (p, k, d1, ...) with old d0 = k * P + p. linalg wants
    // invertible maps (dimensions, not k * P + p), so an input indexed by d0
    // is viewed with that dimension expanded to [n0 / P, P]: its map gets
    // (k, p) there. Old d_i (i > 0) is new d_{i+1}.
    auto shifted = [&](AffineExpr e) {
      SmallVector<AffineExpr> repl{getAffineConstantExpr(0, ctx)};
      for (unsigned d = 1; d < nLoops; ++d)
        repl.push_back(getAffineDimExpr(d + 1, ctx));
      return e.replaceDims(repl);
    };
    AffineExpr p0 = getAffineDimExpr(0, ctx), k1 = getAffineDimExpr(1, ctx);
    SmallVector<AffineMap> maps;
    SmallVector<Value> inputs;
    SmallVector<std::function<Value(OpBuilder &)>> makeInputs;
    for (OpOperand *in : g.getDpsInputOperands()) {
      AffineMap m = g.getMatchingIndexingMap(in);
      auto mt = dyn_cast<MemRefType>(in->get().getType());
      if (!mt)
        return;
      int pos = -1;
      SmallVector<AffineExpr> results;
      for (auto [j, e] : llvm::enumerate(m.getResults())) {
        if (e.isFunctionOfDim(0)) {
          if (pos >= 0 || e != getAffineDimExpr(0, ctx))
            return; // d0 in a compound expression or twice
          pos = static_cast<int>(j);
          results.push_back(k1);
          results.push_back(p0);
        } else {
          results.push_back(shifted(e));
        }
      }
      maps.push_back(AffineMap::get(nLoops + 1, 0, results, ctx));
      if (pos < 0) {
        makeInputs.push_back([v = in->get()](OpBuilder &) { return v; });
        continue;
      }
      SmallVector<int64_t> shape(mt.getShape());
      shape.erase(shape.begin() + pos);
      shape.insert(shape.begin() + pos, {n0 / parts, parts});
      SmallVector<ReassociationIndices> groups;
      for (int64_t j = 0, r = 0; j < mt.getRank(); ++j) {
        if (j == pos)
          groups.push_back({r, r + 1}), r += 2;
        else
          groups.push_back({r}), ++r;
      }
      FailureOr<MemRefType> et =
          memref::ExpandShapeOp::computeExpandedType(mt, shape, groups);
      if (failed(et))
        return;
      makeInputs.push_back([=, v = in->get()](OpBuilder &ob) -> Value {
        return memref::ExpandShapeOp::create(ob, loc, *et, v, groups);
      });
    }
    OpBuilder b(g);
    for (auto &make : makeInputs)
      inputs.push_back(make(b));
    AffineMap partialMap = AffineMap::get(nLoops + 1, 0, {p0}, ctx);

    SmallVector<Value> partials;
    for (auto [out, n] : llvm::zip(g.getDpsInits(), neutrals)) {
      auto type = MemRefType::get({parts}, n.getType());
      Value buf = memref::AllocOp::create(b, loc, type);
      Value init = arith::ConstantOp::create(b, loc, n);
      linalg::FillOp::create(b, loc, init, buf);
      partials.push_back(buf);
    }
    for (size_t i = 0; i < partials.size(); ++i)
      maps.push_back(partialMap);
    SmallVector<utils::IteratorType> iters(nLoops + 1,
                                           utils::IteratorType::reduction);
    iters[0] = utils::IteratorType::parallel;
    auto partial = linalg::GenericOp::create(b, loc, TypeRange{}, inputs,
                                             partials, maps, iters);
    // Same body; linalg.index d becomes the old index of d.
    IRMapping map;
    partial.getRegion().getBlocks().clear();
    g.getRegion().cloneInto(&partial.getRegion(), map);
    Block &nb = partial.getRegion().front();
    SmallVector<linalg::IndexOp> indices(nb.getOps<linalg::IndexOp>());
    for (linalg::IndexOp idx : indices) {
      OpBuilder ib(idx);
      uint64_t d = idx.getDim();
      Value v;
      if (d == 0) {
        Value p = linalg::IndexOp::create(ib, idx.getLoc(), 0);
        Value k = linalg::IndexOp::create(ib, idx.getLoc(), 1);
        Value kp = arith::MulIOp::create(
            ib, idx.getLoc(), k,
            arith::ConstantIndexOp::create(ib, idx.getLoc(), parts));
        v = arith::AddIOp::create(ib, idx.getLoc(), kp, p);
      } else {
        v = linalg::IndexOp::create(ib, idx.getLoc(), d + 1);
      }
      idx.replaceAllUsesWith(v);
      idx.erase();
    }

    // The partials into the original outputs, combined the same way.
    AffineMap all = AffineMap::getMultiDimIdentityMap(1, ctx);
    AffineMap none = AffineMap::get(1, 0, {}, ctx);
    for (auto [buf, out, combiner] :
         llvm::zip(partials, g.getDpsInits(), combiners)) {
      linalg::GenericOp::create(
          b, loc, TypeRange{}, ValueRange{buf}, ValueRange{out},
          ArrayRef<AffineMap>{all, none},
          ArrayRef<utils::IteratorType>{utils::IteratorType::reduction},
          [&](OpBuilder &fb, Location l, ValueRange args) {
            Operation *c = fb.clone(*combiner);
            c->setOperands({args[1], args[0]});
            linalg::YieldOp::create(fb, l, c->getResult(0));
          });
    }
    for (Value buf : partials)
      memref::DeallocOp::create(b, loc, buf);
    g.erase();
  }
};

} // namespace
