//===- OpCheck.cpp - check compiled code op by op -------------------------===//
//
// See lpc/Backend/OpCheck.h for the criterion. The instrumented copy returns
// every op result that is not a constant; the check then walks the ops in
// program order and evaluates each one alone (a one-op function in a scratch
// module) on the compiled values of its operands, twice: rounded, to count
// flips, and unrounded, to measure the compiled rounding against (bf16
// attention a third time, for the sums of |terms| its inner rounding moves).
//
//===----------------------------------------------------------------------===//

#include "lpc/Backend/OpCheck.h"
#include "lpc/Dialect/LpcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::cpu;
namespace ref = mlir::lpc::ref;

namespace {

bool isLowPrecision(ref::DType t) {
  return ref::isFloat(t) && t != ref::DType::f32;
}

std::string locationOf(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->getLoc().print(os);
  return s;
}

std::string indexString(int64_t linear, llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] ? linear % shape[d] : 0;
    linear = shape[d] ? linear / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < index.size(); ++d)
    s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

/// `x` (unrounded) truncated toward zero in its format.
ref::Tensor truncated(const ref::Tensor &x) {
  ref::Tensor t = x;
  for (double &v : t.data) {
    if (!std::isfinite(v))
      continue;
    double r = ref::roundToFormat(v, t.dtype, /*saturate=*/true);
    if (std::fabs(r) > std::fabs(v))
      r -= std::copysign(ref::spacing(v, t.dtype), v);
    v = r;
  }
  return t;
}

/// bf16 attention rounds p and ds to bf16 inside the op: each term moves by
/// at most 2^-8 of itself (EvalOptions::attentionTermMagnitudes).
constexpr double kBf16TermRounding = 1.0 / 256;

/// Compares one result: compiled `c` against the reference rounding `e` and
/// the exact value `x`; with `allowance`, element i may also be off by
/// allowance[i] beyond that. Returns a description when it fails.
std::optional<std::string>
compareResult(const ref::Tensor &c, const ref::Tensor &e, const ref::Tensor &x,
              const OpCheckOptions &opts, OpCheckResult &out, bool &flipped,
              double &worstExcess, const std::vector<double> *allowance) {
  size_t n = e.data.size();
  if (c.data.size() != n || x.data.size() != n)
    return std::string("compiled and reference results differ in size");
  if (!ref::isFloat(e.dtype)) {
    for (size_t i = 0; i < n; ++i)
      if (c.data[i] != e.data[i])
        return llvm::formatv("element {0}: compiled {1}, reference {2} "
                             "(integers must match exactly)",
                             indexString(i, e.shape), c.data[i], e.data[i])
            .str();
    return std::nullopt;
  }
  bool low = isLowPrecision(e.dtype);
  double maxAbs = 0;
  for (double v : x.data)
    if (std::isfinite(v))
      maxAbs = std::max(maxAbs, std::fabs(v));
  double norm = maxAbs > 0 ? maxAbs : 1.0;
  out.elements += n;
  if (low)
    out.lowElements += n;
  int64_t wrong = 0, worstAt = -1;
  double worstWrong = -1;
  for (size_t i = 0; i < n; ++i) {
    double ci = c.data[i], ei = e.data[i], xi = x.data[i];
    bool same = ci == ei || (std::isnan(ci) && std::isnan(ei));
    if (same && !(low && std::isfinite(xi) && std::isfinite(ci)))
      continue;
    if (!same && (!std::isfinite(ci) || !std::isfinite(ei) ||
                  !std::isfinite(xi))) {
      ++wrong;
      if (worstWrong < INFINITY)
        worstWrong = INFINITY, worstAt = i;
      continue;
    }
    // dev: the distance from the exact value, less what the op may round
    // inside it (bf16 attention).
    double sp = ref::spacing(xi, e.dtype),
           dev = std::max(0.0, std::fabs(ci - xi) -
                                   (allowance ? (*allowance)[i] : 0.0));
    if (low)
      out.worstSpacings = std::max(out.worstSpacings, dev / sp);
    if (same)
      continue;
    double excess = (dev - sp / 2) / norm;
    worstExcess = std::max(worstExcess, excess);
    if (excess <= opts.slack) {
      if (low)
        ++out.flips, flipped = true;
      continue;
    }
    ++wrong;
    if (excess > worstWrong)
      worstWrong = excess, worstAt = i;
  }
  if (!wrong)
    return std::nullopt;
  double ci = c.data[worstAt], xi = x.data[worstAt], ei = e.data[worstAt];
  std::string what = llvm::formatv(
      "{0} of {1} elements wrong; worst {2}: compiled {3:e6}, exact {4:e6} "
      "(rounds to {5:e6})",
      wrong, n, indexString(worstAt, e.shape), ci, xi, ei);
  if (std::isfinite(worstWrong))
    what += llvm::formatv(", off by {0:f2} spacings of {1}: {2:e2} of "
                          "max|exact| beyond half a spacing (slack {3:e1})",
                          std::fabs(ci - xi) / ref::spacing(xi, e.dtype),
                          ref::dtypeName(e.dtype), worstWrong, opts.slack)
                .str();
  return what;
}

} // namespace

OpChecker::~OpChecker() = default;

llvm::Expected<std::unique_ptr<OpChecker>>
OpChecker::compile(ModuleOp module, llvm::StringRef name,
                   const CompileOptions &options) {
  std::unique_ptr<OpChecker> c(new OpChecker());
  c->module = cast<ModuleOp>(module->clone());
  for (auto f : llvm::make_early_inc_range(c->module->getOps<func::FuncOp>()))
    if (f.getSymName() != name)
      f.erase();
  c->fn = c->module->lookupSymbol<func::FuncOp>(name);
  if (!c->fn || c->fn.isExternal())
    return llvm::createStringError("no function @" + name.str());
  if (!c->fn.getBody().hasOneBlock())
    return llvm::createStringError("@" + name.str() +
                                   ": the op check takes one-block functions");
  MLIRContext *ctx = module.getContext();
  Block &body = c->fn.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return llvm::createStringError("@" + name.str() + " has no func.return");
  c->numResults = ret.getNumOperands();

  // Return every non-constant result of a type the runtime can hold.
  llvm::DenseSet<Value> returned(ret.getOperands().begin(),
                                 ret.getOperands().end());
  for (Operation &op : body.without_terminator()) {
    if (op.hasTrait<mlir::OpTrait::ConstantLike>())
      continue;
    for (Value v : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (type && type.hasStaticShape() && ref::dtypeOf(type.getElementType()) &&
          returned.insert(v).second)
        c->probes.push_back(v);
    }
  }
  SmallVector<Value> all(ret.getOperands());
  all.append(c->probes.begin(), c->probes.end());
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0; i < c->numResults; ++i) {
    DictionaryAttr d = c->fn.getResultAttrDict(i);
    resultAttrs.push_back(d ? d : DictionaryAttr::get(ctx));
  }
  resultAttrs.resize(all.size(), DictionaryAttr::get(ctx));
  ret.getOperandsMutable().assign(all);
  c->fn.setType(FunctionType::get(ctx, c->fn.getArgumentTypes(),
                                  ValueRange(all).getTypes()));
  c->fn.setAllResultAttrs(resultAttrs);

  auto code = CompiledFunction::compile(*c->module, name, options);
  if (!code)
    return code.takeError();
  c->code = std::move(*code);
  return c;
}

llvm::Expected<OpCheckResult>
OpChecker::run(llvm::ArrayRef<ref::Tensor> args, uint64_t step,
               const OpCheckOptions &options,
               std::vector<ref::Tensor> &results) {
  const auto &argSlots = code->args();
  const auto &resSlots = code->results();
  if (args.size() != argSlots.size())
    return llvm::createStringError(
        llvm::formatv("expected {0} arguments, got {1}", argSlots.size(),
                      args.size()));
  std::vector<std::vector<uint8_t>> in(args.size()), out(resSlots.size());
  std::vector<const void *> argPtrs;
  std::vector<void *> resPtrs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].shape != argSlots[i].shape || args[i].dtype != argSlots[i].dtype)
      return llvm::createStringError(
          llvm::formatv("argument #{0} is {1}, the function takes another "
                        "type",
                        i, ref::typeString(args[i])));
    in[i].assign(argSlots[i].byteSize() + 1, 0);
    packTensor(args[i], in[i].data());
    argPtrs.push_back(in[i].data());
  }
  for (size_t r = 0; r < resSlots.size(); ++r) {
    out[r].assign(resSlots[r].byteSize() + 1, 0);
    resPtrs.push_back(out[r].data());
  }
  if (llvm::Error e = code->run(argPtrs, resPtrs))
    return std::move(e);
  std::vector<ref::Tensor> outs;
  for (size_t r = 0; r < resSlots.size(); ++r)
    outs.push_back(unpackTensor(resSlots[r], out[r].data()));
  results.assign(outs.begin(), outs.begin() + numResults);

  // Compiled values of returned values; the reference's for the rest
  // (arguments, constants).
  Block &body = fn.getBody().front();
  llvm::DenseMap<Value, const ref::Tensor *> compiledValue;
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    compiledValue.try_emplace(v, &outs[i]);
  llvm::DenseMap<Value, ref::Tensor> refValue;
  for (auto [i, a] : llvm::enumerate(body.getArguments()))
    refValue[a] = args[i];

  MLIRContext *ctx = fn.getContext();
  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(fn.getLoc());
  OpCheckResult result;
  for (Operation &op : body.without_terminator()) {
    SmallVector<Value> operands;
    SmallVector<Type> types;
    std::vector<ref::Tensor> operandValues;
    for (Value v : op.getOperands()) {
      if (llvm::is_contained(operands, v))
        continue;
      const ref::Tensor *t = nullptr;
      if (auto it = compiledValue.find(v); it != compiledValue.end())
        t = it->second;
      else if (auto jt = refValue.find(v); jt != refValue.end())
        t = &jt->second;
      if (!t)
        return llvm::createStringError(
            llvm::formatv("{0} at {1}: an operand has no value",
                          op.getName().getStringRef(), locationOf(&op)));
      operands.push_back(v);
      types.push_back(v.getType());
      operandValues.push_back(*t);
    }
    b.setInsertionPointToEnd(scratch->getBody());
    auto f = func::FuncOp::create(b, op.getLoc(), "lpc_op_check",
                                  FunctionType::get(ctx, types,
                                                    op.getResultTypes()));
    llvm::scope_exit eraseF([&] { f.erase(); });
    Block *entry = f.addEntryBlock();
    IRMapping map;
    for (auto [v, a] : llvm::zip(operands, entry->getArguments()))
      map.map(v, a);
    b.setInsertionPointToEnd(entry);
    Operation *copy = b.clone(op, map);
    func::ReturnOp::create(b, op.getLoc(), copy->getResults());

    ref::EvalOptions eo;
    eo.step = step;
    auto evaluate = [&]() -> llvm::Expected<std::vector<ref::Tensor>> {
      auto r = ref::evaluate(f, operandValues, {}, eo);
      if (failed(r))
        return llvm::createStringError(
            llvm::formatv("{0} at {1}: the reference evaluator failed",
                          op.getName().getStringRef(), locationOf(&op)));
      return std::move(*r);
    };
    auto rounded = evaluate();
    if (!rounded)
      return rounded.takeError();
    bool anyCompiled = llvm::any_of(op.getResults(), [&](Value v) {
      return compiledValue.count(v);
    });
    if (!anyCompiled) {
      for (auto [v, t] : llvm::zip(op.getResults(), *rounded))
        refValue[v] = std::move(t);
      continue;
    }
    eo.roundResults = false;
    auto exact = evaluate();
    if (!exact)
      return exact.takeError();
    // bf16 attention: what rounding p and ds to bf16 inside may move.
    std::vector<std::vector<double>> allowances;
    if (isa<AttentionOp, AttentionGradOp>(op) &&
        llvm::any_of(*exact, [](const ref::Tensor &t) {
          return t.dtype == ref::DType::bf16;
        })) {
      eo.attentionTermMagnitudes = true;
      auto mags = evaluate();
      if (!mags)
        return mags.takeError();
      for (ref::Tensor &t : *mags) {
        for (double &m : t.data)
          m *= kBf16TermRounding;
        allowances.push_back(t.dtype == ref::DType::bf16
                                 ? std::move(t.data)
                                 : std::vector<double>());
      }
    }
    ++result.ops;
    bool flipped = false;
    for (auto [r, v] : llvm::enumerate(op.getResults())) {
      auto it = compiledValue.find(v);
      if (it == compiledValue.end()) {
        refValue[v] = (*rounded)[r];
        continue;
      }
      const ref::Tensor *compiled = it->second;
      ref::Tensor planted;
      if (options.plantTruncation && isLowPrecision((*rounded)[r].dtype)) {
        planted = truncated((*exact)[r]);
        compiled = &planted;
      }
      double excess = -INFINITY;
      const std::vector<double> *allowance =
          r < allowances.size() && !allowances[r].empty() ? &allowances[r]
                                                          : nullptr;
      auto bad = compareResult(*compiled, (*rounded)[r], (*exact)[r], options,
                               result, flipped, excess, allowance);
      if (excess > result.worstExcess) {
        result.worstExcess = excess;
        result.worstExcessAt = llvm::formatv("{0} at {1}, result #{2}",
                                             op.getName().getStringRef(),
                                             locationOf(&op), r);
      }
      if (!bad)
        continue;
      ++result.wrong;
      if (result.failures.size() < options.maxReported)
        result.failures.push_back(
            llvm::formatv("{0} at {1}, result #{2} ({3}): {4}",
                          op.getName().getStringRef(), locationOf(&op), r,
                          ref::typeString((*rounded)[r]), *bad));
    }
    if (flipped)
      ++result.opsWithFlips;
  }
  return result;
}
