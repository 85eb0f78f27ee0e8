//===- FuseCastTransposes.cpp - --lpc-fuse-cast-transposes ----------------===//
//
// An FP8 GEMM operand that cuBLASLt needs in the TN layout is quantized by
// one kernel (the cast, with its amax and saturation counts fused in by
// lpc-fuse-sibling-reductions) and then copied transposed by another
// (lpc-gemm-to-calls{fp8}): the FP8 tensor is written, read back and
// written again, and the transposed copy is a launch of its own.
//
// This pass makes the cast write the transposed copy too, in the same pass
// over the source: each iteration takes a T x T tile (T = `bytes` / the FP8
// element's size: 16 x 16), R rows at a time (R = 4 bytes / the element
// size: 4 for FP8), in an scf.for of T / R steps. A step loads its R
// source rows of T consecutive elements (LLVM's load/store vectorizer
// makes vector loads of them), runs the cast's body on each element (R x T
// copies of it), stores the R rows of the FP8 tensor (one 16-byte store
// each) and the T pieces of the transposed rows they make (R consecutive
// bytes each: one 4-byte store). A whole tile unrolled (T x T copies of
// the body, 16-byte transposed stores as lpc-tile-transposes makes) took
// LLVM's NVPTX pipeline minutes per kernel (straight-line strength
// reduction and the SLP vectorizer grow faster than linearly with a block's
// size); a thread's R-byte pieces of one 32-byte sector follow each other
// within a few hundred instructions, and L2 merges them. The column tiles
// are the innermost loop, so that neighbouring GPU threads read
// neighbouring pieces of the same rows.
//
// The cast's reductions (amax, counts) go per tile: each tile combines its
// elements in registers, from the combiner's neutral element, and stores
// one partial; a full reduction of the partials into the original outputs
// follows (which lpc-split-reductions then splits as any other). That
// reorders the reduction, so every combiner must be one whose order does
// not matter (max/min, integer add/or, an addf allowed to reassociate): the
// results are bit for bit those of the unfused lowering.
//
// Taken: a linalg.transpose that lpc-tile-transposes would tile, into a
// fresh allocation that nothing between the cast and the transpose uses,
// whose input (or the buffer it is a collapse_shape view of, the cast's
// loops then collapsed the same way first) was last written, in the same
// block, by a linalg.generic
// without linalg.index whose loops are all reductions (outputs: the FP8
// tensor and other identity-indexed ones written once per iteration, and
// 0-d accumulators) or all parallel (outputs all written once), reading
// buffers it does not write through projected-permutation maps. The
// transposed copy is then written where the cast runs: the same values,
// since nothing writes the FP8 tensor in between.
//
//===----------------------------------------------------------------------===//

#include "KernelBuffers.h"
#include "LoopStageUtils.h"
#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCFUSECASTTRANSPOSES
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

/// A cast and the transpose of one of its outputs, to be fused.
struct Candidate {
  linalg::GenericOp cast;
  linalg::TransposeOp transpose;
  memref::AllocOp transposedAlloc;
  unsigned transposedOut; // which output of the cast the transpose reads
  // The transpose reads a collapsed view of that output (a [B, S, D]
  // activation as the GEMM's [B * S, D] operand): the cast's loops are
  // collapsed the same way before the fusion.
  memref::CollapseShapeOp collapsed;
  int64_t tile;
  SmallVector<Operation *> combiners; // per output; null: written once
  SmallVector<TypedAttr> neutrals;
};

/// Whether output `out` of `g` is written once per iteration, where the
/// loops say in order (its old value unread).
bool isWriteOnce(linalg::GenericOp g, OpOperand &out) {
  return g.getMatchingBlockArgument(&out).use_empty() &&
         g.getMatchingIndexingMap(&out).isIdentity();
}

/// Fills `c.combiners` and `c.neutrals` and finds the transposed output;
/// false if `g` is not a cast this pass can tile (see the file comment).
bool matchCast(linalg::GenericOp g, Value x, Candidate &c) {
  auto xt = cast<MemRefType>(x.getType());
  if (!g.hasPureBufferSemantics() || g.getNumLoops() != unsigned(xt.getRank()))
    return false;
  bool allReduction = g.getNumParallelLoops() == 0;
  if (!allReduction && g.getNumReductionLoops() != 0)
    return false;
  Block &body = g.getRegion().front();
  for (Operation &op : body.without_terminator())
    if (isa<linalg::IndexOp>(op) || !isMemoryEffectFree(&op) ||
        op.getNumRegions() != 0)
      return false;
  SmallVector<Value> inRoots, outRoots;
  for (OpOperand *in : g.getDpsInputOperands()) {
    if (!isa<MemRefType>(in->get().getType()) ||
        !g.getMatchingIndexingMap(in).isProjectedPermutation())
      return false;
    inRoots.push_back(lpc::bufferRootOf(in->get()));
  }
  bool found = false;
  for (OpOperand &out : g.getDpsInitsMutable()) {
    auto mt = dyn_cast<MemRefType>(out.get().getType());
    if (!mt || !mt.hasStaticShape())
      return false;
    unsigned k = out.getOperandNumber() - g.getNumDpsInputs();
    if (isWriteOnce(g, out)) {
      outRoots.push_back(lpc::bufferRootOf(out.get()));
      c.combiners.push_back(nullptr);
      c.neutrals.push_back({});
      if (out.get() == x) {
        c.transposedOut = k;
        found = true;
      }
      continue;
    }
    // An accumulator: 0-d, combined in an order that does not matter.
    TypedAttr nt;
    Operation *combiner = lpc::accumulatorCombiner(g, out, nt);
    if (!allReduction || mt.getRank() != 0 || !combiner)
      return false;
    c.combiners.push_back(combiner);
    c.neutrals.push_back(nt);
  }
  // Loading a tile's inputs before storing its outputs needs them apart
  // (the accumulators are written after the loop, as before).
  return found && !lpc::buffersMayConflict(inRoots, outRoots);
}

/// The cast that `t` can be fused into, if any.
std::optional<Candidate> match(linalg::TransposeOp t, int64_t bytes) {
  Candidate c;
  c.tile = lpc::transposeTile(t, bytes);
  if (!c.tile)
    return std::nullopt;
  Value x = t.getInput();
  c.transposedAlloc = t.getInit().getDefiningOp<memref::AllocOp>();
  if (!c.transposedAlloc || c.transposedAlloc->getBlock() != t->getBlock())
    return std::nullopt;
  Value xRoot = lpc::bufferRootOf(x);
  Value xtRoot = c.transposedAlloc.getResult();
  // Back from the transpose to the last op that writes its input; nothing
  // on the way may touch the transposed copy's buffer.
  for (Operation *op = t->getPrevNode(); op; op = op->getPrevNode()) {
    if (op == c.transposedAlloc)
      continue;
    lpc::Footprint f = lpc::footprintOf(op);
    if (lpc::buffersMayConflict(f.reads, {xtRoot}) ||
        lpc::buffersMayConflict(f.writes, {xtRoot}))
      return std::nullopt;
    if (!lpc::buffersMayConflict(f.writes, {xRoot}))
      continue;
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g)
      return std::nullopt;
    if (!matchCast(g, x, c)) {
      auto view = x.getDefiningOp<memref::CollapseShapeOp>();
      c.combiners.clear();
      c.neutrals.clear();
      if (!view || !matchCast(g, view.getSrc(), c))
        return std::nullopt;
      c.collapsed = view;
    }
    c.cast = g;
    c.transpose = t;
    return c;
  }
  return std::nullopt;
}

/// Replaces the cast and the transpose with the tiled loop and the
/// reduction of its partials (see the file comment).
void fuse(Candidate &c) {
  if (c.collapsed) {
    // The cast's loops as the view's dimensions; then it writes the view.
    IRRewriter rewriter(c.cast.getContext());
    rewriter.setInsertionPoint(c.cast);
    FailureOr<linalg::CollapseResult> r = linalg::collapseOpIterationDims(
        c.cast, c.collapsed.getReassociationIndices(), rewriter);
    if (failed(r))
      return;
    rewriter.eraseOp(c.cast);
    auto g = cast<linalg::GenericOp>(r->collapsedOp.getOperation());
    Candidate again = c;
    again.cast = g;
    again.collapsed = {};
    again.combiners.clear();
    again.neutrals.clear();
    // Collapsing keeps what matchCast looks at; should it not, the
    // collapsed cast stays as it is (the same computation).
    if (matchCast(g, g.getDpsInits()[c.transposedOut], again))
      fuse(again);
    return;
  }
  linalg::GenericOp g = c.cast;
  MLIRContext *ctx = g.getContext();
  Location loc = g.getLoc();
  if (g->isBeforeInBlock(c.transposedAlloc))
    c.transposedAlloc->moveBefore(g);
  Value xt = c.transposedAlloc.getResult();
  auto xType = cast<MemRefType>(g.getDpsInits()[c.transposedOut].getType());
  int64_t rank = xType.getRank(), t = c.tile;
  ArrayRef<int64_t> shape = xType.getShape();

  OpBuilder b(g);
  llvm::SmallDenseMap<int64_t, Value> constants;
  auto cst = [&](int64_t v) -> Value {
    Value &k = constants[v];
    if (!k)
      k = arith::ConstantIndexOp::create(b, loc, v);
    return k;
  };
  // (leading dims..., row tiles, column tiles): one partial per tile for
  // each accumulator.
  SmallVector<int64_t> tiles(shape.begin(), shape.end());
  tiles[rank - 2] /= t;
  tiles[rank - 1] /= t;
  SmallVector<Value> partials;
  for (auto [out, combiner] : llvm::zip(g.getDpsInits(), c.combiners))
    if (combiner)
      partials.push_back(memref::AllocOp::create(
          b, loc,
          MemRefType::get(tiles,
                          cast<MemRefType>(out.getType()).getElementType())));
  SmallVector<Value> lbs(rank, cst(0)), steps(rank, cst(1)), ubs;
  for (int64_t n : tiles)
    ubs.push_back(cst(n));
  auto loop = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
  OpBuilder outer = b;
  b.setInsertionPointToStart(loop.getBody());
  constants.clear();
  ValueRange ivs = loop.getInductionVars();
  Value row0 = arith::MulIOp::create(b, loc, ivs[rank - 2], cst(t));
  Value col0 = arith::MulIOp::create(b, loc, ivs[rank - 1], cst(t));
  SmallVector<Value> cols;
  for (int64_t k = 0; k < t; ++k)
    cols.push_back(k == 0 ? col0 : arith::AddIOp::create(b, loc, col0, cst(k)).getResult());

  // The tile's rows in groups of R, one scf.for step per group, its R x T
  // elements unrolled: R rows of the transposed copy's rows of 4 bytes per
  // step, where a whole unrolled tile (T x T bodies) takes LLVM's
  // straight-line passes minutes.
  unsigned nIn = g.getNumDpsInputs(), nOut = g.getNumDpsInits();
  int64_t e = xType.getElementTypeBitWidth() / 8;
  int64_t r = std::clamp<int64_t>(4 / e, 1, t);
  SmallVector<Value> inits;
  for (unsigned k = 0; k < nOut; ++k)
    if (c.combiners[k])
      inits.push_back(arith::ConstantOp::create(b, loc, c.neutrals[k]));
  // An input the tile's elements share (a 0-d scale, say) is loaded once.
  SmallVector<OpOperand *> ins = g.getDpsInputOperands();
  auto perElement = [&](AffineMap m) {
    return m.isFunctionOfDim(rank - 2) || m.isFunctionOfDim(rank - 1);
  };
  // The indices `m` gives for the element in row `row`, column k.
  auto indices = [&](AffineMap m, Value row, int64_t k) {
    SmallVector<Value> idx;
    for (AffineExpr ex : m.getResults()) {
      int64_t d = cast<AffineDimExpr>(ex).getPosition();
      idx.push_back(d < rank - 2 ? ivs[d] : d == rank - 2 ? row : cols[k]);
    }
    return idx;
  };
  SmallVector<Value> shared(nIn);
  for (auto [j, in] : llvm::enumerate(ins)) {
    AffineMap m = g.getMatchingIndexingMap(in);
    if (!perElement(m))
      shared[j] = memref::LoadOp::create(b, loc, in->get(), indices(m, row0, 0));
  }
  auto group = scf::ForOp::create(b, loc, cst(0), cst(t / r), cst(1), inits);
  if (group.getBody()->mightHaveTerminator())
    group.getBody()->getTerminator()->erase(); // the yield is made below
  b.setInsertionPointToStart(group.getBody());
  constants.clear();
  // Row i of the group: row0 + step * R + i (a multiple of R plus i, which
  // LLVM sees when it looks at the store addresses' alignment).
  Value first = arith::AddIOp::create(
      b, loc, row0, arith::MulIOp::create(b, loc, group.getInductionVar(), cst(r)));
  SmallVector<Value> rows;
  for (int64_t i = 0; i < r; ++i)
    rows.push_back(i == 0 ? first : arith::AddIOp::create(b, loc, first, cst(i)).getResult());

  // All loads first, row by row.
  SmallVector<SmallVector<Value>> loaded(r * t);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t k = 0; k < t; ++k)
      for (auto [j, in] : llvm::enumerate(ins))
        loaded[i * t + k].push_back(
            shared[j] ? shared[j]
                      : memref::LoadOp::create(
                            b, loc, in->get(),
                            indices(g.getMatchingIndexingMap(in), rows[i], k))
                            .getResult());

  // The body once per element, in row-major order, each accumulator
  // carried from one element to the next.
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<Value> accs(nOut);
  for (unsigned k = 0, a = 0; k < nOut; ++k)
    if (c.combiners[k])
      accs[k] = group.getRegionIterArgs()[a++];
  SmallVector<SmallVector<Value>> written(r * t);
  for (int64_t el = 0; el < r * t; ++el) {
    IRMapping m;
    for (unsigned j = 0; j < nIn; ++j)
      m.map(body.getArgument(j), loaded[el][j]);
    for (unsigned k = 0; k < nOut; ++k)
      if (c.combiners[k])
        m.map(body.getArgument(nIn + k), accs[k]);
    for (Operation &op : body.without_terminator())
      b.clone(op, m);
    written[el].resize(nOut);
    for (unsigned k = 0; k < nOut; ++k) {
      Value v = m.lookupOrDefault(yield.getOperand(k));
      (c.combiners[k] ? accs[k] : written[el][k]) = v;
    }
  }

  // Then the stores: each written-once output row by row, the transposed
  // copy destination row by destination row (source column k).
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  for (auto [k, out] : llvm::enumerate(g.getDpsInits()))
    if (!c.combiners[k])
      for (int64_t i = 0; i < r; ++i)
        for (int64_t kk = 0; kk < t; ++kk)
          memref::StoreOp::create(b, loc, written[i * t + kk][k], out,
                                  indices(id, rows[i], kk));
  for (int64_t kk = 0; kk < t; ++kk)
    for (int64_t i = 0; i < r; ++i) {
      SmallVector<Value> idx = indices(id, rows[i], kk);
      std::swap(idx[rank - 2], idx[rank - 1]);
      memref::StoreOp::create(b, loc, written[i * t + kk][c.transposedOut], xt,
                              idx);
    }
  SmallVector<Value> carried;
  for (unsigned k = 0; k < nOut; ++k)
    if (c.combiners[k])
      carried.push_back(accs[k]);
  scf::YieldOp::create(b, loc, carried);

  // Each accumulator's partial for the tile.
  b.setInsertionPointAfter(group);
  SmallVector<Value> tileIdx(ivs.begin(), ivs.end());
  SmallVector<Value> accOuts;
  SmallVector<Operation *> accCombiners;
  for (unsigned k = 0, p = 0; k < nOut; ++k)
    if (c.combiners[k]) {
      memref::StoreOp::create(b, loc, group.getResult(p), partials[p], tileIdx);
      ++p;
      accOuts.push_back(g.getDpsInits()[k]);
      accCombiners.push_back(c.combiners[k]);
    }

  // The partials into the original accumulators (their initial values
  // combined in once), one full reduction for them all.
  if (!partials.empty()) {
    lpc::combinePartials(outer, loc, partials, accOuts, accCombiners);
    for (Value p : partials)
      memref::DeallocOp::create(outer, loc, p);
  }
  c.transpose.erase();
  g.erase();
}

struct LpcFuseCastTransposesPass
    : ::mlir::lpc::impl::LpcFuseCastTransposesBase<LpcFuseCastTransposesPass> {
  using Base::Base;
  void runOnOperation() override {
    if (bytes < 2 || !llvm::has_single_bit(uint64_t(bytes))) {
      getOperation()->emitError("lpc-fuse-cast-transposes: bytes must be a "
                                "power of two of at least 2, got ")
          << int64_t(bytes);
      return signalPassFailure();
    }
    SmallVector<linalg::TransposeOp> transposes;
    getOperation()->walk(
        [&](linalg::TransposeOp t) { transposes.push_back(t); });
    // A cast fuses with one transpose: for a second transpose of the same
    // tensor, the last op to write it is the fused loop, and it stays a
    // transpose (lpc-tile-transposes tiles it).
    for (linalg::TransposeOp t : transposes)
      if (std::optional<Candidate> c = match(t, bytes))
        fuse(*c);
  }
};

} // namespace
