//===- GemmToCalls.cpp - --lpc-gemm-to-calls ------------------------------===//
//
// After bufferization, the GEMMs of lpc-to-linalg (linalg.generic marked
// `lpc_gemm`) become calls to the CPU GEMM library (runtime/gemm), whose C
// interface takes rank-3 [batch, rows, cols] memref descriptors.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCGEMMTOCALLS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

/// A [batch, rows, cols] view of a row-major contiguous memref, or null.
Value view3d(OpBuilder &b, Location loc, Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || !t.getLayout().isIdentity() || !t.hasStaticShape() ||
      t.getRank() < 2)
    return {};
  int64_t rank = t.getRank();
  Value r = v;
  if (rank == 2) {
    auto to = MemRefType::get({1, t.getDimSize(0), t.getDimSize(1)},
                              t.getElementType());
    r = memref::ExpandShapeOp::create(
        b, loc, to, v, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  } else if (rank > 3) {
    ReassociationIndices lead;
    for (int64_t i = 0; i < rank - 2; ++i)
      lead.push_back(i);
    r = memref::CollapseShapeOp::create(
        b, loc, v,
        ArrayRef<ReassociationIndices>{lead, {rank - 2}, {rank - 1}});
  }
  auto dyn = MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic,
                              ShapedType::kDynamic},
                             t.getElementType());
  return memref::CastOp::create(b, loc, dyn, r);
}

struct LpcGemmToCallsPass
    : ::mlir::lpc::impl::LpcGemmToCallsBase<LpcGemmToCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::GenericOp> gemms;
    module.walk([&](linalg::GenericOp g) {
      if (g->hasAttr("lpc_gemm") && g.hasPureBufferSemantics())
        gemms.push_back(g);
    });
    OpBuilder b(module.getContext());
    for (linalg::GenericOp g : gemms) {
      auto flags = g->getAttrOfType<DenseBoolArrayAttr>("lpc_gemm");
      Value a = g.getDpsInputs()[0], w = g.getDpsInputs()[1];
      Value c = g.getDpsInits()[0];
      Type at = cast<MemRefType>(a.getType()).getElementType();
      Type wt = cast<MemRefType>(w.getType()).getElementType();
      Type ct = cast<MemRefType>(c.getType()).getElementType();
      StringRef callee;
      if (at.isF32() && wt.isF32() && ct.isF32())
        callee = "lpc_rt_gemm_f32";
      else if (at.isBF16() && wt.isBF16() && ct.isF32())
        callee = "lpc_rt_gemm_bf16";
      else
        continue; // stays a loop nest
      b.setInsertionPoint(g);
      Location loc = g.getLoc();
      int64_t aRank = cast<MemRefType>(a.getType()).getRank();
      int64_t wRank = cast<MemRefType>(w.getType()).getRank();
      Value a3 = view3d(b, loc, a), w3 = view3d(b, loc, w),
            c3 = view3d(b, loc, c);
      if (!a3 || !w3 || !c3)
        continue; // non-contiguous operand: the loop nest is still right
      auto fn = module.lookupSymbol<func::FuncOp>(callee);
      if (!fn) {
        OpBuilder mb(module.getBodyRegion());
        SmallVector<Type> args{a3.getType(), w3.getType(), c3.getType(),
                               mb.getI64Type(), mb.getI64Type(),
                               mb.getI64Type()};
        fn = func::FuncOp::create(mb, module.getLoc(), callee,
                                  mb.getFunctionType(args, {}));
        fn.setPrivate();
        fn->setAttr("llvm.emit_c_interface", mb.getUnitAttr());
      }
      auto i64 = [&](int64_t v) -> Value {
        return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
      };
      bool broadcastB = wRank == 2 && aRank > 2;
      func::CallOp::create(b, loc, fn,
                           ValueRange{a3, w3, c3, i64(flags[0]), i64(flags[1]),
                                      i64(broadcastB)});
      g.erase();
    }
  }
};

} // namespace
