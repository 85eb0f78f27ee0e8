//===- PrecisionUtils.h - helpers shared by the precision passes -*- C++ -*-===//
#ifndef LPC_PASSES_PRECISIONUTILS_H
#define LPC_PASSES_PRECISIONUTILS_H

#include "lpc/Dialect/LpcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace lpc {

/// The parameter a value is read from through pure data movement (reshape,
/// transpose, broadcast, cast): an lpc.param op or a train-step argument with
/// {lpc.state = "param"}. Returns its name, or an empty string.
StringRef tracedParamName(Value v);

/// Values computed from the backward pass's seed (lpc.grad_seed), i.e.
/// gradients, in `fn`.
llvm::DenseSet<Value> gradientValues(func::FuncOp fn);

/// The GEMM role of a matmul-like op (fprop when it has none).
GemmRole roleOf(Operation *op);

/// M, N, K of a matmul (M includes the batch dimensions).
struct GemmDims {
  int64_t m = 0, n = 0, k = 0;
};
GemmDims gemmDims(MatmulOp op);

/// Attributes of the train-step contract on arguments and results.
constexpr StringLiteral kStateAttr = "lpc.state";
constexpr StringLiteral kNameAttr = "lpc.name";
constexpr StringLiteral kInputAttr = "lpc.input";
constexpr StringLiteral kMetricAttr = "lpc.metric";
constexpr StringLiteral kInitAttr = "lpc.init";
/// On the lpc.all_reduce of a gradient bucket (lpc-data-parallel): the
/// bucket's index, in the order the backward fills them.
constexpr StringLiteral kBucketAttr = "lpc.bucket";

/// Float element type of a ranked tensor value, or null.
FloatType floatElementType(Value v);

/// Adds a state argument to a train step, after the existing state
/// arguments (before the first data input), and returns it.
FailureOr<BlockArgument> addStateArgument(func::FuncOp fn, Type type,
                                          DictionaryAttr attrs, Location loc);
/// Adds a result returning `value` (defined in `fn`) before the metrics.
LogicalResult addStateResult(func::FuncOp fn, Value value,
                             DictionaryAttr attrs);
/// Adds a metric result {lpc.metric = metric[, lpc.name = name]} returning
/// `value`, after every other result.
LogicalResult addMetricResult(func::FuncOp fn, Value value, StringRef metric,
                              StringRef name = {});
/// The argument with {lpc.state = state} (and lpc.name = name if given).
BlockArgument findStateArgument(func::FuncOp fn, StringRef state,
                                StringRef name = {});

/// "3.06 MiB"-style sizes and left-aligned columns for the report passes.
std::string humanBytes(uint64_t bytes);
std::string padRight(StringRef s, size_t width);

/// Writes a report of an analysis pass: to stderr for "-", else atomically
/// to the file (temp file + rename). On failure prints an error naming the
/// pass and the file and returns failure.
LogicalResult writeReport(StringRef text, StringRef outputFile,
                          StringRef passName);

} // namespace lpc
} // namespace mlir

#endif // LPC_PASSES_PRECISIONUTILS_H
