//===- GPUSerialKernels.cpp - --lpc-gpu-serial-kernels --------------------===//
//
// In the GPU pipeline, everything of a function that is not a parallel loop
// (the reductions with no parallel dimension, the 0-d scalar code: scales,
// loss scale, learning rate) would otherwise stay in the host function,
// reading and writing buffers that live on the device. This pass wraps each
// run of such ops in a one-iteration scf.parallel, which the rest of the
// pipeline turns into a single-thread kernel, so that the host function is
// left with allocations, views, copies, calls and kernel launches. Scalars
// one run computes and later code uses go through 0-d buffers.
//
// Single-thread kernels are correct, not fast: what runs here must be
// small. Full reductions get here only for their last step, after
// lpc-split-reductions has computed their partials in parallel.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCGPUSERIALKERNELS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

/// Ops that stay in the host function: buffer management, views, constants,
/// the parallel loops (kernels to be), calls and the return.
bool isHostOp(Operation *op) {
  return isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
             memref::CopyOp, memref::GetGlobalOp, arith::ConstantOp,
             scf::ParallelOp, func::CallOp, func::ReturnOp,
             ViewLikeOpInterface>(op);
}

struct LpcGPUSerialKernelsPass
    : ::mlir::lpc::impl::LpcGPUSerialKernelsBase<LpcGPUSerialKernelsPass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (f.isExternal() || !f.getBody().hasOneBlock())
      return;
    Block &body = f.getBody().front();

    // Serial device ops: loops, loads, stores and anything else with memory
    // effects or regions, and pure ops that use what those compute. Pure
    // ops on constants and arguments only (index math) stay on the host.
    DenseSet<Operation *> serial;
    for (Operation &op : body) {
      if (isHostOp(&op))
        continue;
      bool pure = isMemoryEffectFree(&op) && op.getNumRegions() == 0;
      bool tainted = llvm::any_of(op.getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && serial.contains(def);
      });
      if (!pure || tainted)
        serial.insert(&op);
    }

    // Maximal runs of consecutive serial ops.
    SmallVector<SmallVector<Operation *>> runs;
    bool open = false;
    for (Operation &op : body) {
      if (!serial.contains(&op)) {
        open = false; // a run moves as a whole to where it starts
        continue;
      }
      if (!open)
        runs.emplace_back();
      runs.back().push_back(&op);
      open = true;
    }

    for (auto [i, run] : llvm::enumerate(runs))
      for (Operation *op : run)
        runOf[op] = i;
    OpBuilder b(&getContext());
    for (unsigned i = 0; i < runs.size(); ++i)
      if (!rematerialize(f, runs[i]) && failed(wrap(b, f, runs, i)))
        return signalPassFailure();
  }

  /// A run that only reads function arguments the function never writes
  /// (a 0-d scale, say) and computes on what it read, and whose results
  /// are used only inside parallel loops, is copied into each of those
  /// loops instead of becoming a kernel of its own. Returns whether it was.
  bool rematerialize(func::FuncOp f, ArrayRef<Operation *> run) {
    DenseSet<Operation *> inRun(run.begin(), run.end());
    for (Operation *op : run) {
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        auto arg = dyn_cast<BlockArgument>(load.getMemRef());
        if (!arg || arg.getOwner()->getParentOp() != f.getOperation() ||
            !readOnly(arg))
          return false;
      } else if (!isMemoryEffectFree(op) || op->getNumRegions() != 0) {
        return false;
      }
    }
    // The parallel loops that use the run's results, in program order.
    llvm::SetVector<Operation *> users;
    for (Operation *op : run)
      for (Operation *user : op->getUsers()) {
        if (inRun.contains(user))
          continue;
        Operation *top = user;
        while (top->getParentOp() != f.getOperation())
          top = top->getParentOp();
        if (top == user || !isa<scf::ParallelOp>(top))
          return false;
        users.insert(top);
      }
    for (Operation *loop : users) {
      auto par = cast<scf::ParallelOp>(loop);
      OpBuilder in = OpBuilder::atBlockBegin(par.getBody());
      IRMapping map;
      for (Operation *op : run) {
        Operation *copy = in.clone(*op, map);
        for (auto [r, c] : llvm::zip(op->getResults(), copy->getResults()))
          for (OpOperand &use : llvm::make_early_inc_range(r.getUses()))
            if (par->isAncestor(use.getOwner()))
              use.set(c);
      }
    }
    for (Operation *op : llvm::reverse(run))
      op->erase();
    return true;
  }

  /// Whether nothing in the function may write through `arg`: it is only
  /// read by memref.load or by linalg ops as an input.
  static bool readOnly(BlockArgument arg) {
    for (OpOperand &use : arg.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::LoadOp>(user))
        continue;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      if (linalgOp && linalgOp.isDpsInput(&use))
        continue;
      return false;
    }
    return true;
  }

  /// The run each top-level serial op belongs to.
  DenseMap<Operation *, unsigned> runOf;

  /// Moves runs[index] into a one-iteration scf.parallel; results used
  /// after it are stored to 0-d buffers and loaded where they are used (a
  /// load before an op of a later run joins that run).
  LogicalResult wrap(OpBuilder &b, func::FuncOp f,
                     SmallVectorImpl<SmallVector<Operation *>> &runs,
                     unsigned index) {
    ArrayRef<Operation *> run = runs[index];
    DenseSet<Operation *> inRun(run.begin(), run.end());
    Operation *first = run.front();
    Location loc = first->getLoc();
    // Values of the run used outside it.
    llvm::SetVector<Value> escaping;
    for (Operation *op : run)
      for (Value r : op->getResults())
        for (OpOperand &use : r.getUses()) {
          Operation *user = use.getOwner();
          Operation *top = user;
          while (top->getParentOp() != f.getOperation())
            top = top->getParentOp();
          if (inRun.contains(top))
            continue;
          // Inside a later parallel loop (a kernel) or run: loaded there.
          // By the host itself (a loop bound, a size): impossible.
          if (user == top && isHostOp(top))
            return first->emitError("lpc-gpu-serial-kernels: a value computed "
                                    "on the device is used by host code: ")
                   << *user;
          escaping.insert(r);
        }

    b.setInsertionPoint(first);
    DenseMap<Value, Value> slot;
    for (Value v : escaping) {
      Type t = v.getType();
      if (!t.isIntOrIndexOrFloat())
        return first->emitError("lpc-gpu-serial-kernels: cannot pass a value "
                                "of type ")
               << t << " out of a device run";
      slot[v] = memref::AllocOp::create(b, loc, MemRefType::get({}, t));
    }
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    auto par = scf::ParallelOp::create(b, loc, ValueRange{c0}, ValueRange{c1},
                                       ValueRange{c1});
    Operation *terminator = par.getBody()->getTerminator();
    for (Operation *op : run)
      op->moveBefore(terminator);
    OpBuilder in(terminator);
    for (Value v : escaping)
      memref::StoreOp::create(in, loc, v, slot[v]);
    // Every use outside loads the value back right before it.
    for (Value v : escaping)
      for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
        Operation *user = use.getOwner();
        if (par->isAncestor(user))
          continue;
        OpBuilder ub(user);
        auto load = memref::LoadOp::create(ub, loc, slot[v]);
        use.set(load);
        if (auto later = runOf.find(user); later != runOf.end()) {
          auto &into = runs[later->second];
          into.insert(llvm::find(into, user), load);
          runOf[load] = later->second;
        }
      }
    // Free the slots at the end of the function.
    for (Block &block : f.getBody())
      if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator())) {
        OpBuilder rb(ret);
        for (Value v : escaping)
          memref::DeallocOp::create(rb, loc, slot[v]);
      }
    return success();
  }
};

} // namespace
