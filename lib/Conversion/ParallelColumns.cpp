//===- ParallelColumns.cpp - --lpc-parallel-columns -----------------------===//
//
// A reduction over rows into columns (a bias or LayerNorm weight gradient:
// [tokens, d] -> [d]) becomes, in convert-linalg-to-parallel-loops, scf.for
// loops over the rows around an scf.parallel over the columns. The nest is
// then an scf.for at the top of the function: one thread runs all of it
// (lpc-outline-parallel-loops only hands out top-level scf.parallel nests).
// This pass tiles such a reduction's parallel dimensions with an
// scf.forall, on tensors: each tile of columns is the same reduction on
// fewer columns, and the tiles go to the threads. Every column still sums
// its rows in the same order, so results are bit-identical.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCPARALLELCOLUMNS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

/// Tile sizes for `op` (0: not tiled), or empty when it is not a column
/// reduction worth splitting: some reduction loop comes before a parallel
/// one, the shapes are static, and there are at least two tiles of at
/// least `minWork` innermost iterations each.
SmallVector<int64_t> columnTiles(linalg::GenericOp op, int64_t columns,
                                 int64_t minWork) {
  if (op->hasAttr("lpc_gemm") || !op.hasPureTensorSemantics() ||
      op.hasDynamicShape())
    return {};
  auto iters = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  bool reductionBefore = false, columnReduction = false;
  for (auto it : iters) {
    if (it == utils::IteratorType::reduction)
      reductionBefore = true;
    else if (reductionBefore)
      columnReduction = true;
  }
  if (!columnReduction)
    return {};
  // The innermost parallel loop in tiles of `columns` (it stays the
  // vectorized loop); the other parallel loops one by one, or more (inner
  // ones first) while a tile has less than `minWork` iterations.
  int64_t last = -1;
  for (int64_t d = iters.size() - 1; d >= 0 && last < 0; --d)
    if (iters[d] == utils::IteratorType::parallel)
      last = d;
  SmallVector<int64_t> sizes(iters.size(), 0);
  int64_t perTile = 1;
  for (auto [d, it] : llvm::enumerate(iters)) {
    if (it != utils::IteratorType::parallel)
      perTile *= ranges[d];
    else
      perTile *= sizes[d] = (int64_t)d == last ? std::min(columns, ranges[d])
                                               : 1;
  }
  for (int64_t d = last - 1; d >= 0 && perTile < minWork; --d) {
    if (iters[d] != utils::IteratorType::parallel)
      continue;
    int64_t grow = std::min(ranges[d], (minWork + perTile - 1) / perTile);
    sizes[d] = grow;
    perTile *= grow;
  }
  int64_t tiles = 1;
  for (auto [d, it] : llvm::enumerate(iters))
    if (it == utils::IteratorType::parallel)
      tiles *= (ranges[d] + sizes[d] - 1) / sizes[d];
  if (tiles < 2 || perTile < minWork)
    return {};
  return sizes;
}

struct LpcParallelColumnsPass
    : ::mlir::lpc::impl::LpcParallelColumnsBase<LpcParallelColumnsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, SmallVector<int64_t>>> work;
    getOperation()->walk([&](linalg::GenericOp op) {
      SmallVector<int64_t> sizes = columnTiles(op, columns, minWork);
      if (!sizes.empty())
        work.push_back({op, sizes});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, sizes] : work) {
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), sizes));
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled)) {
        op.emitError("lpc-parallel-columns: tiling failed");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};

} // namespace
