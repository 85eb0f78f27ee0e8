//===- MergeSerialKernels.cpp - --lpc-merge-serial-kernels ----------------===//
//
// After lpc-gpu-serial-kernels, the FP8 bookkeeping of a train step (amax
// history pushes, scale computations, the loss-scale state) is a long
// sequence of one-iteration scf.parallel loops (single-thread kernels) and
// copies of 0-d state buffers (device-to-device copies of 4-8 bytes), each
// a launch or a copy of its own: a graph node that costs microseconds for
// nanoseconds of work. This pass puts each run of them that is adjacent in
// program order into one single-thread kernel, the pieces in their order.
// One thread running them one after the other keeps every dependency
// between them (a piece reads what an earlier one wrote, as before).
//
// Nothing moves across an op that may touch the pieces' buffers. Between
// two pieces of a run may stand allocations, deallocations, ops without
// memory effects or regions, and other kernels (scf.parallel loops) and
// copies that provably touch none of the buffers of the pieces before
// them: every memref they use is a view of a different allocation (two
// function arguments may be one buffer; a fresh allocation is no other).
// Calls (GEMMs, attention) and any other op end a run. The merged loop
// takes the place of the run's last piece (every value the earlier pieces
// use is defined before it); deallocations between the pieces move after
// it.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "KernelBuffers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCMERGESERIALKERNELS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

struct LpcMergeSerialKernelsPass
    : ::mlir::lpc::impl::LpcMergeSerialKernelsBase<LpcMergeSerialKernelsPass> {
  using Base::Base;

  /// A loop of at most max-iterations iterations (at least one) with no
  /// results, or a copy of at most max-copy-elements elements of static
  /// shape.
  bool isCandidate(Operation *op) {
    if (auto par = dyn_cast<scf::ParallelOp>(op)) {
      if (par.getNumResults() != 0 || !par.getInitVals().empty())
        return false;
      std::optional<SmallVector<int64_t>> trips = constantTripCounts(par);
      if (!trips)
        return false;
      int64_t total = 1;
      for (int64_t t : *trips)
        total *= t;
      return total >= 1 && total <= maxIterations;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      auto src = dyn_cast<MemRefType>(copy.getSource().getType());
      auto dst = dyn_cast<MemRefType>(copy.getTarget().getType());
      return src && dst && src.hasStaticShape() && dst.hasStaticShape() &&
             src.getNumElements() <= maxCopyElements;
    }
    return false;
  }

  /// Ops that may stand between two pieces of a run: they touch no buffer
  /// a piece could use (an allocation's buffer is new; a deallocation frees
  /// one that no later piece uses, and moves after the merged loop).
  static bool isGap(Operation *op) {
    if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op))
      return true;
    return op->getNumRegions() == 0 && isMemoryEffectFree(op);
  }

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (f.isExternal())
      return;
    for (Block &block : f.getBody()) {
      // Runs of candidates (adjacent, or apart only by kernels and copies
      // that touch none of the buffers of the pieces before them), with
      // the deallocations between their first and last pieces.
      struct Run {
        SmallVector<Operation *> pieces, deallocs;
        SmallVector<Value> buffers; // the roots of what the pieces use
      };
      SmallVector<Run> runs;
      Run current;
      SmallVector<Operation *> pending; // deallocations since the last piece
      auto close = [&] {
        if (current.pieces.size() >= 2)
          runs.push_back(std::move(current));
        current = Run();
        pending.clear();
      };
      for (Operation &op : block) {
        if (isCandidate(&op)) {
          current.deallocs.append(pending);
          pending.clear();
          current.pieces.push_back(&op);
          llvm::append_range(current.buffers, buffersOf(&op));
        } else if (isGap(&op)) {
          if (isa<memref::DeallocOp>(op) && !current.pieces.empty())
            pending.push_back(&op);
        } else if (!current.pieces.empty() &&
                   isa<scf::ParallelOp, memref::CopyOp>(op) &&
                   !buffersMayConflict(current.buffers, buffersOf(&op))) {
          // A kernel or copy that touches none of the buffers of the
          // pieces so far: they may run after it, with the pieces to come.
        } else {
          close();
        }
      }
      close();
      for (Run &run : runs)
        merge(run.pieces, run.deallocs);
    }
  }

  /// One single-thread loop in place of the last piece, holding every
  /// piece in order; the deallocations between them move after it.
  void merge(ArrayRef<Operation *> pieces, ArrayRef<Operation *> deallocs) {
    Operation *last = pieces.back();
    Location loc = pieces.front()->getLoc();
    OpBuilder b(last);
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    auto merged = scf::ParallelOp::create(b, loc, ValueRange{c0},
                                          ValueRange{c1}, ValueRange{c1});
    OpBuilder in(merged.getBody()->getTerminator());
    DenseMap<int64_t, Value> indices;
    auto index = [&](int64_t i) {
      auto [it, added] = indices.try_emplace(i);
      if (added) {
        OpBuilder::InsertionGuard g(in);
        in.setInsertionPointToStart(merged.getBody());
        it->second = arith::ConstantIndexOp::create(in, loc, i);
      }
      return it->second;
    };
    for (Operation *piece : pieces) {
      if (auto copy = dyn_cast<memref::CopyOp>(piece)) {
        copyElements(in, copy, index);
        continue;
      }
      auto par = cast<scf::ParallelOp>(piece);
      SmallVector<int64_t> trips = *constantTripCounts(par);
      IRMapping map;
      OpBuilder body = in;
      for (auto [d, iv] : llvm::enumerate(par.getInductionVars())) {
        if (trips[d] == 1) {
          map.map(iv, par.getLowerBound()[d]);
          continue;
        }
        // A few iterations: one after the other.
        auto loop = scf::ForOp::create(body, par.getLoc(),
                                       par.getLowerBound()[d],
                                       par.getUpperBound()[d], par.getStep()[d]);
        map.map(iv, loop.getInductionVar());
        body.setInsertionPoint(loop.getBody()->getTerminator());
      }
      for (Operation &op : par.getBody()->without_terminator())
        body.clone(op, map);
    }
    for (Operation *piece : pieces)
      piece->erase();
    Operation *after = merged;
    for (Operation *dealloc : deallocs) {
      dealloc->moveAfter(after);
      after = dealloc;
    }
  }
};

} // namespace
