//===- lpc-gradcheck.cpp - checks lpc-autodiff against finite differences -===//
//
// For every model function in a file (one that declares lpc.param ops and
// returns a scalar loss):
//   1. runs --lpc-autodiff="optimizer=none" in process, giving @<f>_grad;
//   2. evaluates it with the reference evaluator in double precision
//      (f32 values are not rounded) on random parameters and inputs;
//   3. compares every gradient element (or a random sample of them) with a
//      central finite difference of the forward function, also in double.
// It prints one line per parameter and fails (exit 1) when any element is off
// by more than atol + rtol * max(|autodiff|, |finite difference|).
//
// With --trajectory=N it instead runs the train step built by
// --lpc-autodiff="<--autodiff options>" N times, threading the state, and
// prints the initial state, the inputs, and the loss and state after every
// step as JSON, for an independent re-computation (test/Reference/*.py).
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcDialect.h"
#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Pipelines/Pipelines.h"
#include "lpc/Reference/Evaluator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/ScopeExit.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::lpc;
namespace ref = mlir::lpc::ref;

static llvm::cl::OptionCategory toolOptions("lpc-gradcheck options");
static llvm::cl::opt<std::string> inputFile(llvm::cl::cat(toolOptions), llvm::cl::Positional,
                                            llvm::cl::desc("<model.mlir>"),
                                            llvm::cl::Required);
static llvm::cl::opt<std::string>
    functionName(llvm::cl::cat(toolOptions), "function", llvm::cl::desc("check only this function"),
                 llvm::cl::init(""));
static llvm::cl::opt<uint64_t> seed(llvm::cl::cat(toolOptions), "seed", llvm::cl::desc("random seed"),
                                    llvm::cl::init(1));
static llvm::cl::opt<double>
    eps(llvm::cl::cat(toolOptions), "eps", llvm::cl::desc("finite-difference step"), llvm::cl::init(1e-6));
static llvm::cl::opt<double> relTol(llvm::cl::cat(toolOptions), "rtol", llvm::cl::desc("relative tolerance"),
                                  llvm::cl::init(1e-5));
static llvm::cl::opt<double> absTol(llvm::cl::cat(toolOptions), "atol", llvm::cl::desc("absolute tolerance"),
                                  llvm::cl::init(1e-8));
static llvm::cl::opt<unsigned> maxElements(
    llvm::cl::cat(toolOptions), "max-elements",
    llvm::cl::desc("check at most this many elements per parameter "
                   "(a random sample; 0 = all)"),
    llvm::cl::init(48));
static llvm::cl::opt<double>
    paramStd(llvm::cl::cat(toolOptions), "param-std",
             llvm::cl::desc("std of the random parameter values (divided by "
                   "sqrt(fan_in) for matrices)"),
             llvm::cl::init(1.0));
static llvm::cl::opt<unsigned> trajectory(
    llvm::cl::cat(toolOptions), "trajectory",
    llvm::cl::desc("run the train step this many times and print JSON"),
    llvm::cl::init(0));
static llvm::cl::opt<std::string> extraPipeline(
    llvm::cl::cat(toolOptions), "pipeline",
    llvm::cl::desc("passes to run after --lpc-autodiff in --trajectory, e.g. "
                   "lpc-mixed-precision{policy=fp8}"),
    llvm::cl::init(""));
static llvm::cl::opt<std::string> autodiffOptions(
    llvm::cl::cat(toolOptions), "autodiff", llvm::cl::desc("options for --lpc-autodiff in --trajectory"),
    llvm::cl::init("optimizer=adamw"));

namespace {

ref::Tensor randomFor(Value v, uint64_t s, double stddev) {
  auto t = cast<RankedTensorType>(v.getType());
  ref::DType dt = *ref::dtypeOf(t.getElementType());
  return ref::randomTensor(dt, t.getShape(), s, stddev,
                          ref::integerInputBound(v).value_or(10));
}

/// Random values for every lpc.param and lpc.input of `fn`.
ref::Bindings randomBindings(func::FuncOp fn, uint64_t s, bool initParams) {
  ref::Bindings b;
  uint64_t k = 0;
  fn.walk([&](Operation *op) {
    if (auto p = dyn_cast<ParamOp>(op)) {
      // Matrices get std / sqrt(fan_in) so that activations stay O(1): with
      // huge logits the loss loses the digits finite differences need.
      RankedTensorType t = p.getType();
      double stddev = t.getRank() >= 2
                          ? paramStd / std::sqrt(double(t.getDimSize(0)))
                          : double(paramStd);
      b[p.getName().str()] =
          initParams ? ref::initializeParam(p, s)
                     : randomFor(p.getResult(), ref::hashName(s, p.getName()),
                                 stddev);
    }
    else if (auto in = dyn_cast<InputOp>(op))
      b[in.getName().str()] =
          randomFor(in.getResult(), ref::hashName(s + 7919, in.getName()), 1.0);
    ++k;
  });
  return b;
}

FailureOr<ModuleOp> runAutodiff(ModuleOp module, StringRef fn,
                                StringRef options, StringRef extra = {}) {
  ModuleOp clone = cast<ModuleOp>(module->clone());
  PassManager pm(module.getContext());
  std::string pipeline =
      ("lpc-autodiff{function=" + fn + " " + options + "}").str();
  if (!extra.empty())
    pipeline += ("," + extra).str();
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs()))) {
    clone->erase();
    return failure();
  }
  if (failed(pm.run(clone))) {
    clone->erase();
    return failure();
  }
  return clone;
}

/// Arguments of a train-step / grad function, looked up by their attributes.
FailureOr<std::vector<ref::Tensor>>
argsFor(func::FuncOp fn, const ref::Bindings &inputs,
        const std::map<std::pair<std::string, std::string>, ref::Tensor>
            &state) {
  std::vector<ref::Tensor> args;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    if (auto in = fn.getArgAttrOfType<StringAttr>(i, "lpc.input")) {
      auto it = inputs.find(in.str());
      if (it == inputs.end())
        return fn.emitError() << "no value for input '" << in.getValue()
                              << "'";
      args.push_back(it->second);
      continue;
    }
    auto st = fn.getArgAttrOfType<StringAttr>(i, "lpc.state");
    auto nm = fn.getArgAttrOfType<StringAttr>(i, "lpc.name");
    if (!st)
      return fn.emitError() << "argument " << i << " has no lpc.state";
    auto key = std::make_pair(st.str(), nm ? nm.str() : std::string());
    auto it = state.find(key);
    if (it != state.end()) {
      args.push_back(it->second);
      continue;
    }
    // State the gradcheck does not set itself (a buffer) starts from its
    // lpc.init, as lpc-run and lpc-jit start it.
    if (auto init = fn.getArgAttrOfType<FloatAttr>(i, "lpc.init")) {
      auto type = cast<RankedTensorType>(fn.getArgumentTypes()[i]);
      args.push_back(ref::Tensor::filled(*ref::dtypeOf(type.getElementType()),
                                         type.getShape(),
                                         init.getValueAsDouble()));
      continue;
    }
    return fn.emitError() << "no value for state " << key.first << " "
                          << key.second;
  }
  return args;
}

int checkGradients(ModuleOp module, func::FuncOp fwd) {
  auto adj = runAutodiff(module, fwd.getSymName(), "optimizer=none");
  if (failed(adj))
    return 1;
  llvm::scope_exit cleanup([&] { (*adj)->erase(); });
  auto gradFn = (*adj).lookupSymbol<func::FuncOp>(
      (fwd.getSymName() + "_grad").str());
  auto fwdClone = (*adj).lookupSymbol<func::FuncOp>(fwd.getSymName());

  ref::Bindings bindings = randomBindings(fwd, seed, /*initParams=*/false);
  ref::EvalOptions exact;
  exact.roundF32 = false;

  std::map<std::pair<std::string, std::string>, ref::Tensor> state;
  SmallVector<ParamOp> params(fwd.getOps<ParamOp>());
  for (ParamOp p : params)
    state[{"param", p.getName().str()}] = bindings[p.getName().str()];
  auto args = argsFor(gradFn, bindings, state);
  if (failed(args))
    return 1;
  auto out = ref::evaluate(gradFn, *args, {}, exact);
  if (failed(out))
    return 1;
  auto base = ref::evaluate(fwdClone, {}, bindings, exact);
  if (failed(base))
    return 1;
  double loss = (*out)[0].data[0];
  bool ok = true;
  llvm::outs() << llvm::formatv("@{0}: loss {1:e6}\n", fwd.getSymName(), loss);
  if (loss != (*base)[0].data[0]) {
    llvm::outs() << llvm::formatv(
        "  FAIL: loss of @{0}_grad ({1:e17}) != forward loss ({2:e17})\n",
        fwd.getSymName(), loss, (*base)[0].data[0]);
    ok = false;
  }

  std::mt19937_64 rng(seed * 2654435761u + 17);
  for (auto [k, p] : llvm::enumerate(params)) {
    const ref::Tensor &g = (*out)[k + 1];
    std::string name = p.getName().str();
    int64_t n = g.numElements();
    std::vector<int64_t> idx;
    if (maxElements == 0 || n <= (int64_t)maxElements) {
      for (int64_t i = 0; i < n; ++i)
        idx.push_back(i);
    } else {
      for (unsigned i = 0; i < maxElements; ++i)
        idx.push_back(std::uniform_int_distribution<int64_t>(0, n - 1)(rng));
    }
    double worstAbs = 0, worstRel = 0;
    int64_t bad = 0;
    for (int64_t i : idx) {
      ref::Bindings plus = bindings, minus = bindings;
      double x = bindings[name].data[i];
      double h = eps * std::max(1.0, std::fabs(x));
      plus[name].data[i] = x + h;
      minus[name].data[i] = x - h;
      auto lp = ref::evaluate(fwdClone, {}, plus, exact);
      auto lm = ref::evaluate(fwdClone, {}, minus, exact);
      if (failed(lp) || failed(lm))
        return 1;
      double fd = ((*lp)[0].data[0] - (*lm)[0].data[0]) / (2 * h);
      double ad = g.data[i];
      double diff = std::fabs(ad - fd);
      double scale = std::max(std::fabs(ad), std::fabs(fd));
      worstAbs = std::max(worstAbs, diff);
      if (scale > 0)
        worstRel = std::max(worstRel, diff / scale);
      if (!(diff <= absTol + relTol * scale)) {
        if (bad < 3)
          llvm::outs() << llvm::formatv(
              "  mismatch {0}[{1}]: autodiff {2:e9} vs finite difference "
              "{3:e9}\n",
              name, i, ad, fd);
        ++bad;
      }
    }
    llvm::outs() << llvm::formatv(
        "  {0,-6} {1}: {2} elements checked, max abs err {3:e2}, max rel err "
        "{4:e2}\n",
        bad ? "FAIL" : "ok", name, idx.size(), worstAbs, worstRel);
    ok &= bad == 0;
  }
  return ok ? 0 : 1;
}

llvm::json::Value toJson(const ref::Tensor &t) {
  llvm::json::Array data;
  for (double v : t.data)
    data.push_back(v);
  llvm::json::Array shape;
  for (int64_t d : t.shape)
    shape.push_back(d);
  return llvm::json::Object{{"dtype", ref::dtypeName(t.dtype)},
                            {"shape", std::move(shape)},
                            {"data", std::move(data)}};
}

int runTrajectory(ModuleOp module, func::FuncOp fwd) {
  auto adj =
      runAutodiff(module, fwd.getSymName(), autodiffOptions, extraPipeline);
  if (failed(adj))
    return 1;
  llvm::scope_exit cleanup([&] { (*adj)->erase(); });
  auto stepFn = (*adj).lookupSymbol<func::FuncOp>(
      (fwd.getSymName() + "_train_step").str());
  if (!stepFn) {
    llvm::errs() << "lpc-gradcheck: --trajectory needs a train step "
                    "(optimizer sgd or adamw)\n";
    return 1;
  }
  ref::Bindings bindings = randomBindings(fwd, seed, /*initParams=*/false);
  std::map<std::pair<std::string, std::string>, ref::Tensor> state;
  for (unsigned i = 0; i < stepFn.getNumArguments(); ++i) {
    auto st = stepFn.getArgAttrOfType<StringAttr>(i, "lpc.state");
    if (!st)
      continue;
    auto nm = stepFn.getArgAttrOfType<StringAttr>(i, "lpc.name");
    auto key = std::make_pair(st.str(), nm ? nm.str() : std::string());
    auto type = cast<RankedTensorType>(stepFn.getArgumentTypes()[i]);
    // Parameters start from the random bindings; other state from its
    // lpc.init value (FP8 scales, loss scale) or zero.
    double init = 0.0;
    if (auto a = stepFn.getArgAttrOfType<FloatAttr>(i, "lpc.init"))
      init = a.getValueAsDouble();
    if (key.first == "param")
      state[key] = bindings[key.second];
    else
      state[key] = ref::Tensor::filled(*ref::dtypeOf(type.getElementType()),
                                       type.getShape(), init);
  }
  ref::EvalOptions exact;
  exact.roundF32 = false;

  llvm::json::Object initial;
  for (auto &[key, t] : state)
    initial[key.first + ":" + key.second] = toJson(t);
  llvm::json::Object inputs;
  for (InputOp in : fwd.getOps<InputOp>())
    inputs[in.getName()] = toJson(bindings[in.getName().str()]);
  llvm::json::Array steps;
  for (unsigned s = 0; s < trajectory; ++s) {
    auto args = argsFor(stepFn, bindings, state);
    if (failed(args))
      return 1;
    exact.step = s;
    auto out = ref::evaluate(stepFn, *args, {}, exact);
    if (failed(out))
      return 1;
    llvm::json::Object rec;
    for (unsigned r = 0; r < stepFn.getNumResults(); ++r) {
      if (auto m = stepFn.getResultAttrOfType<StringAttr>(r, "lpc.metric")) {
        rec[m.getValue()] = (*out)[r].data[0];
        continue;
      }
      auto st = stepFn.getResultAttrOfType<StringAttr>(r, "lpc.state");
      auto nm = stepFn.getResultAttrOfType<StringAttr>(r, "lpc.name");
      auto key = std::make_pair(st.str(), nm ? nm.str() : std::string());
      state[key] = (*out)[r];
      rec[key.first + ":" + key.second] = toJson((*out)[r]);
    }
    steps.push_back(std::move(rec));
  }
  llvm::json::Object root{{"initial", std::move(initial)},
                          {"inputs", std::move(inputs)},
                          {"steps", std::move(steps)}};
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
               << "\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::lpc::registerLpcPasses();
  mlir::lpc::registerLpcPipelines();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  llvm::cl::HideUnrelatedOptions(toolOptions);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "lpc-gradcheck: checks --lpc-autodiff gradients against finite "
      "differences (reference evaluator, double precision)\n");

  DialectRegistry registry;
  registry.insert<LpcDialect, func::FuncDialect, arith::ArithDialect>();
  MLIRContext ctx(registry);
  llvm::SourceMgr sm;
  SourceMgrDiagnosticHandler handler(sm, &ctx);
  std::string err;
  auto buffer = mlir::openInputFile(inputFile, &err);
  if (!buffer) {
    llvm::errs() << "lpc-gradcheck: " << err << "\n";
    return 1;
  }
  sm.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sm, &ctx);
  if (!module)
    return 1;

  SmallVector<func::FuncOp> models;
  for (auto fn : module->getOps<func::FuncOp>())
    if ((functionName.empty() || fn.getSymName() == functionName) &&
        !fn.getOps<ParamOp>().empty())
      models.push_back(fn);
  if (models.empty()) {
    llvm::errs() << "lpc-gradcheck: " << inputFile << ": no "
                 << (functionName.empty() ? std::string("function with lpc.param ops")
                                          : "model named '" + functionName + "'")
                 << "\n";
    return 1;
  }
  int failures = 0;
  for (func::FuncOp fn : models)
    failures += trajectory ? runTrajectory(*module, fn)
                           : checkGradients(*module, fn);
  if (!trajectory)
    llvm::outs() << llvm::formatv("{0} of {1} models passed\n",
                                  models.size() - failures, models.size());
  return failures ? 1 : 0;
}
