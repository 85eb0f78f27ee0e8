//===- LpcPrecisionReport.cpp - --lpc-precision-report --------------------===//
//
// Reports, per function, the precision chosen for every compute op and GEMM
// (with the rule that chose it), GEMM counts per role and precision, the FP8
// fallbacks, and what the chosen precisions cost in memory against an
// all-FP32 run. Analysis only: the IR is not changed.
//
// Works at any point of the pipeline: on a bare forward model (precisions
// are the types), after lpc-assign-precision (precisions are the
// lpc.assigned attributes, types still f32), after lpc-insert-casts and after
// lpc-fp8-scaling (lpc.scaled_matmul GEMMs fed by lpc.quantize).
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Passes/PrecisionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCPRECISIONREPORT
#include "lpc/Passes/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {

//===----------------------------------------------------------------------===//
// Formatting helpers
//===----------------------------------------------------------------------===//

/// Drops trailing blanks (an empty last column) and ends the line.
std::string line(std::string s) {
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  return s + "\n";
}

/// A location as the IR names it: `fc1`, `backward(fc2)` for the NameLoc
/// "backward" around "fc2"; file positions only when there is no name. A
/// name around a position in an .mlir file or around the function's own
/// location (the train step's arguments and optimizer ops) is the name
/// alone; around a position in another file (a Python source line that
/// lpc-import recorded) the name and that file's name and line.
std::string locString(Location loc, Location fnLoc) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    Location child = name.getChildLoc();
    std::string inner = locString(child, fnLoc);
    // lpc-import's locations: the module path around the Python source line
    // (`h.0.attn.c_attn model.py:57`); a position in an .mlir file is only
    // where the op was parsed.
    if (auto file = dyn_cast<FileLineColLoc>(child);
        file && !file.getFilename().getValue().ends_with(".mlir"))
      return llvm::formatv("{0} {1}:{2}", name.getName().getValue(),
                           llvm::sys::path::filename(file.getFilename()),
                           file.getLine())
          .str();
    if (inner.empty() || isa<FileLineColLoc>(child) || child == fnLoc)
      return name.getName().str();
    return (name.getName().getValue() + "(" + inner + ")").str();
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return llvm::formatv("{0}:{1}:{2}",
                         llvm::sys::path::filename(file.getFilename()),
                         file.getLine(), file.getColumn())
        .str();
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    std::string out;
    for (Location l : fused.getLocations()) {
      std::string s = locString(l, fnLoc);
      if (s.empty())
        continue;
      if (!out.empty())
        out += ",";
      out += s;
    }
    return out;
  }
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return locString(call.getCallee(), fnLoc);
  return "";
}

/// The outermost name of a location ("backward" for backward(fc2)).
StringRef topName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  return {};
}

std::string typeString(RankedTensorType t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (int64_t d : t.getShape())
    os << d << "x";
  os << t.getElementType();
  return s;
}

//===----------------------------------------------------------------------===//
// Precision helpers
//===----------------------------------------------------------------------===//

StringRef fp8Name(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return "E4M3";
  if (isa<Float8E5M2Type>(t))
    return "E5M2";
  return "?";
}

/// Name of the precision that stores element type `t`: fp32 / bf16 / fp16 /
/// fp8 E4M3 / fp8 E5M2, or the type itself (i64, i1).
std::string precisionName(Type t) {
  if (t.isF32())
    return "fp32";
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "fp16";
  if (isFP8(t))
    return ("fp8 " + fp8Name(t)).str();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

bool isGemm(Operation *op) { return isa<MatmulOp, ScaledMatmulOp>(op); }

/// Rows of the table: compute ops (always-low / follow / keep-fp32) and every
/// GEMM (lpc.scaled_matmul is fixed-precision but is a GEMM).
bool isReported(Operation *op) {
  PrecisionClass cls = getPrecisionClass(op);
  return cls == PrecisionClass::AlwaysLow || cls == PrecisionClass::Follow ||
         cls == PrecisionClass::KeepFP32 || isGemm(op);
}

/// Element type a value has under the chosen policy: the assigned precision
/// when lpc-assign-precision decided one and lpc-insert-casts has not yet
/// rewritten the types, else its type's element type.
Type chosenElementType(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return v.getType();
  Type elt = t.getElementType();
  Operation *def = v.getDefiningOp();
  if (!def || !isa<FloatType>(elt))
    return elt;
  if (auto assigned =
          def->getAttrOfType<PrecisionAttr>(LpcDialect::getAssignedAttrName()))
    // Losses keep their f32 result whatever they are assigned.
    if (!isa<SoftmaxCrossEntropyOp, MseLossOp>(def))
      return getElementTypeFor(v.getContext(), assigned.getValue());
  return elt;
}

uint64_t bytesOf(RankedTensorType t, Type elt) {
  unsigned bits = elt.isIntOrFloat() ? elt.getIntOrFloatBitWidth() : 32;
  return static_cast<uint64_t>(t.getNumElements()) * ((bits + 7) / 8);
}

/// Bytes of `v` under the chosen policy and if it were f32 (integer values
/// stay as they are).
std::pair<uint64_t, uint64_t> valueBytes(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return {0, 0};
  Type elt = chosenElementType(v);
  uint64_t chosen = bytesOf(t, elt);
  uint64_t fp32 = isa<FloatType>(elt)
                      ? static_cast<uint64_t>(t.getNumElements()) * 4
                      : chosen;
  return {chosen, fp32};
}

/// The GEMM bucket (fp32 / bf16 / fp16 / fp8) and the precision shown.
std::pair<std::string, std::string> gemmPrecision(Operation *op) {
  if (auto s = dyn_cast<ScaledMatmulOp>(op)) {
    std::string p = llvm::formatv("fp8 {0}x{1}",
                                  fp8Name(s.getLhs().getType().getElementType()),
                                  fp8Name(s.getRhs().getType().getElementType()))
                        .str();
    return {"fp8", p};
  }
  auto mm = cast<MatmulOp>(op);
  // Chosen by lpc-assign-precision for lpc-fp8-scaling to quantize.
  if (auto fp8 = op->getAttrOfType<ArrayAttr>(
          LpcDialect::getFP8OperandsAttrName());
      fp8 && fp8.size() == 2) {
    auto name = [&](Attribute a) -> StringRef {
      auto p = dyn_cast<PrecisionAttr>(a);
      if (!p)
        return "?";
      return p.getValue() == Precision::fp8_e5m2 ? "E5M2" : "E4M3";
    };
    return {"fp8", llvm::formatv("fp8 {0}x{1}", name(fp8[0]), name(fp8[1]))
                       .str()};
  }
  Type elt;
  if (auto assigned =
          op->getAttrOfType<PrecisionAttr>(LpcDialect::getAssignedAttrName()))
    elt = getElementTypeFor(op->getContext(), assigned.getValue());
  else
    elt = mm.getLhs().getType().getElementType();
  if (isFP8(elt)) {
    std::string p = llvm::formatv(
        "fp8 {0}x{1}", fp8Name(mm.getLhs().getType().getElementType()),
        fp8Name(mm.getRhs().getType().getElementType()));
    return {"fp8", p};
  }
  std::string p = precisionName(elt);
  return {p, p};
}

//===----------------------------------------------------------------------===//
// The report of one function
//===----------------------------------------------------------------------===//

struct Row {
  std::string op, loc, role, cls, precision, reason;
};

struct Total {
  uint64_t chosen = 0, fp32 = 0;
  void add(std::pair<uint64_t, uint64_t> b) {
    chosen += b.first;
    fp32 += b.second;
  }
};

struct Fallback {
  std::string op, loc, role, reason;
};

/// One collective (lpc.all_reduce, lpc.reduce_scatter, lpc.all_gather):
/// what it carries, its wire format, and its payload (the whole tensor it
/// reduces or gathers) in that format against fp32 (FP8 adds the 4-byte
/// amax its scale needs).
struct Collective {
  std::string what, loc, precision;
  int64_t elements = 0;
  Total bytes;
};

constexpr const char *kPrecisions[] = {"fp32", "bf16", "fp16", "fp8"};
constexpr const char *kRoles[] = {"fprop", "dgrad", "wgrad"};

struct Report {
  std::string function;
  SmallVector<Row> rows;
  std::map<std::string, unsigned> otherOps; // sorted by name
  Total params, grads, optState, fp8State, lossScaler, checkpoint, saved;
  Total largest;
  std::string largestOp, largestLoc, largestType;
  // gemms[role][precision]; role 3 / precision 4 are the totals.
  unsigned gemms[4][5] = {};
  SmallVector<Fallback> fallbacks;
  // Collectives and their payload per step.
  SmallVector<Collective> comms;
  Total commTotal;

  void addCollective(Collective c, Precision wire) {
    unsigned width = wire == Precision::fp32                          ? 4
                     : wire == Precision::bf16 || wire == Precision::fp16 ? 2
                                                                         : 1;
    c.bytes.chosen = uint64_t(c.elements) * width +
                     (width == 1 ? 4 : 0); // FP8: the scale's amax
    c.bytes.fp32 = uint64_t(c.elements) * 4;
    commTotal.add({c.bytes.chosen, c.bytes.fp32});
    comms.push_back(std::move(c));
  }
};

Report analyze(func::FuncOp fn) {
  Report r;
  r.function = fn.getSymName().str();
  llvm::DenseSet<Value> grads = gradientValues(fn);

  // State arguments of a train step.
  for (BlockArgument arg : fn.getArguments()) {
    auto state = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                 kStateAttr);
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!state || !t)
      continue;
    StringRef s = state.getValue();
    auto b = valueBytes(arg);
    if (s == "param") {
      r.params.add(b);
    } else if (s == "exp_avg" || s == "exp_avg_sq" || s == "momentum_buffer") {
      r.optState.add(b);
    } else if (s == "fp8_scale" || s == "fp8_amax_history") {
      // An all-FP32 run has no FP8 scaling state.
      b.second = 0;
      r.fp8State.add(b);
    } else if (s == "loss_scale" || s == "loss_scale_growth_tracker") {
      // ... nor a loss scaler.
      b.second = 0;
      r.lossScaler.add(b);
    }
    r.checkpoint.add(b);
  }

  auto isBackward = [&](Operation *op) {
    return topName(op->getLoc()) == "backward" ||
           llvm::any_of(op->getResults(),
                        [&](Value v) { return grads.contains(v); });
  };
  // Forward activations: float tensors (not scalars such as the loss or an
  // FP8 scale_inv) produced by forward compute ops and GEMMs.
  auto isActivation = [&](Value v) {
    Operation *def = v.getDefiningOp();
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return def && t && t.getRank() > 0 && isReported(def) &&
           !isBackward(def) && floatElementType(v) && !grads.contains(v);
  };

  llvm::SetVector<Value> saved;
  fn.walk([&](Operation *op) {
    if (op == fn.getOperation())
      return;
    if (auto p = dyn_cast<ParamOp>(op)) {
      auto b = valueBytes(p.getResult());
      r.params.add(b);
      r.checkpoint.add(b);
    }
    if (!isReported(op)) {
      if (!isa<func::ReturnOp>(op))
        ++r.otherOps[op->getName().getStringRef().str()];
    }

    // Gradients: what the backward produced for each optimizer update.
    Value grad;
    if (auto adam = dyn_cast<AdamWOp>(op))
      grad = adam.getGrad();
    else if (auto sgd = dyn_cast<SgdOp>(op))
      grad = sgd.getGrad();
    if (grad) {
      while (Operation *def = grad.getDefiningOp()) {
        if (isa<CastOp, UnscaleOp>(def))
          grad = def->getOperand(0);
        else if (isa<ClipByGlobalNormOp>(def))
          grad = def->getOperand(cast<OpResult>(grad).getResultNumber());
        else
          break;
      }
      r.grads.add(valueBytes(grad));
    }

    if (auto ar = dyn_cast<AllReduceOp>(op)) {
      Collective c;
      auto t = cast<RankedTensorType>(ar.getInput().getType());
      c.elements = t.getNumElements();
      c.loc = locString(op->getLoc(), fn.getLoc());
      Precision wire = ar.getCommPrecision();
      c.precision = stringifyPrecision(wire).str();
      if (auto bucket = op->getAttrOfType<IntegerAttr>(kBucketAttr)) {
        auto concat = ar.getInput().getDefiningOp<ConcatOp>();
        size_t n = concat ? concat.getInputs().size() : 1;
        c.what = llvm::formatv("gradients, bucket {0} ({1} tensor{2})",
                               bucket.getInt(), n, n == 1 ? "" : "s")
                     .str();
      } else {
        c.what = stringifyAllReduceKind(ar.getKind()).str();
      }
      r.addCollective(std::move(c), wire);
    }
    // The sharding collectives: their payload is the whole (unsharded)
    // tensor, of which each rank sends (N - 1) / N.
    auto sharding = [&](Value whole, Precision wire, std::string what) {
      Collective c;
      c.elements = cast<RankedTensorType>(whole.getType()).getNumElements();
      c.loc = locString(op->getLoc(), fn.getLoc());
      c.precision = stringifyPrecision(wire).str();
      c.what = std::move(what);
      r.addCollective(std::move(c), wire);
    };
    if (auto rs = dyn_cast<ReduceScatterOp>(op))
      sharding(rs.getInput(), rs.getCommPrecision(),
               llvm::formatv("reduce_scatter {0} over {1} ranks",
                             stringifyAllReduceKind(rs.getKind()),
                             rs.getRanks())
                   .str());
    if (auto ag = dyn_cast<AllGatherOp>(op))
      sharding(ag.getResult(), ag.getCommPrecision(),
               llvm::formatv("all_gather over {0} ranks", ag.getRanks()).str());
    // The GPU's FP8 wire (lpc-native-wire-collectives): its values travel
    // in their own type.
    if (auto a2a = dyn_cast<AllToAllOp>(op)) {
      Precision p = getPrecisionFor(a2a.getInput().getType().getElementType())
                        .value_or(Precision::fp32);
      sharding(a2a.getInput(), p,
               llvm::formatv("all_to_all over {0} ranks", a2a.getRanks())
                   .str());
    }

    if (!isReported(op))
      return;

    Row row;
    row.op = op->getName().getStringRef().str();
    row.loc = locString(op->getLoc(), fn.getLoc());
    row.role = "-";
    row.cls = stringifyPrecisionClass(getPrecisionClass(op)).str();
    if (auto reason =
            op->getAttrOfType<StringAttr>(LpcDialect::getReasonAttrName()))
      row.reason = reason.getValue().str();
    if (isGemm(op)) {
      GemmRole role = roleOf(op);
      row.role = stringifyGemmRole(role).str();
      auto [bucket, shown] = gemmPrecision(op);
      row.precision = shown;
      unsigned ri = static_cast<unsigned>(role);
      unsigned pi = 0;
      for (; pi < 4; ++pi)
        if (bucket == kPrecisions[pi])
          break;
      if (pi < 4) {
        ++r.gemms[ri][pi];
        ++r.gemms[3][pi];
      }
      ++r.gemms[ri][4];
      ++r.gemms[3][4];
      StringRef reason = row.reason;
      if (reason.starts_with("fp8 fallback") ||
          reason.starts_with("fp8 policy"))
        r.fallbacks.push_back({row.op, row.loc, row.role, row.reason});
    } else if (auto assigned = op->getAttrOfType<PrecisionAttr>(
                   LpcDialect::getAssignedAttrName())) {
      row.precision = stringifyPrecision(assigned.getValue()).str();
    } else if (op->getNumResults() > 0) {
      Value res = op->getResult(0);
      for (Value v : op->getResults())
        if (floatElementType(v)) {
          res = v;
          break;
        }
      auto t = dyn_cast<RankedTensorType>(res.getType());
      row.precision = precisionName(t ? t.getElementType() : res.getType());
    }
    r.rows.push_back(std::move(row));

    // Largest forward activation.
    for (Value v : op->getResults()) {
      if (!isActivation(v))
        continue;
      auto b = valueBytes(v);
      if (b.first > r.largest.chosen) {
        r.largest.chosen = b.first;
        r.largestOp = op->getName().getStringRef().str();
        r.largestLoc = locString(op->getLoc(), fn.getLoc());
        r.largestType = typeString(cast<RankedTensorType>(v.getType())
                                       .clone(chosenElementType(v)));
      }
      r.largest.fp32 = std::max(r.largest.fp32, b.second);
    }

    // Forward activations that backward ops read: the value itself, seen
    // through casts and through the reshapes/transposes the backward made.
    if (!isBackward(op))
      return;
    for (Value v : op->getOperands()) {
      if (grads.contains(v))
        continue;
      while (Operation *def = v.getDefiningOp()) {
        if (isa<CastOp>(def) ||
            (isa<ReshapeOp, TransposeOp>(def) && isBackward(def)))
          v = def->getOperand(0);
        else
          break;
      }
      if (isActivation(v)) {
        saved.insert(v);
        continue;
      }
      // FP8 copies of forward activations (saved quantized, as Transformer
      // Engine does).
      if (auto q = v.getDefiningOp<QuantizeOp>()) {
        Value src = q.getInput();
        while (auto c = src.getDefiningOp<CastOp>())
          src = c.getInput();
        if (isActivation(src))
          saved.insert(v);
      }
    }
  });
  for (Value v : saved)
    r.saved.add(valueBytes(v));
  return r;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

llvm::json::Object bytesJson(const Total &t) {
  return llvm::json::Object{{"chosen", t.chosen}, {"all_fp32", t.fp32}};
}

llvm::json::Value toJson(const Report &r) {
  llvm::json::Array ops;
  for (const Row &row : r.rows) {
    llvm::json::Object o{{"op", row.op},
                         {"location", row.loc},
                         {"class", row.cls},
                         {"precision", row.precision}};
    if (row.role != "-")
      o["role"] = row.role;
    if (!row.reason.empty())
      o["reason"] = row.reason;
    ops.push_back(std::move(o));
  }
  llvm::json::Object other;
  for (const auto &[name, n] : r.otherOps)
    other[name] = n;
  llvm::json::Object gemms;
  for (unsigned ri = 0; ri < 4; ++ri) {
    llvm::json::Object row;
    for (unsigned pi = 0; pi < 4; ++pi)
      row[kPrecisions[pi]] = r.gemms[ri][pi];
    row["total"] = r.gemms[ri][4];
    gemms[ri < 3 ? kRoles[ri] : "total"] = std::move(row);
  }
  llvm::json::Array fallbacks;
  for (const Fallback &f : r.fallbacks)
    fallbacks.push_back(llvm::json::Object{{"op", f.op},
                                           {"location", f.loc},
                                           {"role", f.role},
                                           {"reason", f.reason}});
  llvm::json::Object largest = bytesJson(r.largest);
  if (!r.largestOp.empty()) {
    largest["op"] = r.largestOp;
    largest["location"] = r.largestLoc;
    largest["type"] = r.largestType;
  }
  llvm::json::Object memory{
      {"parameters", bytesJson(r.params)},
      {"gradients", bytesJson(r.grads)},
      {"optimizer_state", bytesJson(r.optState)},
      {"fp8_state", bytesJson(r.fp8State)},
      {"loss_scaler_state", bytesJson(r.lossScaler)},
      {"checkpoint_state", bytesJson(r.checkpoint)},
      {"largest_activation", std::move(largest)},
      {"saved_activations", bytesJson(r.saved)}};
  llvm::json::Array comms;
  for (const Collective &c : r.comms)
    comms.push_back(llvm::json::Object{{"what", c.what},
                                       {"location", c.loc},
                                       {"elements", c.elements},
                                       {"comm_precision", c.precision},
                                       {"bytes", bytesJson(c.bytes)}});
  llvm::json::Object result{{"function", r.function},
                            {"ops", std::move(ops)},
                            {"other_ops", std::move(other)},
                            {"gemms", std::move(gemms)},
                            {"fp8_fallbacks", std::move(fallbacks)},
                            {"memory", std::move(memory)}};
  if (!r.comms.empty())
    result["communication"] = llvm::json::Object{
        {"collectives", std::move(comms)}, {"total", bytesJson(r.commTotal)}};
  return result;
}

void printTable(const Report &r, llvm::raw_ostream &os) {
  os << "precision report @" << r.function << "\n";
  size_t wOp = 2, wLoc = 8, wRole = 4, wCls = 5, wPrec = 9;
  for (const Row &row : r.rows) {
    wOp = std::max(wOp, row.op.size());
    wLoc = std::max(wLoc, row.loc.size());
    wRole = std::max(wRole, row.role.size());
    wCls = std::max(wCls, row.cls.size());
    wPrec = std::max(wPrec, row.precision.size());
  }
  auto rowLine = [&](StringRef op, StringRef loc, StringRef role,
                     StringRef cls, StringRef prec, StringRef reason) {
    os << line(("  " + padRight(op, wOp) + "  " + padRight(loc, wLoc) + "  " +
                padRight(role, wRole) + "  " + padRight(cls, wCls) + "  " +
                padRight(prec, wPrec) + "  " + reason)
                   .str());
  };
  rowLine("op", "location", "role", "class", "precision", "reason");
  for (const Row &row : r.rows)
    rowLine(row.op, row.loc, row.role, row.cls, row.precision, row.reason);

  if (!r.otherOps.empty()) {
    std::string s = "  not listed:";
    bool first = true;
    for (const auto &[name, n] : r.otherOps) {
      s += llvm::formatv("{0} {1} {2}", first ? "" : ",", n, name).str();
      first = false;
    }
    os << line(s);
  }

  os << llvm::formatv("  GEMMs  {0,5}  {1,5}  {2,5}  {3,5}  {4,5}\n", "fp32",
                      "bf16", "fp16", "fp8", "total");
  for (unsigned ri = 0; ri < 4; ++ri)
    os << llvm::formatv("  {0,-5}  {1,5}  {2,5}  {3,5}  {4,5}  {5,5}\n",
                        ri < 3 ? kRoles[ri] : "total", r.gemms[ri][0],
                        r.gemms[ri][1], r.gemms[ri][2], r.gemms[ri][3],
                        r.gemms[ri][4]);

  if (!r.fallbacks.empty()) {
    os << "  fp8 fallbacks:\n";
    for (const Fallback &f : r.fallbacks)
      os << llvm::formatv("    {0} {1} at {2}: {3}\n", f.role, f.op, f.loc,
                          f.reason);
  }

  os << llvm::formatv("  {0,-24}  {1,24}  {2,24}\n", "memory", "as chosen",
                      "if all fp32");
  auto mem = [&](StringRef what, const Total &t, StringRef note = "") {
    os << line(llvm::formatv("    {0,-22}  {1,12}  {2,10}  {3,12}  {4,10}  {5}",
                             what, t.chosen, humanBytes(t.chosen), t.fp32,
                             humanBytes(t.fp32), note)
                   .str());
  };
  mem("parameters", r.params);
  mem("gradients", r.grads);
  mem("optimizer state", r.optState);
  mem("fp8 state", r.fp8State);
  mem("loss-scaler state", r.lossScaler);
  mem("checkpoint state", r.checkpoint);
  std::string note;
  if (!r.largestOp.empty())
    note = r.largestOp + " at " + r.largestLoc + " (" + r.largestType + ")";
  mem("largest activation", r.largest, note);
  mem("saved for backward", r.saved);

  if (r.comms.empty())
    return;
  // Payloads: over N ranks a ring all-reduce sends 2 (N - 1) / N of each
  // from every rank per step, a reduce-scatter or all-gather (N - 1) / N.
  size_t wWhat = 10, wLoc2 = 8;
  for (const Collective &c : r.comms) {
    wWhat = std::max(wWhat, c.what.size());
    wLoc2 = std::max(wLoc2, c.loc.size());
  }
  os << line(("  communication per step (payloads; over N ranks each rank "
              "sends 2(N-1)/N of an all-reduce's, (N-1)/N of the others')"));
  auto commLine = [&](StringRef what, StringRef loc, StringRef elements,
                      StringRef prec, const Total &t) {
    os << line("    " + padRight(what, wWhat) + "  " +
               padRight(loc, wLoc2) +
               llvm::formatv("  {0,10}  {1,-9}  {2,10}  {3,10}", elements,
                             prec, humanBytes(t.chosen), humanBytes(t.fp32))
                   .str());
  };
  os << line("    " + padRight("collective", wWhat) + "  " +
             padRight("location", wLoc2) +
             llvm::formatv("  {0,10}  {1,-9}  {2,10}  {3,10}", "elements",
                           "on wire", "bytes", "if fp32")
                 .str());
  for (const Collective &c : r.comms)
    commLine(c.what, c.loc, std::to_string(c.elements), c.precision, c.bytes);
  commLine("total", "", "", "", r.commTotal);
}

struct LpcPrecisionReportPass
    : ::mlir::lpc::impl::LpcPrecisionReportBase<LpcPrecisionReportPass> {
  using Base::Base;

  void runOnOperation() override {
    markAllAnalysesPreserved();
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::json::Array functions;

    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      Report r = analyze(fn);
      if (r.rows.empty())
        continue;
      if (json)
        functions.push_back(toJson(r));
      else
        printTable(r, os);
    }

    if (json) {
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(functions)));
      os << "\n";
    }

    if (failed(writeReport(text, outputFile, "lpc-precision-report")))
      signalPassFailure();
  }
};

} // namespace
