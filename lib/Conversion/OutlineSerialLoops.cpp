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

#include "LoweringUtils.h"
#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

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
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp f : funcs) {
      if (f.isExternal() || f->hasAttr("lpc.parallel_body") ||
          f->hasAttr("lpc.serial_body"))
        continue;
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
    Location loc = nest->getLoc();
    MLIRContext *ctx = &getContext();
    // Everything the nest uses from outside; constants are cloned in
    // (static bounds and immediates for LLVM), the rest are parameters.
    llvm::SetVector<Value> used;
    for (Value v : nest->getOperands())
      used.insert(v);
    for (Region &r : nest->getRegions())
      getUsedValuesDefinedAbove(r, used);
    SmallVector<Value> captures;
    for (Value v : used)
      if (!matchPattern(v, m_Constant()))
        captures.push_back(v);

    SmallVector<Type> argTypes;
    for (Value v : captures)
      argTypes.push_back(v.getType());
    OpBuilder mb(ctx);
    mb.setInsertionPointAfter(after);
    std::string name = (f.getSymName() + "__loop" + Twine(index)).str();
    auto body = func::FuncOp::create(mb, loc, name,
                                     FunctionType::get(ctx, argTypes, {}));
    body.setPrivate();
    symbols.insert(body); // renames on a clash
    body->setAttr("lpc.serial_body", UnitAttr::get(ctx));
    // LLVM would inline a private function called once straight back.
    body->setAttr("passthrough",
                  ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
    int64_t params;
    SmallVector<int64_t> noalias =
        lpc::lowering::noaliasPositions(captures, 0, params);
    body->setAttr("lpc.parallel_noalias", DenseI64ArrayAttr::get(ctx, noalias));
    body->setAttr("lpc.parallel_params",
                  IntegerAttr::get(IntegerType::get(ctx, 64), params));

    Block *entry = body.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    IRMapping map;
    for (Value v : used)
      if (matchPattern(v, m_Constant()))
        map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
    for (auto [i, v] : llvm::enumerate(captures))
      map.map(v, entry->getArgument(i));
    b.clone(*nest, map);
    func::ReturnOp::create(b, loc);

    OpBuilder cb(nest);
    func::CallOp::create(cb, loc, body, captures);
    nest->erase();
    return body;
  }
};

} // namespace
