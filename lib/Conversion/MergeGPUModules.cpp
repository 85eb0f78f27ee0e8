//===- MergeGPUModules.cpp - --lpc-merge-gpu-modules ----------------------===//
//
// gpu-kernel-outlining makes one gpu.module per kernel. Compiling hundreds
// of one-kernel modules runs LLVM's NVPTX back end hundreds of times and
// gives the runtime hundreds of PTX modules to JIT-load; one module holding
// every kernel costs one of each. Only modules that hold exactly one
// gpu.func (what outlining makes) are merged, so nothing can clash but the
// kernels' names, which become their old modules' (unique) names, and the
// constant memref.globals outlining copied in beside a kernel (from
// lpc-sink-constant-globals): copies of one host global under its name,
// so one of each is kept.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCMERGEGPUMODULES
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

/// The one gpu.func of `m`, or null if `m` holds anything else than it and
/// constant globals.
gpu::GPUFuncOp soleKernel(gpu::GPUModuleOp m) {
  gpu::GPUFuncOp kernel;
  for (Operation &op : m.getBody()->without_terminator()) {
    if (auto g = dyn_cast<memref::GlobalOp>(op); g && g.getConstant())
      continue;
    auto f = dyn_cast<gpu::GPUFuncOp>(op);
    if (!f || kernel || !f.isKernel())
      return {};
    kernel = f;
  }
  return kernel;
}

struct LpcMergeGPUModulesPass
    : ::mlir::lpc::impl::LpcMergeGPUModulesBase<LpcMergeGPUModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> sources;
    for (auto m : module.getOps<gpu::GPUModuleOp>())
      if (soleKernel(m) && !m.getTargetsAttr() &&
          !m->getAttr("offloadingHandler"))
        sources.push_back(m);
    if (sources.size() < 2)
      return;
    SymbolTable symbols(module);
    OpBuilder b(sources.front());
    auto merged =
        gpu::GPUModuleOp::create(b, sources.front().getLoc(), "lpc_kernels");
    symbols.insert(merged); // uniquifies the name if it is taken
    // Old (module, kernel) -> new kernel name.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp m : sources) {
      gpu::GPUFuncOp kernel = soleKernel(m);
      StringAttr oldName = kernel.getNameAttr();
      Block *body = merged.getBody(); // (gpu.module has no terminator)
      for (auto g : llvm::make_early_inc_range(m.getOps<memref::GlobalOp>())) {
        if (SymbolTable::lookupSymbolIn(merged, g.getSymNameAttr()))
          g->erase();
        else
          g->moveBefore(body, body->begin());
      }
      kernel->moveBefore(body, body->end());
      kernel.setName(m.getName());
      renamed[{m.getNameAttr(), oldName}] = kernel.getNameAttr();
      m->erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it =
          renamed.find({launch.getKernelModuleName(), launch.getKernelName()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          merged.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
  }
};

} // namespace
