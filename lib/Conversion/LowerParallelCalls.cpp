//===- LowerParallelCalls.cpp - --lpc-lower-parallel-calls ----------------===//
//
// The second half of threading the host code (see
// lpc-outline-parallel-loops): on the LLVM dialect, where every captured
// value (memref descriptors included) is a plain scalar argument, a call
// `body(lo, hi, captures...)` becomes
//
//   ctx = {captures...}                       (a stack struct)
//   lpc_rt_parallel_for(&body__thunk, &ctx, lo, hi, grain)
//
// and `body__thunk(ctx, lo, hi)` unpacks ctx and calls the body. The runtime
// splits [lo, hi) over its threads and returns when all are done, so ctx
// outlives every use.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCLOWERPARALLELCALLS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kRuntimeFn = "lpc_rt_parallel_for";

struct LpcLowerParallelCallsPass
    : ::mlir::lpc::impl::LpcLowerParallelCallsBase<LpcLowerParallelCallsPass> {
  /// noalias on the parameters `lpc.parallel_noalias` names.
  LogicalResult setNoAlias(LLVM::LLVMFuncOp body) {
    auto noalias =
        body->getAttrOfType<DenseI64ArrayAttr>("lpc.parallel_noalias");
    if (!noalias)
      return success();
    LLVM::LLVMFunctionType fnTy = body.getFunctionType();
    auto params = body->getAttrOfType<IntegerAttr>("lpc.parallel_params");
    if (!params || params.getInt() != fnTy.getNumParams())
      return body.emitError("lpc-lower-parallel-calls: the body has ")
             << fnTy.getNumParams() << " parameters, lpc.parallel_params "
             << "says " << params << " (lowered with another memref "
             << "calling convention?)";
    for (int64_t i : noalias.asArrayRef()) {
      if (i < 0 || i >= fnTy.getNumParams() ||
          !isa<LLVM::LLVMPointerType>(fnTy.getParamType(i)))
        return body.emitError("lpc-lower-parallel-calls: lpc.parallel_noalias "
                              "position ")
               << i << " is not a pointer parameter";
      body.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                      UnitAttr::get(&getContext()));
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto voidTy = LLVM::LLVMVoidType::get(ctx);

    // The aligned pointers lpc-outline-parallel-loops and
    // lpc-outline-serial-loops found alias nothing else in their bodies.
    SmallVector<LLVM::LLVMFuncOp> bodies;
    for (auto f : module.getOps<LLVM::LLVMFuncOp>()) {
      if (failed(setNoAlias(f)))
        return signalPassFailure();
      if (f->hasAttr("lpc.parallel_body"))
        bodies.push_back(f);
    }
    if (bodies.empty())
      return;

    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto runtime = module.lookupSymbol<LLVM::LLVMFuncOp>(kRuntimeFn);
    if (!runtime)
      runtime = LLVM::LLVMFuncOp::create(
          mb, module.getLoc(), kRuntimeFn,
          LLVM::LLVMFunctionType::get(voidTy, {ptrTy, ptrTy, i64, i64, i64}));

    // Calls to each body, collected before anything changes.
    llvm::DenseMap<StringAttr, SmallVector<LLVM::CallOp>> calls;
    module.walk([&](LLVM::CallOp c) {
      if (auto callee = c.getCalleeAttr())
        calls[callee.getAttr()].push_back(c);
    });

    for (LLVM::LLVMFuncOp body : bodies) {
      LLVM::LLVMFunctionType fnTy = body.getFunctionType();
      if (fnTy.getNumParams() < 2 || fnTy.getParamType(0) != i64 ||
          fnTy.getParamType(1) != i64 ||
          !isa<LLVM::LLVMVoidType>(fnTy.getReturnType())) {
        body.emitError("lpc-lower-parallel-calls: a parallel body must "
                       "take (i64 lo, i64 hi, captures...) and return "
                       "nothing");
        return signalPassFailure();
      }
      auto grainAttr = body->getAttrOfType<IntegerAttr>("lpc.parallel_grain");
      int64_t grain = grainAttr ? grainAttr.getInt() : 1;
      SmallVector<Type> fields(fnTy.getParams().drop_front(2));
      auto ctxTy = LLVM::LLVMStructType::getLiteral(ctx, fields);

      // void body__thunk(ptr ctx, i64 lo, i64 hi)
      Location loc = body.getLoc();
      mb.setInsertionPointAfter(body);
      auto thunk = LLVM::LLVMFuncOp::create(
          mb, loc, (body.getSymName() + "__thunk").str(),
          LLVM::LLVMFunctionType::get(voidTy, {ptrTy, i64, i64}),
          LLVM::Linkage::Internal);
      Block *entry = thunk.addEntryBlock(mb);
      OpBuilder tb = OpBuilder::atBlockBegin(entry);
      SmallVector<Value> args{entry->getArgument(1), entry->getArgument(2)};
      for (auto [i, t] : llvm::enumerate(fields)) {
        Value at = LLVM::GEPOp::create(
            tb, loc, ptrTy, ctxTy, entry->getArgument(0),
            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
        args.push_back(LLVM::LoadOp::create(tb, loc, t, at));
      }
      LLVM::CallOp::create(tb, loc, body, args);
      LLVM::ReturnOp::create(tb, loc, ValueRange{});
      body.setLinkage(LLVM::Linkage::Internal);

      for (LLVM::CallOp call : calls.lookup(body.getSymNameAttr())) {
        Location cl = call.getLoc();
        // The context lives in the caller's frame: allocated once at the
        // function's entry (not in a loop), filled before each call.
        auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
        OpBuilder eb = OpBuilder::atBlockBegin(&caller.getBody().front());
        Value oneI64 =
            LLVM::ConstantOp::create(eb, cl, i64, eb.getI64IntegerAttr(1));
        Value ctxPtr = LLVM::AllocaOp::create(eb, cl, ptrTy, ctxTy, oneI64);
        OpBuilder cb(call);
        for (auto [i, v] :
             llvm::enumerate(call.getArgOperands().drop_front(2))) {
          Value at = LLVM::GEPOp::create(
              cb, cl, ptrTy, ctxTy, ctxPtr,
              ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
          LLVM::StoreOp::create(cb, cl, v, at);
        }
        Value fn = LLVM::AddressOfOp::create(cb, cl, thunk);
        Value g =
            LLVM::ConstantOp::create(cb, cl, i64, cb.getI64IntegerAttr(grain));
        LLVM::CallOp::create(cb, cl, runtime,
                             ValueRange{fn, ctxPtr, call.getArgOperands()[0],
                                        call.getArgOperands()[1], g});
        call.erase();
      }
    }
  }
};

} // namespace
