//===- FuseCastTransposes.cpp - --lpc-fuse-cast-transposes ----------------===//
//
// An FP8 GEMM operand that cuBLASLt needs in the TN layout is quantized by
// one kernel (the cast, with its amax and saturation counts fused in by
// lpc-fuse-sibling-reductions) and then copied transposed by another
// (lpc-gemm-to-calls{fp8}): the FP8 tensor is written, read back and
// written again, and the transposed copy is a launch of its own.
//
// This pass makes the cast write the transposed copy too, in the same pass
// over the source. Each iteration of an scf.parallel takes a tile of R rows
// by C columns: R x the FP8 element's size = 4 bytes, so that the R
// elements of one source column make one 4-byte store to a transposed row
// (R = 4 for FP8);
// C = 2T (T = `bytes` / the element size: 16), or T where the columns are
// no multiple of 2T. The row groups are the innermost dimension of the
// loop, so that neighbouring GPU threads (lpc-collapse-parallel-loops keeps
// the innermost dimension fastest) hold neighbouring rows: a warp's store
// to a transposed row is 32 x 4 consecutive bytes, whole sectors, where
// each thread writing a piece of its own row (the layout before, 16 x 16
// tiles with the column tiles innermost) cost a 32-byte sector per 4 bytes
// (measured on an H200: 0.6-0.7 TB/s). A thread loads its R source rows of
// C elements, runs the cast's body on each element (R x C copies of it,
// unrolled), stores its R rows of the FP8 tensor (each 2T bytes: a whole
// 32-byte sector, two 16-byte stores in a row) and the C pieces of the
// transposed rows. Each row is accessed as a 1-D subview (a run of the
// buffer): constant offsets from one pointer, which LLVM's load/store
// vectorizer merges into 16-byte accesses (with plain indices, `col0 + 15`
// became `col0 | 15` and the row's last bytes stayed scalar). With
// `base-align` (the GPU pipeline's 16: the CUDA runtime's buffers start
// 16-byte aligned) each access states the alignment it has, which LLVM
// cannot always prove through the index arithmetic. The loop is marked
// lpc_tiled, so that lpc-widen-parallel-loops leaves it alone.
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

/// The alignment LLVM may assume for an access of a `m` buffer whose start
/// is `base`-byte aligned, at indices idx[d] = mult[d] * (an unknown
/// integer) + add[d]; none if `base` is 0 or the layout is not static.
/// Stated on each load and store, it lets LLVM's load/store vectorizer
/// merge a row's accesses into 16-byte ones without having to prove the
/// alignment through the index arithmetic (where its known-bits analysis
/// gives up on deep expressions).
llvm::MaybeAlign accessAlign(MemRefType m, ArrayRef<int64_t> mult,
                             ArrayRef<int64_t> add, int64_t base) {
  SmallVector<int64_t> strides;
  int64_t offset;
  int64_t e = m.getElementTypeBitWidth() / 8;
  if (base <= 0 || e == 0 || m.getElementTypeBitWidth() % 8 != 0 ||
      failed(m.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  uint64_t a = llvm::MinAlign(uint64_t(base), uint64_t(offset * e));
  int64_t constant = 0;
  for (auto [d, stride] : llvm::enumerate(strides)) {
    a = llvm::MinAlign(a, uint64_t(stride * mult[d] * e));
    constant += stride * add[d];
  }
  return llvm::Align(llvm::MinAlign(a, uint64_t(constant * e)));
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
void fuse(Candidate &c, int64_t baseAlign) {
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
      fuse(again, baseAlign);
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
  // The tile of an iteration: R rows (R x the element size = 4 bytes, one
  // 4-byte store per transposed row) by C columns, C = 2T (T x the element
  // size = `bytes`) where the columns allow: then each FP8 row is a whole
  // 32-byte sector that one thread writes with two 16-byte stores in a row.
  // (A 16 x 16 tile, unrolled, took LLVM's NVPTX pipeline minutes per
  // kernel. 4 x 32 unrolled compiles about 1.5x as long as 4 x 16 in two
  // loop steps, the GPT example in FP8 19.5 s against 13.3, but those
  // left each FP8 sector half-written twice, a loop step apart.)
  unsigned nIn = g.getNumDpsInputs(), nOut = g.getNumDpsInits();
  int64_t e = xType.getElementTypeBitWidth() / 8;
  int64_t r = std::clamp<int64_t>(4 / e, 1, t);
  int64_t w = shape[rank - 1] % (2 * t) == 0 ? 2 * t : t;
  // (leading dims..., column tiles, row groups): the row groups innermost,
  // so that neighbouring GPU threads write neighbouring R-element pieces of
  // the transposed rows (a warp's store: 32 x 4 consecutive bytes). One
  // partial per tile for each accumulator.
  SmallVector<int64_t> tiles(shape.begin(), shape.end());
  tiles[rank - 2] = shape[rank - 1] / w;
  tiles[rank - 1] = shape[rank - 2] / r;
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
  loop->setAttr(lpc::kTiledAttr, b.getUnitAttr());
  OpBuilder outer = b;
  b.setInsertionPointToStart(loop.getBody());
  constants.clear();
  SmallVector<Value> ivs(loop.getInductionVars());
  // Row i of the tile: group * R + i; column k: tile * C + k.
  Value row0 = arith::MulIOp::create(b, loc, ivs[rank - 1], cst(r));
  Value col0 = arith::MulIOp::create(b, loc, ivs[rank - 2], cst(w));
  SmallVector<Value> rows, cols;
  for (int64_t i = 0; i < r; ++i)
    rows.push_back(i == 0 ? row0 : arith::AddIOp::create(b, loc, row0, cst(i)).getResult());
  for (int64_t k = 0; k < w; ++k)
    cols.push_back(k == 0 ? col0 : arith::AddIOp::create(b, loc, col0, cst(k)).getResult());

  // The indices `m` gives for the element at (row, col).
  auto indices = [&](AffineMap m, Value row, Value col) {
    SmallVector<Value> idx;
    for (AffineExpr ex : m.getResults()) {
      int64_t d = cast<AffineDimExpr>(ex).getPosition();
      idx.push_back(d < rank - 2 ? ivs[d] : d == rank - 2 ? row : col);
    }
    return idx;
  };
  // The alignment of the access `m` maps element (i, k) of the tile to;
  // `swap`: with the last two indices swapped (the transposed copy).
  auto align = [&](Value buf, AffineMap m, int64_t i, int64_t k, bool swap) {
    SmallVector<int64_t> mult, add;
    for (AffineExpr ex : m.getResults()) {
      int64_t d = cast<AffineDimExpr>(ex).getPosition();
      mult.push_back(d < rank - 2 ? 1 : d == rank - 2 ? r : w);
      add.push_back(d < rank - 2 ? 0 : d == rank - 2 ? i : k);
    }
    if (swap) {
      std::swap(mult[rank - 2], mult[rank - 1]);
      std::swap(add[rank - 2], add[rank - 1]);
    }
    return accessAlign(cast<MemRefType>(buf.getType()), mult, add, baseAlign);
  };
  // A run of `len` consecutive elements of `buf` along its last dimension,
  // from `idx`, as a 1-D subview: its accesses are then constant offsets
  // from one pointer, which LLVM's load/store vectorizer merges reliably
  // (indices like `col0 + 15` become `col0 | 15`, which it failed to see as
  // next to `col0 + 14`).
  auto run = [&](Value buf, ArrayRef<Value> idx, int64_t len) -> Value {
    auto type = cast<MemRefType>(buf.getType());
    int64_t n = type.getRank();
    SmallVector<OpFoldResult> offsets(idx.begin(), idx.end());
    SmallVector<OpFoldResult> sizes(n, b.getIndexAttr(1)), strides(n, b.getIndexAttr(1));
    sizes[n - 1] = b.getIndexAttr(len);
    MemRefType rowType = memref::SubViewOp::inferRankReducedResultType(
        {len}, type, offsets, sizes, strides);
    return memref::SubViewOp::create(b, loc, rowType, buf, offsets, sizes, strides);
  };

  // All loads first, row by row: a row of a per-element input whose last
  // index is the column is a run; an input the tile's elements share (a
  // 0-d scale, say) is loaded once.
  SmallVector<OpOperand *> ins = g.getDpsInputOperands();
  SmallVector<SmallVector<Value>> loaded(r * w);
  for (auto [j, in] : llvm::enumerate(ins)) {
    AffineMap m = g.getMatchingIndexingMap(in);
    if (!m.isFunctionOfDim(rank - 2) && !m.isFunctionOfDim(rank - 1)) {
      Value v = memref::LoadOp::create(b, loc, in->get(), indices(m, row0, col0));
      for (SmallVector<Value> &el : loaded)
        el.push_back(v);
      continue;
    }
    bool alongColumns =
        cast<AffineDimExpr>(m.getResults().back()).getPosition() == rank - 1;
    for (int64_t i = 0; i < r; ++i) {
      Value row = alongColumns ? run(in->get(), indices(m, rows[i], col0), w) : Value();
      for (int64_t k = 0; k < w; ++k) {
        llvm::MaybeAlign a = align(in->get(), m, i, k, false);
        loaded[i * w + k].push_back(
            row ? memref::LoadOp::create(b, loc, row, ValueRange{cst(k)}, false, a).getResult()
                : memref::LoadOp::create(b, loc, in->get(), indices(m, rows[i], cols[k]),
                                         false, a)
                      .getResult());
      }
    }
  }

  // The body once per element, in row-major order, each accumulator
  // carried from one element to the next, from its neutral element.
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<Value> accs(nOut);
  for (unsigned k = 0; k < nOut; ++k)
    if (c.combiners[k])
      accs[k] = arith::ConstantOp::create(b, loc, c.neutrals[k]);
  SmallVector<SmallVector<Value>> written(r * w);
  for (int64_t el = 0; el < r * w; ++el) {
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
  // copy destination row by destination row (source column k), each row a
  // run of the buffer.
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  for (auto [k, out] : llvm::enumerate(g.getDpsInits()))
    if (!c.combiners[k])
      for (int64_t i = 0; i < r; ++i) {
        Value row = run(out, indices(id, rows[i], col0), w);
        for (int64_t kk = 0; kk < w; ++kk)
          memref::StoreOp::create(b, loc, written[i * w + kk][k], row,
                                  ValueRange{cst(kk)}, /*nontemporal=*/false,
                                  align(out, id, i, kk, false));
      }
  for (int64_t kk = 0; kk < w; ++kk) {
    SmallVector<Value> idx = indices(id, rows[0], cols[kk]);
    std::swap(idx[rank - 2], idx[rank - 1]);
    Value piece = run(xt, idx, r);
    for (int64_t i = 0; i < r; ++i)
      memref::StoreOp::create(b, loc, written[i * w + kk][c.transposedOut], piece,
                              ValueRange{cst(i)}, /*nontemporal=*/false,
                              align(xt, id, i, kk, true));
  }

  // Each accumulator's partial for the tile.
  SmallVector<Value> accOuts;
  SmallVector<Operation *> accCombiners;
  for (unsigned k = 0, p = 0; k < nOut; ++k)
    if (c.combiners[k]) {
      memref::StoreOp::create(b, loc, accs[k], partials[p++], ivs);
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
    if (baseAlign < 0 || (baseAlign && !llvm::has_single_bit(uint64_t(baseAlign)))) {
      getOperation()->emitError("lpc-fuse-cast-transposes: base-align must be "
                                "0 or a power of two, got ")
          << int64_t(baseAlign);
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
        fuse(*c, baseAlign);
  }
};

} // namespace
