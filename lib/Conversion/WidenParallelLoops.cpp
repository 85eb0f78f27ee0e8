//===- WidenParallelLoops.cpp - --lpc-widen-parallel-loops ----------------===//
//
// After lpc-collapse-parallel-loops a GPU thread takes one element of an
// elementwise loop: 4-byte loads for f32, 2-byte for bf16, 1-byte for FP8,
// where the memory system moves 16 bytes per access at the same cost. This
// pass gives each iteration V neighbouring elements of the innermost
// dimension instead (V = `bytes` / the narrowest element accessed along it,
// a power of two dividing the dimension): each op of its body copied V
// times in a row, the stores last. In
// that form LLVM's load/store vectorizer (part of NVPTX's O3 pipeline)
// turns the V neighbouring scalar accesses into vector ones (ld.global.v4),
// given the alignment the artifact guarantees (lpc-align-kernel-args).
//
// Moving the loads of copy k + 1 above the stores of copy k is what
// scf.parallel already allows: its iterations are independent (the GPU
// runs them at the same time). Within one copy nothing moves: the pass only
// takes bodies whose loads all come before their first store, with no
// nested regions and no memory effects but loads and stores.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/bit.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCWIDENPARALLELLOOPS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

/// Bytes of one element of `t` (memrefs of ints, floats, FP8), or 0.
int64_t elementBytes(MemRefType t) {
  Type e = t.getElementType();
  if (!e.isIntOrFloat())
    return 0;
  return std::max<int64_t>(1, e.getIntOrFloatBitWidth() / 8);
}

/// How many neighbouring iterations of `loop`'s innermost dimension one
/// iteration should take (1: leave the loop alone).
int64_t widthFor(scf::ParallelOp loop, int64_t bytes) {
  if (loop.getNumResults() != 0 || loop->hasAttr(lpc::kTiledAttr))
    return 1;
  unsigned inner = loop.getNumLoops() - 1;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[inner]);
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[inner]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[inner]);
  if (!lb || !ub || !step || *lb != 0 || *step != 1 || *ub < 2)
    return 1;
  Value iv = loop.getInductionVars()[inner];
  Block *body = loop.getBody();
  bool stored = false;
  int64_t narrowest = 0;
  for (Operation &op : body->without_terminator()) {
    if (op.getNumRegions() != 0)
      return 1;
    bool isLoad = isa<memref::LoadOp>(op), isStore = isa<memref::StoreOp>(op);
    if (!isLoad && !isStore && !isMemoryEffectFree(&op))
      return 1;
    if (isLoad && stored)
      return 1; // a load after a store of the same iteration stays put
    stored |= isStore;
    if (!isLoad && !isStore)
      continue;
    auto t = cast<MemRefType>(isLoad ? cast<memref::LoadOp>(op).getMemRefType()
                                     : cast<memref::StoreOp>(op).getMemRefType());
    ValueRange idx = isLoad ? cast<memref::LoadOp>(op).getIndices()
                            : cast<memref::StoreOp>(op).getIndices();
    // Only accesses along the innermost dimension gain from neighbours.
    if (idx.empty() || idx.back() != iv)
      continue;
    int64_t b = elementBytes(t);
    if (b == 0)
      return 1;
    narrowest = narrowest ? std::min(narrowest, b) : b;
  }
  if (!narrowest || bytes < 2 * narrowest)
    return 1;
  int64_t v = int64_t(llvm::bit_floor(uint64_t(bytes / narrowest)));
  while (v > 1 && *ub % v != 0)
    v /= 2;
  return v;
}

/// Rewrites `loop` so that each iteration takes `v` neighbouring
/// iterations of its innermost dimension.
void widen(scf::ParallelOp loop, int64_t v) {
  unsigned inner = loop.getNumLoops() - 1;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> ubs(loop.getUpperBound());
  int64_t n = *getConstantIntValue(ubs[inner]);
  ubs[inner] = arith::ConstantIndexOp::create(b, loc, n / v);
  auto wide = scf::ParallelOp::create(b, loc, loop.getLowerBound(), ubs,
                                      loop.getStep());
  wide->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  Block *from = loop.getBody();
  Block *to = wide.getBody();
  b.setInsertionPointToStart(to);
  Value first = arith::MulIOp::create(
      b, loc, wide.getInductionVars()[inner],
      arith::ConstantIndexOp::create(b, loc, v));
  SmallVector<IRMapping> copies(v);
  for (int64_t k = 0; k < v; ++k) {
    IRMapping &m = copies[k];
    for (unsigned d = 0; d < inner; ++d)
      m.map(loop.getInductionVars()[d], wide.getInductionVars()[d]);
    m.map(loop.getInductionVars()[inner],
          k == 0 ? first
                 : arith::AddIOp::create(
                       b, loc, first, arith::ConstantIndexOp::create(b, loc, k))
                       .getResult());
  }
  // Each op of the body for all copies in turn (the loads of neighbouring
  // addresses next to each other, within the vectorizer's reach however
  // long the body), the stores last.
  for (bool stores : {false, true})
    for (Operation &op : from->without_terminator())
      if (isa<memref::StoreOp>(op) == stores)
        for (int64_t k = 0; k < v; ++k)
          b.clone(op, copies[k]);
  loop.erase();
}

struct LpcWidenParallelLoopsPass
    : ::mlir::lpc::impl::LpcWidenParallelLoopsBase<LpcWidenParallelLoopsPass> {
  using LpcWidenParallelLoopsBase::LpcWidenParallelLoopsBase;
  void runOnOperation() override {
    SmallVector<std::pair<scf::ParallelOp, int64_t>> loops;
    getOperation()->walk([&](scf::ParallelOp p) {
      if (p->getParentOfType<scf::ParallelOp>())
        return;
      if (int64_t v = widthFor(p, bytes); v > 1)
        loops.push_back({p, v});
    });
    for (auto [p, v] : loops)
      widen(p, v);
  }
};

} // namespace
