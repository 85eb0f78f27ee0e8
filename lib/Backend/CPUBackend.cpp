//===- CPUBackend.cpp - JIT-compiled lpc functions on the host ------------===//

#include "lpc/Backend/CPUBackend.h"
#include "lpc/Conversion/Passes.h"
#include "lpc/Runtime/Gemm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>
#include <cstring>

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::cpu;

int64_t Slot::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

static unsigned elementBytes(ref::DType t) {
  return t == ref::DType::i1 ? 1 : (ref::bitWidth(t) + 7) / 8;
}

size_t Slot::byteSize() const { return numElements() * elementBytes(dtype); }

void mlir::lpc::cpu::packTensor(const ref::Tensor &t, void *dst) {
  unsigned eb = elementBytes(t.dtype);
  auto *out = static_cast<uint8_t *>(dst);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    uint64_t bits = ref::toBits(t.data[i], t.dtype);
    std::memcpy(out + i * eb, &bits, eb);
  }
}

ref::Tensor mlir::lpc::cpu::unpackTensor(const Slot &slot, const void *src) {
  ref::Tensor t;
  t.dtype = slot.dtype;
  t.shape = slot.shape;
  unsigned eb = elementBytes(slot.dtype);
  auto *in = static_cast<const uint8_t *>(src);
  t.data.resize(slot.numElements());
  for (int64_t i = 0; i < slot.numElements(); ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, in + i * eb, eb);
    t.data[i] = ref::fromBits(bits, slot.dtype);
  }
  return t;
}

CompiledFunction::~CompiledFunction() = default;

static llvm::Expected<Slot> slotFor(Type type, DictionaryAttr attrs) {
  Slot s;
  auto t = dyn_cast<RankedTensorType>(type);
  std::optional<ref::DType> dt = t ? ref::dtypeOf(t.getElementType())
                                   : std::nullopt;
  if (!dt || !t.hasStaticShape())
    return llvm::createStringError("unsupported argument or result type");
  s.dtype = *dt;
  s.shape.assign(t.getShape().begin(), t.getShape().end());
  if (attrs) {
    auto str = [&](StringRef key) {
      auto a = attrs.getAs<StringAttr>(key);
      return a ? a.str() : std::string();
    };
    s.state = str("lpc.state");
    s.name = str("lpc.name");
    s.input = str("lpc.input");
    s.metric = str("lpc.metric");
    if (auto init = attrs.getAs<FloatAttr>("lpc.init"))
      s.init = init.getValueAsDouble();
  }
  return s;
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::compile(ModuleOp module, llvm::StringRef name) {
  static bool targetsReady = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)targetsReady;
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<CompiledFunction> cf(new CompiledFunction());
  auto src = module.lookupSymbol<func::FuncOp>(name);
  if (!src)
    return llvm::createStringError("no function @" + name.str());
  for (unsigned i = 0; i < src.getNumArguments(); ++i) {
    auto s = slotFor(src.getArgumentTypes()[i], src.getArgAttrDict(i));
    if (!s)
      return s.takeError();
    cf->argSlots.push_back(std::move(*s));
  }
  for (unsigned i = 0; i < src.getNumResults(); ++i) {
    auto s = slotFor(src.getResultTypes()[i], src.getResultAttrDict(i));
    if (!s)
      return s.takeError();
    cf->resultSlots.push_back(std::move(*s));
  }

  // Codegen on a copy that holds only this function.
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  for (auto fn : llvm::make_early_inc_range(copy->getOps<func::FuncOp>()))
    if (fn.getSymName() != name)
      fn.erase();
  auto fn = copy->lookupSymbol<func::FuncOp>(name);
  MLIRContext *ctx = module.getContext();
  fn->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    fn.setArgAttrs(i, DictionaryAttr::get(ctx));
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    fn.setResultAttrs(i, DictionaryAttr::get(ctx));
  PassManager pm(ctx);
  buildCPUCodegenPipeline(pm);
  if (failed(pm.run(*copy)))
    return llvm::createStringError("CPU codegen of @" + name.str() +
                                   " failed (see the diagnostics above)");

  ExecutionEngineOptions opts;
  opts.transformer = makeOptimizingTransformer(3, 0, nullptr);
  llvm::StringRef runnerUtils = LPC_C_RUNNER_UTILS;
  opts.sharedLibPaths = llvm::ArrayRef<llvm::StringRef>(runnerUtils);
  auto engine = ExecutionEngine::create(*copy, opts);
  if (!engine)
    return engine.takeError();
  cf->engine = std::move(*engine);
  // The GEMM library's entry points (runtime/gemm), by name.
  cf->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    size_t n = 0;
    const ::lpc::rt::GemmSymbol *syms = ::lpc::rt::gemmSymbols(&n);
    for (size_t i = 0; i < n; ++i)
      map[interner(syms[i].name)] = {
          llvm::orc::ExecutorAddr::fromPtr(syms[i].address),
          llvm::JITSymbolFlags::Exported};
    return map;
  });
  cf->symbol = ("_mlir_ciface_" + name).str();
  // Compile now rather than at the first call, so that the time is known.
  if (auto sym = cf->engine->lookupPacked(cf->symbol); !sym)
    return sym.takeError();
  cf->seconds = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
  return cf;
}

llvm::Error CompiledFunction::run(llvm::ArrayRef<const void *> args,
                                  llvm::ArrayRef<void *> results) {
  if (args.size() != argSlots.size() || results.size() != resultSlots.size())
    return llvm::createStringError("wrong number of buffers");
  // Memref descriptors: {allocated, aligned, offset, sizes[], strides[]}.
  std::vector<std::vector<int64_t>> descs;
  std::vector<void *> descPtrs;
  auto add = [&](const Slot &s, const void *data) {
    int64_t rank = s.shape.size();
    std::vector<int64_t> d(3 + 2 * rank, 0);
    d[0] = d[1] = reinterpret_cast<int64_t>(data);
    int64_t stride = 1;
    for (int64_t i = rank - 1; i >= 0; --i) {
      d[3 + i] = s.shape[i];
      d[3 + rank + i] = stride;
      stride *= s.shape[i];
    }
    descs.push_back(std::move(d));
  };
  descs.reserve(args.size() + results.size());
  for (auto [s, p] : llvm::zip(argSlots, args))
    add(s, p);
  for (auto [s, p] : llvm::zip(resultSlots, results))
    add(s, p);
  for (auto &d : descs)
    descPtrs.push_back(d.data());
  std::vector<void *> packed;
  for (void *&p : descPtrs)
    packed.push_back(&p);
  return engine->invokePacked(symbol, packed);
}
