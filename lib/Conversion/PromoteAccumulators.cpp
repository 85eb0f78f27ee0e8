//===- PromoteAccumulators.cpp - --lpc-promote-accumulators ---------------===//
//
// convert-linalg-to-parallel-loops lowers a reduction as a loop that loads
// the output element, combines and stores it back in every iteration. On
// the CPU, LLVM keeps such an accumulator in a register once it knows the
// buffers do not alias; a GPU kernel's buffers are plain pointers, so every
// iteration of a softmax or layernorm row would be a round trip through
// global memory, each waiting for the last. This pass carries the value
// through the loop instead (an scf.for iter_arg): one load before the loop,
// one store after it.
//
// An accumulator is a load and a store of the same buffer at the same
// indices, all defined outside the loop, both directly in the loop's body
// (the load first), and no other access in the loop (nested ones
// included) to a buffer that may be the same memory. Two buffers are
// taken to be different memory only if they are views of different
// allocations, at least one of them made in the function (a memref.alloc
// cannot alias anything that existed before it); the arguments of a
// function may alias each other.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCPROMOTEACCUMULATORS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using mlir::lpc::lowering::rootBuffer;

namespace {

bool isAllocation(Value root) {
  return root.getDefiningOp<memref::AllocOp>() ||
         root.getDefiningOp<memref::AllocaOp>();
}

bool mayAlias(Value a, Value b) {
  Value ra = rootBuffer(a), rb = rootBuffer(b);
  return ra == rb || (!isAllocation(ra) && !isAllocation(rb));
}

/// The loads and stores in `loop` (nested ones included); false if it has
/// any other op that touches memory, which this pass does not reason about.
bool collectAccesses(scf::ForOp loop, SmallVectorImpl<Operation *> &accesses) {
  WalkResult r = loop.getBody()->walk([&](Operation *op) {
    if (isa<memref::LoadOp, memref::StoreOp>(op)) {
      accesses.push_back(op);
      return WalkResult::advance();
    }
    if (isMemoryEffectFree(op) ||
        op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !r.wasInterrupted();
}

Value memrefOf(Operation *access) {
  if (auto l = dyn_cast<memref::LoadOp>(access))
    return l.getMemRef();
  return cast<memref::StoreOp>(access).getMemRef();
}

/// One accumulator of `loop`: its load and its store, or nulls.
std::pair<memref::LoadOp, memref::StoreOp> findAccumulator(scf::ForOp loop) {
  SmallVector<Operation *> accesses;
  if (!collectAccesses(loop, accesses))
    return {};
  for (auto load : loop.getBody()->getOps<memref::LoadOp>()) {
    Value m = load.getMemRef();
    if (!loop.isDefinedOutsideOfLoop(m) ||
        !llvm::all_of(load.getIndices(), [&](Value i) {
          return loop.isDefinedOutsideOfLoop(i);
        }))
      continue;
    memref::StoreOp store;
    bool ok = true;
    for (Operation *a : accesses) {
      if (a == load)
        continue;
      auto s = dyn_cast<memref::StoreOp>(a);
      if (s && !store && s.getMemRef() == m && s->getBlock() == load->getBlock() &&
          llvm::equal(s.getIndices(), load.getIndices()) &&
          load->isBeforeInBlock(s)) {
        store = s;
        continue;
      }
      if (mayAlias(memrefOf(a), m)) {
        ok = false;
        break;
      }
    }
    if (ok && store)
      return {load, store};
  }
  return {};
}

struct LpcPromoteAccumulatorsPass
    : ::mlir::lpc::impl::LpcPromoteAccumulatorsBase<
          LpcPromoteAccumulatorsPass> {
  void runOnOperation() override {
    // Inner loops first: an inner loop's accumulator, once carried, can
    // then be one of the enclosing loop's.
    SmallVector<scf::ForOp> loops;
    getOperation()->walk<WalkOrder::PostOrder>(
        [&](scf::ForOp f) { loops.push_back(f); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      while (true) {
        auto [load, store] = findAccumulator(loop);
        if (!load)
          break;
        rewriter.setInsertionPoint(loop);
        Value init = memref::LoadOp::create(rewriter, load.getLoc(),
                                            load.getMemRef(),
                                            load.getIndices());
        auto grown = loop.replaceWithAdditionalYields(
            rewriter, ValueRange{init}, /*replaceInitOperandUsesInLoop=*/false,
            [&](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
              SmallVector<Value> yields{store.getValueToStore()};
              rewriter.replaceAllUsesWith(load.getResult(), args[0]);
              return yields;
            });
        if (failed(grown)) {
          loop.emitError("lpc-promote-accumulators: cannot add an iter_arg");
          return signalPassFailure();
        }
        loop = cast<scf::ForOp>(grown->getOperation());
        rewriter.setInsertionPointAfter(loop);
        memref::StoreOp::create(rewriter, store.getLoc(), loop.getResults().back(),
                                store.getMemRef(), store.getIndices());
        rewriter.eraseOp(store);
        rewriter.eraseOp(load);
      }
    }
  }
};
} // namespace
