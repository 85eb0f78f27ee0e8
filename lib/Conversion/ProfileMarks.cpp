//===- ProfileMarks.cpp - --lpc-profile-marks -----------------------------===//
//
// Per-op timing of JIT-compiled code: a call to lpc_rt_profile_mark(id)
// before each top-level op that does work. The host backend resolves the
// symbol to a timer (lib/Backend/CPUBackend.cpp) and reports the time per
// label. Top-level ops are what the lowering made of one lpc op (or one
// fused group), so the table reads like the model.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCPROFILEMARKS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

/// "name" for NameLoc, "file:line" for FileLineColLoc, joined for fusions.
void printLoc(Location loc, llvm::raw_ostream &os) {
  if (auto n = dyn_cast<NameLoc>(loc)) {
    os << n.getName().getValue();
  } else if (auto f = dyn_cast<FileLineColLoc>(loc)) {
    os << f.getFilename().getValue() << ":" << f.getLine();
  } else if (auto fu = dyn_cast<FusedLoc>(loc)) {
    llvm::interleave(
        fu.getLocations(), os, [&](Location l) { printLoc(l, os); }, "+");
  } else if (auto c = dyn_cast<CallSiteLoc>(loc)) {
    printLoc(c.getCallee(), os);
  }
}

std::string shapeOf(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto m = dyn_cast<ShapedType>(t)) {
    llvm::interleave(m.getShape(), os, [&](int64_t d) {
      if (ShapedType::isDynamic(d))
        os << "?";
      else
        os << d;
    }, "x");
    os << "x" << m.getElementType();
  }
  return s;
}

/// A GEMM call's operands as "A * B -> C", with "^T" on A or B when the
/// call's transA / transB flag is set: which shape and layout a slow GEMM
/// has is the first thing a profile is read for. Every entry point
/// (include/lpc/Runtime/Gemm.h) takes A, B, C first and transA, transB,
/// broadcastB last, whatever comes between (scales, a bias).
void printGemmOperands(func::CallOp call, llvm::raw_ostream &os) {
  auto args = call.getOperands();
  if (args.size() < 6 || !llvm::all_of(args.take_front(3), [](Value v) {
        return isa<ShapedType>(v.getType());
      }))
    return;
  const size_t flags = args.size() - 3;
  auto operand = [&](int i, bool flag) {
    // The entry points take dynamic shapes: the static ones are behind the
    // casts.
    Value v = args[i];
    while (auto cast = v.getDefiningOp<memref::CastOp>())
      v = cast.getSource();
    os << shapeOf(v.getType());
    APInt t;
    if (flag && matchPattern(args[flags + i], m_ConstantInt(&t)) &&
        !t.isZero())
      os << "^T";
  };
  os << " ";
  operand(0, true);
  os << " * ";
  operand(1, true);
  os << " -> ";
  operand(2, false);
}

std::string labelOf(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto call = dyn_cast<func::CallOp>(op)) {
    os << "call " << call.getCallee();
    if (call.getCallee().starts_with("lpc_rt_gemm_"))
      printGemmOperands(call, os);
  } else if (auto g = dyn_cast<linalg::GenericOp>(op)) {
    unsigned red = g.getNumReductionLoops();
    os << (red ? "reduce" : "map");
    if (!g.getDpsInits().empty())
      os << " " << shapeOf(g.getDpsInits()[0].getType());
  } else {
    os << op->getName().getStringRef();
    if (op->getNumOperands())
      os << " " << shapeOf(op->getOperand(op->getNumOperands() - 1).getType());
  }
  std::string where;
  llvm::raw_string_ostream ws(where);
  printLoc(op->getLoc(), ws);
  if (!where.empty())
    os << " @ " << where;
  return s;
}

bool doesWork(Operation *op) {
  if (op->hasTrait<OpTrait::ConstantLike>() || isa<ViewLikeOpInterface>(op) ||
      isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
          memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
          memref::ReinterpretCastOp, memref::ExtractStridedMetadataOp>(op) ||
      op->hasTrait<OpTrait::IsTerminator>())
    return false;
  return op->getNumRegions() > 0 || isa<func::CallOp, memref::CopyOp>(op) ||
         isa<linalg::LinalgOp>(op) || !isMemoryEffectFree(op);
}

struct LpcProfileMarksPass
    : ::mlir::lpc::impl::LpcProfileMarksBase<LpcProfileMarksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    func::FuncOp mark;
    SmallVector<Attribute> labels;
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (fn.isExternal())
        continue;
      if (!mark) {
        OpBuilder mb(module.getBodyRegion());
        mark = func::FuncOp::create(
            mb, module.getLoc(), "lpc_rt_profile_mark",
            mb.getFunctionType({mb.getI64Type()}, {}));
        mark.setPrivate();
      }
      auto emit = [&](Operation *before, int64_t id) {
        b.setInsertionPoint(before);
        Value v = arith::ConstantOp::create(b, before->getLoc(),
                                            b.getI64IntegerAttr(id));
        func::CallOp::create(b, before->getLoc(), mark, ValueRange{v});
      };
      for (Block &block : fn.getBody())
        for (Operation &op : llvm::make_early_inc_range(block)) {
          if (isa<func::ReturnOp>(op)) {
            emit(&op, -1);
            continue;
          }
          if (!doesWork(&op))
            continue;
          emit(&op, labels.size());
          labels.push_back(b.getStringAttr(labelOf(&op)));
        }
    }
    module->setAttr("lpc.profile_labels", b.getArrayAttr(labels));
  }
};

} // namespace
