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
#include "lpc/Reference/ToRuntime.h"
#include "lpc/Runtime/BatchIterator.h"
#include "lpc/Runtime/Comm.h"
#include "lpc/Runtime/CommTrainer.h"
#ifdef LPC_HAVE_CUDA_RUNTIME
#include "lpc/Runtime/CudaTrain.h"
#endif
#include "lpc/Runtime/Data.h"
#include "lpc/Runtime/File.h"
#include "lpc/Runtime/Gemm.h"
#include "lpc/Runtime/Metrics.h"
#include "lpc/Runtime/Safetensors.h"
#include "lpc/Runtime/Trainer.h"

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
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <sys/resource.h>
#include <cstdlib>
#include <map>
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
    cl::desc("fashion-mnist | synthetic | text:PATH | tensors:PATH (default: "
             "fashion-mnist for feature models, a required text:PATH for "
             "token models; tensors:PATH is a safetensors file with one "
             "tensor per model input, examples along the first dimension, "
             "taken in file order)"),
    cl::init(""), cl::cat(cat));
static cl::opt<std::string> evalData(
    "eval-data",
    cl::desc("tensors:PATH: held-out examples for --data=tensors: (without "
             "it such a run does not evaluate)"),
    cl::init(""), cl::cat(cat));
static cl::opt<std::string> initWeights(
    "init",
    cl::desc("start from these parameters (safetensors of parameter names, "
             "e.g. the state_dict lpc-import wrote) instead of the model's "
             "initializers"),
    cl::init(""), cl::cat(cat));
static cl::opt<std::string> saveWeights(
    "save-weights",
    cl::desc("write the trained parameters to this safetensors file at the "
             "end (state_dict names: load_state_dict(load_file(PATH)))"),
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
static cl::opt<int64_t> keepCheckpoints(
    "keep-checkpoints",
    cl::desc("checkpoints kept in --checkpoint-dir: latest.safetensors and "
             "the N-1 before it as step-S.safetensors"),
    cl::init(1), cl::cat(cat));
static cl::opt<std::string> resume(
    "resume", cl::desc("continue from this checkpoint, or 'latest': the "
                       "newest intact one in --checkpoint-dir (a damaged "
                       "one is skipped with a warning)"),
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
static cl::opt<bool> tf32(
    "tf32",
    cl::desc("with --device=cuda: f32 GEMMs on TF32 tensor cores (10-bit "
             "mantissa products; PyTorch's allow_tf32)"),
    cl::init(false), cl::cat(cat));
static cl::opt<std::string> profileOps(
    "profile-ops",
    cl::desc("time every op of the train step after 2 warm-up steps and write the "
             "means per step to this JSON file. On the CPU (a model file): a timer "
             "call between the lowered step's ops, and a summary per kind of op on "
             "stderr. With a CUDA artifact (ARTIFACT.json --device=cuda): CUDA "
             "events, no CUDA graphs (lpc-cuda-check --estimate ARTIFACT "
             "--measured=FILE)"),
    cl::init(""), cl::cat(cat));
static cl::opt<std::string> emitArtifact(
    "emit-artifact",
    cl::desc("with --device=cuda: write the compiled artifact (PTX, launch "
             "schedule, buffer plan, state layout; docs/cuda-artifact.md) "
             "to this file and stop; needs no GPU"),
    cl::init(""), cl::cat(cat));
static cl::opt<bool> dataParallel(
    "data-parallel",
    cl::desc("average the gradients and the loss over the ranks of an MPI "
             "run (lpc-data-parallel). On by itself under mpirun with more "
             "than one rank; with one rank the step computes the same"),
    cl::init(false), cl::cat(cat));
static cl::opt<std::string> commPrecision(
    "comm-precision",
    cl::desc("with several ranks: the gradients' format on the wire: fp32, "
             "bf16 or fp16 (half the bytes), fp8 (= fp8_e4m3) or fp8_e5m2 (a "
             "quarter, one power-of-two scale per bucket agreed by every "
             "rank); the sums accumulate in f32, the loss goes in fp32"),
    cl::init("fp32"), cl::cat(cat));
static cl::opt<bool> wireKernels(
    "wire-kernels",
    cl::desc("with --comm-precision=fp8 or fp8_e5m2 on the CPU: move the "
             "gradients as the GPU does (compiled scale, quantize and sum "
             "code around collectives that only move bytes, "
             "lpc-native-wire-collectives) instead of in the runtime; the "
             "same bits, to check the GPU's form where no GPU is"),
    cl::init(false), cl::Hidden, cl::cat(cat));
static cl::opt<double> bucketMb(
    "bucket-mb",
    cl::desc("with several ranks: gradients go in buckets of this many MiB "
             "of f32 values, one collective each (PyTorch DDP's "
             "bucket_cap_mb); 0: one collective per gradient"),
    cl::init(25), cl::cat(cat));
static cl::opt<int64_t> zeroStage(
    "zero",
    cl::desc("with --data-parallel: 1 shards the optimizer (ZeRO stage 1): "
             "each rank updates 1/N of every parameter and holds 1/N of the "
             "optimizer state; gradients are reduce-scattered, parameters "
             "all-gathered in fp32; checkpoints hold whole tensors. 0 "
             "(default): every rank updates everything"),
    cl::init(0), cl::cat(cat));
static cl::opt<int64_t> verifyRanks(
    "verify-ranks",
    cl::desc("with several ranks: every N steps, check that every rank holds "
             "the same training state (parameters, optimizer state, FP8 "
             "scales and histories, loss scale), and stop naming the first "
             "tensor that differs; 0: never"),
    cl::init(0), cl::cat(cat));
static cl::opt<double> commTimeout(
    "comm-timeout",
    cl::desc("with several ranks: end the run when a collective waits longer "
             "than this many seconds for the other ranks (a rank hung while "
             "alive); longer than the slowest evaluation or checkpoint, which "
             "rank 0 does while the others wait; 0: wait forever"),
    cl::init(600), cl::cat(cat));
static cl::opt<int64_t> synthExamples("synthetic-examples",
                                      cl::desc("examples of synthetic data"),
                                      cl::init(8192), cl::cat(cat));

namespace {

rt::Slot runtimeSlot(const cpu::Slot &c) {
  rt::Slot s;
  s.dtype = ref::toRuntimeDType(c.dtype);
  s.shape = c.shape;
  s.state = c.state;
  s.name = c.name;
  s.input = c.input;
  s.metric = c.metric;
  s.init = c.init;
  s.idBound = c.idBound;
  s.shardOf = c.shardOf;
  s.shardRanks = c.shardRanks;
  return s;
}

/// Steps --profile-ops leaves out of its means (as the CUDA path does):
/// the first touches fresh buffers and warms the caches.
constexpr int64_t kProfileWarmup = 2;

/// A function compiled for the host by the JIT.
class CPUStep : public rt::StepFunction {
public:
  /// `profileWarmup` >= 0: `f` was compiled with profiling; its per-op times
  /// restart after that many runs.
  explicit CPUStep(std::unique_ptr<cpu::CompiledFunction> f,
                   int64_t profileWarmup = -1)
      : f(std::move(f)), warmup(profileWarmup) {
    for (const cpu::Slot &s : this->f->args())
      argSlots.push_back(runtimeSlot(s));
    for (const cpu::Slot &s : this->f->results())
      resultSlots.push_back(runtimeSlot(s));
  }
  const std::vector<rt::Slot> &args() const override { return argSlots; }
  const std::vector<rt::Slot> &results() const override {
    return resultSlots;
  }
  rt::Error run(const std::vector<const void *> &args,
                const std::vector<void *> &results) override {
    if (llvm::Error e = f->run(args, results))
      return rt::Error::make(llvm::toString(std::move(e)));
    if (++runs == warmup)
      f->resetProfile();
    return rt::Error::success();
  }
  size_t temporaryBytes() const override { return cpu::bufferPoolBytes(); }

  /// Runs whose per-op times the profile holds.
  int64_t timedRuns() const { return warmup < 0 ? 0 : std::max<int64_t>(runs - warmup, 0); }
  int64_t warmupRuns() const { return warmup; }
  std::vector<cpu::ProfileEntry> profile() const { return f->profile(); }

private:
  std::unique_ptr<cpu::CompiledFunction> f;
  std::vector<rt::Slot> argSlots, resultSlots;
  int64_t warmup, runs = 0;
};

/// --profile-ops on the CPU: the mean ms per step of every op of the
/// lowered train step, in program order, as the CUDA path writes them
/// ("op", "what", "ms"), plus each op's kind; a summary per kind on stderr.
/// Written atomically. False (after saying why) when nothing was timed or
/// the file cannot be written.
bool writeCPUOpProfile(const std::string &path, const std::string &function,
                       const CPUStep &step) {
  int64_t timed = step.timedRuns();
  if (timed == 0) {
    llvm::errs() << "lpc-run: error: " << path << ": no step was timed "
                 << "(--profile-ops skips the first " << step.warmupRuns()
                 << " steps as warm-up: train more steps)\n";
    return false;
  }
  std::vector<cpu::ProfileEntry> entries = step.profile();
  double total = 0;
  std::string json;
  llvm::raw_string_ostream os(json);
  llvm::json::OStream j(os, 1);
  j.object([&] {
    j.attribute("lpc_op_profile", 1);
    j.attribute("function", function);
    j.attribute("device", "cpu");
    j.attribute("timed_steps", timed);
    j.attribute("skipped_steps", step.warmupRuns());
    for (const cpu::ProfileEntry &e : entries)
      total += e.seconds;
    j.attribute("step_ms", 1e3 * total / timed);
    j.attributeArray("ops", [&] {
      for (auto [i, e] : llvm::enumerate(entries)) {
        j.object([&] {
          j.attribute("op", int64_t(i));
          j.attribute("what", e.label);
          j.attribute("kind", cpu::profileKind(e.label));
          j.attribute("ms", 1e3 * e.seconds / timed);
        });
      }
    });
  });
  json += "\n";
  if (rt::Error e = rt::writeFileAtomic(path, json.data(), json.size())) {
    llvm::errs() << "lpc-run: error: " << e.message() << "\n";
    return false;
  }
  llvm::errs() << llvm::formatv("lpc-run: op profile ({0} steps after {1} warm-up): "
                                "{2:f2} ms per step in {3} ops;",
                                timed, step.warmupRuns(), 1e3 * total / timed,
                                entries.size());
  for (auto [i, k] : llvm::enumerate(cpu::profileByKind(entries)))
    llvm::errs() << llvm::formatv("{0} {1} {2:f2} ms ({3:f1}%)", i ? "," : "",
                                  k.kind, 1e3 * k.seconds / timed,
                                  total > 0 ? 100 * k.seconds / total : 0.0);
  llvm::errs() << "; wrote " << path << "\n";
  return true;
}

#ifdef LPC_HAVE_CUDA_RUNTIME
namespace rtc = ::lpc::rt::cuda;

bool cudaAvailable(std::string &why) {
  rt::Error e = rtc::probeDriver();
  why = e.message();
  return !e;
}

/// The steps of the artifact `json` on this machine's GPU; false (with the
/// reason) when it cannot run them.
bool openCudaSteps(const std::string &json, llvm::ArrayRef<std::string> names,
                   std::unique_ptr<rt::StepFunction> &step,
                   std::unique_ptr<rt::StepFunction> &eval, std::string &device,
                   std::string &why) {
  auto art = rtc::parseArtifact(json, "the compiled artifact");
  if (!art) {
    why = art.error().message();
    return false;
  }
  auto steps = rtc::openCudaSteps(art.take(), names[0], names[1]);
  if (!steps) {
    why = steps.error().message();
    return false;
  }
  step = std::move(steps->step);
  eval = std::move(steps->eval);
  device = steps->device;
  return true;
}
#else
bool cudaAvailable(std::string &why) {
  why = "this lpc-run was built without the CUDA runtime (configure lpc "
        "with the CUDA toolkit installed)";
  return false;
}
bool openCudaSteps(const std::string &, llvm::ArrayRef<std::string>,
                   std::unique_ptr<rt::StepFunction> &,
                   std::unique_ptr<rt::StepFunction> &, std::string &,
                   std::string &why) {
  return cudaAvailable(why);
}
#endif

/// The artifact's "train" section (docs/cuda-artifact.md): what the
/// runtime-only lpc-run needs to train it (runtime/cuda/CudaTrain.cpp reads
/// it).
llvm::json::Object trainSection(const rt::ModelInfo &m,
                                const rt::TrainOptions &o, int64_t totalSteps,
                                const std::string &pipeline) {
  llvm::json::Object params;
  for (const auto &[name, s] : m.params)
    params[name] = llvm::json::Object{{"init", rt::initKindName(s.kind)},
                                      {"std", s.std},
                                      {"mean", s.mean},
                                      {"low", s.low},
                                      {"high", s.high},
                                      {"value", s.value},
                                      {"gain", s.gain}};
  llvm::json::Object t{{"model", m.name},
                       {"batch", m.batch},
                       {"text_model", m.textModel},
                       {"label_input", m.labelName},
                       {"classes", m.classes},
                       {"params", std::move(params)},
                       {"total_steps", totalSteps},
                       {"mixed_precision", o.mixedPrecision},
                       {"pipeline", pipeline},
                       {"lr", o.lr},
                       {"lr_schedule", o.lrSchedule},
                       {"warmup_steps", o.warmupSteps},
                       {"min_lr", o.minLr}};
  if (m.textModel) {
    t["token_input"] = m.tokenName;
    t["seq_len"] = m.seqLen;
  } else {
    t["feature_input"] = m.featName;
    t["features"] = m.features;
  }
  return t;
}

/// The run's own settings (data, length, evaluation, checkpoints, log).
rt::TrainOptions runOptions() {
  rt::TrainOptions o;
  o.data = data;
  o.evalData = evalData;
  o.init = initWeights;
  o.saveWeights = saveWeights;
  o.dataDir = dataDir;
  o.steps = steps;
  o.epochs = epochs;
  o.evalEvery = evalEvery;
  o.evalBatches = evalBatches;
  o.checkpointDir = checkpointDir;
  o.checkpointEvery = checkpointEvery;
  o.keepCheckpoints = keepCheckpoints;
  o.resume = resume;
  o.seed = seed;
  o.logFile = logFile;
  o.printEvery = printEvery;
  o.syntheticExamples = synthExamples;
  // This process's place in a data-parallel run (one rank of one without
  // mpirun).
  rt::setCommTrainOptions(o, verifyRanks);
#ifdef LPC_HAVE_CUDA_RUNTIME
  if (device == "cuda") // the step's collectives go through NCCL
    o.commSent = rtc::cudaCommTraffic;
#endif
  return o;
}

/// "bf16 (2 buckets, 7.11 MiB of f32)": how lpc-data-parallel sends the train
/// step's gradients.
std::string bucketSummary(ModuleOp module) {
  int64_t buckets = 0, elements = 0;
  std::string wire = "fp32";
  module.walk([&](mlir::lpc::AllReduceOp op) {
    if (!op->hasAttr("lpc.bucket"))
      return;
    ++buckets;
    elements += op.getInput().getType().getNumElements();
    wire = mlir::lpc::stringifyPrecision(op.getCommPrecision()).str();
  });
  double bytes = double(elements) * 4;
  std::string size = bytes < 1048576.0
                         ? llvm::formatv("{0:f1} KiB", bytes / 1024.0).str()
                         : llvm::formatv("{0:f2} MiB", bytes / 1048576.0).str();
  return llvm::formatv("{0} ({1} bucket{2}, {3} of f32)", wire, buckets,
                       buckets == 1 ? "" : "s", size)
      .str();
}

/// What must agree across the ranks of a data-parallel run: the built step
/// (model, precision, optimizer, lr, step count: all in the module, printed
/// without locations, so that copies of one file at other paths agree) and
/// the settings that choose the batches and the start. Paths (data
/// directory, outputs) may differ between machines; the data kind may not.
uint64_t stepHash(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().enableDebugInfo(false));
  os << "\n"
     << llvm::formatv("{0}|{1}|{2}|{3:e17}|{4}|{5}|{6}|{7}|{8}|{9}|{10}|{11}|{12}",
                      StringRef(data).split(':').first,
                      StringRef(evalData).split(':').first, steps.getValue(),
                      epochs.getValue(), evalEvery.getValue(),
                      evalBatches.getValue(), seed.getValue(),
                      synthExamples.getValue(), !resume.empty(),
                      !initWeights.empty(), device.getValue(),
                      gpuArch.getValue(), tf32.getValue());
  return llvm::xxh3_64bits(StringRef(text));
}

int fail(const llvm::Twine &msg) {
  // One write per line: under mpirun the ranks' stderr lines interleave.
  llvm::errs() << ("lpc-run: error: " + msg + "\n").str();
  return 1;
}

/// Where a config file set an option ("run.yaml:3"), for error messages.
std::map<std::string, std::string> configOrigin;

/// " (set in FILE:LINE)" for an option that came from the config file.
std::string origin(llvm::StringRef option) {
  auto it = configOrigin.find(option.str());
  return it == configOrigin.end() ? "" : " (set in " + it->second + ")";
}

/// The 1-based line of the first `"key"` in a JSON text (llvm::json keeps
/// no positions; a key is unique in a valid config).
unsigned jsonKeyLine(llvm::StringRef text, llvm::StringRef key) {
  size_t at = text.find(("\"" + key + "\"").str());
  return at == llvm::StringRef::npos ? 0 : 1 + text.take_front(at).count('\n');
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
  std::vector<unsigned> lines; // of each kv entry
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
      lines.push_back(jsonKeyLine(text, k));
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
      lines.push_back(sm.FindLineNumber(k->getSourceRange().Start));
    }
    if (stream.failed()) {
      fail(path + ": invalid YAML");
      return false;
    }
  }
  auto &opts = cl::getRegisteredOptions();
  for (size_t i = 0; i < kv.size(); ++i) {
    const auto &[k, v] = kv[i];
    std::string at = path + (lines[i] ? ":" + std::to_string(lines[i]) : "");
    auto found = opts.find(k);
    if (found == opts.end() || k == "config" ||
        !llvm::is_contained(found->second->Categories, &cat)) {
      fail(at + ": unknown option '" + k + "' (see lpc-run --help)");
      return false;
    }
    cl::Option *o = found->second;
    if (o->getNumOccurrences() > 0)
      continue; // the command line wins
    if (o->addOccurrence(0, k, v)) {
      fail(at + ": bad value '" + v + "' for option '" + k + "'");
      return false;
    }
    configOrigin[k] = at;
  }
  return true;
}

int runMain(int argc, char **argv);

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
  // Under mpirun: one rank of a data-parallel run (MPI_Init_thread here,
  // MPI_Finalize at the end). A plain lpc-run never touches MPI.
  if (rt::Error e = rt::commInit(&argc, &argv))
    return fail(e.message());
  int rc = runMain(argc, argv);
  if (rc != 0)
    rt::commAbortAll(rc); // the other ranks must not wait for this one
  rt::commFinalize();
  return rc;
}

namespace {

int runMain(int argc, char **argv) {
  registerAllPasses();
  mlpc::registerLpcPasses();
  mlpc::registerLpcConversionPasses();
  mlpc::registerLpcPipelines();
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "lpc-run: train an lpc model, compiled for this machine's CPU or, with "
      "--device=cuda, for an NVIDIA GPU\n\n"
      "  lpc-run examples/mlp.mlir --mixed-precision=bf16 --epochs=1\n"
      "  lpc-run examples/gpt.mlir --data=text:corpus.txt --steps=500\n"
      "  lpc-run examples/mlp.mlir --device=cuda --mixed-precision=fp8 "
      "--emit-artifact=mlp.json\n"
      "  lpc-run mlp.json --device=cuda        (a compiled artifact)\n");
  if (modelFile.empty())
    return fail("no model given (lpc-run MODEL.mlir [options]; see --help)");
  if (!configFile.empty() && !applyConfig(configFile))
    return 1;
  {
    // Every numeric option in range: a negative --steps must not train an
    // epoch, a negative --lr must not train at all.
    struct Range {
      const char *name;
      bool ok;
      const char *allowed;
      std::string value;
    };
    auto str = [](double v) { return llvm::formatv("{0}", llvm::format("%g", v)).str(); };
    Range ranges[] = {
        {"steps", steps >= 0, "an integer >= 0 (0: --epochs decides)",
         std::to_string(steps)},
        {"epochs", epochs > 0 && std::isfinite(epochs), "a number > 0",
         str(epochs)},
        {"batch", batch >= 0, "an integer >= 0", std::to_string(batch)},
        {"lr", lr >= 0 && std::isfinite(lr), "a finite number >= 0", str(lr)},
        {"eval-every", evalEvery >= 0, "an integer >= 0 (0: at the end only)",
         std::to_string(evalEvery)},
        {"eval-batches", evalBatches >= 0, "an integer >= 0 (0: all)",
         std::to_string(evalBatches)},
        {"checkpoint-every", checkpointEvery >= 0,
         "an integer >= 0 (0: at the end only)",
         std::to_string(checkpointEvery)},
        {"keep-checkpoints", keepCheckpoints >= 1, "an integer >= 1",
         std::to_string(keepCheckpoints)},
        {"print-every", printEvery >= 1, "an integer >= 1",
         std::to_string(printEvery)},
        {"synthetic-examples", synthExamples >= 1, "an integer >= 1",
         std::to_string(synthExamples)},
        {"cpu-threads", cpuThreads >= 0 && cpuThreads <= 4096,
         "an integer in [0, 4096] (0: OMP_NUM_THREADS or every CPU)",
         std::to_string(cpuThreads)},
    };
    for (const Range &r : ranges)
      if (!r.ok)
        return fail("--" + llvm::Twine(r.name) + "=" + r.value + origin(r.name) +
                    ": must be " + r.allowed);
    if (checkpointDir.empty())
      for (const char *o : {"checkpoint-every", "keep-checkpoints"})
        if (cl::getRegisteredOptions()[o]->getNumOccurrences())
          return fail("--" + llvm::Twine(o) + origin(o) +
                      " needs --checkpoint-dir");
    if (resume == "latest" && checkpointDir.empty())
      return fail("--resume=latest" + origin("resume") +
                  " needs --checkpoint-dir");
  }
  ::lpc::rt::setGemmThreads(static_cast<int>(cpuThreads));
  if (device != "cpu" && device != "cuda")
    return fail("--device must be cpu or cuda, got '" + device + "'");
  if (!profileOps.empty() && device == "cuda" &&
      !llvm::StringRef(modelFile).ends_with(".json"))
    return fail("--profile-ops on a GPU times a compiled CUDA artifact (lpc-run "
                "ARTIFACT.json --device=cuda --profile-ops=FILE); compile one with "
                "--emit-artifact");
  if (!profileOps.empty()) {
    // Said before training, not after it: the file is written at the end.
    llvm::StringRef dir = llvm::sys::path::parent_path(profileOps.getValue());
    if (dir.empty())
      dir = ".";
    if (!llvm::sys::fs::is_directory(dir) ||
        llvm::sys::fs::access(dir, llvm::sys::fs::AccessMode::Write))
      return fail("--profile-ops=" + profileOps + origin("profile-ops") +
                  ": its directory " + dir.str() +
                  " does not exist or is not writable");
  }
  // Data parallelism: every rank of an MPI run computes the same step on
  // its part of each global batch; the gradients are averaged.
  const int ranks = rt::commSize(), rank = rt::commRank();
  if (!(commTimeout >= 0))
    return fail(llvm::formatv("--comm-timeout={0:f1}", commTimeout.getValue()) +
                origin("comm-timeout") + ": must be 0 (no limit) or more");
  if (ranks > 1 && dataParallel.getNumOccurrences() && !dataParallel)
    return fail(llvm::formatv("--data-parallel=false{0}, but mpirun started "
                              "{1} ranks: they would train {1} different "
                              "models",
                              origin("data-parallel"), ranks));
  const bool parallel = dataParallel || ranks > 1;
  static const char *const kWires[] = {"fp32", "bf16", "fp16", "fp8",
                                       "fp8_e4m3", "fp8_e5m2"};
  if (!llvm::is_contained(kWires, StringRef(commPrecision)))
    return fail("--comm-precision='" + commPrecision + "'" +
                origin("comm-precision") +
                ": must be fp32, bf16, fp16, fp8, fp8_e4m3 or fp8_e5m2");
  if (verifyRanks < 0)
    return fail(llvm::formatv("--verify-ranks={0}", verifyRanks.getValue()) +
                origin("verify-ranks") + ": must be 0 (never) or more");
  if (!(bucketMb >= 0) || !std::isfinite(bucketMb)) {
    std::string value;
    llvm::raw_string_ostream(value) << llvm::format("%g", bucketMb.getValue());
    return fail("--bucket-mb=" + value + origin("bucket-mb") +
                ": must be 0 (one collective per gradient) or more");
  }
  if (zeroStage != 0 && zeroStage != 1)
    return fail(llvm::formatv("--zero={0}", zeroStage.getValue()) +
                origin("zero") + ": must be 0 or 1 (ZeRO stage)");
  if (zeroStage == 1 && !parallel)
    return fail("--zero=1" + origin("zero") +
                " shards the optimizer between the ranks of a data-parallel "
                "run: use it under mpirun, or with --data-parallel");
  // The GPU's collectives are NCCL's: bf16 and fp16 natively, FP8 as bytes
  // between compiled scale / sum code built for this run's rank count
  // (lpc-native-wire-collectives{ranks}), which the CPU can run too.
  const bool fp8Wire = StringRef(commPrecision).starts_with("fp8");
  if (wireKernels && (device != "cpu" || !fp8Wire || !parallel))
    return fail("--wire-kernels" + origin("wire-kernels") +
                " runs the GPU's FP8 wire on the CPU: it needs --device=cpu, "
                "--comm-precision=fp8 or fp8_e5m2 and a data-parallel run");
  std::string wirePass =
      parallel && fp8Wire && (device == "cuda" || wireKernels)
          ? llvm::formatv("lpc-native-wire-collectives{{ranks={0}}", ranks)
                .str()
          : std::string();

  if (!emitArtifact.empty() && device != "cuda")
    return fail("--emit-artifact needs --device=cuda");
  if (tf32 && device != "cuda")
    return fail("--tf32 needs --device=cuda (the CPU's f32 GEMMs are f32)");
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

  // A precompiled CUDA artifact (lpc-run ARTIFACT.json --device=cuda): the
  // same path as the runtime-only lpc-run.
  if (llvm::StringRef(modelFile).ends_with(".json")) {
    if (device != "cuda")
      return fail(modelFile + ": a CUDA artifact runs with --device=cuda");
#ifdef LPC_HAVE_CUDA_RUNTIME
    // Without --steps or --epochs: the steps it was compiled for.
    rt::commSetTimeout(commTimeout);
    rt::TrainOptions o = runOptions();
    o.epochs = epochs.getNumOccurrences() ? epochs.getValue() : 0;
    return rtc::trainArtifact(modelFile, o, profileOps);
#endif
  }

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

  // The model's data inputs decide the data source. Tensor data
  // (--data=tensors:) feeds any inputs by name; the other sources need a
  // classifier (features + labels) or a language model (tokens + labels).
  bool tensorData = llvm::StringRef(data).starts_with("tensors:");
  mlpc::InputOp featIn, labelIn, tokenIn;
  std::vector<rt::InputSpec> inputSpecs;
  for (auto in : fwd.getOps<mlpc::InputOp>()) {
    auto type = in.getType();
    rt::InputSpec spec{in.getName().str(),
                       type.getElementType().isInteger(32) ? rt::DType::I32
                                                            : rt::DType::F32,
                       std::vector<int64_t>(type.getShape().begin(),
                                            type.getShape().end())};
    if (spec.dtype == rt::DType::I32)
      if (auto rows = ref::embeddingIdBound(in.getResult()))
        spec.idBound = *rows;
    inputSpecs.push_back(spec);
    switch (in.getKind()) {
    case mlpc::InputKind::features: featIn = in; break;
    case mlpc::InputKind::labels: labelIn = in; break;
    case mlpc::InputKind::tokens: tokenIn = in; break;
    case mlpc::InputKind::targets:
      if (!tensorData)
        return fail(modelFile + ": a model with regression targets trains on "
                                "--data=tensors:PATH");
      break;
    }
  }
  bool textModel = bool(tokenIn);
  if (inputSpecs.empty() || inputSpecs.front().shape.empty())
    return fail(modelFile + ": the model has no batched input (lpc.input)");
  if (!tensorData && (!labelIn || (!featIn && !tokenIn)))
    return fail(modelFile + ": lpc-run trains classifiers (features + labels) "
                            "and language models (tokens + labels) on its "
                            "own data sources; other models on "
                            "--data=tensors:PATH");
  int64_t modelBatch =
      featIn || tokenIn ? (textModel ? tokenIn : featIn).getType().getDimSize(0)
                        : inputSpecs.front().shape.front();
  if (batch != 0 && batch != modelBatch)
    return fail(llvm::formatv("--batch={0} but {1} was built for batch {2}; "
                              "regenerate it (e.g. lpc-model ... --batch={0})",
                              batch.getValue(), modelFile, modelBatch));

  // The loop's view of the model, and the data (the number of steps
  // decides the LR schedule's horizon, so it is known before compiling).
  rt::ModelInfo info;
  info.name = model;
  info.batch = modelBatch;
  info.textModel = textModel;
  info.inputs = inputSpecs;
  if (labelIn)
    info.labelName = labelIn.getName().str();
  if (featIn) {
    info.featName = featIn.getName().str();
    info.features = featIn.getType().getShape().back();
  }
  if (tokenIn) {
    info.tokenName = tokenIn.getName().str();
    info.seqLen = tokenIn.getType().getDimSize(1);
  }
  if (!labelIn)
    info.classes = 0;
  else if (auto b = ref::integerInputBound(labelIn.getResult()))
    info.classes = *b;
  else if (textModel)
    info.classes = 0; // vocabulary unknown: the text is not checked against it
  for (auto p : fwd.getOps<mlpc::ParamOp>())
    info.params[p.getName().str()] = ref::toRuntimeInit(ref::InitSpec::fromOp(p));
  rt::TrainOptions topt = runOptions();
  topt.mixedPrecision = mixedPrecision;
  topt.recipe = recipe;
  topt.device = device;
  topt.lr = lr;
  {
    // Only for the logged lr: read what lpc-autodiff was told.
    llvm::StringRef extra = autodiffExtra;
    llvm::SmallVector<llvm::StringRef> parts;
    extra.split(parts, ' ', -1, false);
    for (llvm::StringRef p : parts) {
      auto [k, v] = p.split('=');
      if (k == "lr-schedule")
        topt.lrSchedule = v.str();
      else if (k == "warmup-steps")
        v.getAsInteger(10, topt.warmupSteps);
      else if (k == "min-lr")
        v.getAsDouble(topt.minLr);
    }
  }
  auto trainer = rt::Trainer::create(info, topt);
  if (!trainer)
    return fail(trainer.error().message());
  int64_t totalSteps = (*trainer)->totalSteps();

  // Compile.
  auto tc = std::chrono::steady_clock::now();
  std::string autodiff =
      llvm::formatv("lpc-autodiff{{optimizer={0} lr={1:e16} eval=true "
                    "total-steps={2} {3}}",
                    optimizer.getValue(), lr.getValue(), totalSteps,
                    autodiffExtra.getValue())
          .str();
  // Several ranks agree on every FP8 scale: each amax is the max over the
  // ranks (unless the recipe says otherwise).
  std::string mpOptions = recipe;
  if (parallel && !StringRef(recipe).contains("reduce-amax"))
    mpOptions = "reduce-amax=true " + mpOptions;
  std::string dataParallelPass =
      llvm::formatv("lpc-data-parallel{{bucket-mb={0:e16} comm-precision={1} "
                    "zero={2} ranks={3}}",
                    bucketMb.getValue(), commPrecision.getValue(),
                    zeroStage.getValue(), ranks)
          .str();
  std::string pipeline = autodiff + (parallel ? "," + dataParallelPass : "") +
                         ",lpc-mixed-precision{policy=" + mixedPrecision +
                         " " + mpOptions + "}";
  // The CUDA artifact runs fused attention through cuDNN (bf16/f16, no
  // mask, head dims of cuDNN's): the others become the unfused graph first.
  // Not part of the recorded pipeline: it changes how the step computes,
  // not what it trains (the same state), so checkpoints move between
  // devices.
  std::string decompose =
      "lpc-decompose-attention{policy=" + mixedPrecision + "}";
  {
    // Each half parsed on its own so that a bad value is blamed on the flag
    // that brought it (the passes check their options when parsed).
    PassManager pm(&ctx);
    if (device == "cuda" &&
        failed(parsePassPipeline(decompose, pm, llvm::errs())))
      return fail("--mixed-precision=" + mixedPrecision +
                  ": not a policy lpc-decompose-attention knows");
    if (failed(parsePassPipeline(autodiff, pm, llvm::errs())))
      return fail("--autodiff='" + autodiffExtra + "'" + origin("autodiff") +
                  " (with --optimizer, --lr): not valid lpc-autodiff options "
                  "(see above; lpc-opt --help lists them)");
    if (parallel && failed(parsePassPipeline(dataParallelPass, pm,
                                             llvm::errs())))
      return fail("lpc-data-parallel is not registered");
    if (failed(parsePassPipeline("lpc-mixed-precision{policy=" +
                                     mixedPrecision + " " + mpOptions + "}",
                                 pm, llvm::errs())))
      return fail("--recipe='" + recipe + "'" + origin("recipe") +
                  ": not valid lpc-mixed-precision options (see above; "
                  "lpc-opt --help lists them)");
    if (failed(pm.run(*module)))
      return fail("building the train step failed (pipeline: " + pipeline +
                  ")");
  }
  // Read before lpc-native-wire-collectives spells the FP8 buckets out.
  std::string buckets = parallel ? bucketSummary(*module) : std::string();
  if (!wirePass.empty()) {
    // Like the attention decomposition, not recorded: how the gradients
    // travel, not what the step trains.
    PassManager pm(&ctx);
    if (failed(parsePassPipeline(wirePass, pm, llvm::errs())) ||
        failed(pm.run(*module)))
      return fail("building the train step failed (" + wirePass + ")");
  }
  // Every rank must train the same step on the same stream of batches, or
  // the averaged gradients mean nothing (and a rank whose step has other
  // collectives would hang the others): compare a hash of what each built.
  if (ranks > 1) {
    rt::commSetTimeout(commTimeout);
    uint64_t own = stepHash(*module);
    uint64_t root = rt::commBroadcastFromRoot(own);
    bool differs = own != root;
    if (differs)
      fail(llvm::formatv(
          "rank {0}: its train step or settings differ from rank 0's (hash "
          "{1:x-} against {2:x-}): every rank must run the same model file "
          "with the same options (precision, recipe, optimizer, lr, steps, "
          "seed, data kind, device)",
          rank, own, root));
    if (rt::commAny(differs)) {
      if (rank == 0)
        fail("the ranks built different train steps (see above); stopping "
             "before training");
      // The ranks leave together: a rank that exits (non-zero) first can
      // have mpirun end the others before rank 0 has said why.
      rt::commAny(false);
      return 1;
    }
  }
  std::unique_ptr<rt::StepFunction> stepFn, evalFn;
  std::string names[] = {model + "_train_step", model + "_eval"};
  bool fromCache = false;
  std::string deviceLine =
      llvm::formatv("{0} threads", ::lpc::rt::gemmThreads()).str();
  CPUStep *profiledStep = nullptr;
  if (device == "cpu") {
    cpu::CompileOptions copts;
    if (!cacheDir.empty())
      copts.cacheDir = cacheDir == "off" ? std::string() : cacheDir.getValue();
    fromCache = true;
    for (int i = 0; i < 2; ++i) {
      // --profile-ops: the train step with a timer call between its ops
      // (such builds are never cached).
      copts.profile = i == 0 && !profileOps.empty();
      auto f = cpu::CompiledFunction::compile(*module, names[i], copts);
      if (!f)
        return fail(llvm::toString(f.takeError()));
      fromCache = fromCache && (*f)->cached();
      auto step = std::make_unique<CPUStep>(
          std::move(*f), copts.profile ? kProfileWarmup : -1);
      if (copts.profile)
        profiledStep = step.get();
      (i == 0 ? stepFn : evalFn) = std::move(step);
    }
  } else {
    mlpc::gpu::ArtifactOptions ao;
    ao.chip = gpuArch;
    ao.tf32 = tf32;
    ao.train = trainSection(info, topt, totalSteps, pipeline);
    auto art = mlpc::gpu::compileArtifact(*module, names, ao);
    if (!art)
      return fail("--device=cuda: " + llvm::toString(art.takeError()));
    if (!emitArtifact.empty()) {
      // Under mpirun (a step built for that rank count) every rank built
      // the same bytes (compared above): rank 0 writes them.
      if (rank != 0)
        return 0;
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
    if (!openCudaSteps(*art, names, stepFn, evalFn, deviceLine, why)) {
      // Exit 2 like lpc-cuda-check: no usable GPU (or driver) here.
      fail("--device=cuda: " + why);
      return 2;
    }
  }
  double compileSecs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - tc)
          .count();
  (*trainer)->setPipeline(pipeline);
  if (rank == 0 && parallel)
    llvm::errs() << llvm::formatv(
        "lpc-run: data parallel over {0} rank{1} (MPI): global batch {2} = "
        "{0} x {3}; gradients averaged in {4}, loss in fp32\n",
        ranks, ranks == 1 ? "" : "s", modelBatch * ranks, modelBatch,
        buckets);
  if (rank == 0)
    llvm::errs() << llvm::formatv(
      "lpc-run: compiled @{0}_train_step and @{0}_eval ({1} precision) in "
      "{2:f2} s{3}; {4}\n",
      model, mixedPrecision.getValue(), compileSecs,
      fromCache ? " (from the compile cache)" : "", deviceLine);

  int status = (*trainer)->run(*stepFn, *evalFn, compileSecs);
  // A failed run writes what it timed, if anything (its error said why).
  if (profiledStep && rank == 0 &&
      (status == 0 || profiledStep->timedRuns() > 0) &&
      !writeCPUOpProfile(profileOps, model + "_train_step", *profiledStep))
    status = status ? status : 1;
  return status;
}

} // namespace
