//===- StridedCopyToLoops.cpp - --lpc-strided-copy-to-loops ---------------===//
//
// memref.copy of a non-contiguous (strided) buffer becomes linalg.copy, so
// that it is lowered with the other loops instead of a generic runtime call.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCSTRIDEDCOPYTOLOOPS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {
struct LpcStridedCopyToLoopsPass
    : ::mlir::lpc::impl::LpcStridedCopyToLoopsBase<LpcStridedCopyToLoopsPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp c) {
      auto src = cast<MemRefType>(c.getSource().getType());
      auto dst = cast<MemRefType>(c.getTarget().getType());
      // Contiguous on both sides: memcpy is best. Static shapes only (the
      // lowered train steps have nothing else).
      if (src.getLayout().isIdentity() && dst.getLayout().isIdentity())
        return;
      if (src.hasStaticShape() && dst.hasStaticShape())
        copies.push_back(c);
    });
    OpBuilder b(&getContext());
    for (memref::CopyOp c : copies) {
      b.setInsertionPoint(c);
      linalg::CopyOp::create(b, c.getLoc(), c.getSource(), c.getTarget());
      c.erase();
    }
  }
};
} // namespace
