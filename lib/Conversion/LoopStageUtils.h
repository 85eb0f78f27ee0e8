//===- LoopStageUtils.h - shared by the GPU loop stage's passes -*- C++ -*-===//
//
// Tests that more than one pass of the GPU loop stage makes the same way:
// which transposes move as tiles (lpc-tile-transposes, and
// lpc-fuse-cast-transposes, which writes such a transpose from the cast
// that produces its input), and which reductions may combine partial
// results in any order (lpc-split-reductions, lpc-fuse-cast-transposes).
//
//===----------------------------------------------------------------------===//

#ifndef LPC_LIB_CONVERSION_LOOPSTAGEUTILS_H
#define LPC_LIB_CONVERSION_LOOPSTAGEUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir {
namespace lpc {

/// T for moving `op` as T x T tiles of rows of `bytes` bytes (T = `bytes` /
/// the element size), or 0 when it cannot: only a transpose of the last two
/// dimensions, on distinct static identity-layout buffers of one element
/// type whose last two dimensions are multiples of T. (TileTransposes.cpp)
int64_t transposeTile(linalg::TransposeOp op, int64_t bytes);

/// The neutral element of a reduction's `combiner` (MLIR's), or null if the
/// order in which it combines may matter (an addf without reassoc, an op
/// MLIR gives no neutral element). (SplitReductions.cpp)
TypedAttr reorderableNeutral(Operation *combiner);

} // namespace lpc
} // namespace mlir

#endif // LPC_LIB_CONVERSION_LOOPSTAGEUTILS_H
