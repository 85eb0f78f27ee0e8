//===- KernelBuffers.h - which buffers a host-level op touches --*- C++ -*-===//
//
// The GPU loop stage reorders and merges the kernels of a host function
// (scf.parallel loops at its top level): lpc-merge-serial-kernels and
// lpc-merge-independent-kernels. Both ask the same question of two ops:
// may they touch the same memory? These helpers answer it from the roots
// of the memrefs each op uses (allocations and function arguments).
//
//===----------------------------------------------------------------------===//

#ifndef LPC_LIB_CONVERSION_KERNELBUFFERS_H
#define LPC_LIB_CONVERSION_KERNELBUFFERS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir {
namespace lpc {

/// The constant trip counts of `par`'s dimensions (bounds that are
/// constants or products and sums of them), or nothing when a bound or step
/// is not constant (or a step is not positive).
std::optional<SmallVector<int64_t>> constantTripCounts(scf::ParallelOp par);

/// The buffer a memref value is a view of: an allocation's result, or
/// anything else (a function argument, say) that may alias other such
/// values.
Value bufferRootOf(Value v);

/// Whether `root` is a fresh allocation (memref.alloc / alloca).
bool isAllocationRoot(Value root);

/// The roots of every memref an op (with its regions) uses that is defined
/// outside it: in MLIR an op can touch no other buffer (a memref.get_global
/// inside it counts as an unknown root).
SmallVector<Value> buffersOf(Operation *op);

/// Whether two sets of roots may share memory. Distinct roots are distinct
/// buffers only when one is a fresh allocation and the other an allocation
/// or a function argument (two arguments may be one buffer; a root some
/// other op defines, a view lpc does not know, say, may be anything).
bool buffersMayConflict(ArrayRef<Value> a, ArrayRef<Value> b);

/// Loads and stores at `b` doing what `copy` (static shape) does, element
/// by element in row-major order; `index(i)` gives the index constant i.
void copyElements(OpBuilder &b, memref::CopyOp copy,
                  function_ref<Value(int64_t)> index);

/// Whether `v` is a constant global (memref.get_global of a constant
/// memref.global: host memory to a GPU) or a view of one made only of ops
/// that can be cloned anywhere (views with constant operands), collecting
/// the ops from the get_global outward (lpc-sink-constant-globals clones
/// them into kernels; lpc-gemm-to-calls{device-operands} copies them).
bool constantGlobalChain(Value v, SymbolTableCollection &symbols,
                         SmallVectorImpl<Operation *> &chain);

/// On a call lpc emits (a runtime GEMM, say): the positions of the operands
/// it writes (a DenseI64ArrayAttr); it only reads its other memrefs.
inline constexpr llvm::StringLiteral kWrittenOperandsAttr = "lpc_writes";

/// What an op reads and writes, by root (see bufferRootOf). Memory an op
/// uses in a way lpc cannot classify (a call without kWrittenOperandsAttr)
/// counts as read and written.
struct Footprint {
  SmallVector<Value> reads, writes;
};
Footprint footprintOf(Operation *op);

/// Whether running `a` and `b` in either order, or side by side, may give
/// other results than in program order: one writes what the other reads or
/// writes. With `distinctArgs`, two different function arguments are two
/// buffers (the runtimes pass every argument and result of a train step in
/// its own block); otherwise any two arguments may be one buffer.
bool footprintsConflict(const Footprint &a, const Footprint &b,
                        bool distinctArgs);

} // namespace lpc
} // namespace mlir

#endif // LPC_LIB_CONVERSION_KERNELBUFFERS_H
