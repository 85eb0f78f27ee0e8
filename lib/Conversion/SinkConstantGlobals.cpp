//===- SinkConstantGlobals.cpp - --lpc-sink-constant-globals --------------===//
//
// Non-splat constants (rotary tables, constant index tensors and masks)
// bufferize to memref.global + memref.get_global in the host function: host
// memory, which a kernel cannot read and the CUDA artifact cannot describe.
// Cloning the get_global (and the views made of it) into each gpu.launch
// that reads it lets gpu-kernel-outlining copy the global into the kernel's
// module, where it becomes an initialized PTX .global array.
//
//===----------------------------------------------------------------------===//

#include "KernelBuffers.h"
#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCSINKCONSTANTGLOBALS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

struct LpcSinkConstantGlobalsPass
    : ::mlir::lpc::impl::LpcSinkConstantGlobalsBase<
          LpcSinkConstantGlobalsPass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    getOperation().walk([&](gpu::LaunchOp launch) {
      Region &body = launch.getBody();
      OpBuilder b = OpBuilder::atBlockBegin(&body.front());
      IRMapping inside;
      body.walk([&](Operation *op) {
        for (OpOperand &use : op->getOpOperands()) {
          Value v = use.get();
          if (!isa<BaseMemRefType>(v.getType()) ||
              body.isAncestor(v.getParentRegion()))
            continue;
          if (Value done = inside.lookupOrNull(v)) {
            use.set(done);
            continue;
          }
          SmallVector<Operation *> chain;
          if (!lpc::constantGlobalChain(v, symbols, chain))
            continue;
          for (Operation *c : chain)
            if (!inside.contains(c->getResult(0)))
              b.clone(*c, inside);
          use.set(inside.lookup(v));
        }
      });
    });
  }
};

} // namespace
