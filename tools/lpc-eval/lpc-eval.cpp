//===- lpc-eval.cpp - run the reference evaluator on a model --------------===//
//
//   lpc-eval MODEL.mlir [--function=NAME] [--seed=N] [--step=N]
//            [--inputs=random] [--params=init] [--print=summary|full|json]
//            [--no-round-f32] [--time]
//     Binds every lpc.param to its initializer's values (seeded), every
//     lpc.input and function argument to random data, evaluates the function
//     with the reference evaluator and prints its results.
//
//   lpc-eval --convert=FMT [--saturate] --bits-table
//     Prints "0xBITS value" for every bit pattern of an 8- or 16-bit format.
//   lpc-eval --convert=FMT [--saturate] < numbers
//     Reads one number per line (decimal, hex float, inf, nan) and prints the
//     bits of its round-to-nearest-even conversion to FMT in hex.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcDialect.h"
#include "lpc/Dialect/LpcOps.h"
#include "lpc/Reference/Evaluator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::ref;
namespace cl = llvm::cl;

static cl::OptionCategory category("lpc-eval options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.mlir>"),
                                          cl::init(""), cl::cat(category));
static cl::opt<std::string>
    functionName("function",
                 cl::desc("Function to evaluate (default: the first one)"),
                 cl::init(""), cl::cat(category));
static cl::opt<uint64_t> seed("seed",
                              cl::desc("Seed of parameters and random inputs"),
                              cl::init(0), cl::cat(category));
static cl::opt<uint64_t> step("step",
                              cl::desc("Training step (mixed into dropout)"),
                              cl::init(0), cl::cat(category));
static cl::opt<std::string>
    inputsMode("inputs", cl::desc("Values of inputs and arguments: random"),
               cl::init("random"), cl::cat(category));
static cl::opt<std::string>
    paramsMode("params", cl::desc("Values of parameters: init (initializers)"),
               cl::init("init"), cl::cat(category));

enum class PrintMode { summary, full, json };
static cl::opt<PrintMode> printMode(
    "print", cl::desc("How to print the results"),
    cl::values(clEnumValN(PrintMode::summary, "summary",
                          "shape, dtype, min/max/mean, first values"),
               clEnumValN(PrintMode::full, "full", "every value, nested"),
               clEnumValN(PrintMode::json, "json",
                          "JSON, flat row-major data")),
    cl::init(PrintMode::summary), cl::cat(category));
static cl::opt<bool>
    noRoundF32("no-round-f32",
               cl::desc("Keep f32 values in double (no rounding to f32)"),
               cl::init(false), cl::cat(category));
static cl::opt<bool> timeIt("time",
                            cl::desc("Print the evaluation time to stderr"),
                            cl::init(false), cl::cat(category));

static cl::opt<std::string> convertTo(
    "convert",
    cl::desc("Conversion mode: round numbers from stdin to this format "
             "(f8E4M3FN, f8E5M2, f16, bf16, f32) and print their bits"),
    cl::init(""), cl::cat(category));
static cl::opt<bool> saturate("saturate",
                              cl::desc("With --convert: saturate overflow"),
                              cl::init(false), cl::cat(category));
static cl::opt<bool>
    bitsTable("bits-table",
              cl::desc("With --convert: print the value of every bit pattern"),
              cl::init(false), cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::outs().flush(); // what was printed so far comes first
  llvm::errs() << "lpc-eval: " << message << "\n";
  return 1;
}

//===----------------------------------------------------------------------===//
// Number formatting
//===----------------------------------------------------------------------===//

/// The shortest decimal that reads back as `v`: in `dtype` (after rounding to
/// it), or exactly as a double when `asDouble`. Plain or scientific notation,
/// whichever is shorter ("240", "0.1", "1e-05").
static std::string formatNumber(double v, DType dtype, bool asDouble) {
  if (std::isnan(v))
    return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  if (!isFloat(dtype))
    return std::to_string(static_cast<int64_t>(v));
  // The fewest significant digits that identify v; `decimal` is the double
  // nearest to that many-digit decimal, whose shortest form has those digits.
  double decimal = v;
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
    double back = std::strtod(buf, nullptr);
    if ((asDouble ? back : roundToFormat(back, dtype)) == v) {
      decimal = back;
      break;
    }
  }
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, decimal);
  return std::string(buf, ec == std::errc() ? end : buf);
}

static std::string formatJsonNumber(double v, DType dtype, bool asDouble) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v < 0 ? "-Infinity" : "Infinity";
  return formatNumber(v, dtype, asDouble);
}

//===----------------------------------------------------------------------===//
// --convert
//===----------------------------------------------------------------------===//

static int runConvert() {
  std::optional<DType> dtype = parseDType(convertTo);
  if (!dtype || !isFloat(*dtype))
    return fail("--convert: unknown float format '" + convertTo +
                "' (expected f8E4M3FN, f8E5M2, f16, bf16 or f32)");
  unsigned width = bitWidth(*dtype);
  unsigned hexDigits = width / 4;
  if (bitsTable) {
    if (width > 16)
      return fail("--bits-table: " + convertTo +
                  " has too many bit patterns; use an 8- or 16-bit format");
    for (uint64_t bits = 0; bits < (uint64_t(1) << width); ++bits)
      llvm::outs() << llvm::format_hex(bits, hexDigits + 2) << " "
                   << formatNumber(fromBits(bits, *dtype), *dtype,
                                   /*asDouble=*/true)
                   << "\n";
    return 0;
  }
  auto input = llvm::MemoryBuffer::getSTDIN();
  if (!input)
    return fail("cannot read stdin: " + input.getError().message());
  llvm::SmallVector<llvm::StringRef> lines;
  (*input)->getBuffer().split(lines, '\n');
  for (auto [number, rawLine] : llvm::enumerate(lines)) {
    llvm::StringRef line = rawLine.trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    std::string text = line.str();
    char *end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0')
      return fail("stdin line " + llvm::Twine(number + 1) +
                  ": cannot parse '" + text + "' as a number");
    llvm::outs() << llvm::format_hex(toBits(v, *dtype, saturate),
                                     hexDigits + 2)
                 << "\n";
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Binding parameters and inputs
//===----------------------------------------------------------------------===//

static FailureOr<Tensor> randomFor(Operation *where, Value v,
                                   uint64_t valueSeed) {
  auto type = cast<RankedTensorType>(v.getType());
  std::optional<DType> dtype = dtypeOf(type.getElementType());
  if (!dtype || !type.hasStaticShape())
    return where->emitError() << "lpc-eval: cannot make random data of type "
                              << type;
  return randomTensor(*dtype, type.getShape(), valueSeed, 1.0,
                      integerInputBound(v).value_or(10));
}

//===----------------------------------------------------------------------===//
// Printing results
//===----------------------------------------------------------------------===//

static void printNested(llvm::raw_ostream &os, const Tensor &t, bool asDouble,
                        size_t dim, int64_t &next) {
  if (dim == t.shape.size()) {
    os << formatNumber(t.data[next++], t.dtype, asDouble);
    return;
  }
  os << "[";
  for (int64_t i = 0; i < t.shape[dim]; ++i) {
    if (i)
      os << ", ";
    printNested(os, t, asDouble, dim + 1, next);
  }
  os << "]";
}

static void printResults(llvm::raw_ostream &os, func::FuncOp fn,
                         const std::vector<Tensor> &results) {
  // f32 values print as the shortest decimal that rounds back to them in
  // f32 ("0.1"); values of narrower formats, which are short dyadic
  // fractions, print exactly ("1.015625", not "1.016"); so do unrounded f32.
  auto asDouble = [](const Tensor &t) {
    return t.dtype != DType::f32 || noRoundF32;
  };
  if (printMode == PrintMode::json) {
    os << "{\n  \"function\": \"" << fn.getSymName() << "\",\n"
       << "  \"results\": [\n";
    for (auto [i, t] : llvm::enumerate(results)) {
      os << "    {\"dtype\": \"" << dtypeName(t.dtype) << "\", \"shape\": [";
      llvm::interleaveComma(t.shape, os);
      os << "], \"data\": [";
      llvm::interleaveComma(t.data, os, [&](double v) {
        os << formatJsonNumber(v, t.dtype, asDouble(t));
      });
      os << "]}" << (i + 1 < results.size() ? "," : "") << "\n";
    }
    os << "  ]\n}\n";
    return;
  }
  for (auto [i, t] : llvm::enumerate(results)) {
    os << "result #" << i << ": " << typeString(t);
    if (printMode == PrintMode::full) {
      os << "\n  ";
      int64_t next = 0;
      printNested(os, t, asDouble(t), 0, next);
      os << "\n";
      continue;
    }
    double mn = INFINITY, mx = -INFINITY, sum = 0.0;
    int64_t nans = 0, infs = 0;
    for (double v : t.data) {
      if (std::isnan(v)) {
        ++nans;
        continue;
      }
      if (std::isinf(v))
        ++infs;
      mn = std::min(mn, v);
      mx = std::max(mx, v);
      sum += v;
    }
    int64_t counted = static_cast<int64_t>(t.data.size()) - nans;
    if (counted > 0)
      os << " min=" << formatNumber(mn, t.dtype, asDouble(t))
         << " max=" << formatNumber(mx, t.dtype, asDouble(t)) << " mean="
         << formatNumber(sum / counted, DType::f32, /*asDouble=*/true);
    if (nans || infs)
      os << " nan=" << nans << " inf=" << infs;
    os << "\n  [";
    const size_t shown = 8;
    for (size_t k = 0; k < std::min(shown, t.data.size()); ++k)
      os << (k ? ", " : "") << formatNumber(t.data[k], t.dtype, asDouble(t));
    if (t.data.size() > shown)
      os << ", ... (" << t.data.size() << " values)";
    os << "]\n";
  }
}

//===----------------------------------------------------------------------===//
// Model mode
//===----------------------------------------------------------------------===//

static int runModel() {
  if (inputsMode != "random")
    return fail("--inputs: only 'random' is supported, got '" + inputsMode +
                "'");
  if (paramsMode != "init")
    return fail("--params: only 'init' is supported, got '" + paramsMode +
                "'");

  DialectRegistry registry;
  registry.insert<LpcDialect, func::FuncDialect, arith::ArithDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(inputFilename, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return 1;

  func::FuncOp fn;
  std::vector<std::string> names;
  for (auto f : module->getOps<func::FuncOp>()) {
    names.push_back(f.getSymName().str());
    if (!fn && (functionName.empty() ? !f.isExternal()
                                     : f.getSymName() == functionName))
      fn = f;
  }
  if (!fn) {
    if (functionName.empty())
      return fail("'" + inputFilename + "' has no function with a body");
    std::string list;
    for (auto &n : names)
      list += (list.empty() ? "" : ", ") + n;
    return fail("no function named '" + functionName + "' in '" +
                inputFilename + "' (functions: " +
                (list.empty() ? "none" : list) + ")");
  }

  Bindings bindings;
  bool ok = true;
  fn.walk([&](Operation *op) {
    if (auto param = dyn_cast<ParamOp>(op)) {
      bindings[param.getName().str()] = initializeParam(param, seed);
    } else if (auto input = dyn_cast<InputOp>(op)) {
      auto t = randomFor(op, input.getResult(),
                         hashName(seed, ("input:" + input.getName()).str()));
      if (failed(t))
        ok = false;
      else
        bindings[input.getName().str()] = std::move(*t);
    }
  });
  std::vector<Tensor> args;
  for (auto [i, arg] : llvm::enumerate(fn.getArguments())) {
    if (!isa<RankedTensorType>(arg.getType())) {
      fn.emitError() << "lpc-eval: argument #" << i << " has type "
                     << arg.getType() << "; only ranked tensors are supported";
      return 1;
    }
    auto t = randomFor(fn, arg, hashName(seed, "arg:" + std::to_string(i)));
    if (failed(t))
      return 1;
    args.push_back(std::move(*t));
  }
  if (!ok)
    return 1;

  EvalOptions opts;
  opts.roundF32 = !noRoundF32;
  opts.step = step;
  auto start = std::chrono::steady_clock::now();
  auto results = evaluate(fn, args, bindings, opts);
  auto stop = std::chrono::steady_clock::now();
  if (failed(results))
    return 1;
  if (timeIt)
    llvm::errs() << "lpc-eval: evaluated @" << fn.getSymName() << " in "
                 << llvm::format(
                        "%.3f",
                        std::chrono::duration<double>(stop - start).count())
                 << " s\n";
  printResults(llvm::outs(), fn, *results);
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "lpc-eval: evaluate an lpc model with the reference evaluator, or "
      "convert numbers to a float format\n");

  if (!convertTo.empty()) {
    if (!inputFilename.empty())
      return fail("--convert reads numbers from stdin; do not give a model "
                  "file");
    return runConvert();
  }
  if (saturate || bitsTable)
    return fail("--saturate and --bits-table need --convert=FORMAT");
  if (inputFilename.empty())
    return fail("no model file given (usage: lpc-eval MODEL.mlir [options], "
                "or lpc-eval --convert=FORMAT; see --help)");
  return runModel();
}
