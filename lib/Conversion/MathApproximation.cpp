//===- MathApproximation.cpp - --lpc-math-approximation -------------------===//
//
// Upstream registers its polynomial approximations only as patterns (and a
// test pass); this pass applies them to the transcendental ops the lpc
// lowering emits. libm's scalar calls would keep LLVM from vectorizing the
// loops they sit in (they were most of the GELU and softmax time).
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCMATHAPPROXIMATION
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {
struct LpcMathApproximationPass
    : ::mlir::lpc::impl::LpcMathApproximationBase<LpcMathApproximationPass> {
  using LpcMathApproximationBase::LpcMathApproximationBase;

  static const llvm::StringSet<> &approximated() {
    static const llvm::StringSet<> names = {
        "math.exp", "math.expm1", "math.log", "math.log1p", "math.log2",
        "math.tanh", "math.erf"};
    return names;
  }
  llvm::StringSet<> kept;

  /// Checked once, before any op is seen: a misspelt name would otherwise
  /// quietly approximate everything.
  LogicalResult initialize(MLIRContext *ctx) override {
    for (const std::string &name : keep) {
      if (!approximated().contains(name))
        return emitError(UnknownLoc::get(ctx))
               << "lpc-math-approximation: keep=" << name
               << " is not an op it approximates";
      kept.insert(name);
    }
    return success();
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [&](StringRef name) {
          return approximated().contains(name) && !kept.contains(name);
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
