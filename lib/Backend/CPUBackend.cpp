//===- CPUBackend.cpp - JIT-compiled lpc functions on the host ------------===//

#include "lpc/Backend/CPUBackend.h"
#include "lpc/Conversion/Passes.h"
#include "lpc/Dialect/LpcOps.h"
#include "lpc/Runtime/Comm.h"
#include "lpc/Runtime/Gemm.h"
#include "lpc/Runtime/Parallel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Config/llvm-config.h"

#include <unistd.h>
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
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

namespace {
/// The buffers of JIT-compiled code (memref.alloc / dealloc). A train step
/// allocates the same sizes every step; keeping freed blocks for reuse spares the
/// page faults and zeroing of fresh mmap'd memory (glibc returns large
/// blocks to the kernel on free), which cost as much as the elementwise
/// work itself. Blocks are reused by exact size; memory held is bounded by
/// the peak of one step of each compiled function.
class BufferPool {
public:
  void *allocate(size_t size, size_t align) {
    size = std::max<size_t>(size, 1);
    align = std::max<size_t>(align, 64);
    std::lock_guard<std::mutex> lock(mu);
    auto &list = free[{size, align}];
    if (!list.empty()) {
      void *p = list.back();
      list.pop_back();
      return p;
    }
    void *p = nullptr;
    if (posix_memalign(&p, align, size) != 0)
      return nullptr;
    live[p] = {size, align};
    held += size;
    return p;
  }
  void release(void *p) {
    if (!p)
      return;
    std::lock_guard<std::mutex> lock(mu);
    auto it = live.find(p);
    if (it == live.end()) { // not ours: libc's (defensive)
      std::free(p);
      return;
    }
    free[it->second].push_back(p);
  }
  size_t bytesHeld() {
    std::lock_guard<std::mutex> lock(mu);
    return held;
  }

private:
  std::mutex mu;
  std::map<std::pair<size_t, size_t>, std::vector<void *>> free;
  std::unordered_map<void *, std::pair<size_t, size_t>> live;
  size_t held = 0;
};

BufferPool &bufferPool() {
  static BufferPool *pool = new BufferPool(); // lives until exit
  return *pool;
}

extern "C" void *lpcPoolAlloc(size_t size) {
  return bufferPool().allocate(size, 64);
}
extern "C" void *lpcPoolAlignedAlloc(size_t align, size_t size) {
  return bufferPool().allocate(size, align);
}
extern "C" void *lpcPoolCalloc(size_t n, size_t size) {
  void *p = bufferPool().allocate(n * size, 64);
  if (p)
    std::memset(p, 0, n * size);
  return p;
}
extern "C" void lpcPoolFree(void *p) { bufferPool().release(p); }
} // namespace

size_t mlir::lpc::cpu::bufferPoolBytes() { return bufferPool().bytesHeld(); }

/// LLVM's O2 pipeline for the host with the loop and SLP vectorizers on
/// (MLIR's makeOptimizingTransformer leaves them off, and the elementwise
/// loops of a train step are where they pay). O3 took 4x longer to compile
/// the GPT example (11.5 s vs 2.8 s) for no faster step (14.5 vs 14.3 ms).
static llvm::Error optimizeModule(llvm::Module &m, llvm::TargetMachine *tm) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = true;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(m, mam);
  return llvm::Error::success();
}

namespace {
/// The profile of the function running on this thread (set by run()).
struct ActiveProfile {
  std::vector<ProfileEntry> *entries = nullptr;
  int64_t current = -1;
  std::chrono::steady_clock::time_point since;
};
thread_local ActiveProfile activeProfile;

/// lpc_rt_profile_mark(id): the op before this mark ends, op `id` starts
/// (-1: the function returns).
extern "C" void lpcProfileMark(int64_t id) {
  ActiveProfile &p = activeProfile;
  auto now = std::chrono::steady_clock::now();
  if (!p.entries)
    return;
  if (p.current >= 0 && p.current < (int64_t)p.entries->size()) {
    ProfileEntry &e = (*p.entries)[p.current];
    e.seconds += std::chrono::duration<double>(now - p.since).count();
    ++e.calls;
  }
  p.current = id;
  p.since = std::chrono::steady_clock::now();
}
} // namespace

std::vector<ProfileEntry> CompiledFunction::profile() const {
  return profileEntries;
}

void CompiledFunction::resetProfile() {
  for (ProfileEntry &e : profileEntries)
    e.seconds = 0, e.calls = 0;
}

std::string mlir::lpc::cpu::profileKind(llvm::StringRef label) {
  llvm::StringRef op = label.split(' ').first;
  if (op != "call")
    return op.str();
  llvm::StringRef callee = label.drop_front(5).split(' ').first;
  return callee.starts_with("lpc_rt_gemm") ? "GEMM" : ("call " + callee).str();
}

std::vector<ProfileKindTotal>
mlir::lpc::cpu::profileByKind(llvm::ArrayRef<ProfileEntry> entries) {
  std::vector<ProfileKindTotal> totals;
  llvm::StringMap<size_t> at;
  for (const ProfileEntry &e : entries) {
    std::string kind = profileKind(e.label);
    auto [it, fresh] = at.try_emplace(kind, totals.size());
    if (fresh)
      totals.push_back({kind, 0, 0});
    totals[it->second].seconds += e.seconds;
    ++totals[it->second].ops;
  }
  llvm::sort(totals, [](const auto &a, const auto &b) {
    return a.seconds != b.seconds ? a.seconds > b.seconds : a.kind < b.kind;
  });
  return totals;
}

llvm::Expected<Slot> mlir::lpc::cpu::slotFor(Type type, DictionaryAttr attrs) {
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
    if (auto bound = attrs.getAs<IntegerAttr>("lpc.id_bound"))
      s.idBound = std::max<int64_t>(0, bound.getInt());
    auto whole = attrs.getAs<DenseI64ArrayAttr>("lpc.shard_of");
    auto ranks = attrs.getAs<IntegerAttr>("lpc.shard_ranks");
    if (whole && ranks) {
      int64_t n = 1;
      for (int64_t d : whole.asArrayRef())
        n = d < 0 || (d > 0 && n > INT64_MAX / d) ? -1 : n * d;
      if (n < 0 || ranks.getInt() < 1 || s.shape.size() != 1 ||
          s.dtype != ref::DType::f32 ||
          s.shape[0] != (n + ranks.getInt() - 1) / ranks.getInt())
        return llvm::createStringError(
            "lpc.shard_of / lpc.shard_ranks do not describe this argument's "
            "block");
      s.shardOf.assign(whole.asArrayRef().begin(), whole.asArrayRef().end());
      s.shardRanks = ranks.getInt();
    }
  }
  return s;
}

namespace {

/// The host's target machine (AVX-512 & co. when the CPU has them).
llvm::Expected<llvm::orc::JITTargetMachineBuilder> hostBuilder() {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    return jtmb.takeError();
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  return jtmb;
}

/// Who generated the code: the running executable's SHA-256 (the lowering
/// is linked into it, so any change to lpc changes the key) and LLVM's
/// version (the shared libLLVM/libMLIR do the rest). Computed once.
const std::string &compilerIdentity() {
  static const std::string id = [] {
    std::string exe = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
    auto buf = llvm::MemoryBuffer::getFile(exe, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    std::string self = buf ? llvm::toHex(llvm::SHA256::hash(
                                             llvm::arrayRefFromStringRef(
                                                 (*buf)->getBuffer())),
                                         /*LowerCase=*/true)
                           // Unreadable: never reuse objects across runs.
                           : "unknown-" + std::to_string(::getpid());
    return self + " LLVM " LLVM_VERSION_STRING;
  }();
  return id;
}
constexpr const char *kCacheMagic = "LPCOBJ1\n";

/// The cache directory: $LPC_CACHE_DIR, else $XDG_CACHE_HOME/lpc, else
/// ~/.cache/lpc; "" when none can be named or LPC_CACHE_DIR is "off".
std::string defaultCacheDir() {
  if (const char *d = std::getenv("LPC_CACHE_DIR"))
    return llvm::StringRef(d) == "off" ? std::string() : std::string(d);
  llvm::SmallString<256> p;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    p = x;
  } else if (llvm::sys::path::home_directory(p)) {
    llvm::sys::path::append(p, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(p, "lpc");
  return std::string(p);
}

/// `void _lpc_packed_<name>(void **argv)`: calls the C interface of the
/// lowered function with argv[i] as its i-th memref descriptor pointer, so
/// that any signature is called the same way from C++.
void addPackedEntry(llvm::Module &m, llvm::StringRef name) {
  llvm::Function *target = m.getFunction(("_mlir_ciface_" + name).str());
  llvm::LLVMContext &c = m.getContext();
  auto *ptr = llvm::PointerType::getUnqual(c);
  auto *fnType = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr}, false);
  auto *fn = llvm::Function::Create(fnType, llvm::Function::ExternalLinkage,
                                    ("_lpc_packed_" + name).str(), m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", fn));
  llvm::SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < target->arg_size(); ++i) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptr, fn->getArg(0), i);
    args.push_back(b.CreateLoad(ptr, slot));
  }
  b.CreateCall(target, args);
  b.CreateRetVoid();
}

/// Optimized LLVM IR -> an ELF object in memory.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
emitObject(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream os(bytes);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the host target cannot emit objects");
  pm.run(m);
  return std::make_unique<llvm::SmallVectorMemoryBuffer>(
      std::move(bytes), "lpc-jit-object", /*RequiresNullTerminator=*/false);
}

std::string digest(llvm::StringRef bytes) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes)),
                     /*LowerCase=*/true);
}

/// Keeps the cache under $LPC_CACHE_MAX_MB (default 1024) by removing the
/// least recently written objects, never `keep` (the one just stored).
void trimCache(const std::string &dir, const std::string &keep) {
  double maxMB = 1024;
  if (const char *env = std::getenv("LPC_CACHE_MAX_MB"))
    if (!llvm::StringRef(env).getAsDouble(maxMB) && maxMB < 0)
      maxMB = 1024;
  struct Entry {
    std::string path;
    uint64_t size;
    llvm::sys::TimePoint<> time;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".o")
      continue;
    llvm::sys::fs::file_status st;
    if (llvm::sys::fs::status(it->path(), st))
      continue;
    entries.push_back({it->path(), st.getSize(),
                       st.getLastModificationTime()});
    total += st.getSize();
  }
  auto limit = static_cast<uint64_t>(maxMB * 1024 * 1024);
  llvm::sort(entries, [](const Entry &a, const Entry &b) {
    return a.time < b.time;
  });
  for (const Entry &e : entries) {
    if (total <= limit)
      break;
    if (e.path == keep)
      continue;
    if (!llvm::sys::fs::remove(e.path))
      total -= e.size;
  }
}

/// Writes `object` under `key` in `dir` atomically (temp file + rename);
/// a cache that cannot be written is not an error, only slower next time.
void storeObject(const std::string &dir, const std::string &key,
                 llvm::StringRef object) {
  if (dir.empty() || llvm::sys::fs::create_directories(dir))
    return;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, key + ".o");
  llvm::SmallString<256> tmp;
  int fd;
  if (llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << kCacheMagic << key << "\n" << digest(object) << "\n" << object;
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return;
    }
  }
  if (llvm::sys::fs::rename(tmp, path))
    llvm::sys::fs::remove(tmp);
  trimCache(dir, std::string(path));
}

/// The object cached under `key`, or null (absent, or not written by this
/// cache: wrong magic, key or checksum). File: magic, key, SHA-256 of the
/// object, the object.
std::unique_ptr<llvm::MemoryBuffer> loadObject(const std::string &dir,
                                               const std::string &key) {
  if (dir.empty())
    return nullptr;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, key + ".o");
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return nullptr;
  std::string header = std::string(kCacheMagic) + key + "\n";
  llvm::StringRef all = (*buf)->getBuffer();
  if (!all.consume_front(header))
    return nullptr;
  auto [sum, object] = all.split('\n');
  if (sum != digest(object)) // truncated or damaged
    return nullptr;
  return llvm::MemoryBuffer::getMemBufferCopy(object, path);
}

} // namespace

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::compile(ModuleOp module, llvm::StringRef name,
                          const CompileOptions &options) {
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
  // The CPU runtime's reductions take f32 (runtime/comm); a bf16 or f16
  // one is the GPU's native-wire form (lpc-native-wire-collectives). The
  // collectives that only move bytes (all_gather, all_to_all) take any type.
  Operation *narrow = nullptr;
  fn.walk([&](Operation *op) {
    if (isa<AllReduceOp, ReduceScatterOp>(op) &&
        !cast<ShapedType>(op->getOperand(0).getType()).getElementType().isF32())
      narrow = op;
  });
  if (narrow) {
    std::string loc;
    llvm::raw_string_ostream os(loc);
    if (auto fl = dyn_cast<FileLineColLoc>(narrow->getLoc()))
      os << fl.getFilename().getValue() << ":" << fl.getLine() << ":"
         << fl.getColumn();
    else
      narrow->getLoc().print(os);
    return llvm::createStringError(
        "@" + name.str() + ": '" + narrow->getName().getStringRef().str() +
        "' of a " +
        llvm::formatv("{0}", narrow->getOperand(0).getType()).str() + " at " +
        loc +
        ": the CPU's reductions take f32 tensors (a narrow wire is their "
        "comm_precision)");
  }
  MLIRContext *ctx = module.getContext();
  fn->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  // The slots above hold the interface; codegen keeps only what lowering
  // reads (lpc.state = "step": dropout's counter).
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto st = fn.getArgAttrOfType<StringAttr>(i, "lpc.state");
    fn.setArgAttrs(i, DictionaryAttr::get(ctx));
    if (st && st.getValue() == "step")
      fn.setArgAttr(i, "lpc.state", st);
  }
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    fn.setResultAttrs(i, DictionaryAttr::get(ctx));

  auto jtmb = hostBuilder();
  if (!jtmb)
    return jtmb.takeError();
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    return tm.takeError();

  // Cache key: the function as codegen sees it, the codegen options, the
  // host CPU and the codegen version. Profiled builds are never cached (their labels would
  // have to be too).
  std::string cacheDir = options.profile || options.printLLVMDialect
                             ? std::string()
                         : options.cacheDir ? *options.cacheDir
                                            : defaultCacheDir();
  std::string key;
  if (!cacheDir.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    copy->print(os, OpPrintingFlags().printGenericOpForm());
    os << "\nparallel-min-work=" << options.parallelMinWork
       << " gpu-loop-passes=" << options.gpuLoopPasses
       << " gpu-sizes=" << options.gpuSizes << "\n"
       << compilerIdentity() << "\n"
       << (*tm)->getTargetTriple().str() << "\n"
       << (*tm)->getTargetCPU() << "\n"
       << (*tm)->getTargetFeatureString() << "\n";
    key = digest(text);
  }

  std::unique_ptr<llvm::MemoryBuffer> object = loadObject(cacheDir, key);
  cf->fromCache = object != nullptr;
  if (!object) {
    PassManager pm(ctx);
    buildCPUCodegenPipeline(pm, options.profile, options.parallelMinWork,
                            options.gpuLoopPasses, options.gpuSizes);
    if (failed(pm.run(*copy)))
      return llvm::createStringError("CPU codegen of @" + name.str() +
                                     " failed (see the diagnostics above)");
    if (options.printLLVMDialect)
      copy->print(*options.printLLVMDialect);
    if (auto labels =
            (*copy)->getAttrOfType<ArrayAttr>("lpc.profile_labels")) {
      for (Attribute l : labels)
        cf->profileEntries.push_back({cast<StringAttr>(l).str(), 0, 0});
      (*copy)->removeAttr("lpc.profile_labels");
    }
    // Interface attributes kept for the lowering (lpc.state = "step") mean
    // nothing to LLVM.
    copy->walk([](LLVM::LLVMFuncOp f) {
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        for (NamedAttribute a : llvm::to_vector(f.getArgAttrDict(i)
                                                    ? f.getArgAttrDict(i).getValue()
                                                    : ArrayRef<NamedAttribute>()))
          if (a.getName().getValue().starts_with("lpc."))
            f.removeArgAttr(i, a.getName());
    });
    registerBuiltinDialectTranslation(*ctx);
    registerLLVMDialectTranslation(*ctx);
    llvm::LLVMContext llvmCtx;
    std::unique_ptr<llvm::Module> llvmModule =
        translateModuleToLLVMIR(*copy, llvmCtx, name);
    if (!llvmModule)
      return llvm::createStringError("translation of @" + name.str() +
                                     " to LLVM IR failed");
    llvmModule->setDataLayout((*tm)->createDataLayout());
    llvmModule->setTargetTriple((*tm)->getTargetTriple());
    addPackedEntry(*llvmModule, name);
    if (llvm::Error e = optimizeModule(*llvmModule, tm->get()))
      return std::move(e);
    auto obj = emitObject(*llvmModule, **tm);
    if (!obj)
      return obj.takeError();
    object = std::move(*obj);
    if (!cacheDir.empty())
      storeObject(cacheDir, key, object->getBuffer());
  }

  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*jtmb))
                 .create();
  if (!jit)
    return jit.takeError();
  llvm::orc::JITDylib &jd = (*jit)->getMainJITDylib();
  // Entry points of the runtime (GEMMs, buffer pool, profiler) by name;
  // then MLIR's C runner utilities (memrefCopy) and the process (libm).
  llvm::orc::MangleAndInterner interner((*jit)->getExecutionSession(),
                                        (*jit)->getDataLayout());
  llvm::orc::SymbolMap map;
  size_t n = 0;
  const ::lpc::rt::GemmSymbol *syms = ::lpc::rt::gemmSymbols(&n);
  for (size_t i = 0; i < n; ++i)
    map[interner(syms[i].name)] = {
        llvm::orc::ExecutorAddr::fromPtr(syms[i].address),
        llvm::JITSymbolFlags::Exported};
  // The collectives of lpc.all_reduce (runtime/comm, MPI).
  const ::lpc::rt::CommSymbol *comm = ::lpc::rt::commSymbols(&n);
  for (size_t i = 0; i < n; ++i)
    map[interner(comm[i].name)] = {
        llvm::orc::ExecutorAddr::fromPtr(comm[i].address),
        llvm::JITSymbolFlags::Exported};
  // The lowered code's malloc & co. (memref.alloc / dealloc) go to the
  // buffer pool. They keep their libc names so that LLVM still knows them
  // as allocation functions (fresh memory aliases nothing: loads hoist,
  // accumulators stay in registers); calloc is what LLVM may make of
  // malloc + memset.
  for (auto [sym, addr] :
       {std::pair<const char *, void *>{"malloc", (void *)&lpcPoolAlloc},
        {"aligned_alloc", (void *)&lpcPoolAlignedAlloc},
        {"calloc", (void *)&lpcPoolCalloc},
        {"free", (void *)&lpcPoolFree},
        {"lpc_rt_profile_mark", (void *)&lpcProfileMark},
        {"lpc_rt_parallel_for", (void *)&lpc_rt_parallel_for}})
    map[interner(sym)] = {llvm::orc::ExecutorAddr::fromPtr(addr),
                          llvm::JITSymbolFlags::Exported};
  if (llvm::Error e = jd.define(llvm::orc::absoluteSymbols(std::move(map))))
    return std::move(e);
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  auto runner = llvm::orc::DynamicLibrarySearchGenerator::Load(LPC_C_RUNNER_UTILS,
                                                               prefix);
  if (!runner)
    return runner.takeError();
  jd.addGenerator(std::move(*runner));
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return process.takeError();
  jd.addGenerator(std::move(*process));
  // A cached object that does not load or link (a damaged file) is
  // dropped and the function compiled afresh (which stores a good one).
  auto retryWithoutCached =
      [&](llvm::Error e) -> llvm::Expected<std::unique_ptr<CompiledFunction>> {
    if (!cf->fromCache)
      return std::move(e);
    llvm::consumeError(std::move(e));
    llvm::SmallString<256> path(cacheDir);
    llvm::sys::path::append(path, key + ".o");
    if (llvm::sys::fs::remove(path))
      return llvm::createStringError("the cached object " + path.str() +
                                     " is damaged and cannot be removed");
    return compile(module, name, options);
  };
  if (llvm::Error e = (*jit)->addObjectFile(std::move(object)))
    return retryWithoutCached(std::move(e));
  // Linking happens at this lookup, so that the time is known.
  auto entry = (*jit)->lookup(("_lpc_packed_" + name).str());
  if (!entry)
    return retryWithoutCached(entry.takeError());
  cf->entry = entry->toPtr<void (*)(void **)>();
  cf->jit = std::move(*jit);
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
  if (!profileEntries.empty())
    activeProfile = ActiveProfile{&profileEntries, -1, {}};
  entry(descPtrs.data());
  activeProfile = ActiveProfile{};
  return llvm::Error::success();
}
