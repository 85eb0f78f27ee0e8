//===- GPULaunchInfo.cpp - --lpc-gpu-launch-info --------------------------===//
//
// What the runtime's cost model (runtime/cuda/Estimate.cpp, lpc-cuda-check
// --estimate) needs from a kernel and cannot read reliably from PTX: which
// of its memref operands it reads and which it writes, and how many loop
// iterations one thread runs in sequence. Here the kernels are still
// memref-level gpu.funcs, so both are facts of the IR (memory effects,
// scf.for bounds) rather than a register analysis of the PTX. "Reads"
// means reads what the operand held before the launch. They go on
// each gpu.launch_func as discardable attributes, which the host function
// keeps through the rest of lpc-gpu-codegen and lib/Backend/GPUArtifact.cpp
// writes into the artifact ("access", "serial_iters").
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <optional>

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCGPULAUNCHINFO
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

constexpr unsigned kRead = 1, kWrite = 2;

/// Read/write flags of everything done to `v` and the views made of it.
/// A use whose effects are unknown counts as both (never too little).
unsigned accessOf(Value v) {
  unsigned flags = 0;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto view = dyn_cast<ViewLikeOpInterface>(user);
        view && view.getViewSource() == v) {
      for (Value r : user->getResults())
        flags |= accessOf(r);
      continue;
    }
    auto iface = dyn_cast<MemoryEffectOpInterface>(user);
    if (!iface) {
      if (!isMemoryEffectFree(user))
        flags |= kRead | kWrite;
      continue;
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffectsOnValue(v, effects);
    for (const auto &e : effects) {
      if (isa<MemoryEffects::Read>(e.getEffect()))
        flags |= kRead;
      else if (isa<MemoryEffects::Write>(e.getEffect()))
        flags |= kWrite;
    }
  }
  return flags;
}

/// What comes first on every path through `block` for the 0-d memref
/// `arg`: a write, a (possible) read, or nothing. An scf.if whose condition
/// does not use `arg` is looked into, each branch on its own (a one-thread
/// kernel's guard; a merged kernel's branch per piece,
/// lpc-merge-independent-kernels): where every branch writes first, the if
/// does; where a branch (or a missing else) does not touch `arg`, the ops
/// after the if decide for that path.
enum class FirstAccess { None, Write, Read };
FirstAccess firstAccess(Block &block, Value arg) {
  bool writtenOnSomePaths = false;
  for (Operation &op : block) {
    bool touches = false;
    op.walk([&](Operation *inner) {
      touches = touches || llvm::is_contained(inner->getOperands(), arg);
    });
    if (!touches)
      continue;
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      if (llvm::is_contained(op.getOperands(), arg))
        return FirstAccess::Read;
      bool someUntouched = branch.getElseRegion().empty();
      for (Region &r : branch->getRegions()) {
        if (r.empty())
          continue;
        FirstAccess f = firstAccess(r.front(), arg);
        if (f == FirstAccess::Read)
          return FirstAccess::Read;
        someUntouched = someUntouched || f == FirstAccess::None;
      }
      if (!someUntouched)
        return FirstAccess::Write;
      writtenOnSomePaths = true;
      continue;
    }
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface || op.getNumRegions())
      return FirstAccess::Read;
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffectsOnValue(arg, effects);
    bool writes = !effects.empty() && llvm::all_of(effects, [](const auto &e) {
      return isa<MemoryEffects::Write>(e.getEffect());
    });
    return writes ? FirstAccess::Write : FirstAccess::Read;
  }
  return writtenOnSomePaths ? FirstAccess::Write : FirstAccess::None;
}

/// Whether `kernel` never reads what the 0-d memref `arg` held before the
/// launch: on every path its first access is a store (see firstAccess).
/// The serial kernels pass scalars between their statements through such
/// scratch buffers; the data flow of the artifact must not see a read of
/// an older value there. (Only 0-d: every access is the same element.)
bool writtenFirst(Block &block, Value arg) {
  return firstAccess(block, arg) == FirstAccess::Write;
}

/// Loop iterations one thread runs in sequence in `region`: each scf.for
/// counts its trip count times those of its body (at least one); loops one
/// after the other add; an scf.if counts its longer branch. nullopt when a
/// loop's bounds are not constants or the region has a loop of another
/// kind.
std::optional<int64_t> serialIterations(Region &region) {
  int64_t total = 0;
  for (Block &block : region) {
    for (Operation &op : block) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        std::optional<APInt> trip = loop.getStaticTripCount();
        std::optional<int64_t> inner = serialIterations(loop.getRegion());
        if (!trip || !inner)
          return std::nullopt;
        int64_t t = trip->getSExtValue(), n = 0;
        if (__builtin_mul_overflow(t, std::max<int64_t>(1, *inner), &n) ||
            __builtin_add_overflow(total, n, &total))
          return std::nullopt;
      } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
        int64_t longest = 0;
        for (Region &r : branch->getRegions()) {
          std::optional<int64_t> n = serialIterations(r);
          if (!n)
            return std::nullopt;
          longest = std::max(longest, *n);
        }
        if (__builtin_add_overflow(total, longest, &total))
          return std::nullopt;
      } else if (op.getNumRegions()) {
        return std::nullopt; // scf.while, scf.execute_region, ...
      }
    }
  }
  return total;
}

struct LpcGPULaunchInfoPass
    : ::mlir::lpc::impl::LpcGPULaunchInfoBase<LpcGPULaunchInfoPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    Builder b(module.getContext());
    // One analysis per kernel, whatever the number of launches.
    llvm::DenseMap<Operation *, std::pair<ArrayAttr, IntegerAttr>> done;
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (!kernel || kernel.isExternal() ||
          kernel.getNumArguments() != launch.getNumKernelOperands()) {
        launch.emitOpError("lpc-gpu-launch-info: no gpu.func with a body and "
                           "one argument per kernel operand for ")
            << launch.getKernel();
        return WalkResult::interrupt();
      }
      auto [it, fresh] = done.try_emplace(kernel);
      if (fresh) {
        SmallVector<Attribute> access;
        for (BlockArgument arg : kernel.getArguments()) {
          auto type = dyn_cast<MemRefType>(arg.getType());
          unsigned flags = type ? accessOf(arg) : 0;
          if (type && type.getRank() == 0 && (flags & kRead) &&
              writtenFirst(kernel.getBody().front(), arg))
            flags &= ~kRead;
          access.push_back(b.getStringAttr(
              std::string(flags & kRead ? "r" : "") + (flags & kWrite ? "w" : "")));
        }
        it->second.first = b.getArrayAttr(access);
        if (std::optional<int64_t> n = serialIterations(kernel.getBody()))
          it->second.second = b.getI64IntegerAttr(*n);
      }
      launch->setAttr("lpc_access", it->second.first);
      if (it->second.second)
        launch->setAttr("lpc_serial_iters", it->second.second);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
