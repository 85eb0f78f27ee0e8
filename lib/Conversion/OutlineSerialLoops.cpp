//===- OutlineSerialLoops.cpp - --lpc-outline-serial-loops ----------------===//
//
// Keeps the host's LLVM functions small. A train step with thousands of
// top-level loop nests (a recurrent layer unrolled over its time steps) is
// one LLVM function whose compile time grows with the square of its loops:
// ScalarEvolution's guard queries (IndVarSimplify, LoopRotate) walk the
// chain of blocks back through every earlier loop, and convert-scf-to-cf
// splits one ever larger block. Past `min-loops` top-level nests, each nest
// becomes a private, never-inlined function called in its place, so every
// query stays inside one nest. Below it nothing changes.
//
//===----------------------------------------------------------------------===//

#include "Outlining.h"
#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCOUTLINESERIALLOOPS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

struct LpcOutlineSerialLoopsPass
    : ::mlir::lpc::impl::LpcOutlineSerialLoopsBase<LpcOutlineSerialLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (func::FuncOp f : lpc::lowering::functionsToOutline(module)) {
      SmallVector<Operation *> nests;
      for (Block &block : f.getBody())
        for (Operation &op : block)
          if (isa<scf::ForOp, scf::ParallelOp>(op) && op.getNumResults() == 0)
            nests.push_back(&op);
      if ((int64_t)nests.size() < minLoops)
        continue;
      Operation *after = f;
      for (auto [i, nest] : llvm::enumerate(nests))
        after = outline(symbols, f, after, nest, i);
    }
  }

  /// Moves `nest` into a new function placed after `after`; returns it.
  Operation *outline(SymbolTable &symbols, func::FuncOp f, Operation *after,
                     Operation *nest, unsigned index) {
    MLIRContext *ctx = &getContext();
    lpc::lowering::OutlinedNest o =
        lpc::lowering::outlineNest(symbols, f, after, nest, "loop", index, {});
    o.body->setAttr("lpc.serial_body", UnitAttr::get(ctx));
    // LLVM would inline a private function called once straight back.
    o.body->setAttr("passthrough",
                    ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
    OpBuilder b = OpBuilder::atBlockEnd(&o.body.front());
    b.clone(*nest, o.map);
    func::ReturnOp::create(b, nest->getLoc());

    OpBuilder cb(nest);
    func::CallOp::create(cb, nest->getLoc(), o.body, o.captures);
    nest->erase();
    return o.body;
  }
};

} // namespace
