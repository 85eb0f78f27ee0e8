//===- SplitReductions.cpp - --lpc-split-reductions -----------------------===//
//
// Two-level reductions for the GPU (and, with `contiguous` and `exact`, for
// the host's threads: see the end of this comment). A bufferized
// linalg.generic with only reduction dimensions (a loss, an amax, a
// gradient norm) reduces into 0-d buffers, which would be one thread's
// loop; one with parallel dimensions
// (softmax and layernorm rows, a bias gradient's columns) would be a thread
// per output element running its whole row or column: too few threads for
// a few long rows, and reads a row apart between neighbouring threads.
//
// One reduction dimension d_s (size n) is split as d_s = k * P + p: P
// partial results per output element computed in parallel (thread p takes
// elements p, p + P, ...), then a small reduction of the P partials into
// the original output. Which dimension: a full reduction is first
// flattened to one loop where its inputs allow (an amax over [4, 2048,
// 16384] would otherwise split only its first dimension, 4), then split
// into up to max-parts partials of at least min-work elements, and its
// partials split again (into partials of at least max-serial each) while
// more than max-serial are left for the last, single-thread step;
// otherwise the one along the largest input's last
// (contiguous) dimension, with p the innermost parallel dimension (the
// threads of a row read neighbouring elements), or if that dimension is
// parallel (columns), the longest reduction dimension with p outermost (the
// threads keep neighbouring columns); up to row-parts partials, for rows of
// at least min-row elements. Each output's combiner must be one whose order
// does not matter (an addf allowed to reassociate, max/min, integer
// and/or/add): the partials start from its neutral element (selected in
// their first iteration: no fill of the partials' buffer) and the
// original output's initial value is combined in once, at the end.
//
// The host pipeline splits only full reductions whose result the order
// cannot change (`exact`: no float sums) as d = p * (n / P) + k
// (`contiguous`): each partial is one contiguous run, a thread's chunk for
// the runtime's pool, and its buffer is filled before the loop.
//
//===----------------------------------------------------------------------===//

#include "LoopStageUtils.h"
#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// The neutral element of `combiner` (MLIR's), or null if the order in which
/// it combines may matter (with `exact`: may change the result at all).
static TypedAttr reorderableNeutral(Operation *combiner, bool exact) {
  if (auto add = dyn_cast<arith::AddFOp>(combiner);
      add && (exact || !arith::bitEnumContainsAll(
                           add.getFastmath(), arith::FastMathFlags::reassoc)))
    return {};
  if (!isa<arith::AddFOp, arith::MaximumFOp, arith::MaxNumFOp,
           arith::MinimumFOp, arith::MinNumFOp, arith::AddIOp, arith::OrIOp,
           arith::XOrIOp, arith::AndIOp, arith::MaxUIOp, arith::MinUIOp,
           arith::MaxSIOp, arith::MinSIOp>(combiner))
    return {};
  return arith::getNeutralElement(combiner).value_or(TypedAttr());
}

Operation *mlir::lpc::accumulatorCombiner(linalg::GenericOp g, OpOperand &out,
                                          TypedAttr &neutral, bool exact) {
  Block &body = g.getRegion().front();
  BlockArgument acc = g.getMatchingBlockArgument(&out);
  Value yielded = body.getTerminator()->getOperand(out.getOperandNumber() -
                                                   g.getNumDpsInputs());
  Operation *combiner = yielded.getDefiningOp();
  if (!combiner || combiner->getBlock() != &body || !acc.hasOneUse() ||
      *acc.getUsers().begin() != combiner ||
      combiner->getNumOperands() != 2 || !yielded.hasOneUse())
    return nullptr;
  neutral = reorderableNeutral(combiner, exact);
  return neutral ? combiner : nullptr;
}

linalg::GenericOp mlir::lpc::combinePartials(OpBuilder &b, Location loc,
                                             ValueRange partials,
                                             ValueRange outs,
                                             ArrayRef<Operation *> combiners) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = cast<MemRefType>(partials.front().getType()).getRank();
  SmallVector<AffineMap> maps(partials.size(),
                              AffineMap::getMultiDimIdentityMap(rank, ctx));
  maps.append(outs.size(), AffineMap::get(rank, 0, {}, ctx));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::reduction);
  return linalg::GenericOp::create(
      b, loc, TypeRange{}, partials, outs, maps, iters,
      [&](OpBuilder &fb, Location l, ValueRange args) {
        SmallVector<Value> yielded;
        unsigned n = combiners.size();
        for (auto [i, combiner] : llvm::enumerate(combiners)) {
          Operation *c = fb.clone(*combiner);
          c->setOperands({args[n + i], args[i]});
          yielded.push_back(c->getResult(0));
        }
        linalg::YieldOp::create(fb, l, yielded);
      });
}

namespace {

struct LpcSplitReductionsPass
    : ::mlir::lpc::impl::LpcSplitReductionsBase<LpcSplitReductionsPass> {
  using Base::Base;

  /// The combining steps this pass made that are to be split again.
  llvm::DenseSet<Operation *> combines;

  void runOnOperation() override {
    combines.clear();
    SmallVector<linalg::GenericOp> work;
    getOperation()->walk([&](linalg::GenericOp g) {
      if (g.hasPureBufferSemantics() && g.getNumReductionLoops() > 0)
        work.push_back(g);
    });
    while (!work.empty())
      split(work.pop_back_val(), work);
  }

  /// An output of a full reduction written once per iteration (its old
  /// value unread, indexed by every loop in order): an elementwise result
  /// computed in the same pass (lpc-fuse-sibling-reductions puts FP8
  /// quantization there). The split writes it where it reads the inputs.
  static bool isWriteOnce(linalg::GenericOp g, OpOperand &out) {
    return g.getNumParallelLoops() == 0 &&
           g.getMatchingBlockArgument(&out).use_empty() &&
           g.getMatchingIndexingMap(&out).isIdentity();
  }

  /// Each output's combiner and its neutral element (null for a write-once
  /// output); false if an output is neither write-once nor a recognised,
  /// reorderable combination of its accumulator.
  bool combinersOf(linalg::GenericOp g,
                   SmallVectorImpl<Operation *> &combiners,
                   SmallVectorImpl<TypedAttr> &neutrals) {
    bool anyCombiner = false;
    for (OpOperand &out : g.getDpsInitsMutable()) {
      auto mt = dyn_cast<MemRefType>(out.get().getType());
      if (!mt || !mt.hasStaticShape())
        return false;
      if (isWriteOnce(g, out)) {
        combiners.push_back(nullptr);
        neutrals.push_back({});
        continue;
      }
      TypedAttr nt;
      Operation *combiner = lpc::accumulatorCombiner(g, out, nt, exact);
      if (!combiner)
        return false;
      combiners.push_back(combiner);
      neutrals.push_back(nt);
      anyCombiner = true;
    }
    return anyCombiner;
  }

  /// A full reduction over several loops as one over a single loop, when
  /// every input is read whole in loop order from a buffer that collapses
  /// to one dimension (so that partial p takes elements p, p + P, ... of
  /// the whole tensor: enough of them, read by neighbouring threads at
  /// neighbouring addresses); otherwise `g` itself.
  linalg::GenericOp flattened(linalg::GenericOp g) {
    SmallVector<OpOperand *> whole = g.getDpsInputOperands();
    for (OpOperand &out : g.getDpsInitsMutable())
      if (isWriteOnce(g, out))
        whole.push_back(&out);
    for (OpOperand *in : whole) {
      AffineMap m = g.getMatchingIndexingMap(in);
      if (m.getNumResults() == 0)
        continue;
      auto mt = dyn_cast<MemRefType>(in->get().getType());
      if (!mt || !m.isIdentity())
        return g;
      ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, mt.getRank()));
      if (!memref::CollapseShapeOp::isGuaranteedCollapsible(mt, {all}))
        return g;
    }
    IRRewriter rewriter(&getContext());
    rewriter.setInsertionPoint(g);
    ReassociationIndices loops =
        llvm::to_vector(llvm::seq<int64_t>(0, g.getNumLoops()));
    FailureOr<linalg::CollapseResult> r =
        linalg::collapseOpIterationDims(g, {loops}, rewriter);
    if (failed(r))
      return g;
    rewriter.eraseOp(g);
    return cast<linalg::GenericOp>(r->collapsedOp.getOperation());
  }

  /// The largest power of two up to `most` dividing `n`.
  static int64_t partsFor(int64_t n, int64_t most) {
    int64_t parts = 1;
    while (parts * 2 <= most && n % (parts * 2) == 0)
      parts *= 2;
    return parts;
  }

  /// Which loop to split, where the partial index p goes among the new
  /// loops, and into how many parts; nullopt: leave `g` as it is.
  struct Plan {
    unsigned dim, pPos;
    int64_t parts;
  };
  std::optional<Plan> plan(linalg::GenericOp g, ArrayRef<int64_t> ranges) {
    unsigned nLoops = g.getNumLoops();
    if (g.getNumParallelLoops() == 0) {
      // A full reduction: up to max-parts partials of at least min-work
      // elements each, along the loop that allows the most (the first of
      // equals; after flattened() there is one loop).
      int64_t total = 1;
      for (int64_t n : ranges)
        total *= n;
      // Partials of partials: few and long (each of at least max-serial),
      // so that one more level is usually the last (each is a kernel
      // launch).
      int64_t work = combines.contains(g) ? maxSerial : minWork;
      int64_t cap = std::min<int64_t>(maxParts, total / work);
      unsigned dim = 0;
      for (unsigned d = 1; d < nLoops; ++d)
        if (partsFor(ranges[d], cap) > partsFor(ranges[dim], cap))
          dim = d;
      int64_t parts = partsFor(ranges[dim], cap);
      if (parts < (combines.contains(g) ? 2 : minParts))
        return std::nullopt;
      return Plan{dim, 0, parts};
    }
    // A reduction per output element: the loop that runs along the
    // largest input's last (contiguous) dimension decides.
    OpOperand *largest = nullptr;
    int64_t most = -1;
    for (OpOperand *in : g.getDpsInputOperands()) {
      auto mt = dyn_cast<MemRefType>(in->get().getType());
      if (mt && mt.hasStaticShape() && mt.getRank() > 0 &&
          mt.getNumElements() > most)
        largest = in, most = mt.getNumElements();
    }
    if (!largest)
      return std::nullopt;
    AffineMap m = g.getMatchingIndexingMap(largest);
    auto last = dyn_cast<AffineDimExpr>(m.getResults().back());
    if (!last)
      return std::nullopt;
    SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
    unsigned dim, pPos;
    if (iters[last.getPosition()] == utils::IteratorType::reduction) {
      // Along a row (softmax, layernorm): p is the innermost parallel
      // loop, so neighbouring threads read neighbouring elements of a row.
      dim = last.getPosition();
      pPos = nLoops;
    } else {
      // Down columns (a bias gradient over [batch, tokens, features]): the
      // longest reduction loop (the first of equals); p goes outermost, so
      // neighbouring threads keep neighbouring columns.
      dim = nLoops;
      for (unsigned d = 0; d < nLoops; ++d)
        if (iters[d] == utils::IteratorType::reduction &&
            (dim == nLoops || ranges[d] > ranges[dim]))
          dim = d;
      pPos = 0;
    }
    if (ranges[dim] < minRow)
      return std::nullopt;
    int64_t parts = partsFor(ranges[dim], rowParts);
    if (parts < 2)
      return std::nullopt;
    return Plan{dim, pPos, parts};
  }

  void split(linalg::GenericOp g, SmallVectorImpl<linalg::GenericOp> &work) {
    if (llvm::any_of(g.getStaticLoopRanges(), ShapedType::isDynamic))
      return;
    SmallVector<Operation *> combiners;
    SmallVector<TypedAttr> neutrals;
    if (!combinersOf(g, combiners, neutrals))
      return;
    bool full = g.getNumParallelLoops() == 0;
    if (full && g.getNumLoops() > 1) {
      g = flattened(g);
      combiners.clear();
      neutrals.clear();
      combinersOf(g, combiners, neutrals);
    }
    SmallVector<int64_t> ranges = g.getStaticLoopRanges();
    std::optional<Plan> pl = plan(g, ranges);
    if (!pl)
      return;
    const unsigned s = pl->dim, pPos = pl->pPos;
    const int64_t parts = pl->parts, n = ranges[s];
    // d_s = p * (n / P) + k (contiguous runs, full reductions only) or
    // k * P + p.
    const bool runs = contiguous && full;

    MLIRContext *ctx = &getContext();
    Location loc = g.getLoc();
    unsigned nLoops = g.getNumLoops();
    // New loops: the old ones with p inserted at pPos; old loop s becomes k
    // with old d_s = k * P + p. linalg wants invertible maps (dimensions,
    // not k * P + p), so an input indexed by d_s is viewed with that
    // dimension expanded to [n / P, P]: its map gets (k, p) there.
    auto newDim = [&](unsigned d) { return d >= pPos ? d + 1 : d; };
    SmallVector<AffineExpr> repl;
    for (unsigned d = 0; d < nLoops; ++d)
      repl.push_back(getAffineDimExpr(newDim(d), ctx));
    AffineExpr pExpr = getAffineDimExpr(pPos, ctx);
    AffineExpr kExpr = getAffineDimExpr(newDim(s), ctx);
    SmallVector<AffineMap> maps;
    SmallVector<Value> inputs;
    SmallVector<std::function<Value(OpBuilder &)>> makeInputs;
    // The inputs, then the write-once outputs: read (written) at element
    // k * P + p the same way.
    SmallVector<OpOperand *> expanded = g.getDpsInputOperands();
    for (OpOperand &out : g.getDpsInitsMutable())
      if (isWriteOnce(g, out))
        expanded.push_back(&out);
    for (OpOperand *in : expanded) {
      AffineMap m = g.getMatchingIndexingMap(in);
      auto mt = dyn_cast<MemRefType>(in->get().getType());
      if (!mt)
        return;
      int pos = -1;
      SmallVector<AffineExpr> results;
      for (auto [j, e] : llvm::enumerate(m.getResults())) {
        if (e.isFunctionOfDim(s)) {
          if (pos >= 0 || e != getAffineDimExpr(s, ctx))
            return; // d_s in a compound expression or twice
          pos = static_cast<int>(j);
          results.push_back(runs ? pExpr : kExpr);
          results.push_back(runs ? kExpr : pExpr);
        } else {
          results.push_back(e.replaceDims(repl));
        }
      }
      maps.push_back(AffineMap::get(nLoops + 1, 0, results, ctx));
      if (pos < 0) {
        makeInputs.push_back([v = in->get()](OpBuilder &) { return v; });
        continue;
      }
      SmallVector<int64_t> shape(mt.getShape());
      shape.erase(shape.begin() + pos);
      if (runs)
        shape.insert(shape.begin() + pos, {parts, n / parts});
      else
        shape.insert(shape.begin() + pos, {n / parts, parts});
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
    // Split off the write-once outputs' views and maps (in output order).
    unsigned nIn = g.getNumDpsInputs();
    SmallVector<Value> writeOnce(inputs.begin() + nIn, inputs.end());
    SmallVector<AffineMap> writeOnceMaps(maps.begin() + nIn, maps.end());
    inputs.resize(nIn);
    maps.resize(nIn);

    // Partials: each output's shape with a dimension of P where p is among
    // the loops (first or last), so that the threads of a warp, which
    // differ in the innermost parallel loop, access neighbouring partials.
    bool pFirst = pPos == 0;
    SmallVector<Value> partials, partialOuts;
    SmallVector<Operation *> partialCombiners;
    unsigned nextWriteOnce = 0;
    for (auto [out, nt, combiner] :
         llvm::zip(g.getDpsInitsMutable(), neutrals, combiners)) {
      if (!combiner) {
        partialOuts.push_back(writeOnce[nextWriteOnce]);
        maps.push_back(writeOnceMaps[nextWriteOnce++]);
        continue;
      }
      partialCombiners.push_back(combiner);
      auto mt = cast<MemRefType>(out.get().getType());
      SmallVector<int64_t> shape(mt.getShape());
      shape.insert(pFirst ? shape.begin() : shape.end(), parts);
      Value buf = memref::AllocOp::create(
          b, loc, MemRefType::get(shape, mt.getElementType()));
      partials.push_back(buf);
      partialOuts.push_back(buf);
      SmallVector<AffineExpr> results;
      for (AffineExpr e : g.getMatchingIndexingMap(&out).getResults())
        results.push_back(e.replaceDims(repl));
      results.insert(pFirst ? results.begin() : results.end(), pExpr);
      maps.push_back(AffineMap::get(nLoops + 1, 0, results, ctx));
    }
    SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
    iters.insert(iters.begin() + pPos, utils::IteratorType::parallel);
    auto partial = linalg::GenericOp::create(b, loc, TypeRange{}, inputs,
                                             partialOuts, maps, iters);
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
      if (d == s) {
        Value p = linalg::IndexOp::create(ib, idx.getLoc(), pPos);
        Value k = linalg::IndexOp::create(ib, idx.getLoc(), newDim(s));
        // k * P + p, or p * (n / P) + k.
        Value scaled = arith::MulIOp::create(
            ib, idx.getLoc(), runs ? p : k,
            arith::ConstantIndexOp::create(ib, idx.getLoc(),
                                           runs ? n / parts : parts));
        v = arith::AddIOp::create(ib, idx.getLoc(), scaled, runs ? k : p);
      } else {
        v = linalg::IndexOp::create(ib, idx.getLoc(), newDim(d));
      }
      idx.replaceAllUsesWith(v);
      idx.erase();
    }
    // No fill of the partials (on the GPU, a kernel per split): each
    // partial starts from the combiner's neutral element in its first
    // iteration (every reduction index 0), whatever the buffer held. On the
    // host (contiguous runs) a fill of the P partials before the loop
    // instead, which keeps a compare and a select out of every iteration.
    if (runs) {
      OpBuilder fb(partial);
      for (auto [buf, nt] : llvm::zip(partials, llvm::make_filter_range(
                                                    neutrals, [](TypedAttr a) {
                                                      return bool(a);
                                                    })))
        linalg::FillOp::create(fb, loc,
                               ValueRange{arith::ConstantOp::create(fb, loc, nt)},
                               ValueRange{buf});
    } else {
      OpBuilder ib = OpBuilder::atBlockBegin(&nb);
      Value first;
      for (auto [d, it] : llvm::enumerate(iters)) {
        if (it != utils::IteratorType::reduction)
          continue;
        Value i = linalg::IndexOp::create(ib, loc, d);
        Value zero = arith::CmpIOp::create(
            ib, loc, arith::CmpIPredicate::eq, i,
            arith::ConstantIndexOp::create(ib, loc, 0));
        first = first ? arith::AndIOp::create(ib, loc, first, zero) : zero;
      }
      for (auto [acc, nt] :
           llvm::zip(partial.getRegionOutputArgs(), neutrals)) {
        if (!nt)
          continue; // write-once
        Value n = arith::ConstantOp::create(ib, loc, nt);
        Value start = arith::SelectOp::create(ib, loc, first, n, acc);
        acc.replaceAllUsesExcept(start, start.getDefiningOp());
      }
    }

    // A full reduction's outputs (0-d: no loop indexes them) combine their
    // partials in one generic (one kernel per level for an amax and the
    // counts fused with it by lpc-fuse-sibling-reductions).
    SmallVector<Value> combinedOuts;
    for (auto [out, combiner] : llvm::zip(g.getDpsInits(), combiners))
      if (combiner)
        combinedOuts.push_back(out);
    if (full) {
      linalg::GenericOp combine = lpc::combinePartials(
          b, loc, partials, combinedOuts, partialCombiners);
      // Too many partials for one thread to combine: split again.
      if (parts > maxSerial) {
        work.push_back(combine);
        combines.insert(combine);
      }
    }
    // Otherwise each output's partials into the original output, combined
    // the same way: the output's dimensions in parallel, its P partials in
    // sequence.
    for (auto [buf, out, combiner] :
         llvm::zip(partials, combinedOuts, partialCombiners)) {
      if (full)
        break;
      unsigned rank = cast<MemRefType>(out.getType()).getRank();
      AffineMap all = AffineMap::getMultiDimIdentityMap(rank + 1, ctx);
      AffineMap outMap = AffineMap::get(
          rank + 1, 0,
          pFirst ? all.getResults().drop_front() : all.getResults().drop_back(),
          ctx);
      SmallVector<utils::IteratorType> combineIters(
          rank, utils::IteratorType::parallel);
      combineIters.insert(pFirst ? combineIters.begin() : combineIters.end(),
                          utils::IteratorType::reduction);
      linalg::GenericOp::create(
          b, loc, TypeRange{}, ValueRange{buf}, ValueRange{out},
          ArrayRef<AffineMap>{all, outMap}, combineIters,
          [&](OpBuilder &fb, Location l, ValueRange args) {
            Operation *c = fb.clone(*combiner);
            c->setOperands({args[1], args[0]});
            linalg::YieldOp::create(fb, l, c->getResult(0));
          });
    }
    for (Value buf : partials)
      memref::DeallocOp::create(b, loc, buf);
    combines.erase(g.getOperation());
    g.erase();
  }
};

} // namespace
