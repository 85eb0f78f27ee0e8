//===- fuzz-model.cpp - libFuzzer target: lpc models through the passes ---===//
//
// Every input is an lpc model as MLIR text, optionally starting with the line
// `// config: N` that picks one of the pipelines below (default 0). The
// target parses and verifies it, then runs lpc-autodiff and
// lpc-mixed-precision (with lpc-data-parallel in some pipelines). Whatever
// the input, these must hold (a broken one aborts, and libFuzzer keeps the
// input):
//
//  - no crash, no memory error, no undefined behaviour (ASan, UBSan);
//  - a refused input says why: parsing, verifying or a pass that fails emits
//    at least one error, with a message (its location is the op's, which the
//    input chooses: `loc(unknown)` is valid, so a location is not checked);
//  - every pass leaves IR that verifies (checked after each pass, naming the
//    pass that broke it);
//  - what the passes produce prints and parses back to the same text.
//
// The custom mutator edits models the way a hand-edited or generated model
// goes wrong (an operand or a type changed, an attribute out of range or of
// the wrong kind, an op dropped or duplicated, a different pipeline) on the
// parsed IR, so that most mutants still parse and reach the verifiers and
// the passes; a quarter of the mutations are libFuzzer's byte mutations of
// the text, which reach the parser's error paths.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcDialect.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Pipelines/Pipelines.h"
#include "lpc/Support/FuzzCheck.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>

using namespace mlir;

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

// libMLIR/libLLVM are not instrumented: their inline allocator code in our
// (instrumented) objects poisons slabs that the library's copies hand out
// without unpoisoning. Manual poisoning off; ASan still finds every heap,
// stack and global error in lpc's code.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}


namespace {

/// The pipelines an input can pick. fp8-min-mnk=0 puts the small GEMMs of
/// the seeds in FP8 (by default only GEMMs of 2M multiply-adds are).
const char *const kPipelines[] = {
    "lpc-autodiff,lpc-mixed-precision{policy=no}",
    "lpc-autodiff{optimizer=sgd momentum=0.9 nesterov=true},"
    "lpc-mixed-precision{policy=bf16}",
    "lpc-autodiff{clip-grad-norm=1 eval=true},"
    "lpc-mixed-precision{policy=fp16}",
    "lpc-autodiff,lpc-mixed-precision{policy=fp8 fp8-min-mnk=0}",
    "lpc-autodiff{optimizer=sgd lr-schedule=cosine warmup-steps=3 "
    "total-steps=50},"
    "lpc-mixed-precision{policy=fp8 scaling=current fp8-min-mnk=0 "
    "fp8-format=e4m3}",
    "lpc-autodiff{eval=true},lpc-data-parallel{comm-precision=fp8},"
    "lpc-mixed-precision{policy=fp8 reduce-amax=true fp8-min-mnk=0}",
    "lpc-autodiff{clip-grad-norm=0.5},lpc-data-parallel{comm-precision=bf16 "
    "bucket-mb=0},lpc-mixed-precision{policy=fp16 loss-scaling=dynamic}",
    "lpc-autodiff{optimizer=none},lpc-mixed-precision{policy=bf16 "
    "relax-bf16-reductions=false}",
};
constexpr unsigned kNumPipelines = sizeof(kPipelines) / sizeof(kPipelines[0]);

constexpr llvm::StringLiteral kConfigPrefix = "// config: ";

/// Splits `// config: N` off the text; a missing or bad line picks 0. The
/// body stays inside `text` (even when empty), so it keeps its NUL.
unsigned splitConfig(llvm::StringRef text, llvm::StringRef &body) {
  body = text;
  if (!text.starts_with(kConfigPrefix))
    return 0;
  size_t eol = std::min(text.find('\n'), text.size());
  llvm::StringRef line = text.take_front(eol);
  body = text.drop_front(std::min(eol + 1, text.size()));
  unsigned n = 0;
  if (line.drop_front(kConfigPrefix.size()).trim().getAsInteger(10, n))
    return 0;
  return n % kNumPipelines;
}

void registerDialects(DialectRegistry &registry) {
  registry.insert<lpc::LpcDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect>();
}

/// Counts errors and remembers one without a message.
struct ErrorCounter {
  unsigned errors = 0;
  bool emptyMessage = false;
  LogicalResult handle(Diagnostic &d) {
    if (d.getSeverity() != DiagnosticSeverity::Error)
      return success();
    ++errors;
    emptyMessage |= StringRef(d.str()).trim().empty();
    return success();
  }
};

/// Verifies the IR after every pass, so that a pass that breaks it is named
/// (the pass manager's own verifier would only report a failed run).
struct VerifyAfterEachPass : public PassInstrumentation {
  ErrorCounter &counter;
  explicit VerifyAfterEachPass(ErrorCounter &c) : counter(c) {}
  void runAfterPass(Pass *pass, Operation *op) override {
    unsigned before = counter.errors;
    bool ok = succeeded(verify(op));
    LPC_FUZZ_CHECK(ok, "%s left IR that does not verify",
                   pass->getArgument().str().c_str());
    LPC_FUZZ_CHECK(counter.errors == before, "%s", "verify reported errors");
  }
};

/// Where the inputs ended (printed at exit): a fuzzer whose mutants all stop
/// at the parser tests little else.
struct Outcomes {
  unsigned long refusedByParser = 0, refusedByPass = 0, compiled = 0;
  static void print() {
    const Outcomes &o = get();
    std::fprintf(stderr,
                 "fuzz-model outcomes: %lu refused by the parser or a "
                 "verifier, %lu refused by a pass, %lu compiled\n",
                 o.refusedByParser, o.refusedByPass, o.compiled);
  }
  static Outcomes &get() {
    static Outcomes o;
    return o;
  }
};

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  std::atexit(Outcomes::print);
  registerTransformsPasses(); // canonicalize and cse, in lpc-mixed-precision
  lpc::registerLpcPasses();
  lpc::registerLpcPipelines();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // MLIR's lexer reads the byte after the text (tools parse files that
  // MemoryBuffer ends with a NUL): a copy ends with one.
  std::string input(reinterpret_cast<const char *>(data), size);
  llvm::StringRef body;
  unsigned config = splitConfig(input, body);

  DialectRegistry registry;
  registerDialects(registry);
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  ErrorCounter counter;
  ScopedDiagnosticHandler handler(
      &ctx, [&](Diagnostic &d) { return counter.handle(d); });

  // Parsing verifies too.
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(body, ParserConfig(&ctx));
  if (!module) {
    ++Outcomes::get().refusedByParser;
    LPC_FUZZ_CHECK(counter.errors > 0, "%s", "parse failed silently");
    LPC_FUZZ_CHECK(!counter.emptyMessage, "%s", "an error without a message");
    return 0;
  }

  PassManager pm(&ctx, ModuleOp::getOperationName());
  pm.enableVerifier(false); // VerifyAfterEachPass does it, naming the pass
  pm.addInstrumentation(std::make_unique<VerifyAfterEachPass>(counter));
  std::string pipelineErrors;
  llvm::raw_string_ostream pipelineOs(pipelineErrors);
  bool built =
      succeeded(parsePassPipeline(kPipelines[config], pm, pipelineOs));
  LPC_FUZZ_CHECK(built, "pipeline %u: %s", config, pipelineErrors.c_str());

  if (failed(pm.run(*module))) {
    ++Outcomes::get().refusedByPass;
    LPC_FUZZ_CHECK(counter.errors > 0, "pipeline %u failed silently", config);
    LPC_FUZZ_CHECK(!counter.emptyMessage, "%s", "an error without a message");
    return 0;
  }

  ++Outcomes::get().compiled;
  // LPC_FUZZ_PLANTED_BUG=1: a false claim the fuzzer must refute
  // (test/fuzz/model-fuzzer.test): no seed picks the last pipeline, so only
  // a mutant that does and still compiles breaks it.
  static const bool planted = std::getenv("LPC_FUZZ_PLANTED_BUG") != nullptr;
  LPC_FUZZ_CHECK(!planted || config != kNumPipelines - 1,
                 "planted: pipeline %u compiled", config);
  // What the passes made prints and parses back, except where MLIR itself
  // cannot: its verifiers accept a symbol named "" (generic form,
  // sym_name = ""), which the printer writes as an unparsable
  // `@<<INVALID EMPTY SYMBOL>>`.
  bool emptySymbol = false;
  module->walk([&](SymbolOpInterface sym) {
    if (auto name = sym->getAttrOfType<StringAttr>(
            SymbolTable::getSymbolAttrName());
        name && name.getValue().empty())
      emptySymbol = true;
  });
  if (emptySymbol)
    return 0;
  std::string printed;
  {
    llvm::raw_string_ostream os(printed);
    module->print(os);
  }
  unsigned before = counter.errors;
  OwningOpRef<ModuleOp> again =
      parseSourceString<ModuleOp>(printed, ParserConfig(&ctx));
  LPC_FUZZ_CHECK(again && counter.errors == before,
                 "pipeline %u: the output does not parse back", config);
  // ... to the same module: a custom printer that drops or changes what its
  // parser needs (an attribute elided as if default) shows here.
  std::string reprinted;
  {
    llvm::raw_string_ostream os(reprinted);
    again->print(os);
  }
  if (reprinted != printed) {
    size_t at = 0;
    while (at < printed.size() && at < reprinted.size() &&
           printed[at] == reprinted[at])
      ++at;
    size_t line = printed.rfind('\n', at);
    line = line == std::string::npos ? 0 : line + 1;
    std::fprintf(stderr, "printed:   %s\nreprinted: %s\n",
                 printed.substr(line, 300).c_str(),
                 reprinted.substr(line, 300).c_str());
  }
  LPC_FUZZ_CHECK(reprinted == printed,
                 "pipeline %u: printing the parsed output changes it", config);
  return 0;
}

//===----------------------------------------------------------------------===//
// The structure-aware mutator
//===----------------------------------------------------------------------===//

namespace {

struct Mutator {
  std::mt19937_64 rng;
  explicit Mutator(unsigned seed) : rng(seed) {}

  uint64_t below(uint64_t n) { return n == 0 ? 0 : rng() % n; }
  bool chance(unsigned oneIn) { return below(oneIn) == 0; }
  template <typename T> T &pick(SmallVectorImpl<T> &v) {
    return v[below(v.size())];
  }

  static int64_t wrap(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                static_cast<uint64_t>(b));
  }
  int64_t interestingInt(int64_t old) {
    const int64_t values[] = {0, 1, -1, 2, 3, 7, 64, 1 << 20,
                              std::numeric_limits<int32_t>::max(),
                              std::numeric_limits<int64_t>::max(),
                              std::numeric_limits<int64_t>::min(),
                              wrap(old, 1), wrap(old, -1), wrap(old, old)};
    return values[below(std::size(values))];
  }
  double interestingFloat(double old) {
    const double values[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, 1e30, 1e300,
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::nan(""), old * 2, -old, old + 1};
    return values[below(std::size(values))];
  }

  Type mutateType(Type t) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked)
      return t;
    MLIRContext *ctx = t.getContext();
    SmallVector<int64_t> shape(ranked.getShape());
    Type elem = ranked.getElementType();
    switch (below(4)) {
    case 0: { // one dimension
      if (shape.empty()) {
        shape.push_back(1 + below(4));
        break;
      }
      int64_t &d = shape[below(shape.size())];
      const int64_t choices[] = {0, 1, wrap(d, 1), wrap(d, -1), wrap(d, d), 3};
      d = std::max<int64_t>(0, choices[below(std::size(choices))]);
      break;
    }
    case 1: // one more or one fewer dimension
      if (!shape.empty() && chance(2))
        shape.erase(shape.begin() + below(shape.size()));
      else
        shape.insert(shape.begin() + below(shape.size() + 1), 1 + below(8));
      break;
    case 2: { // element type
      Type elems[] = {Float32Type::get(ctx), BFloat16Type::get(ctx),
                      Float16Type::get(ctx), Float8E4M3FNType::get(ctx),
                      Float8E5M2Type::get(ctx), IntegerType::get(ctx, 32),
                      IntegerType::get(ctx, 1), Float64Type::get(ctx)};
      elem = elems[below(std::size(elems))];
      break;
    }
    default: // dimensions swapped
      if (shape.size() >= 2)
        std::swap(shape[0], shape[shape.size() - 1]);
      else
        shape.push_back(2);
      break;
    }
    return RankedTensorType::get(shape, elem);
  }

  Attribute mutateAttr(Attribute a, SmallVectorImpl<Attribute> &pool) {
    MLIRContext *ctx = a.getContext();
    if (auto i = dyn_cast<IntegerAttr>(a); i && !i.getType().isInteger(1) &&
                                           chance(4) == false)
      return IntegerAttr::get(i.getType(), interestingInt(i.getInt()));
    if (auto f = dyn_cast<FloatAttr>(a); f && !chance(4))
      return FloatAttr::get(f.getType(),
                            interestingFloat(f.getValueAsDouble()));
    if (auto b = dyn_cast<BoolAttr>(a))
      return BoolAttr::get(ctx, !b.getValue());
    if (auto arr = dyn_cast<ArrayAttr>(a); arr && !arr.empty() && !chance(4)) {
      SmallVector<Attribute> elems(arr.getValue());
      size_t k = below(elems.size());
      switch (below(3)) {
      case 0:
        elems[k] = mutateAttr(elems[k], pool);
        break;
      case 1:
        elems.erase(elems.begin() + k);
        break;
      default:
        elems.push_back(elems[k]);
        break;
      }
      return ArrayAttr::get(ctx, elems);
    }
    if (auto arr = dyn_cast<DenseI64ArrayAttr>(a); arr && !chance(4)) {
      SmallVector<int64_t> elems(arr.asArrayRef());
      if (elems.empty() || chance(3))
        elems.push_back(interestingInt(0));
      else
        elems[below(elems.size())] = interestingInt(elems[0]);
      return DenseI64ArrayAttr::get(ctx, elems);
    }
    if (auto s = dyn_cast<StringAttr>(a); s && chance(2)) {
      const char *values[] = {"", "x", "loss", "fc1.weight", "h.0.attn"};
      return StringAttr::get(ctx, values[below(std::size(values))]);
    }
    // Any attribute of the module, often of the wrong kind.
    return pool.empty() ? a : pick(pool);
  }

  /// Values usable as an operand of `op`: block arguments and earlier results
  /// of its block (dominance holds in a single-block region).
  void candidates(Operation *op, SmallVectorImpl<Value> &out, Type want) {
    Block *block = op->getBlock();
    for (BlockArgument a : block->getArguments())
      if (!want || a.getType() == want)
        out.push_back(a);
    for (Operation &o : *block) {
      if (&o == op)
        break;
      for (Value r : o.getResults())
        if (!want || r.getType() == want)
          out.push_back(r);
    }
  }

  /// One random edit; false when the module offered nothing to edit.
  bool mutate(ModuleOp module, unsigned &config) {
    SmallVector<Operation *> ops;
    SmallVector<Attribute> attrPool;
    module.walk([&](Operation *op) {
      if (op == module.getOperation())
        return;
      ops.push_back(op);
      for (NamedAttribute na : op->getAttrs())
        attrPool.push_back(na.getValue());
    });
    if (ops.empty())
      return false;
    Operation *op = pick(ops);
    // Weighted towards edits that often keep the model valid (an operand of
    // the same type, a number, a copy, another pipeline), so that many
    // mutants get past the verifiers into the passes.
    switch (below(14)) {
    case 0:
    case 1:
    case 9: { // another operand, mostly of the same type
      if (op->getNumOperands() == 0)
        return false;
      unsigned i = below(op->getNumOperands());
      SmallVector<Value> values;
      candidates(op, values,
                 chance(3) ? Type() : op->getOperand(i).getType());
      if (values.empty())
        return false;
      op->setOperand(i, pick(values));
      return true;
    }
    case 12: { // swapped operands
      if (op->getNumOperands() < 2)
        return false;
      Value a = op->getOperand(0), b = op->getOperand(1);
      op->setOperand(0, b);
      op->setOperand(1, a);
      return true;
    }
    case 2: { // a result's type
      if (op->getNumResults() == 0)
        return false;
      Value r = op->getResult(below(op->getNumResults()));
      r.setType(mutateType(r.getType()));
      return true;
    }
    case 3:
    case 4:
    case 5:
    case 10: { // an attribute's value
      SmallVector<NamedAttribute> attrs(op->getAttrs());
      if (attrs.empty())
        return false;
      NamedAttribute &na = pick(attrs);
      op->setAttr(na.getName(), mutateAttr(na.getValue(), attrPool));
      return true;
    }
    case 6: { // an attribute dropped
      SmallVector<NamedAttribute> attrs(op->getAttrs());
      if (attrs.empty())
        return false;
      op->removeAttr(pick(attrs).getName());
      return true;
    }
    case 7: { // an op dropped, its uses given another value of the same type
      if (isa<func::FuncOp>(op) || op->hasTrait<OpTrait::IsTerminator>())
        return false;
      for (Value r : op->getResults()) {
        SmallVector<Value> values;
        candidates(op, values, r.getType());
        if (values.empty() && !r.use_empty())
          return false;
        if (!values.empty())
          r.replaceAllUsesWith(pick(values));
      }
      op->erase();
      return true;
    }
    case 8:
    case 11: { // an op duplicated; some uses move to the copy
      if (isa<func::FuncOp>(op) || op->hasTrait<OpTrait::IsTerminator>())
        return false;
      OpBuilder b(op->getContext());
      b.setInsertionPointAfter(op);
      Operation *copy = b.clone(*op);
      for (unsigned i = 0; i < op->getNumResults(); ++i)
        op->getResult(i).replaceUsesWithIf(
            copy->getResult(i), [&](OpOperand &) { return chance(2); });
      return true;
    }
    default: // another pipeline
      config = below(kNumPipelines);
      return true;
    }
  }
};

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  Mutator m(seed);
  if (m.chance(4))
    return LLVMFuzzerMutate(data, size, maxSize);

  std::string input(reinterpret_cast<const char *>(data), size); // NUL-ended
  llvm::StringRef body;
  unsigned config = splitConfig(input, body);
  DialectRegistry registry;
  registerDialects(registry);
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  // Unverified: a mutant that no longer verifies is mutated further.
  ParserConfig parserConfig(&ctx, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(body, parserConfig);
  if (!module)
    return LLVMFuzzerMutate(data, size, maxSize);

  unsigned edits = 1 + m.below(3), done = 0;
  for (unsigned tries = 0; done < edits && tries < 20; ++tries)
    done += m.mutate(*module, config);

  std::string out = (kConfigPrefix + llvm::Twine(config) + "\n").str();
  {
    llvm::raw_string_ostream os(out);
    // The generic form, unverified: an edit through the C++ API can leave
    // states the parser never makes (an inherent attribute of the wrong kind
    // is a null property), which the verifiers may rightly assume away; in
    // text they become what the parser makes of them (absent, so a default
    // or a missing-attribute error), and the target checks that.
    module->print(os, OpPrintingFlags()
                          .printGenericOpForm()
                          .assumeVerified()
                          .enableDebugInfo(true, false));
  }
  if (out.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
