//===- Bindings.cpp - test data for model inputs --------------------------===//

#include "lpc/Reference/Evaluator.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using namespace mlir::lpc;

namespace {
/// The bound of integerInputBound, counting class labels or not.
std::optional<int64_t> inputBound(Value value, bool labels) {
  std::optional<int64_t> bound;
  auto tighten = [&](int64_t b) { bound = bound ? std::min(*bound, b) : b; };
  llvm::SmallVector<Value> work{value};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      auto lastDim = [](Value t) {
        return cast<RankedTensorType>(t.getType()).getShape().back();
      };
      auto firstDim = [](Value t) {
        return cast<RankedTensorType>(t.getType()).getShape().front();
      };
      if (auto op = dyn_cast<SoftmaxCrossEntropyOp>(user);
          labels && op && op.getLabels() == v)
        tighten(lastDim(op.getLogits()));
      else if (auto op = dyn_cast<SoftmaxCrossEntropyGradOp>(user);
               labels && op && op.getLabels() == v)
        tighten(lastDim(op.getLogits()));
      else if (auto op = dyn_cast<EmbeddingOp>(user);
               op && op.getIndices() == v)
        tighten(firstDim(op.getTable()));
      else if (auto op = dyn_cast<EmbeddingGradOp>(user);
               op && op.getIndices() == v)
        tighten(firstDim(op.getResult()));
      else if (isa<ReshapeOp, TransposeOp, SliceOp, BroadcastOp, ConcatOp,
                   WhereOp>(user))
        for (Value r : user->getResults())
          work.push_back(r);
    }
  }
  return bound;
}
} // namespace

/// For an integer value used (possibly through data movement) as class
/// labels or embedding ids: the number of classes or rows.
std::optional<int64_t> mlir::lpc::ref::integerInputBound(Value value) {
  return inputBound(value, /*labels=*/true);
}

std::optional<int64_t> mlir::lpc::ref::embeddingIdBound(Value value) {
  return inputBound(value, /*labels=*/false);
}
