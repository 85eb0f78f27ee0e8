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
  void runOnOperation() override {
    static const llvm::StringSet<> approximated = {
        "math.exp", "math.expm1", "math.log", "math.log1p", "math.log2",
        "math.tanh", "math.erf"};
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return approximated.contains(name); });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
