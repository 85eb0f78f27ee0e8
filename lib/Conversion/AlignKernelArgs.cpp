//===- AlignKernelArgs.cpp - --lpc-align-kernel-args ----------------------===//
//
// The CUDA artifact passes every view to a kernel as MLIR's memref
// descriptor whose two pointers are the base address of an argument, a
// result or the arena, plus a static element offset: device allocations
// and arena buffers start at multiples of 256 bytes, and the runtime
// refuses arguments and results that are not 16-byte aligned
// (docs/cuda-artifact.md). Saying so on the kernels' pointer parameters
// (`align` on the LLVM function) lets LLVM prove that neighbouring
// accesses from lpc-widen-parallel-loops are 16-byte aligned and merge
// them into vector loads and stores.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCALIGNKERNELARGS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {
struct LpcAlignKernelArgsPass
    : ::mlir::lpc::impl::LpcAlignKernelArgsBase<LpcAlignKernelArgsPass> {
  using LpcAlignKernelArgsBase::LpcAlignKernelArgsBase;
  void runOnOperation() override {
    if (bytes < 1 || (bytes & (bytes - 1)) != 0) {
      getOperation()->emitError("lpc-align-kernel-args: bytes must be a "
                                "power of two, got ")
          << int64_t(bytes);
      return signalPassFailure();
    }
    Builder b(&getContext());
    StringAttr kernelAttr =
        b.getStringAttr(gpu::GPUDialect::getKernelFuncAttrName());
    getOperation()->walk([&](LLVM::LLVMFuncOp fn) {
      if (fn.isExternal() || !fn->hasAttr(kernelAttr))
        return;
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
        if (isa<LLVM::LLVMPointerType>(fn.getArgument(i).getType()))
          fn.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(bytes));
    });
  }
};
} // namespace
