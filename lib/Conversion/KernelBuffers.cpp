//===- KernelBuffers.cpp - which buffers a host-level op touches ----------===//

#include "KernelBuffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::lpc;

/// The value of an index computed from constants by arith.muli / addi (the
/// collapsed loops' bounds, before canonicalization folds them).
static std::optional<int64_t> foldIndex(Value v, int depth = 0) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 8 || !isa<arith::MulIOp, arith::AddIOp>(def))
    return std::nullopt;
  std::optional<int64_t> a = foldIndex(def->getOperand(0), depth + 1);
  std::optional<int64_t> b = foldIndex(def->getOperand(1), depth + 1);
  int64_t r;
  if (!a || !b ||
      (isa<arith::MulIOp>(def) ? __builtin_mul_overflow(*a, *b, &r)
                               : __builtin_add_overflow(*a, *b, &r)))
    return std::nullopt;
  return r;
}

std::optional<SmallVector<int64_t>>
mlir::lpc::constantTripCounts(scf::ParallelOp par) {
  SmallVector<int64_t> trips;
  for (auto [lb, ub, step] :
       llvm::zip(par.getLowerBound(), par.getUpperBound(), par.getStep())) {
    std::optional<int64_t> l = foldIndex(lb);
    std::optional<int64_t> u = foldIndex(ub);
    std::optional<int64_t> s = foldIndex(step);
    if (!l || !u || !s || *s <= 0)
      return std::nullopt;
    trips.push_back(*u <= *l ? 0 : (*u - *l + *s - 1) / *s);
  }
  return trips;
}

Value mlir::lpc::bufferRootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
      continue;
    }
    if (auto cast = dyn_cast<memref::CastOp>(def)) {
      v = cast.getSource();
      continue;
    }
    break;
  }
  return v;
}

bool mlir::lpc::isAllocationRoot(Value root) {
  return root.getDefiningOp<memref::AllocOp>() ||
         root.getDefiningOp<memref::AllocaOp>();
}

SmallVector<Value> mlir::lpc::buffersOf(Operation *op) {
  llvm::SetVector<Value> roots;
  op->walk([&](Operation *inner) {
    if (isa<memref::GetGlobalOp>(inner))
      roots.insert(inner->getResult(0));
    for (Value v : inner->getOperands())
      if (isa<BaseMemRefType>(v.getType()) &&
          !op->isAncestor(v.getParentBlock()->getParentOp()) &&
          !(v.getDefiningOp() && op->isAncestor(v.getDefiningOp())))
        roots.insert(bufferRootOf(v));
  });
  return roots.takeVector();
}

bool mlir::lpc::buffersMayConflict(ArrayRef<Value> a, ArrayRef<Value> b) {
  auto known = [](Value root) {
    auto arg = dyn_cast<BlockArgument>(root);
    return isAllocationRoot(root) ||
           (arg && arg.getOwner()->isEntryBlock() &&
            isa<func::FuncOp>(arg.getOwner()->getParentOp()));
  };
  for (Value x : a)
    for (Value y : b)
      if (x == y || !known(x) || !known(y) ||
          (!isAllocationRoot(x) && !isAllocationRoot(y)))
        return true;
  return false;
}

/// Whether two roots may be (or overlap) one buffer.
static bool mayAlias(Value x, Value y, bool distinctArgs) {
  auto isArg = [](Value root) {
    auto arg = dyn_cast<BlockArgument>(root);
    return arg && arg.getOwner()->isEntryBlock() &&
           isa<func::FuncOp>(arg.getOwner()->getParentOp());
  };
  if (x == y)
    return true;
  bool xa = isAllocationRoot(x), ya = isAllocationRoot(y);
  bool xk = xa || isArg(x), yk = ya || isArg(y);
  if (!xk || !yk)
    return true; // a root lpc does not know may be anything
  if (xa || ya)
    return false; // a fresh allocation is no other buffer
  return !distinctArgs;
}

mlir::lpc::Footprint mlir::lpc::footprintOf(Operation *op) {
  llvm::SetVector<Value> reads, writes;
  op->walk([&](Operation *inner) {
    auto written = inner->getAttrOfType<DenseI64ArrayAttr>(kWrittenOperandsAttr);
    for (auto [i, v] : llvm::enumerate(inner->getOperands())) {
      if (!isa<BaseMemRefType>(v.getType()))
        continue;
      Value root = bufferRootOf(v);
      if (Operation *def = root.getDefiningOp();
          def && def != op && op->isAncestor(def) &&
          !isa<memref::GetGlobalOp>(def))
        continue; // the op's own scratch memory
      if (auto arg = dyn_cast<BlockArgument>(root);
          arg && op->isAncestor(arg.getOwner()->getParentOp()))
        continue;
      if (isa<ViewLikeOpInterface, memref::CastOp>(inner) &&
          isMemoryEffectFree(inner))
        continue; // a view: what is done with it counts
      if (written && isa<func::CallOp>(inner)) {
        reads.insert(root);
        if (llvm::is_contained(written.asArrayRef(), int64_t(i)))
          writes.insert(root);
        continue;
      }
      auto iface = dyn_cast<MemoryEffectOpInterface>(inner);
      SmallVector<MemoryEffects::EffectInstance> effects;
      if (iface)
        iface.getEffectsOnValue(v, effects);
      if (!iface || (effects.empty() && !isMemoryEffectFree(inner))) {
        reads.insert(root);
        writes.insert(root);
        continue;
      }
      for (const MemoryEffects::EffectInstance &e : effects) {
        if (isa<MemoryEffects::Read>(e.getEffect()))
          reads.insert(root);
        else
          writes.insert(root);
      }
    }
  });
  return {reads.takeVector(), writes.takeVector()};
}

bool mlir::lpc::footprintsConflict(const Footprint &a, const Footprint &b,
                                   bool distinctArgs) {
  auto any = [&](ArrayRef<Value> xs, ArrayRef<Value> ys) {
    for (Value x : xs)
      for (Value y : ys)
        if (mayAlias(x, y, distinctArgs))
          return true;
    return false;
  };
  return any(a.writes, b.reads) || any(a.writes, b.writes) ||
         any(b.writes, a.reads);
}

void mlir::lpc::copyElements(OpBuilder &b, memref::CopyOp copy,
                             function_ref<Value(int64_t)> index) {
  auto type = cast<MemRefType>(copy.getSource().getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> at(shape.size(), 0);
  for (int64_t n = 0; n < type.getNumElements(); ++n) {
    SmallVector<Value> idx;
    for (int64_t i : at)
      idx.push_back(index(i));
    Value v = memref::LoadOp::create(b, copy.getLoc(), copy.getSource(), idx);
    memref::StoreOp::create(b, copy.getLoc(), v, copy.getTarget(), idx);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++at[d] < shape[d])
        break;
      at[d] = 0;
    }
  }
}

bool mlir::lpc::constantGlobalChain(Value v, SymbolTableCollection &symbols,
                                    SmallVectorImpl<Operation *> &chain) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
    auto global = symbols.lookupNearestSymbolFrom<memref::GlobalOp>(
        get, get.getNameAttr());
    if (!global || !global.getConstant())
      return false;
    chain.push_back(def);
    return true;
  }
  if (!isa<memref::SubViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
           memref::CastOp, memref::ReinterpretCastOp>(def))
    return false;
  // The source first, then the op; other operands (offsets, sizes) must be
  // constants, which are cloned with it.
  if (!constantGlobalChain(def->getOperand(0), symbols, chain))
    return false;
  for (Value o : def->getOperands().drop_front()) {
    Operation *c = o.getDefiningOp();
    if (!c || !isa<arith::ConstantOp>(c))
      return false;
    chain.push_back(c);
  }
  chain.push_back(def);
  return true;
}
