//===- lpc-jit.cpp - compile a train step for the host and check it -------===//
//
// The CPU back end's test bench: builds the train step of a model
// (--lpc-autodiff plus an optional precision pipeline), compiles it with the
// CPU codegen pipeline into native code (ORC JIT, in process),
// runs a few steps on the model's initial parameters and random data, and
// compares every result of every step with the reference evaluator; or,
// with --op-check, checks every op of the compiled step on its own
// (lpc/Backend/OpCheck.h), which tells a rounding flip from a bug.
//
//===----------------------------------------------------------------------===//

#include "lpc/Backend/CPUBackend.h"
#include "lpc/Backend/OpCheck.h"
#include "lpc/Conversion/Passes.h"
#include "lpc/Dialect/LpcDialect.h"
#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Pipelines/Pipelines.h"
#include "lpc/Reference/Evaluator.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstring>

using namespace mlir;
using namespace mlir::lpc;
namespace ref = mlir::lpc::ref;

static llvm::cl::OptionCategory toolOptions("lpc-jit options");
static llvm::cl::opt<std::string> inputFile(llvm::cl::cat(toolOptions), llvm::cl::Positional,
                                            llvm::cl::desc("<model.mlir>"),
                                            llvm::cl::Required);
static llvm::cl::opt<std::string> autodiffOptions(
    llvm::cl::cat(toolOptions), "autodiff", llvm::cl::desc("options of --lpc-autodiff"),
    llvm::cl::init("optimizer=adamw"));
static llvm::cl::opt<std::string> extraPipeline(
    llvm::cl::cat(toolOptions), "pipeline",
    llvm::cl::desc("passes after --lpc-autodiff, e.g. "
                   "lpc-mixed-precision{policy=bf16}"),
    llvm::cl::init(""));
static llvm::cl::opt<unsigned> steps(llvm::cl::cat(toolOptions), "steps",
                                     llvm::cl::desc("train steps to run"),
                                     llvm::cl::init(2));
static llvm::cl::opt<uint64_t> seed(llvm::cl::cat(toolOptions), "seed", llvm::cl::desc("random seed"),
                                    llvm::cl::init(0));
static llvm::cl::opt<bool> check(
    llvm::cl::cat(toolOptions), "check", llvm::cl::desc("compare every step with the reference evaluator"),
    llvm::cl::init(true));
static llvm::cl::opt<double> f32Tol(
    llvm::cl::cat(toolOptions), "f32-tol",
    llvm::cl::desc("max |jit - ref| / max|ref| for f32 results"),
    llvm::cl::init(1e-4));
static llvm::cl::opt<double> lowTol(
    llvm::cl::cat(toolOptions), "low-tol", llvm::cl::desc("the same for bf16 / f16 / fp8 results"),
    llvm::cl::init(3e-2));
static llvm::cl::opt<std::string> functionName(
    llvm::cl::cat(toolOptions), "function",
    llvm::cl::desc("run this function on random arguments instead of a "
                   "model's train step (once, or --steps times on the same "
                   "arguments)"),
    llvm::cl::init(""));
static llvm::cl::opt<double> inputStd(
    llvm::cl::cat(toolOptions), "input-std", llvm::cl::desc("std of random float arguments (--function)"),
    llvm::cl::init(1.0));
static llvm::cl::opt<bool> exact(
    llvm::cl::cat(toolOptions), "exact", llvm::cl::desc("require bit-identical results (NaN == NaN)"),
    llvm::cl::init(false));
static llvm::cl::opt<unsigned> profileTop(
    llvm::cl::cat(toolOptions), "profile",
    llvm::cl::desc("time every lowered op and print the N most expensive "
                   "(0: off), as a share of the step time"),
    llvm::cl::init(0));
static llvm::cl::opt<unsigned> profileWarmup(
    llvm::cl::cat(toolOptions), "profile-warmup",
    llvm::cl::desc("steps --profile leaves out at the start: the first "
                   "step's buffers are allocated and first touched (page "
                   "faults), which can double its element-wise ops' times "
                   "(default 1; with no more steps than this, every step "
                   "is kept)"),
    llvm::cl::init(1));
enum class ProfileOrder { Time, Program };
static llvm::cl::opt<ProfileOrder> profileOrder(
    llvm::cl::cat(toolOptions), "profile-order",
    llvm::cl::desc("order of --profile's ops"),
    llvm::cl::values(
        clEnumValN(ProfileOrder::Time, "time", "most expensive first"),
        clEnumValN(ProfileOrder::Program, "program",
                   "as they run in the step (the N first)")),
    llvm::cl::init(ProfileOrder::Time));
static llvm::cl::opt<int64_t> parallelMinWork(
    llvm::cl::cat(toolOptions), "parallel-min-work",
    llvm::cl::desc("loop nests of at least this many innermost iterations "
                   "run on the runtime's threads (OMP_NUM_THREADS); 0: one "
                   "thread"),
    llvm::cl::init(cpu::CompileOptions::kDefaultParallelMinWork));
static llvm::cl::opt<bool> gpuLoopPasses(
    llvm::cl::cat(toolOptions), "gpu-loop-passes",
    llvm::cl::desc("also run the GPU pipeline's loop passes (two-level "
                   "reductions, single-thread serial code) in the CPU "
                   "lowering: checks their semantics against the reference"),
    llvm::cl::init(false));
static llvm::cl::opt<bool> gpuSizes(
    llvm::cl::cat(toolOptions), "gpu-sizes",
    llvm::cl::desc("with --gpu-loop-passes: split reductions and the "
                   "embedding gradient at the GPU pipeline's sizes instead "
                   "of down to the smallest (for models of realistic size)"),
    llvm::cl::init(false));
static llvm::cl::opt<bool> opCheck(
    llvm::cl::cat(toolOptions), "op-check",
    llvm::cl::desc("instead of comparing the step's results, compare every "
                   "op of the compiled step with the reference evaluator run "
                   "on the compiled values of its operands: each element "
                   "within half a spacing of its format of the exact value, "
                   "plus --op-check-slack (tells a rounding that flips with "
                   "the summation order from a bug)"),
    llvm::cl::init(false));
static llvm::cl::opt<double> opCheckSlack(
    llvm::cl::cat(toolOptions), "op-check-slack",
    llvm::cl::desc("error allowed beyond half a spacing, relative to the "
                   "largest exact value of the result (the f32 arithmetic "
                   "before a rounding)"),
    llvm::cl::init(cpu::OpCheckOptions().slack));
static llvm::cl::opt<bool> opCheckPlant(
    llvm::cl::cat(toolOptions), "op-check-plant-truncation",
    llvm::cl::desc("test of --op-check itself: check the exact values "
                   "truncated toward zero in place of the compiled bf16/f16/"
                   "fp8 results (must fail)"),
    llvm::cl::init(false), llvm::cl::Hidden);
static llvm::cl::opt<bool> printLLVM(
    llvm::cl::cat(toolOptions), "print-llvm-dialect", llvm::cl::desc("print the module before the JIT"),
    llvm::cl::init(false));

namespace {

int fail(const llvm::Twine &msg) {
  llvm::errs() << "lpc-jit: " << msg << "\n";
  return 1;
}

using StateKey = std::pair<std::string, std::string>;

/// The `top` most expensive ops over all steps (or the first `top` in
/// program order), with their share of the total, then the total per kind.
void printProfile(std::vector<cpu::ProfileEntry> entries, unsigned top,
                  ProfileOrder order, unsigned warmup) {
  double total = 0;
  for (const auto &e : entries)
    total += e.seconds;
  int64_t runs = entries.empty() ? 0 : entries.front().calls;
  std::vector<cpu::ProfileKindTotal> kinds = cpu::profileByKind(entries);
  if (order == ProfileOrder::Time)
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto &a, const auto &b) { return a.seconds > b.seconds; });
  auto perStep = [&](double s, int64_t calls) { return calls ? 1e3 * s / calls : 0.0; };
  auto share = [&](double s) { return total > 0 ? 100 * s / total : 0.0; };
  llvm::outs() << llvm::formatv(
      "profile: {0} ops, {1:f1} ms per step in them (mean over {2} step{4}{3})\n",
      entries.size(), perStep(total, runs), runs,
      warmup ? llvm::formatv(", after {0} warm-up step{1}", warmup,
                             warmup == 1 ? "" : "s")
                   .str()
             : std::string(),
      runs == 1 ? "" : "s");
  for (unsigned i = 0; i < entries.size() && i < top; ++i) {
    const auto &e = entries[i];
    llvm::outs() << llvm::formatv("  {0,8:f2} ms {1,5:f1}%  {2}\n",
                                  perStep(e.seconds, e.calls), share(e.seconds),
                                  e.label);
  }
  llvm::outs() << "profile by kind:\n";
  for (const cpu::ProfileKindTotal &k : kinds)
    llvm::outs() << llvm::formatv("  {0,8:f2} ms {1,5:f1}%  {2} ({3} op{4})\n",
                                  perStep(k.seconds, runs), share(k.seconds),
                                  k.kind, k.ops, k.ops == 1 ? "" : "s");
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAllPasses();
  lpc::registerLpcPasses();
  lpc::registerLpcConversionPasses();
  lpc::registerLpcPipelines();
  llvm::cl::HideUnrelatedOptions(toolOptions);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "lpc-jit: compile a model's train step for the host (ORC JIT) and "
      "check it against the reference evaluator\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<LpcDialect>();
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();

  llvm::SourceMgr sm;
  SourceMgrDiagnosticHandler handler(sm, &ctx);
  std::string err;
  auto buffer = openInputFile(inputFile, &err);
  if (!buffer)
    return fail(err);
  sm.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sm, &ctx);
  if (!module)
    return 1;

  std::string stepName;
  std::vector<ref::Tensor> args;
  std::map<StateKey, ref::Tensor> state;
  func::FuncOp step;
  if (!functionName.empty()) {
    step = module->lookupSymbol<func::FuncOp>(functionName);
    if (!step)
      return fail("no function @" + functionName);
    stepName = functionName;
    for (auto [i, t] : llvm::enumerate(step.getArgumentTypes())) {
      auto type = cast<RankedTensorType>(t);
      args.push_back(ref::randomTensor(
          *ref::dtypeOf(type.getElementType()), type.getShape(), seed + i,
          inputStd, ref::integerInputBound(step.getArgument(i)).value_or(10)));
    }
    // Once, unless --steps asks for more runs (on the same arguments: a
    // way to time one function warm).
    if (!steps.getNumOccurrences())
      steps = 1;
  } else {
  func::FuncOp fwd;
  for (auto fn : module->getOps<func::FuncOp>())
    if (!fn.getOps<ParamOp>().empty()) {
      fwd = fn;
      break;
    }
  if (!fwd)
    return fail(inputFile + ": no model (a function with lpc.param ops)");
  std::string fwdName = fwd.getSymName().str();
  ref::Bindings init;
  for (ParamOp p : fwd.getOps<ParamOp>())
    init[p.getName().str()] = ref::initializeParam(p, seed);
  uint64_t k = 0;
  for (InputOp in : fwd.getOps<InputOp>()) {
    auto t = in.getType();
    init[in.getName().str()] = ref::randomTensor(
        *ref::dtypeOf(t.getElementType()), t.getShape(), seed + 1000 + k++,
        1.0, ref::integerInputBound(in.getResult()).value_or(10));
  }

  {
    PassManager pm(&ctx);
    std::string pipeline = "lpc-autodiff{" + autodiffOptions + "}";
    if (!extraPipeline.empty())
      pipeline += "," + extraPipeline;
    if (failed(parsePassPipeline(pipeline, pm, llvm::errs())) ||
        failed(pm.run(*module)))
      return 1;
  }
  stepName = fwdName + "_train_step";
  step = module->lookupSymbol<func::FuncOp>(stepName);
  if (!step)
    return fail("no train step @" + stepName);

  // Initial state and inputs, by argument attributes.
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(step.getArgumentTypes()[i]);
    ref::DType dt = *ref::dtypeOf(type.getElementType());
    if (auto in = step.getArgAttrOfType<StringAttr>(i, "lpc.input")) {
      if (!init.count(in.str()))
        return fail("no data for input '" + in.getValue() + "'");
      args.push_back(init[in.str()]);
      continue;
    }
    auto st = step.getArgAttrOfType<StringAttr>(i, "lpc.state");
    auto nm = step.getArgAttrOfType<StringAttr>(i, "lpc.name");
    StateKey key{st ? st.str() : "", nm ? nm.str() : ""};
    double v = 0.0;
    if (auto a = step.getArgAttrOfType<FloatAttr>(i, "lpc.init"))
      v = a.getValueAsDouble();
    state[key] = key.first == "param" ? init[key.second]
                                      : ref::Tensor::filled(dt, type.getShape(), v);
    args.push_back(state[key]);
  }
  }

  cpu::CompileOptions copts;
  copts.profile = profileTop > 0;
  if (parallelMinWork < 0)
    return fail("--parallel-min-work must be >= 0");
  copts.parallelMinWork = parallelMinWork;
  copts.gpuLoopPasses = gpuLoopPasses;
  copts.gpuSizes = gpuSizes;
  if (printLLVM)
    copts.printLLVMDialect = &llvm::outs();
  if (opCheck && (exact || profileTop > 0 || !check))
    return fail("--op-check checks on its own: it takes no --exact, "
                "--profile or --check=false");
  if (!(opCheckSlack >= 0))
    return fail("--op-check-slack must be >= 0");
  std::unique_ptr<cpu::OpChecker> checker;
  std::unique_ptr<cpu::CompiledFunction> plain;
  if (opCheck) {
    auto c = cpu::OpChecker::compile(*module, stepName, copts);
    if (!c)
      return fail(llvm::toString(c.takeError()));
    checker = std::move(*c);
  } else {
    auto c = cpu::CompiledFunction::compile(*module, stepName, copts);
    if (!c)
      return fail(llvm::toString(c.takeError()));
    plain = std::move(*c);
  }
  const cpu::CompiledFunction &code = checker ? checker->compiled() : *plain;
  llvm::outs() << llvm::formatv("compiled @{0} in {1:f2} s{2}{3}\n", stepName,
                                code.compileSeconds(),
                                code.cached() ? " (cached)" : "",
                                checker ? llvm::formatv(", every op's results "
                                                        "returned ({0} values)",
                                                        checker->numProbes())
                                              .str()
                                        : "");
  cpu::OpCheckOptions checkOpts;
  checkOpts.slack = opCheckSlack;
  checkOpts.plantTruncation = opCheckPlant;
  if (opCheckPlant && !opCheck)
    return fail("--op-check-plant-truncation needs --op-check");

  unsigned nArgs = step.getNumArguments(), nRes = step.getNumResults();
  const auto &argSlots = code.args();
  const auto &resSlots = code.results();
  std::vector<std::vector<uint8_t>> in(nArgs), out(nRes);
  // The argument each state result replaces at the next step (-1: none).
  std::vector<int> nextArg(nRes, -1);
  for (unsigned r = 0; r < nRes; ++r) {
    auto st = step.getResultAttrOfType<StringAttr>(r, "lpc.state");
    if (!st)
      continue;
    auto nm = step.getResultAttrOfType<StringAttr>(r, "lpc.name");
    for (unsigned i = 0; i < nArgs; ++i) {
      auto ast = step.getArgAttrOfType<StringAttr>(i, "lpc.state");
      auto anm = step.getArgAttrOfType<StringAttr>(i, "lpc.name");
      if (ast && ast == st && anm == nm)
        nextArg[r] = static_cast<int>(i);
    }
  }
  // Without the reference (no --check, no --op-check), the state stays in
  // the step's byte buffers from step to step, as in lpc-run: converting
  // every parameter and moment to doubles and back took several times the
  // step itself. Only the other results (the metrics) are converted.
  const bool bytesOnly = !checker && !check;
  bool ok = true;
  for (unsigned s = 0; s < steps; ++s) {
    std::vector<ref::Tensor> results;
    std::optional<cpu::OpCheckResult> opResult;
    std::chrono::steady_clock::time_point r0;
    double secs = 0;
    if (checker) {
      // The checker packs and unpacks its own (larger) set of buffers.
      r0 = std::chrono::steady_clock::now();
      auto c = checker->run(args, s, checkOpts, results);
      if (!c)
        return fail("run: " + llvm::toString(c.takeError()));
      opResult = std::move(*c);
      secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - r0)
                 .count();
    } else {
      std::vector<const void *> argPtrs;
      std::vector<void *> resPtrs;
      for (unsigned i = 0; i < nArgs; ++i) {
        if (!bytesOnly || s == 0) {
          in[i].assign(argSlots[i].byteSize() + 1, 0);
          cpu::packTensor(args[i], in[i].data());
        }
        argPtrs.push_back(in[i].data());
      }
      for (unsigned r = 0; r < nRes; ++r) {
        out[r].assign(resSlots[r].byteSize() + 1, 0);
        resPtrs.push_back(out[r].data());
      }
      r0 = std::chrono::steady_clock::now();
      if (llvm::Error e = plain->run(argPtrs, resPtrs))
        return fail("run: " + llvm::toString(std::move(e)));
      // The step's time is the compiled function's alone, without the
      // harness's packing (with --check, the state goes through reference
      // tensors of doubles, which for a 124 M-parameter model costs more
      // than the step).
      secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - r0)
                 .count();
      if (profileTop > 0 && steps > profileWarmup && s + 1 == profileWarmup)
        plain->resetProfile(); // the warm-up's times left out
      for (unsigned r = 0; r < nRes; ++r) {
        if (bytesOnly && nextArg[r] >= 0) {
          // The next step's argument; an empty tensor stands for it here.
          std::swap(in[nextArg[r]], out[r]);
          results.emplace_back();
          continue;
        }
        results.push_back(cpu::unpackTensor(resSlots[r], out[r].data()));
      }
    }
    double loss = 0;
    for (unsigned r = 0; r < nRes; ++r)
      if (auto m = step.getResultAttrOfType<StringAttr>(r, "lpc.metric");
          m && m.getValue() == "loss")
        loss = results[r].data[0];
    if (functionName.empty())
      llvm::outs() << llvm::formatv("step {0}: loss {1:f6}, {2:f6} s\n", s,
                                    loss, secs);
    else
      llvm::outs() << llvm::formatv("ran @{0} in {1:f6} s\n", stepName, secs);
    if (opResult) {
      const cpu::OpCheckResult &c = *opResult;
      llvm::outs() << llvm::formatv(
          "  op check: {0} ops, {1} elements ({2} in bf16/f16/fp8): {3} "
          "roundings flipped in {4} ops, worst {5:f3} spacings; worst error "
          "beyond half a spacing {6:e2} of max|exact| (slack {7:e1}){8}\n",
          c.ops, c.elements, c.lowElements, c.flips, c.opsWithFlips,
          c.worstSpacings, c.worstExcess, checkOpts.slack,
          c.worstExcessAt.empty() ? "" : ", at " + c.worstExcessAt);
      for (const std::string &f : c.failures)
        llvm::outs() << "  WRONG " << f << "\n";
      if (c.wrong > static_cast<int64_t>(c.failures.size()))
        llvm::outs() << llvm::formatv("  ... {0} more wrong results\n",
                                      c.wrong - c.failures.size());
      if (c.wrong)
        ok = false;
    } else if (check) {
      ref::EvalOptions eo;
      eo.step = s;
      auto expect = ref::evaluate(step, args, {}, eo);
      if (failed(expect))
        return 1;
      for (unsigned r = 0; r < nRes; ++r) {
        const ref::Tensor &a = results[r], &e = (*expect)[r];
        double maxRef = 0, maxErr = 0;
        int64_t differ = 0;
        for (size_t i = 0; i < e.data.size(); ++i) {
          bool bothNaN = std::isnan(a.data[i]) && std::isnan(e.data[i]);
          if (bothNaN)
            continue;
          if (!(a.data[i] == e.data[i]) ||
              std::signbit(a.data[i]) != std::signbit(e.data[i]))
            ++differ;
          if (std::isfinite(e.data[i]))
            maxRef = std::max(maxRef, std::fabs(e.data[i]));
          double d = std::fabs(a.data[i] - e.data[i]);
          maxErr = std::max(maxErr, std::isnan(d) ? INFINITY : d);
        }
        double rel = maxRef > 0 ? maxErr / maxRef : maxErr;
        double tol = a.dtype == ref::DType::f32 ? f32Tol : lowTol;
        // The FP8 statistics are fractions of a tensor's elements that
        // saturate or underflow: an element at the threshold flips with
        // the last bit of its inputs (any summation order), so they
        // compare absolutely, within 0.1% of the elements.
        if (auto m = step.getResultAttrOfType<StringAttr>(r, "lpc.metric");
            m && (m.getValue() == "fp8_saturated" ||
                  m.getValue() == "fp8_underflow")) {
          rel = maxErr;
          tol = 1e-3;
        }
        if (!ref::isFloat(a.dtype) || exact)
          tol = 0;
        if (exact)
          rel = double(differ);
        if (!(rel <= tol)) {
          ok = false;
          std::string what;
          if (auto st = step.getResultAttrOfType<StringAttr>(r, "lpc.state"))
            what = st.str();
          if (auto nm = step.getResultAttrOfType<StringAttr>(r, "lpc.name"))
            what += " " + nm.str();
          if (auto m = step.getResultAttrOfType<StringAttr>(r, "lpc.metric"))
            what = "metric " + m.str();
          llvm::outs() << llvm::formatv(
              exact ? "  MISMATCH result #{0} ({1}): {2} elements differ\n"
                    : "  MISMATCH result #{0} ({1}): max |jit - ref| / "
                      "max|ref| = {2:e2} > {3:e1}\n",
              r, what, rel, tol);
        }
      }
    }
    // Thread the state: result (state, name) replaces the argument.
    if (!bytesOnly)
      for (unsigned r = 0; r < nRes; ++r)
        if (nextArg[r] >= 0)
          args[nextArg[r]] = results[r];
  }
  if (profileTop > 0)
    printProfile(code.profile(), profileTop, profileOrder,
                 steps > profileWarmup ? unsigned(profileWarmup) : 0);
  if (checker)
    llvm::outs() << (ok ? "every op matches the reference evaluator within "
                          "half a spacing and the slack\n"
                        : "FAIL: some op's results differ from the reference "
                          "evaluator\n");
  else if (check) {
    llvm::outs() << (ok ? "all results match the reference evaluator\n"
                        : "FAIL: results differ from the reference evaluator\n");
    // Under a low-precision policy one rounding that flips with the
    // summation order moves every result downstream of it.
    if (!ok && !exact && !extraPipeline.empty())
      llvm::outs() << "note: a bf16/fp16 rounding that flips with the "
                      "summation order can move results by 1e-4 to 2e-3; "
                      "--op-check tells such a flip from a bug\n";
  }
  return ok ? 0 : 1;
}
