//===- OpCheck.h - check compiled code op by op -----------------*- C++ -*-===//
//
// An oracle that tells a rounding flip from a bug. Comparing the end results
// of a compiled train step with the reference evaluator cannot: where the
// compiled code sums in another order, a bf16 or fp16 rounding near a tie
// can land on the other neighbour, and everything downstream carries that
// flip (1e-4 to 2e-3 relative after one step), which a wrong kernel can hide
// under.
//
// OpChecker compiles the function with every intermediate value returned as
// well, runs it, and checks each op on its own: the reference evaluator runs
// the op on the compiled values of its operands, without rounding its
// results, and every compiled element c must lie within half a spacing of
// its format of that exact value x (what a correct round-to-nearest gives),
// plus a slack for the f32 arithmetic before the rounding:
//
//   |c - x| <= spacing(x) / 2 + slack * max|x over the result|
//
// spacing(x) is the distance between neighbours of the result's format in
// x's binade (2^-7 |x| for bf16, 2^-10 |x| for fp16, ...). An element
// that passes but is not the reference's rounding of x is a flip; an element
// that fails is wrong. Non-finite values and integers must match exactly.
// bf16 lpc.attention and lpc.attention_grad round p and ds to bf16 inside
// the op (as cuDNN and FlashAttention-2 do), so their elements may also be
// off by 2^-8 of the sum of |terms| they add up (the reference evaluator's
// EvalOptions::attentionTermMagnitudes).
// Truncating instead of rounding, a wrong formula or a wrong index all
// exceed half a spacing by far more than the slack (slack 1e-5 is 1/400 of
// half a bf16 spacing).
//
//===----------------------------------------------------------------------===//

#ifndef LPC_BACKEND_OPCHECK_H
#define LPC_BACKEND_OPCHECK_H

#include "lpc/Backend/CPUBackend.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
namespace lpc {
namespace cpu {

struct OpCheckOptions {
  /// Error allowed beyond half a spacing, relative to the largest |exact|
  /// of the result: the compiled f32 arithmetic before the rounding
  /// (summation order, exp/tanh/erf approximations).
  double slack = 1e-5;
  /// Wrong results described in OpCheckResult::failures (the rest counted).
  unsigned maxReported = 10;
  /// A test of the check itself: compare, in place of every compiled bf16,
  /// f16 and fp8 result, the exact value truncated toward zero in its
  /// format (what a kernel that truncates instead of rounding would give).
  /// The check must fail.
  bool plantTruncation = false;
};

/// What one checked run found.
struct OpCheckResult {
  int64_t ops = 0;         // ops checked
  int64_t elements = 0;    // float result elements compared
  int64_t lowElements = 0; // of them bf16, f16, fp8
  int64_t flips = 0;       // low-precision elements rounded the other way
  int64_t opsWithFlips = 0;
  /// Largest |c - x| / spacing(x) of a low-precision element (0.5 for a
  /// correct rounding of x itself).
  double worstSpacings = 0;
  /// Largest (|c - x| - spacing(x)/2) / max|x| of any float element: the
  /// part of the error the slack has to cover.
  double worstExcess = 0;
  std::string worstExcessAt; // the op and result with worstExcess
  int64_t wrong = 0;         // results (op, result index) that fail
  std::vector<std::string> failures; // the first maxReported, with locations
};

class OpChecker {
public:
  ~OpChecker();
  /// Compiles @`name` of `module` (not modified) with every intermediate
  /// tensor returned after its own results.
  static llvm::Expected<std::unique_ptr<OpChecker>>
  compile(ModuleOp module, llvm::StringRef name,
          const CompileOptions &options = {});

  /// Runs the function on `args` (one per argument), stores its own results
  /// in `results` and checks every op. `step` is the training step dropout
  /// mixes into its mask.
  llvm::Expected<OpCheckResult> run(llvm::ArrayRef<ref::Tensor> args,
                                    uint64_t step,
                                    const OpCheckOptions &options,
                                    std::vector<ref::Tensor> &results);

  const CompiledFunction &compiled() const { return *code; }
  /// Number of intermediate values returned besides the function's results.
  size_t numProbes() const { return probes.size(); }

private:
  OpChecker() = default;
  OwningOpRef<ModuleOp> module; // the instrumented copy
  func::FuncOp fn;
  unsigned numResults = 0;      // of the original function
  std::vector<Value> probes;    // returned after the original results
  std::unique_ptr<CompiledFunction> code;
};

} // namespace cpu
} // namespace lpc
} // namespace mlir

#endif // LPC_BACKEND_OPCHECK_H
