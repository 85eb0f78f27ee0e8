//===- DistinctResults.cpp - --lpc-distinct-results -----------------------===//
//
// buffer-results-to-out-params{hoist-static-allocs} hoists each returned
// allocation into its out-parameter; a buffer returned twice makes it erase
// the allocation once and touch it again (a crash in MLIR 22). This pass,
// run just before it, copies every repeat into an allocation of its own.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCDISTINCTRESULTS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {
struct LpcDistinctResultsPass
    : ::mlir::lpc::impl::LpcDistinctResultsBase<LpcDistinctResultsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::ReturnOp ret) {
      llvm::DenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        if (seen.insert(v).second)
          continue;
        // Only static identity-layout buffers are hoisted (and only what is
        // hoisted crashes); tensors and scalars are not buffers.
        auto type = dyn_cast<MemRefType>(v.getType());
        if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
          continue;
        Value copy = memref::AllocOp::create(b, ret.getLoc(), type);
        memref::CopyOp::create(b, ret.getLoc(), v, copy);
        operand.set(copy);
      }
    });
  }
};
} // namespace
