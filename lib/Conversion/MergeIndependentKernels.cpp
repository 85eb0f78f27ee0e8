//===- MergeIndependentKernels.cpp - --lpc-merge-independent-kernels ------===//
//
// An FP8 train step launches, per FP8 tensor, a tail of small kernels after
// the cast that computes its partial statistics: the last stages of the
// amax and saturation-count reductions, the amax-history push, the history
// reduction, the next scale. Each is a graph node of a few microseconds for
// nanoseconds of work, and a d_model-4096 GPT block has 25 FP8 tensors:
// some 200 such nodes (the cost model's "per-node cost"). Transformer
// Engine runs them as one multi-tensor kernel per stage.
//
// This pass gets there from the kernels lpc already has. With delayed
// scaling nothing in the step reads what these tails compute (the next
// scale, the metrics), so each small kernel first sinks as far down the
// host function as its buffers allow; the tails of all FP8 tensors then
// stand together at the end of the step, and the kernels of one stage of
// all of them (one level of their dependency graph) become one launch.
// What a kernel does is unchanged: a merged loop runs piece k's iteration
// i - start_k at iteration i, and pieces of one loop touch disjoint buffers.
// See Passes.td for the rules.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "KernelBuffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCMERGEINDEPENDENTKERNELS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

/// Ops a kernel may move across whatever its buffers: they touch no memory
/// it uses (a new allocation; ops without memory effects). Deallocations
/// are handled by the callers.
bool isGap(Operation *op) {
  if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op))
    return true;
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

/// A call of the runtime (GEMM, attention): it touches its operands only.
bool isRuntimeCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee().starts_with("lpc_rt_");
}

/// Bytes of the kernel parameters that `values` become (a memref is a
/// descriptor: two pointers, an offset, sizes and strides).
int64_t paramBytes(const llvm::SetVector<Value> &values) {
  int64_t bytes = 0;
  for (Value v : values)
    if (auto m = dyn_cast<MemRefType>(v.getType()))
      bytes += (3 + 2 * m.getRank()) * 8;
    else
      bytes += 8;
  return bytes;
}

/// The values defined outside `op` that it uses and that would be kernel
/// parameters (constants are copied into the kernels instead).
void collectParams(Operation *op, llvm::SetVector<Value> &params) {
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && op->isAncestor(def))
        continue;
      if (!def && op->isAncestor(v.getParentBlock()->getParentOp()))
        continue;
      if (def && isa<arith::ConstantOp>(def))
        continue;
      params.insert(v);
    }
  });
}

struct Kernel {
  scf::ParallelOp loop;
  int64_t threads;
  Footprint footprint;
  SmallVector<Value> buffers; // what it reads or writes
};

struct LpcMergeIndependentKernelsPass
    : ::mlir::lpc::impl::LpcMergeIndependentKernelsBase<
          LpcMergeIndependentKernelsPass> {
  using Base::Base;

  /// The loop as a candidate, or nothing (see Passes.td).
  std::optional<Kernel> candidate(Operation *op) {
    auto par = dyn_cast<scf::ParallelOp>(op);
    if (!par || par.getNumResults() != 0 || !par.getInitVals().empty() ||
        par.getNumLoops() != 1)
      return std::nullopt;
    std::optional<int64_t> lb = getConstantIntValue(par.getLowerBound()[0]);
    std::optional<int64_t> step = getConstantIntValue(par.getStep()[0]);
    std::optional<SmallVector<int64_t>> trips = constantTripCounts(par);
    if (!lb || *lb != 0 || !step || *step != 1 || !trips ||
        (*trips)[0] < 1 || (*trips)[0] > maxThreads)
      return std::nullopt;
    Kernel k{par, (*trips)[0], footprintOf(par), {}};
    llvm::SetVector<Value> all(k.footprint.reads.begin(),
                               k.footprint.reads.end());
    all.insert(k.footprint.writes.begin(), k.footprint.writes.end());
    k.buffers = all.takeVector();
    int64_t bytes = 0;
    for (Value root : k.buffers) {
      if (!isAllocationRoot(root))
        continue;
      auto t = cast<MemRefType>(root.getType());
      if (!t.hasStaticShape())
        return std::nullopt;
      bytes += t.getNumElements() *
               ((t.getElementTypeBitWidth() + 7) / 8);
    }
    if (bytes > maxBytes)
      return std::nullopt;
    return k;
  }

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (f.isExternal())
      return;
    for (Block &block : f.getBody()) {
      copiesAsKernels(block);
      sink(block);
      merge(block);
    }
  }

  /// Small copies (the accumulators' initial values, 0-d state) become
  /// one-thread loops, so that they sink and merge like the kernels.
  void copiesAsKernels(Block &block) {
    SmallVector<memref::CopyOp> copies;
    for (Operation &op : block)
      if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        auto src = dyn_cast<MemRefType>(copy.getSource().getType());
        auto dst = dyn_cast<MemRefType>(copy.getTarget().getType());
        if (src && dst && src.hasStaticShape() && dst.hasStaticShape() &&
            src.getNumElements() <= maxCopyElements)
          copies.push_back(copy);
      }
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      Location loc = copy.getLoc();
      Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
      Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
      auto loop = scf::ParallelOp::create(b, loc, ValueRange{c0},
                                          ValueRange{c1}, ValueRange{c1});
      OpBuilder in = OpBuilder::atBlockTerminator(loop.getBody());
      DenseMap<int64_t, Value> indices;
      copyElements(in, copy, [&](int64_t i) {
        Value &v = indices[i];
        if (!v) {
          OpBuilder::InsertionGuard g(in);
          in.setInsertionPointToStart(loop.getBody());
          v = arith::ConstantIndexOp::create(in, loc, i);
        }
        return v;
      });
      copy.erase();
    }
  }

  /// Step 1: every candidate, the last first, moves down to just before
  /// the first op that may touch its buffers.
  void sink(Block &block) {
    SmallVector<Kernel, 8> kernels;
    for (Operation &op : block)
      if (std::optional<Kernel> k = candidate(&op))
        kernels.push_back(std::move(*k));
    for (Kernel &k : llvm::reverse(kernels)) {
      llvm::SmallDenseSet<Value> mine(k.buffers.begin(), k.buffers.end());
      SmallVector<Operation *> frees; // deallocations of its buffers passed
      Operation *stop = k.loop->getNextNode();
      for (; stop && !stop->hasTrait<OpTrait::IsTerminator>();
           stop = stop->getNextNode()) {
        if (auto dealloc = dyn_cast<memref::DeallocOp>(stop)) {
          if (mine.contains(bufferRootOf(dealloc.getMemref())))
            frees.push_back(stop);
          continue;
        }
        if (isGap(stop))
          continue;
        if ((isa<scf::ParallelOp, memref::CopyOp>(stop) ||
             isRuntimeCall(stop)) &&
            !footprintsConflict(k.footprint, footprintOf(stop), distinctArgs))
          continue;
        break;
      }
      if (!stop || stop == k.loop->getNextNode())
        continue;
      k.loop->moveBefore(stop);
      Operation *after = k.loop;
      for (Operation *free : frees) {
        free->moveAfter(after);
        after = free;
      }
    }
  }

  /// Step 2: the candidates of each run, one loop per level of their
  /// dependency graph.
  void merge(Block &block) {
    SmallVector<Kernel, 8> run;
    SmallVector<Operation *> frees;
    SmallVector<std::pair<SmallVector<Kernel, 8>, SmallVector<Operation *>>, 4> runs;
    auto close = [&] {
      if (run.size() >= 2)
        runs.push_back({std::move(run), std::move(frees)});
      run.clear();
      frees.clear();
    };
    for (Operation &op : block) {
      if (std::optional<Kernel> k = candidate(&op)) {
        run.push_back(std::move(*k));
      } else if (isGap(&op)) {
        if (isa<memref::DeallocOp>(op) && !run.empty())
          frees.push_back(&op);
      } else {
        close();
      }
    }
    close();
    for (auto &[kernels, deallocs] : runs)
      mergeRun(kernels, deallocs);
  }

  void mergeRun(MutableArrayRef<Kernel> kernels, ArrayRef<Operation *> deallocs) {
    // Levels: after every earlier kernel that may share a buffer.
    SmallVector<int64_t> level(kernels.size(), 0);
    int64_t levels = 0;
    for (size_t i = 0; i < kernels.size(); ++i) {
      for (size_t j = 0; j < i; ++j)
        if (footprintsConflict(kernels[j].footprint, kernels[i].footprint,
                               distinctArgs))
          level[i] = std::max(level[i], level[j] + 1);
      levels = std::max(levels, level[i] + 1);
    }
    // Groups: the kernels of a level in program order, split where the
    // parameters would exceed max-param-bytes.
    SmallVector<SmallVector<Kernel *>> groups;
    for (int64_t l = 0; l < levels; ++l) {
      llvm::SetVector<Value> params;
      SmallVector<Kernel *> group;
      for (size_t i = 0; i < kernels.size(); ++i) {
        if (level[i] != l)
          continue;
        llvm::SetVector<Value> more = params;
        collectParams(kernels[i].loop, more);
        if (!group.empty() && paramBytes(more) > maxParamBytes) {
          groups.push_back(std::move(group));
          group.clear();
          more.clear();
          collectParams(kernels[i].loop, more);
        }
        params = std::move(more);
        group.push_back(&kernels[i]);
      }
      groups.push_back(std::move(group));
    }
    if (groups.size() == kernels.size())
      return; // nothing to merge: leave the program as it was
    // Everything goes, in level order, where the run's last kernel stands.
    Operation *anchor = kernels.back().loop->getNextNode();
    OpBuilder b(anchor);
    SmallVector<Operation *> erase;
    for (ArrayRef<Kernel *> group : groups) {
      if (group.size() == 1) {
        group[0]->loop->moveBefore(anchor);
        continue;
      }
      build(b, group);
      for (Kernel *k : group)
        erase.push_back(k->loop);
    }
    for (Operation *free : deallocs)
      free->moveBefore(anchor);
    for (Operation *op : erase)
      op->erase();
  }

  /// One loop running the pieces side by side: iteration i runs piece k's
  /// iteration i - start_k, chosen by an scf.if chain.
  Operation *build(OpBuilder &b, ArrayRef<Kernel *> pieces) {
    Location loc = pieces.front()->loop.getLoc();
    int64_t total = 0;
    for (Kernel *k : pieces)
      total += k->threads;
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    Value n = arith::ConstantIndexOp::create(b, loc, total);
    auto merged = scf::ParallelOp::create(b, loc, ValueRange{c0},
                                          ValueRange{n}, ValueRange{c1});
    Value i = merged.getInductionVars()[0];
    OpBuilder in = OpBuilder::atBlockTerminator(merged.getBody());
    int64_t start = 0;
    for (size_t p = 0; p < pieces.size(); ++p) {
      scf::ParallelOp piece = pieces[p]->loop;
      int64_t end = start + pieces[p]->threads;
      OpBuilder body = in;
      if (p + 1 < pieces.size()) {
        Value below = arith::CmpIOp::create(
            in, loc, arith::CmpIPredicate::ult, i,
            arith::ConstantIndexOp::create(in, loc, end));
        auto branch = scf::IfOp::create(in, loc, below, /*withElseRegion=*/true);
        body = OpBuilder::atBlockTerminator(branch.thenBlock());
        in = OpBuilder::atBlockTerminator(branch.elseBlock());
      }
      IRMapping map;
      Value local = i;
      if (start != 0)
        local = arith::SubIOp::create(
            body, loc, i, arith::ConstantIndexOp::create(body, loc, start));
      map.map(piece.getInductionVars()[0], local);
      for (Operation &op : piece.getBody()->without_terminator())
        body.clone(op, map);
      start = end;
    }
    return merged;
  }
};

} // namespace
