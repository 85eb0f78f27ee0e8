//===- lpc-run.cpp - train a model with lpc ---------------------------------===//
//
// One command from a model to a trained checkpoint, like a Trainer: builds
// the train step (lpc-autodiff + lpc-mixed-precision), JIT-compiles it and
// the eval function for the host (the CPU back end), initializes the state
// from the model's initializers, feeds batches from Fashion-MNIST, a text
// corpus or synthetic data, and logs, evaluates and checkpoints.
//
// Every option can also come from a config file (--config, JSON or YAML, the
// same names as the flags); flags on the command line win.
//
//===----------------------------------------------------------------------===//

#include "lpc/Backend/CPUBackend.h"
#include "lpc/Backend/GPUArtifact.h"
#include "lpc/Conversion/Passes.h"
#include "lpc/Dialect/LpcDialect.h"
#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Pipelines/Pipelines.h"
#include "lpc/Reference/Evaluator.h"
#include "lpc/Runtime/BatchIterator.h"
#ifdef LPC_HAVE_CUDA_RUNTIME
#include "lpc/Runtime/CudaArtifact.h"
#endif
#include "lpc/Runtime/Data.h"
#include "lpc/Runtime/File.h"
#include "lpc/Runtime/Gemm.h"
#include "lpc/Runtime/Metrics.h"
#include "lpc/Runtime/Safetensors.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <sys/resource.h>
#include <cstdlib>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;
namespace rt = ::lpc::rt;
namespace ref = mlir::lpc::ref;
namespace cpu = mlir::lpc::cpu;
namespace mlpc = mlir::lpc;

static cl::OptionCategory cat("lpc-run options");
static cl::opt<std::string> modelFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::cat(cat));
static cl::opt<std::string> configFile(
    "config", cl::desc("JSON or YAML file with any of these options (flags "
                       "given on the command line win)"),
    cl::cat(cat));
static cl::opt<std::string> mixedPrecision(
    "mixed-precision", cl::desc("no | fp16 | bf16 | fp8"), cl::init("no"),
    cl::cat(cat));
static cl::opt<std::string> recipe(
    "recipe",
    cl::desc("more lpc-mixed-precision options, e.g. \"margin=1 "
             "amax-history-len=16 loss-scaling=static\""),
    cl::init(""), cl::cat(cat));
static cl::opt<std::string> optimizer("optimizer", cl::desc("adamw | sgd"),
                                      cl::init("adamw"), cl::cat(cat));
static cl::opt<double> lr("lr", cl::desc("learning rate"), cl::init(1e-3),
                          cl::cat(cat));
static cl::opt<std::string> autodiffExtra(
    "autodiff",
    cl::desc("more lpc-autodiff options, e.g. \"weight-decay=0 "
             "clip-grad-norm=1 lr-schedule=cosine warmup-steps=100\""),
    cl::init(""), cl::cat(cat));
static cl::opt<std::string> data(
    "data",
    cl::desc("fashion-mnist | synthetic | text:PATH (default: fashion-mnist "
             "for feature models, a required text:PATH for token models)"),
    cl::init(""), cl::cat(cat));
static cl::opt<std::string> dataDir(
    "data-dir", cl::desc("Fashion-MNIST directory"),
    cl::init(rt::kFashionMnistDir), cl::cat(cat));
static cl::opt<int64_t> batch(
    "batch", cl::desc("batch size (the model's; regenerate the model for "
                      "another one)"),
    cl::init(0), cl::cat(cat));
static cl::opt<int64_t> steps("steps", cl::desc("train steps (overrides "
                                                "--epochs)"),
                              cl::init(0), cl::cat(cat));
static cl::opt<double> epochs("epochs", cl::desc("epochs"), cl::init(1),
                              cl::cat(cat));
static cl::opt<int64_t> evalEvery("eval-every",
                                  cl::desc("evaluate every N steps (0: at the "
                                           "end only)"),
                                  cl::init(0), cl::cat(cat));
static cl::opt<int64_t> evalBatches(
    "eval-batches", cl::desc("batches per evaluation (0: the whole set)"),
    cl::init(0), cl::cat(cat));
static cl::opt<std::string> checkpointDir(
    "checkpoint-dir", cl::desc("write checkpoints here"), cl::init(""),
    cl::cat(cat));
static cl::opt<int64_t> checkpointEvery(
    "checkpoint-every", cl::desc("checkpoint every N steps (and at the end)"),
    cl::init(0), cl::cat(cat));
static cl::opt<std::string> resume(
    "resume", cl::desc("continue from this checkpoint (or 'latest' in "
                       "--checkpoint-dir)"),
    cl::init(""), cl::cat(cat));
static cl::opt<uint64_t> seed("seed", cl::desc("seed of parameters and data"),
                              cl::init(0), cl::cat(cat));
static cl::opt<std::string> logFile("log", cl::desc("per-step metrics (JSONL)"),
                                    cl::init(""), cl::cat(cat));
static cl::opt<int64_t> printEvery(
    "print-every", cl::desc("progress lines every N steps when not a "
                            "terminal"),
    cl::init(50), cl::cat(cat));
static cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("compiled-code cache (default: $LPC_CACHE_DIR, else "
             "$XDG_CACHE_HOME/lpc or ~/.cache/lpc; 'off' disables)"),
    cl::init(""), cl::cat(cat));
static cl::opt<int64_t> cpuThreads(
    "cpu-threads",
    cl::desc("CPU threads for the GEMMs and the large loops (0: "
             "OMP_NUM_THREADS, else every CPU of the affinity mask)"),
    cl::init(0), cl::cat(cat));
static cl::opt<std::string> device(
    "device",
    cl::desc("cpu (the host JIT) | cuda (PTX kernels + cuBLASLt on an "
             "NVIDIA GPU through runtime/cuda)"),
    cl::init("cpu"), cl::cat(cat));
static cl::opt<std::string> gpuArch(
    "gpu-arch", cl::desc("with --device=cuda: the GPU to compile for (sm_80, "
                         "sm_89, sm_90)"),
    cl::init("sm_90"), cl::cat(cat));
static cl::opt<std::string> emitArtifact(
    "emit-artifact",
    cl::desc("with --device=cuda: write the compiled artifact (PTX, launch "
             "schedule, buffer plan, state layout; docs/cuda-artifact.md) "
             "to this file and stop; needs no GPU"),
    cl::init(""), cl::cat(cat));
static cl::opt<int64_t> synthExamples("synthetic-examples",
                                      cl::desc("examples of synthetic data"),
                                      cl::init(8192), cl::cat(cat));

namespace {

/// A compiled function as the training loop uses it, whatever runs it: one
/// contiguous row-major host buffer per argument and per result.
class StepFunction {
public:
  virtual ~StepFunction() = default;
  virtual const std::vector<cpu::Slot> &args() const = 0;
  virtual const std::vector<cpu::Slot> &results() const = 0;
  virtual llvm::Error run(llvm::ArrayRef<const void *> args,
                          llvm::ArrayRef<void *> results) = 0;
  virtual bool cached() const { return false; }
  /// Where it runs, for the start-up line.
  virtual std::string deviceName() const = 0;
};

class CPUStep : public StepFunction {
public:
  explicit CPUStep(std::unique_ptr<cpu::CompiledFunction> f)
      : f(std::move(f)) {}
  const std::vector<cpu::Slot> &args() const override { return f->args(); }
  const std::vector<cpu::Slot> &results() const override {
    return f->results();
  }
  llvm::Error run(llvm::ArrayRef<const void *> args,
                  llvm::ArrayRef<void *> results) override {
    return f->run(args, results);
  }
  bool cached() const override { return f->cached(); }
  std::string deviceName() const override { return "cpu"; }

private:
  std::unique_ptr<cpu::CompiledFunction> f;
};

#ifdef LPC_HAVE_CUDA_RUNTIME
namespace rtc = ::lpc::rt::cuda;

/// The GPU, its GEMM engine and the artifact, shared by the functions that
/// run on them (and outliving them).
struct CudaSession {
  std::unique_ptr<rtc::Device> device;
  std::unique_ptr<rtc::GemmEngine> gemm;
  rtc::Artifact artifact;
};

ref::DType refDType(rt::DType d) {
  switch (d) {
  case rt::DType::F32: return ref::DType::f32;
  case rt::DType::F16: return ref::DType::f16;
  case rt::DType::BF16: return ref::DType::bf16;
  case rt::DType::F8_E4M3: return ref::DType::f8e4m3;
  case rt::DType::F8_E5M2: return ref::DType::f8e5m2;
  case rt::DType::I32: return ref::DType::i32;
  case rt::DType::I64: return ref::DType::i64;
  case rt::DType::BOOL: return ref::DType::i1;
  }
  return ref::DType::f32;
}

cpu::Slot slotOf(const rtc::ArtifactSlot &a) {
  cpu::Slot s;
  s.dtype = refDType(a.dtype);
  s.shape = a.shape;
  s.state = a.state;
  s.name = a.name;
  s.input = a.input;
  s.metric = a.metric;
  s.init = a.init;
  return s;
}

/// A function of the artifact on the GPU. Every call copies the host
/// buffers in and the results out (runHost): simple and correct; keeping
/// the state on the device between steps is the next step.
class CudaStep : public StepFunction {
public:
  CudaStep(std::shared_ptr<CudaSession> session,
           std::unique_ptr<rtc::CudaFunction> f)
      : session(std::move(session)), f(std::move(f)) {
    for (const rtc::ArtifactSlot &a : this->f->function().args)
      argSlots.push_back(slotOf(a));
    for (const rtc::ArtifactSlot &a : this->f->function().results)
      resultSlots.push_back(slotOf(a));
  }
  const std::vector<cpu::Slot> &args() const override { return argSlots; }
  const std::vector<cpu::Slot> &results() const override {
    return resultSlots;
  }
  llvm::Error run(llvm::ArrayRef<const void *> args,
                  llvm::ArrayRef<void *> results) override {
    if (rt::Error e = f->runHost({args.begin(), args.end()},
                                 {results.begin(), results.end()}))
      return llvm::createStringError(e.message());
    return llvm::Error::success();
  }
  std::string deviceName() const override {
    const rtc::DeviceInfo &i = session->device->info();
    return llvm::formatv("{0} (sm_{1}{2})", i.name, i.ccMajor, i.ccMinor);
  }

private:
  std::shared_ptr<CudaSession> session;
  std::unique_ptr<rtc::CudaFunction> f;
  std::vector<cpu::Slot> argSlots, resultSlots;
};

/// Whether this machine has a CUDA driver and device (checked before the
/// data are read and the model compiled).
bool cudaAvailable(std::string &why) {
  auto driver = rtc::Driver::get();
  if (!driver) {
    why = driver.error().message();
    return false;
  }
  return true;
}

/// Opens the GPU and loads `names` of the artifact `json`; false (with the
/// reason, e.g. "no NVIDIA driver ...") when this machine cannot run it.
bool openCudaSteps(const std::string &json, llvm::ArrayRef<std::string> names,
                   std::unique_ptr<StepFunction> &step,
                   std::unique_ptr<StepFunction> &eval, std::string &why) {
  auto session = std::make_shared<CudaSession>();
  auto art = rtc::parseArtifact(json, "the compiled artifact");
  if (!art) {
    why = art.error().message();
    return false;
  }
  session->artifact = std::move(*art);
  if (rt::Error e = session->artifact.validate()) {
    why = e.message();
    return false;
  }
  auto driver = rtc::Driver::get();
  if (!driver) {
    why = driver.error().message();
    return false;
  }
  auto device = rtc::Device::open(**driver, 0);
  if (!device) {
    why = device.error().message();
    return false;
  }
  session->device = std::move(*device);
  const rtc::DeviceInfo &info = session->device->info();
  // PTX for sm_XY runs on chips from XY on (the driver JITs it).
  int cc = info.ccMajor * 10 + info.ccMinor;
  int want = std::atoi(session->artifact.chip.c_str() + 3);
  if (cc < want) {
    why = "the artifact is for " + session->artifact.chip + " but " +
          info.name + " is sm_" + std::to_string(cc) + " (compile with "
          "--gpu-arch=sm_" + std::to_string(cc) + ")";
    return false;
  }
  auto gemm = rtc::GemmEngine::create(*session->device);
  if (!gemm) {
    why = gemm.error().message();
    return false;
  }
  session->gemm = std::move(*gemm);
  rtc::GemmEngine *engine = session->gemm.get();
  for (size_t i = 0; i < names.size() && i < 2; ++i) {
    const rtc::ArtifactFunction *fn = session->artifact.find(names[i]);
    if (!fn) {
      why = "the artifact has no function " + names[i];
      return false;
    }
    auto f = rtc::CudaFunction::create(
        *session->device, *fn,
        [engine](const rtc::GemmDesc &d, const rtc::GemmOperands &o) {
          return engine->run(d, o);
        });
    if (!f) {
      why = f.error().message();
      return false;
    }
    (i == 0 ? step : eval) =
        std::make_unique<CudaStep>(session, std::move(*f));
  }
  return true;
}
#else
bool cudaAvailable(std::string &why) {
  why = "this lpc-run was built without the CUDA runtime (configure lpc "
        "with the CUDA toolkit installed)";
  return false;
}
/// Without runtime/cuda (no CUDA toolkit when lpc was configured).
bool openCudaSteps(const std::string &, llvm::ArrayRef<std::string>,
                   std::unique_ptr<StepFunction> &,
                   std::unique_ptr<StepFunction> &, std::string &why) {
  why = "this lpc-run was built without the CUDA runtime (configure lpc "
        "with the CUDA toolkit installed)";
  return false;
}
#endif

int fail(const llvm::Twine &msg) {
  llvm::errs() << "lpc-run: error: " << msg << "\n";
  return 1;
}

/// Applies a config file: every key must be an lpc-run option; values of
/// options given on the command line are kept.
bool applyConfig(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    fail(path + ": " + buf.getError().message());
    return false;
  }
  std::vector<std::pair<std::string, std::string>> kv;
  llvm::StringRef text = (*buf)->getBuffer();
  if (llvm::StringRef(path).ends_with(".json")) {
    auto v = llvm::json::parse(text);
    if (!v) {
      fail(path + ": " + llvm::toString(v.takeError()));
      return false;
    }
    auto *obj = v->getAsObject();
    if (!obj) {
      fail(path + ": expected a JSON object of option: value");
      return false;
    }
    for (auto &[k, val] : *obj) {
      std::string s;
      if (auto str = val.getAsString())
        s = str->str();
      else if (auto b = val.getAsBoolean())
        s = *b ? "true" : "false";
      else if (auto i = val.getAsInteger())
        s = std::to_string(*i);
      else if (auto d = val.getAsNumber())
        s = llvm::formatv("{0:e16}", *d).str();
      else {
        fail(path + ": option '" + k.str() + "' must be a string, number or "
                                             "boolean");
        return false;
      }
      kv.push_back({k.str(), s});
    }
  } else {
    llvm::SourceMgr sm;
    llvm::yaml::Stream stream(text, sm);
    auto it = stream.begin();
    if (it == stream.end()) {
      fail(path + ": empty config");
      return false;
    }
    auto *map = llvm::dyn_cast_or_null<llvm::yaml::MappingNode>(it->getRoot());
    if (!map) {
      fail(path + ": expected a YAML mapping of option: value");
      return false;
    }
    for (auto &entry : *map) {
      auto *k = llvm::dyn_cast<llvm::yaml::ScalarNode>(entry.getKey());
      auto *v = llvm::dyn_cast<llvm::yaml::ScalarNode>(entry.getValue());
      if (!k || !v) {
        fail(path + ": every entry must be 'option: value'");
        return false;
      }
      llvm::SmallString<32> ks, vs;
      kv.push_back({k->getValue(ks).str(), v->getValue(vs).str()});
    }
    if (stream.failed()) {
      fail(path + ": invalid YAML");
      return false;
    }
  }
  auto &opts = cl::getRegisteredOptions();
  for (auto &[k, v] : kv) {
    auto found = opts.find(k);
    if (found == opts.end() || k == "config" ||
        !llvm::is_contained(found->second->Categories, &cat)) {
      fail(path + ": unknown option '" + k + "' (see lpc-run --help)");
      return false;
    }
    cl::Option *o = found->second;
    if (o->getNumOccurrences() > 0)
      continue; // the command line wins
    if (o->addOccurrence(0, k, v)) {
      fail(path + ": bad value '" + v + "' for option '" + k + "'");
      return false;
    }
  }
  return true;
}

rt::DType rtDType(ref::DType d) {
  switch (d) {
  case ref::DType::f32: return rt::DType::F32;
  case ref::DType::f16: return rt::DType::F16;
  case ref::DType::bf16: return rt::DType::BF16;
  case ref::DType::f8e4m3: return rt::DType::F8_E4M3;
  case ref::DType::f8e5m2: return rt::DType::F8_E5M2;
  case ref::DType::i32: return rt::DType::I32;
  case ref::DType::i64: return rt::DType::I64;
  case ref::DType::i1: return rt::DType::BOOL;
  }
  return rt::DType::F32;
}

std::string stateKey(const cpu::Slot &s) {
  return s.name.empty() ? s.state : s.state + "/" + s.name;
}

/// The learning rate at `step`, as lpc.lr_schedule computes it (for logs).
double lrAt(int64_t step, const std::string &sched, int64_t warmup,
            int64_t total, double minLr) {
  double base = lr;
  if (step < warmup)
    return base * double(step) / double(std::max<int64_t>(1, warmup));
  if (sched == "linear" || sched == "cosine") {
    double p = double(step - warmup) / double(std::max<int64_t>(1, total - warmup));
    p = std::min(1.0, std::max(0.0, p));
    double f = sched == "linear" ? 1 - p : 0.5 * (1 + std::cos(M_PI * p));
    return minLr + (base - minLr) * f;
  }
  return base;
}

std::string humanTime(double s) {
  if (s < 60)
    return llvm::formatv("{0:f1}s", s).str();
  int m = int(s / 60);
  return llvm::formatv("{0}m{1:f0}s", m, s - 60 * m).str();
}

} // namespace

int main(int argc, char **argv) {
  // oneDNN's OpenMP threads spin after each GEMM unless told otherwise, which
  // makes GEMMs 5-11x slower when another process holds a core
  // (runtime/gemm/README.md). libgomp reads the policy when it loads, so set
  // it and start again.
  if (!getenv("OMP_WAIT_POLICY") && !getenv("LPC_RUN_REEXEC")) {
    setenv("OMP_WAIT_POLICY", "passive", 0);
    setenv("LPC_RUN_REEXEC", "1", 1);
    execv("/proc/self/exe", argv);
    // Falls through when exec is impossible: slower, not wrong.
  }
  llvm::InitLLVM initLLVM(argc, argv);
  registerAllPasses();
  mlpc::registerLpcPasses();
  mlpc::registerLpcConversionPasses();
  mlpc::registerLpcPipelines();
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "lpc-run: train an lpc model (compiled for this machine's CPU)\n\n"
      "  lpc-run examples/mlp.mlir --mixed-precision=bf16 --epochs=1\n"
      "  lpc-run examples/gpt.mlir --data=text:corpus.txt --steps=500\n");
  if (modelFile.empty())
    return fail("no model given (lpc-run MODEL.mlir [options]; see --help)");
  if (!configFile.empty() && !applyConfig(configFile))
    return 1;
  if (cpuThreads < 0 || cpuThreads > 4096)
    return fail("--cpu-threads must be between 0 and 4096, got " +
                llvm::Twine(cpuThreads.getValue()));
  ::lpc::rt::setGemmThreads(static_cast<int>(cpuThreads));
  if (device != "cpu" && device != "cuda")
    return fail("--device must be cpu or cuda, got '" + device + "'");
  if (!emitArtifact.empty() && device != "cuda")
    return fail("--emit-artifact needs --device=cuda");
  if (std::optional<unsigned> sm = mlpc::parseSMVersion(gpuArch);
      !sm || *sm < 80)
    return fail("--gpu-arch must be sm_80 or newer (sm_80, sm_89, sm_90, "
                "...), got '" + gpuArch + "'");
  if (device == "cuda" && emitArtifact.empty()) {
    std::string why;
    if (!cudaAvailable(why)) {
      // Exit 2 like lpc-cuda-check: this machine cannot run it.
      fail("--device=cuda: " + why + " (--emit-artifact=FILE compiles "
           "without a GPU)");
      return 2;
    }
  }
  if (optimizer != "adamw" && optimizer != "sgd")
    return fail("--optimizer must be adamw or sgd, got '" + optimizer + "'");
  if (mixedPrecision != "no" && mixedPrecision != "fp16" &&
      mixedPrecision != "bf16" && mixedPrecision != "fp8")
    return fail("--mixed-precision must be no, fp16, bf16 or fp8, got '" +
                mixedPrecision + "'");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // --device=cuda: gpu-module-to-binary translates kernels to LLVM IR.
  registerAllToLLVMIRTranslations(registry);
  registry.insert<mlpc::LpcDialect>();
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  llvm::SourceMgr sm;
  SourceMgrDiagnosticHandler diag(sm, &ctx);
  std::string err;
  auto buffer = openInputFile(modelFile, &err);
  if (!buffer)
    return fail(err);
  sm.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sm, &ctx);
  if (!module)
    return 1;
  func::FuncOp fwd;
  for (auto fn : module->getOps<func::FuncOp>())
    if (!fn.getOps<mlpc::ParamOp>().empty()) {
      fwd = fn;
      break;
    }
  if (!fwd)
    return fail(modelFile + ": no model (a function with lpc.param ops)");
  std::string model = fwd.getSymName().str();

  // The model's data inputs decide the data source.
  mlpc::InputOp featIn, labelIn, tokenIn;
  for (auto in : fwd.getOps<mlpc::InputOp>()) {
    switch (in.getKind()) {
    case mlpc::InputKind::features: featIn = in; break;
    case mlpc::InputKind::labels: labelIn = in; break;
    case mlpc::InputKind::tokens: tokenIn = in; break;
    case mlpc::InputKind::targets:
      return fail(modelFile + ": regression targets are not supported by "
                              "lpc-run's data sources yet");
    }
  }
  bool textModel = bool(tokenIn);
  if (!labelIn || (!featIn && !tokenIn))
    return fail(modelFile + ": lpc-run trains classifiers (features + labels) "
                            "and language models (tokens + labels)");
  int64_t modelBatch = (textModel ? tokenIn : featIn).getType().getDimSize(0);
  if (batch != 0 && batch != modelBatch)
    return fail(llvm::formatv("--batch={0} but {1} was built for batch {2}; "
                              "regenerate it (e.g. lpc-model ... --batch={0})",
                              batch.getValue(), modelFile, modelBatch));

  // Data.
  std::optional<rt::ClassificationDataset> train, test;
  std::optional<rt::CharCorpus> corpus, corpusVal;
  std::string dataSpec = data;
  if (dataSpec.empty())
    dataSpec = textModel ? "" : "fashion-mnist";
  if (textModel) {
    if (!llvm::StringRef(dataSpec).starts_with("text:"))
      return fail("a token model needs --data=text:PATH (any text file)");
    auto c = rt::loadCharCorpus(dataSpec.substr(5));
    if (!c)
      return fail(c.error().message());
    auto [tr, va] = rt::splitCharCorpus(*c, 0.1);
    corpus = std::move(tr);
    corpusVal = std::move(va);
  } else if (dataSpec == "fashion-mnist") {
    auto tr = rt::loadFashionMnist(rt::Split::Train, dataDir);
    if (!tr)
      return fail(tr.error().message());
    auto te = rt::loadFashionMnist(rt::Split::Test, dataDir);
    if (!te)
      return fail(te.error().message());
    train = std::move(*tr);
    test = std::move(*te);
  } else if (dataSpec == "synthetic") {
    int64_t features = featIn.getType().getShape().back();
    int64_t classes = 10;
    if (auto b = ref::integerInputBound(labelIn.getResult()))
      classes = *b;
    rt::SyntheticOptions so;
    so.numExamples = synthExamples;
    so.features = features;
    so.classes = classes;
    so.seed = seed;
    auto tr = rt::makeSyntheticClassification(so, rt::Split::Train);
    auto te = rt::makeSyntheticClassification(so, rt::Split::Test);
    if (!tr || !te)
      return fail(!tr ? tr.error().message() : te.error().message());
    train = std::move(*tr);
    test = std::move(*te);
  } else {
    return fail("unknown --data '" + dataSpec +
                "' (fashion-mnist, synthetic or text:PATH)");
  }
  if (train && train->featureSize != featIn.getType().getShape().back())
    return fail(llvm::formatv("{0} has {1} features per example but the "
                              "model's input '{2}' expects {3}",
                              train->name, train->featureSize,
                              featIn.getName(),
                              featIn.getType().getShape().back()));

  std::optional<rt::BatchIterator> iter;
  std::optional<rt::CorpusSampler> sampler;
  int64_t perEpoch = 0;
  if (train) {
    rt::BatchIteratorOptions bo;
    bo.batchSize = modelBatch;
    bo.seed = seed;
    auto it = rt::BatchIterator::create(train->numExamples, bo);
    if (!it)
      return fail(it.error().message());
    iter = std::move(*it);
    perEpoch = iter->batchesPerEpoch();
  } else {
    auto t = tokenIn.getType();
    auto s = rt::CorpusSampler::create(*corpus, t.getDimSize(0),
                                       t.getDimSize(1), seed);
    if (!s)
      return fail(s.error().message());
    sampler = std::move(*s);
    perEpoch = std::max<int64_t>(
        1, int64_t(corpus->bytes.size()) / (t.getDimSize(0) * t.getDimSize(1)));
  }
  int64_t totalSteps =
      steps > 0 ? steps.getValue()
                : std::max<int64_t>(1, int64_t(std::ceil(epochs * perEpoch)));

  // Compile.
  auto tc = std::chrono::steady_clock::now();
  std::string autodiff =
      llvm::formatv("lpc-autodiff{{optimizer={0} lr={1:e16} eval=true "
                    "total-steps={2} {3}}",
                    optimizer.getValue(), lr.getValue(), totalSteps,
                    autodiffExtra.getValue())
          .str();
  std::string pipeline = autodiff + ",lpc-mixed-precision{policy=" +
                         mixedPrecision + " " + recipe + "}";
  {
    PassManager pm(&ctx);
    if (failed(parsePassPipeline(pipeline, pm, llvm::errs())) ||
        failed(pm.run(*module)))
      return fail("building the train step failed (pipeline: " + pipeline +
                  ")");
  }
  std::unique_ptr<StepFunction> stepFn, evalFn;
  std::string names[] = {model + "_train_step", model + "_eval"};
  bool fromCache = false;
  if (device == "cpu") {
    cpu::CompileOptions copts;
    if (!cacheDir.empty())
      copts.cacheDir = cacheDir == "off" ? std::string() : cacheDir.getValue();
    for (int i = 0; i < 2; ++i) {
      auto f = cpu::CompiledFunction::compile(*module, names[i], copts);
      if (!f)
        return fail(llvm::toString(f.takeError()));
      (i == 0 ? stepFn : evalFn) = std::make_unique<CPUStep>(std::move(*f));
    }
    fromCache = stepFn->cached() && evalFn->cached();
  } else {
    mlpc::gpu::ArtifactOptions ao;
    ao.chip = gpuArch;
    auto art = mlpc::gpu::compileArtifact(*module, names, ao);
    if (!art)
      return fail("--device=cuda: " + llvm::toString(art.takeError()));
    if (!emitArtifact.empty()) {
      if (rt::Error e = rt::writeFileAtomic(emitArtifact, art->data(),
                                            art->size()))
        return fail(e.message());
      llvm::errs() << llvm::formatv(
          "lpc-run: compiled @{0}_train_step and @{0}_eval ({1} precision) "
          "for {2} in {3:f2} s; wrote {4} ({5} KiB)\n",
          model, mixedPrecision.getValue(), gpuArch.getValue(),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - tc)
              .count(),
          emitArtifact.getValue(), art->size() >> 10);
      return 0;
    }
    std::string why;
    if (!openCudaSteps(*art, names, stepFn, evalFn, why)) {
      // Exit 2 like lpc-cuda-check: no usable GPU (or driver) here.
      fail("--device=cuda: " + why);
      return 2;
    }
  }
  double compileSecs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - tc)
          .count();
  llvm::errs() << llvm::formatv(
      "lpc-run: compiled @{0}_train_step and @{0}_eval ({1} precision) in "
      "{2:f2} s{3}; {4}\n",
      model, mixedPrecision.getValue(), compileSecs,
      fromCache ? " (from the compile cache)" : "",
      device == "cpu"
          ? llvm::formatv("{0} threads", ::lpc::rt::gemmThreads()).str()
          : stepFn->deviceName());

  // State: one buffer per state argument, keyed "state/name".
  const auto &args = stepFn->args();
  const auto &results = stepFn->results();
  std::map<std::string, std::vector<uint8_t>> state;
  std::map<std::string, const cpu::Slot *> stateSlot;
  std::map<std::string, mlpc::ParamOp> params;
  for (auto p : fwd.getOps<mlpc::ParamOp>())
    params[p.getName().str()] = p;
  for (const cpu::Slot &s : args) {
    if (s.state.empty())
      continue;
    std::vector<uint8_t> buf(s.byteSize() + 1, 0);
    if (s.state == "param") {
      auto it = params.find(s.name);
      if (it == params.end())
        return fail("internal: no parameter '" + s.name + "'");
      cpu::packTensor(ref::initializeParam(it->second, seed), buf.data());
    } else if (s.init) {
      cpu::packTensor(ref::Tensor::filled(s.dtype, s.shape, *s.init),
                      buf.data());
    }
    state[stateKey(s)] = std::move(buf);
    stateSlot[stateKey(s)] = &s;
  }
  int64_t startStep = 0;

  // Resume.
  auto checkpointPath = [&](const std::string &name) {
    llvm::SmallString<256> p(checkpointDir.getValue());
    llvm::sys::path::append(p, name);
    return p.str().str();
  };
  std::vector<rt::TensorSpec> specs;
  for (auto &[k, s] : stateSlot)
    specs.push_back({k, rtDType(s->dtype), s->shape});
  if (!resume.empty()) {
    std::string path = resume == "latest" ? checkpointPath("latest.safetensors")
                                          : resume.getValue();
    auto file = rt::readSafetensors(path);
    if (!file)
      return fail(file.error().message());
    auto header = rt::readSafetensorsHeader(path);
    if (!header)
      return fail(header.error().message());
    if (rt::Error e = rt::checkTensors(*header, specs, path))
      return fail(e.message() + " (another model or precision?)");
    auto meta = [&](const char *k) {
      auto it = file->metadata.find(k);
      return it == file->metadata.end() ? std::string() : it->second;
    };
    if (meta("model") != model || meta("mixed_precision") != mixedPrecision)
      return fail(path + ": checkpoint of model '" + meta("model") + "' in '" +
                  meta("mixed_precision") + "' precision, not '" + model +
                  "' in '" + mixedPrecision.getValue() + "'");
    for (auto &[k, t] : file->tensors)
      std::memcpy(state[k].data(), t.bytes.data(), t.bytes.size());
    startStep = std::stoll(meta("step"));
    rt::Error e = iter ? iter->restore(meta("data_position"))
                       : sampler->restore(meta("data_position"));
    if (e)
      return fail(path + ": " + e.message());
    llvm::errs() << "lpc-run: resumed from " << path << " at step "
                 << startStep << "\n";
  }

  auto writeCheckpoint = [&](int64_t stepDone) -> bool {
    if (checkpointDir.empty())
      return true;
    if (auto ec = llvm::sys::fs::create_directories(checkpointDir)) {
      fail(checkpointDir + ": " + ec.message());
      return false;
    }
    std::vector<rt::TensorView> views;
    for (auto &[k, buf] : state) {
      const cpu::Slot *s = stateSlot[k];
      views.push_back({k, rtDType(s->dtype), s->shape, buf.data(),
                       s->byteSize()});
    }
    rt::Metadata md{{"model", model},
                    {"mixed_precision", mixedPrecision},
                    {"step", std::to_string(stepDone)},
                    {"seed", std::to_string(seed)},
                    {"data_position",
                     iter ? iter->position() : sampler->position()},
                    {"pipeline", pipeline}};
    for (const char *name : {"latest.safetensors"}) {
      if (rt::Error e = rt::writeSafetensors(checkpointPath(name), views, md)) {
        fail(e.message());
        return false;
      }
    }
    return true;
  };

  rt::JsonlWriter log;
  if (!logFile.empty())
    if (rt::Error e = log.open(logFile, /*append=*/!resume.empty())) {
      fail(e.message());
      return 1;
    }

  // Inputs of the train step and of eval, by input name.
  std::map<std::string, std::vector<uint8_t>> inputs;
  for (const cpu::Slot &s : args)
    if (!s.input.empty())
      inputs[s.input].assign(s.byteSize() + 1, 0);
  std::string featName = featIn ? featIn.getName().str() : "";
  std::string labelName = labelIn.getName().str();
  std::string tokenName = tokenIn ? tokenIn.getName().str() : "";
  auto loadBatch = [&](const rt::ClassificationDataset &ds,
                       const std::vector<int64_t> &idx) {
    ds.gather(idx, reinterpret_cast<float *>(inputs[featName].data()),
              reinterpret_cast<int32_t *>(inputs[labelName].data()));
  };

  // Evaluation: mean loss and accuracy over the held-out data.
  auto evaluate = [&](double &lossOut, double &accOut) -> bool {
    const auto &eargs = evalFn->args();
    const auto &eres = evalFn->results();
    std::vector<std::vector<uint8_t>> out(eres.size());
    for (size_t r = 0; r < eres.size(); ++r)
      out[r].assign(eres[r].byteSize() + 1, 0);
    std::vector<const void *> ap;
    for (const cpu::Slot &s : eargs)
      ap.push_back(s.input.empty() ? state[stateKey(s)].data()
                                   : inputs[s.input].data());
    std::vector<void *> rp;
    for (auto &o : out)
      rp.push_back(o.data());
    double lossSum = 0, correct = 0, count = 0, lossRows = 0;
    int64_t nb = 0;
    auto runOne = [&](int64_t real) -> bool {
      if (llvm::Error e = evalFn->run(ap, rp)) {
        fail("eval: " + llvm::toString(std::move(e)));
        return false;
      }
      for (size_t r = 0; r < eres.size(); ++r) {
        ref::Tensor t = cpu::unpackTensor(eres[r], out[r].data());
        if (eres[r].metric == "loss") {
          lossSum += t.data[0] * real;
          lossRows += real;
        } else if (eres[r].metric == "logits" && !textModel) {
          int64_t c = t.shape.back();
          auto *labels = reinterpret_cast<int32_t *>(inputs[labelName].data());
          for (int64_t i = 0; i < real; ++i) {
            int64_t best = 0;
            for (int64_t j = 1; j < c; ++j)
              if (t.data[i * c + j] > t.data[i * c + best])
                best = j;
            correct += best == labels[i];
            count += 1;
          }
        }
      }
      return true;
    };
    if (test) {
      int64_t b = modelBatch;
      for (int64_t start = 0; start < test->numExamples; start += b, ++nb) {
        if (evalBatches > 0 && nb >= evalBatches)
          break;
        std::vector<int64_t> idx;
        int64_t real = std::min(b, test->numExamples - start);
        for (int64_t i = 0; i < b; ++i)
          idx.push_back(start + (i < real ? i : 0));
        loadBatch(*test, idx);
        if (!runOne(real))
          return false;
      }
    } else {
      auto t = tokenIn.getType();
      auto s = rt::CorpusSampler::create(*corpusVal, t.getDimSize(0),
                                         t.getDimSize(1), seed + 1);
      if (!s) {
        fail(s.error().message());
        return false;
      }
      int64_t n = evalBatches > 0 ? evalBatches.getValue() : 20;
      for (int64_t i = 0; i < n; ++i) {
        s->next(reinterpret_cast<int32_t *>(inputs[tokenName].data()),
                reinterpret_cast<int32_t *>(inputs[labelName].data()));
        if (!runOne(1))
          return false;
      }
    }
    lossOut = lossRows > 0 ? lossSum / lossRows : NAN;
    accOut = count > 0 ? correct / count : NAN;
    return true;
  };

  // The training loop.
  bool tty = llvm::sys::Process::StandardErrIsDisplayed();
  std::vector<std::vector<uint8_t>> out(results.size());
  for (size_t r = 0; r < results.size(); ++r)
    out[r].assign(results[r].byteSize() + 1, 0);
  auto t0 = std::chrono::steady_clock::now();
  double lastLoss = NAN, skippedTotal = 0;
  int64_t samples = 0;
  std::string schedule = "constant";
  int64_t warmup = 0;
  double minLr = 0;
  {
    // Only for the logged lr: read what lpc-autodiff was told.
    llvm::StringRef extra = autodiffExtra;
    llvm::SmallVector<llvm::StringRef> parts;
    extra.split(parts, ' ', -1, false);
    for (llvm::StringRef p : parts) {
      auto [k, v] = p.split('=');
      if (k == "lr-schedule")
        schedule = v.str();
      else if (k == "warmup-steps")
        v.getAsInteger(10, warmup);
      else if (k == "min-lr")
        v.getAsDouble(minLr);
    }
  }
  for (int64_t step = startStep; step < totalSteps; ++step) {
    int64_t real = modelBatch;
    if (iter) {
      rt::Batch b = iter->next();
      real = b.realRows;
      loadBatch(*train, b.indices);
    } else {
      sampler->next(reinterpret_cast<int32_t *>(inputs[tokenName].data()),
                    reinterpret_cast<int32_t *>(inputs[labelName].data()));
    }
    std::vector<const void *> ap;
    for (const cpu::Slot &s : args)
      ap.push_back(s.input.empty() ? state[stateKey(s)].data()
                                   : inputs[s.input].data());
    std::vector<void *> rp;
    for (auto &o : out)
      rp.push_back(o.data());
    if (llvm::Error e = stepFn->run(ap, rp))
      return fail("step " + std::to_string(step) + ": " +
                  llvm::toString(std::move(e)));
    rt::JsonObject rec;
    rec.add("step", step + 1);
    double loss = NAN;
    for (size_t r = 0; r < results.size(); ++r) {
      const cpu::Slot &s = results[r];
      if (!s.state.empty()) {
        std::memcpy(state[stateKey(s)].data(), out[r].data(), s.byteSize());
      } else if (!s.metric.empty()) {
        ref::Tensor t = cpu::unpackTensor(s, out[r].data());
        if (t.numElements() != 1)
          continue;
        if (s.metric == "loss")
          loss = t.data[0];
        if (s.metric == "skipped")
          skippedTotal += t.data[0];
        // Per-tensor metrics (fp8_saturated, fp8_underflow) by tensor name.
        rec.add(s.name.empty() ? s.metric : s.metric + "/" + s.name,
                t.data[0]);
      }
    }
    rec.add("lr", lrAt(step, schedule, warmup, totalSteps, minLr));
    // Per FP8 tensor: this step's amax (the newest history entry) and the
    // scale the next step will quantize with.
    for (auto &[key, slot] : stateSlot) {
      if (slot->state != "fp8_scale" && slot->state != "fp8_amax_history")
        continue;
      float v;
      std::memcpy(&v, state[key].data(), sizeof(float));
      rec.add((slot->state == "fp8_scale" ? "fp8_scale/" : "fp8_amax/") +
                  slot->name,
              v);
    }
    if (real != modelBatch)
      rec.add("real_rows", real);
    samples += real;
    if (!std::isfinite(loss))
      return fail(llvm::formatv("the loss is {0} at step {1} ({2} "
                                "precision); lower --lr, or use loss scaling "
                                "for fp16",
                                loss, step + 1, mixedPrecision.getValue()));
    lastLoss = loss;
    double el = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
    double rate = samples / std::max(el, 1e-9);
    int64_t done = step + 1 - startStep, left = totalSteps - step - 1;
    double eta = done > 0 ? el / done * left : 0;
    if (tty) {
      int width = 30, fill = int(width * double(step + 1) / totalSteps);
      llvm::errs() << llvm::formatv(
          "\r[{0}{1}] step {2}/{3} loss {4:f4} {5:f0} samples/s ETA {6}   ",
          std::string(fill, '#'), std::string(width - fill, '.'), step + 1,
          totalSteps, loss, rate, humanTime(eta));
    } else if ((step + 1) % printEvery == 0 || step + 1 == totalSteps) {
      llvm::errs() << llvm::formatv(
          "step {0}/{1} loss {2:f4} {3:f0} samples/s ETA {4}\n", step + 1,
          totalSteps, loss, rate, humanTime(eta));
    }
    bool evalNow = evalEvery > 0 && (step + 1) % evalEvery == 0 &&
                   step + 1 != totalSteps;
    if (evalNow) {
      double el2, acc;
      if (!evaluate(el2, acc))
        return 1;
      rec.add("eval_loss", el2);
      if (!std::isnan(acc))
        rec.add("eval_accuracy", acc);
      llvm::errs() << llvm::formatv("{0}eval at step {1}: loss {2:f4}{3}\n",
                                    tty ? "\n" : "", step + 1, el2,
                                    std::isnan(acc) ? std::string()
                                                    : llvm::formatv(", accuracy {0:f4}", acc).str());
    }
    if (log.isOpen())
      if (rt::Error e = log.write(rec))
        return fail(e.message());
    if (checkpointEvery > 0 && (step + 1) % checkpointEvery == 0 &&
        !writeCheckpoint(step + 1))
      return 1;
  }
  if (tty)
    llvm::errs() << "\n";
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  double evalLoss = NAN, evalAcc = NAN;
  if (!evaluate(evalLoss, evalAcc))
    return 1;
  if (!writeCheckpoint(totalSteps))
    return 1;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  int64_t trained = totalSteps - startStep;
  llvm::outs() << llvm::formatv(
      "lpc-run: {0} steps in {1:f1} s ({2:f1} ms/step, {3:f0} samples/s), "
      "compile {4:f2} s, peak memory {5} MiB (step temporaries {6} MiB)\n",
      trained, secs, trained ? 1000 * secs / trained : 0.0,
      samples / std::max(secs, 1e-9), compileSecs, ru.ru_maxrss / 1024,
      (cpu::bufferPoolBytes() + (1 << 19)) >> 20);
  llvm::outs() << llvm::formatv("final train loss {0:f4}", lastLoss);
  if (skippedTotal > 0)
    llvm::outs() << llvm::formatv(", {0} steps skipped (loss scaling)",
                                  skippedTotal);
  llvm::outs() << llvm::formatv(", eval loss {0:f4}", evalLoss);
  if (!std::isnan(evalAcc))
    llvm::outs() << llvm::formatv(", eval accuracy {0:f4}", evalAcc);
  llvm::outs() << "\n";
  if (log.isOpen()) {
    rt::JsonObject fin;
    fin.add("final", true).add("eval_loss", evalLoss);
    if (!std::isnan(evalAcc))
      fin.add("eval_accuracy", evalAcc);
    fin.add("seconds", secs).add("compile_seconds", compileSecs);
    if (rt::Error e = log.write(fin))
      return fail(e.message());
    if (rt::Error e = log.close())
      return fail(e.message());
  }
  return 0;
}
