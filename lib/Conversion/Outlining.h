//===- Outlining.h - a loop nest as a function of its own -------*- C++ -*-===//
//
// Shared by lpc-outline-parallel-loops and lpc-outline-serial-loops.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_LIB_CONVERSION_OUTLINING_H
#define LPC_LIB_CONVERSION_OUTLINING_H

#include "LoweringUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace lpc {
namespace lowering {

/// The module's functions whose loop nests may be outlined: those with a
/// body, not themselves made by an outliner.
inline SmallVector<func::FuncOp> functionsToOutline(ModuleOp module) {
  SmallVector<func::FuncOp> funcs;
  for (func::FuncOp f : module.getOps<func::FuncOp>())
    if (!f.isExternal() && !f->hasAttr("lpc.parallel_body") &&
        !f->hasAttr("lpc.serial_body"))
      funcs.push_back(f);
  return funcs;
}

/// A private function made for a loop nest: its entry block holds clones of
/// the constants the nest uses (static bounds and immediates for LLVM), and
/// `map` maps every other value the nest uses from outside (`captures`) to
/// a parameter, after `leading` parameters of the caller's choosing.
struct OutlinedNest {
  func::FuncOp body;
  SmallVector<Value> captures;
  IRMapping map;
};

/// Creates `@<f>__<suffix><index>` after `after` for `nest` (its operands
/// and everything its regions read from above), with the noalias positions
/// of its captured buffers (`noaliasPositions`) as `lpc.parallel_noalias` /
/// `lpc.parallel_params`. The caller fills the body and replaces the nest.
inline OutlinedNest outlineNest(SymbolTable &symbols, func::FuncOp f,
                                Operation *after, Operation *nest,
                                StringRef suffix, unsigned index,
                                ArrayRef<Type> leading) {
  MLIRContext *ctx = nest->getContext();
  Location loc = nest->getLoc();
  llvm::SetVector<Value> used;
  for (Value v : nest->getOperands())
    used.insert(v);
  for (Region &r : nest->getRegions())
    getUsedValuesDefinedAbove(r, used);
  OutlinedNest out;
  for (Value v : used)
    if (!matchPattern(v, m_Constant()))
      out.captures.push_back(v);

  SmallVector<Type> argTypes(leading);
  for (Value v : out.captures)
    argTypes.push_back(v.getType());
  OpBuilder mb(ctx);
  mb.setInsertionPointAfter(after);
  std::string name = (f.getSymName() + "__" + suffix + Twine(index)).str();
  out.body = func::FuncOp::create(mb, loc, name,
                                  FunctionType::get(ctx, argTypes, {}));
  out.body.setPrivate();
  symbols.insert(out.body); // renames on a clash
  int64_t params;
  SmallVector<int64_t> noalias =
      noaliasPositions(out.captures, leading.size(), params);
  out.body->setAttr("lpc.parallel_noalias",
                    DenseI64ArrayAttr::get(ctx, noalias));
  out.body->setAttr("lpc.parallel_params",
                    IntegerAttr::get(IntegerType::get(ctx, 64), params));

  Block *entry = out.body.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  for (Value v : used)
    if (matchPattern(v, m_Constant()))
      out.map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
  for (auto [i, v] : llvm::enumerate(out.captures))
    out.map.map(v, entry->getArgument(i + leading.size()));
  return out;
}

} // namespace lowering
} // namespace lpc
} // namespace mlir

#endif // LPC_LIB_CONVERSION_OUTLINING_H
