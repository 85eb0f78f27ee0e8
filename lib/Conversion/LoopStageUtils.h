//===- LoopStageUtils.h - shared by the GPU loop stage's passes -*- C++ -*-===//
//
// Tests that more than one pass of the GPU loop stage makes the same way:
// which transposes move as tiles (lpc-tile-transposes, and
// lpc-fuse-cast-transposes, which writes such a transpose from the cast
// that produces its input), which reductions may combine partial results in
// any order, and the reduction of such partials (lpc-split-reductions,
// lpc-fuse-cast-transposes).
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

/// The op that output `out` of `g` accumulates with, when the order of the
/// accumulation does not matter (max/min, integer add/or/and/xor, an addf
/// with reassoc, unless `exact`: then only combiners whose result the order
/// cannot change): it alone reads the accumulator, with one other operand,
/// and the body yields its result for `out`. Sets `neutral` to its neutral
/// element (MLIR's). Null otherwise. (SplitReductions.cpp)
Operation *accumulatorCombiner(linalg::GenericOp g, OpOperand &out,
                               TypedAttr &neutral, bool exact = false);

/// At `b`: one full reduction of the partial results `partials` (buffers of
/// one shape, all dimensions reduced) into the 0-d `outs`, each with a clone
/// of its `combiners` entry (accumulator first), so that each output's
/// initial value is combined in once. (SplitReductions.cpp)
linalg::GenericOp combinePartials(OpBuilder &b, Location loc,
                                  ValueRange partials, ValueRange outs,
                                  ArrayRef<Operation *> combiners);

} // namespace lpc
} // namespace mlir

#endif // LPC_LIB_CONVERSION_LOOPSTAGEUTILS_H
