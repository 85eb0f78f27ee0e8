//===- EstimateMain.cpp - lpc-cuda-check --estimate -----------------------===//
//
// The front end of the cost model (CudaEstimate.h, ../Estimate.cpp): the
// modelled H200 cost of an artifact's step as a table or JSON, and the ratio
// to another artifact's. A model, not a measurement; needs no GPU.
//
//===----------------------------------------------------------------------===//

#include "Check.h"

#include "lpc/Runtime/CudaArtifact.h"
#include "lpc/Runtime/CudaEstimate.h"
#include "lpc/Runtime/File.h"
#include "lpc/Runtime/Json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {
namespace check {
namespace {

struct EstimateOptions {
  std::string file, against, function, measured;
  std::string scenario = "all"; // low, mid, high, all
  std::string format = "table";
  int top = 10;
};

struct Estimated {
  Artifact artifact;
  std::vector<FunctionEstimate> byScenario; // low, mid, high
};

constexpr Scenario kScenarios[] = {Scenario::Low, Scenario::Mid, Scenario::High};

Expected<Estimated> estimateFile(const std::string &path, const std::string &function) {
  Expected<Artifact> art = loadArtifact(path);
  if (!art)
    return art.takeError();
  const ArtifactFunction *f = estimatedFunction(*art, function);
  if (!f)
    return makeError(path, function.empty() ? std::string("the artifact has no function")
                                            : "no function '" + function + "'");
  Estimated e;
  for (Scenario s : kScenarios)
    e.byScenario.push_back(estimateFunction(*f, s));
  e.artifact = std::move(*art);
  return e;
}

double ms(double seconds) { return seconds * 1e3; }

/// What lpc-run --profile-ops measured on a GPU: each op's mean time.
struct Measured {
  std::string path, device;
  int64_t steps = 0;
  std::vector<double> opSeconds;
};

/// Reads `path` and checks it is about `f` (the same function, op for op).
Expected<Measured> loadMeasured(const std::string &path, const ArtifactFunction &f) {
  Expected<std::vector<uint8_t>> bytes = readFile(path);
  if (!bytes)
    return bytes.takeError();
  Expected<JsonValue> doc = parseJson(
      std::string_view(reinterpret_cast<const char *>(bytes->data()), bytes->size()));
  if (!doc)
    return makeError(path, doc.error().message());
  const JsonValue *ops = doc->isObject() ? doc->find("ops") : nullptr;
  if (!doc->isObject() || !doc->find("lpc_op_profile") || !ops || !ops->isArray())
    return makeError(path, "not an op profile (lpc-run ARTIFACT --device=cuda "
                           "--profile-ops=FILE writes one)");
  Measured m;
  m.path = path;
  const JsonValue *fn = doc->find("function"), *dev = doc->find("device"),
                  *steps = doc->find("timed_steps");
  if (!fn || !fn->isString() || fn->text != f.name)
    return makeError(path, "it times function '" + (fn && fn->isString() ? fn->text : "?") +
                               "', the estimate is of '" + f.name + "'");
  if (ops->elements.size() != f.ops.size())
    return makeError(path, "it has " + std::to_string(ops->elements.size()) +
                               " ops, the artifact's '" + f.name + "' has " +
                               std::to_string(f.ops.size()) + " (another artifact?)");
  m.device = dev && dev->isString() ? dev->text : "?";
  m.steps = steps && steps->asUInt64() ? int64_t(*steps->asUInt64()) : 0;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const JsonValue &op = ops->elements[i];
    const JsonValue *what = op.isObject() ? op.find("what") : nullptr;
    const JsonValue *t = op.isObject() ? op.find("ms") : nullptr;
    if (!what || !what->isString() || !t || !t->isNumber() || !(t->asDouble() >= 0))
      return makeError(path, "op " + std::to_string(i) + ": needs \"what\" and \"ms\" (>= 0)");
    if (what->text != opLabel(f.ops[i]))
      return makeError(path, "op " + std::to_string(i) + " is '" + what->text +
                                 "', the artifact's is '" + opLabel(f.ops[i]) +
                                 "' (another artifact?)");
    m.opSeconds.push_back(t->asDouble() / 1e3);
  }
  return m;
}

/// The measured step and its time per class of the estimate `e`, seconds.
std::pair<double, std::map<std::string, double>> measuredTotals(const Measured &m,
                                                              const FunctionEstimate &e) {
  double step = 0;
  std::map<std::string, double> byClass;
  for (const OpCost &op : e.ops) {
    step += m.opSeconds[op.index];
    byClass[op.cls] += m.opSeconds[op.index];
  }
  return {step, byClass};
}

/// Measured beside modelled: the step, per class, and the ops that differ
/// most (the model's scenario `e`).
void printMeasured(const Measured &m, const FunctionEstimate &e, int top) {
  auto [step, measured] = measuredTotals(m, e);
  std::printf("measured (%s: %lld steps on %s; CUDA events around each op, no CUDA graphs) "
              "against modelled (scenario %s):\n",
              m.path.c_str(), (long long)m.steps, m.device.c_str(), scenarioName(e.scenario));
  std::printf("  step: measured %.3f ms, modelled %.3f ms, measured / modelled %.2f\n",
              ms(step), ms(e.seconds), e.seconds > 0 ? step / e.seconds : 0.0);
  std::printf("  %-20s %6s %12s %12s %9s\n", "class", "ops", "modelled ms", "measured ms",
              "measured/modelled");
  for (const ClassTotal &c : e.classes()) {
    double t = measured[c.cls];
    std::printf("  %-20s %6zu %12.3f %12.3f %9.2f\n", c.cls.c_str(), c.count, ms(c.seconds),
                ms(t), c.seconds > 0 ? t / c.seconds : 0.0);
  }
  if (top <= 0)
    return;
  std::vector<const OpCost *> order;
  for (const OpCost &op : e.ops)
    order.push_back(&op);
  auto gap = [&](const OpCost *op) { return std::fabs(m.opSeconds[op->index] - op->seconds); };
  std::stable_sort(order.begin(), order.end(),
                   [&](const OpCost *a, const OpCost *b) { return gap(a) > gap(b); });
  if (order.size() > size_t(top))
    order.resize(size_t(top));
  std::printf("  the %zu ops measured furthest from the model:\n", order.size());
  std::printf("  %5s  %-36s %-18s %-10s %12s %12s\n", "op", "what", "class", "bound",
              "modelled us", "measured us");
  for (const OpCost *op : order)
    std::printf("  %5zu  %-36s %-18s %-10s %12.1f %12.1f\n", op->index, op->label.c_str(),
                op->cls.c_str(), op->bound, op->seconds * 1e6, m.opSeconds[op->index] * 1e6);
}

std::string measuredJson(const Measured &m, const FunctionEstimate &e) {
  char buf[64];
  auto num = [&](double v) {
    std::snprintf(buf, sizeof(buf), "%.9g", v);
    return std::string(buf);
  };
  auto [step, byClass] = measuredTotals(m, e);
  std::string out = "{\"file\": " + jsonQuote(m.path) + ", \"device\": " + jsonQuote(m.device) +
                    ", \"steps\": " + std::to_string(m.steps) + ", \"scenario\": \"" +
                    scenarioName(e.scenario) + "\", \"step_ms\": " + num(ms(step)) +
                    ", \"modelled_step_ms\": " + num(ms(e.seconds)) + ", \"classes\": [";
  std::vector<ClassTotal> classes = e.classes();
  for (size_t i = 0; i < classes.size(); ++i)
    out += std::string(i ? ", " : "") + "{\"class\": " + jsonQuote(classes[i].cls) +
           ", \"ops\": " + std::to_string(classes[i].count) +
           ", \"modelled_ms\": " + num(ms(classes[i].seconds)) +
           ", \"measured_ms\": " + num(ms(byClass[classes[i].cls])) + "}";
  return out + "]}";
}

void printEstimateTable(const std::string &path, const FunctionEstimate &e, int top) {
  std::printf("%s: %s, modelled on an H200 SXM (a model, not a measurement), scenario %s\n",
              path.c_str(), e.function.c_str(), scenarioName(e.scenario));
  // (Attention only where the artifact has some: older tables stay as they were.)
  std::string attnNodes = e.attentions ? ", " + std::to_string(e.attentions) + " attention" : "";
  char attnTime[64] = "";
  if (e.attentions)
    std::snprintf(attnTime, sizeof(attnTime), " + attention %.3f", ms(e.attentionSeconds));
  std::printf("  nodes: %zu (%zu launches, %zu GEMMs%s, %zu copies)\n", e.nodes(), e.launches,
              e.gemms, attnNodes.c_str(), e.copies);
  std::printf("  step: %.3f ms = GEMMs %.3f%s + kernels %.3f + copies %.3f (per-node cost %.3f "
              "of it)\n",
              ms(e.seconds), ms(e.gemmSeconds), attnTime, ms(e.launchSeconds), ms(e.copySeconds),
              ms(e.fixedSeconds));
  if (e.collectives)
    std::printf("  collectives: %zu (%.2f MB of payload per rank; %.3f ms of the step is their "
                "local memory traffic; the wire time depends on the ranks "
                "and the fabric: bench/README.md)\n",
                e.collectives, e.collectiveBytes / 1e6, ms(e.collectiveSeconds));
  if (e.accessKnown)
    std::printf("  FP8 machinery: %zu ops, %.3f ms (non-GEMM ops that only feed FP8 GEMMs, "
                "FP8 scales and statistics)\n",
                e.fp8MachineryOps, ms(e.fp8MachinerySeconds));
  else
    std::printf("  note: the artifact does not say what its kernels read and write (no "
                "\"access\"): every view counts once as read, FP8 machinery unknown\n");
  std::printf("  %-20s %6s %9s %10s %6s\n", "class", "ops", "GB", "ms", "share");
  for (const ClassTotal &c : e.classes())
    std::printf("  %-20s %6zu %9.3f %10.3f %5.1f%%\n", c.cls.c_str(), c.count, c.bytes / 1e9,
                ms(c.seconds), 100.0 * c.seconds / e.seconds);
  std::vector<GemmGroup> groups = e.gemmGroups();
  if (!groups.empty()) {
    std::printf("  GEMMs by shape and precision:\n");
    std::printf("  %-14s %-5s %5s %6s %6s %6s %5s %9s %10s\n", "precision", "C", "batch", "M",
                "N", "K", "count", "GFLOP", "ms");
    for (const GemmGroup &g : groups)
      std::printf("  %-14s %-5s %5lld %6lld %6lld %6lld %5zu %9.1f %10.3f\n",
                  g.precision.c_str(), g.cType.c_str(), (long long)g.batch, (long long)g.m,
                  (long long)g.n, (long long)g.k, g.count, g.flops / 1e9, ms(g.seconds));
  }
  if (top > 0) {
    std::vector<const OpCost *> order;
    for (const OpCost &op : e.ops)
      order.push_back(&op);
    std::stable_sort(order.begin(), order.end(), [](const OpCost *a, const OpCost *b) {
      return a->seconds > b->seconds;
    });
    if (order.size() > size_t(top))
      order.resize(size_t(top));
    std::printf("  top %zu ops:\n", order.size());
    std::printf("  %5s  %-36s %-18s %10s %10s %-10s %10s\n", "op", "what", "class", "threads",
                "MB", "bound", "us");
    for (const OpCost *op : order)
      std::printf("  %5zu  %-36s %-18s %10lld %10.1f %-10s %10.1f\n", op->index,
                  op->label.c_str(), op->cls.c_str(), (long long)op->threads,
                  (op->readBytes + op->writeBytes) / 1e6, op->bound, op->seconds * 1e6);
  }
}

void printScenarioLine(const Estimated &e) {
  std::printf("  step by scenario:");
  for (const FunctionEstimate &f : e.byScenario)
    std::printf(" %s %.3f ms%s", scenarioName(f.scenario), ms(f.seconds),
                f.scenario == Scenario::High ? "\n" : ",");
}

std::string estimateJson(const std::string &path, const Estimated &e, int top,
                         const std::vector<size_t> &scenarios) {
  char buf[64];
  auto num = [&](double v) {
    std::snprintf(buf, sizeof(buf), "%.9g", v);
    return std::string(buf);
  };
  auto whole = [&](double v) { // bytes and FLOPs
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return std::string(buf);
  };
  std::string out = "{\"artifact\": " + jsonQuote(path) +
                    ", \"function\": " + jsonQuote(e.byScenario[0].function) +
                    ", \"model\": \"H200 SXM cost model, not a measurement\", \"scenarios\": {";
  for (size_t k = 0; k < scenarios.size(); ++k) {
    const FunctionEstimate &f = e.byScenario[scenarios[k]];
    out += std::string(k ? ", " : "") + "\"" + scenarioName(f.scenario) + "\": {";
    out += "\"step_ms\": " + num(ms(f.seconds)) + ", \"gemm_ms\": " + num(ms(f.gemmSeconds)) +
           ", \"kernel_ms\": " + num(ms(f.launchSeconds)) +
           ", \"copy_ms\": " + num(ms(f.copySeconds)) +
           ", \"per_node_ms\": " + num(ms(f.fixedSeconds)) +
           ", \"nodes\": " + std::to_string(f.nodes()) +
           ", \"launches\": " + std::to_string(f.launches) +
           ", \"gemms\": " + std::to_string(f.gemms) +
           ", \"copies\": " + std::to_string(f.copies) +
           ", \"access_known\": " + (f.accessKnown ? "true" : "false") +
           ", \"fp8_machinery_ops\": " + std::to_string(f.fp8MachineryOps) +
           ", \"fp8_machinery_ms\": " + num(ms(f.fp8MachinerySeconds)) +
           ", \"attentions\": " + std::to_string(f.attentions) +
           ", \"attention_ms\": " + num(ms(f.attentionSeconds)) + ", \"classes\": [";
    std::vector<ClassTotal> classes = f.classes();
    for (size_t i = 0; i < classes.size(); ++i)
      out += std::string(i ? ", " : "") + "{\"class\": " + jsonQuote(classes[i].cls) +
             ", \"ops\": " + std::to_string(classes[i].count) +
             ", \"bytes\": " + whole(classes[i].bytes) + ", \"ms\": " + num(ms(classes[i].seconds)) +
             "}";
    out += "], \"gemms\": [";
    std::vector<GemmGroup> groups = f.gemmGroups();
    for (size_t i = 0; i < groups.size(); ++i) {
      const GemmGroup &g = groups[i];
      out += std::string(i ? ", " : "") + "{\"precision\": " + jsonQuote(g.precision) +
             ", \"c\": " + jsonQuote(g.cType) + ", \"batch\": " + std::to_string(g.batch) +
             ", \"m\": " + std::to_string(g.m) + ", \"n\": " + std::to_string(g.n) +
             ", \"k\": " + std::to_string(g.k) + ", \"count\": " + std::to_string(g.count) +
             ", \"flops\": " + whole(g.flops) + ", \"ms\": " + num(ms(g.seconds)) + "}";
    }
    out += "], \"top\": [";
    std::vector<const OpCost *> order;
    for (const OpCost &op : f.ops)
      order.push_back(&op);
    std::stable_sort(order.begin(), order.end(), [](const OpCost *a, const OpCost *b) {
      return a->seconds > b->seconds;
    });
    if (order.size() > size_t(std::max(top, 0)))
      order.resize(size_t(std::max(top, 0)));
    for (size_t i = 0; i < order.size(); ++i) {
      const OpCost &op = *order[i];
      out += std::string(i ? ", " : "") + "{\"op\": " + std::to_string(op.index) +
             ", \"what\": " + jsonQuote(op.label) + ", \"class\": " + jsonQuote(op.cls) +
             ", \"threads\": " + std::to_string(op.threads) +
             (op.cls == "attention" ? ", \"flops\": " + whole(op.flops) : std::string()) +
             ", \"read_bytes\": " + whole(op.readBytes) +
             ", \"write_bytes\": " + whole(op.writeBytes) + ", \"bound\": " + jsonQuote(op.bound) +
             ", \"us\": " + num(op.seconds * 1e6) + "}";
    }
    out += "]}";
  }
  return out + "}}";
}

int estimate(const EstimateOptions &opt) {
  std::vector<size_t> scenarios;
  if (opt.scenario == "all")
    scenarios = {0, 1, 2};
  else
    for (size_t k = 0; k < 3; ++k)
      if (opt.scenario == scenarioName(kScenarios[k]))
        scenarios = {k};
  if (scenarios.empty() || (opt.format != "table" && opt.format != "json")) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n%s",
                 scenarios.empty() ? ("bad --scenario '" + opt.scenario +
                                      "' (low, mid, high or all)").c_str()
                                   : ("bad --format '" + opt.format + "' (table or json)").c_str(),
                 kUsage);
    return kExitUsage;
  }
  Expected<Estimated> a = estimateFile(opt.file, opt.function);
  if (!a) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n", a.error().message().c_str());
    return kExitFailed;
  }
  std::optional<Estimated> b;
  if (!opt.against.empty()) {
    Expected<Estimated> e = estimateFile(opt.against, opt.function);
    if (!e) {
      std::fprintf(stderr, "lpc-cuda-check: %s\n", e.error().message().c_str());
      return kExitFailed;
    }
    b = std::move(*e);
  }
  std::optional<Measured> measured;
  // The scenario measured figures are set beside: the one asked for, else mid.
  size_t measuredScenario = scenarios.size() == 1 ? scenarios[0] : 1;
  if (!opt.measured.empty()) {
    Expected<Measured> m =
        loadMeasured(opt.measured, *estimatedFunction(a->artifact, opt.function));
    if (!m) {
      std::fprintf(stderr, "lpc-cuda-check: %s\n", m.error().message().c_str());
      return kExitFailed;
    }
    measured = std::move(*m);
  }
  if (opt.format == "json") {
    std::string out = "{\"estimate\": " + estimateJson(opt.file, *a, opt.top, scenarios);
    if (measured)
      out += ", \"measured\": " + measuredJson(*measured, a->byScenario[measuredScenario]);
    if (b) {
      out += ", \"against\": " + estimateJson(opt.against, *b, opt.top, scenarios) +
             ", \"ratio\": {";
      for (size_t k = 0; k < scenarios.size(); ++k) {
        char buf[64];
        size_t s = scenarios[k];
        std::snprintf(buf, sizeof(buf), "%.6g",
                      a->byScenario[s].seconds / b->byScenario[s].seconds);
        out += std::string(k ? ", " : "") + "\"" + scenarioName(kScenarios[s]) + "\": " + buf;
      }
      out += "}";
    }
    std::printf("%s}\n", out.c_str());
    return kExitOk;
  }
  for (const Estimated *e : {&*a, b ? &*b : nullptr}) {
    if (!e)
      continue;
    const std::string &path = e == &*a ? opt.file : opt.against;
    for (size_t s : scenarios)
      printEstimateTable(path, e->byScenario[s], opt.top);
    printScenarioLine(*e);
    if (e == &*a && measured)
      printMeasured(*measured, a->byScenario[measuredScenario], opt.top);
  }
  if (b) {
    std::printf("%s / %s (modelled step time):", opt.file.c_str(), opt.against.c_str());
    for (size_t k = 0; k < scenarios.size(); ++k) {
      size_t s = scenarios[k];
      std::printf(" %s %.3f (%.3f / %.3f ms)%s", scenarioName(kScenarios[s]),
                  a->byScenario[s].seconds / b->byScenario[s].seconds,
                  ms(a->byScenario[s].seconds), ms(b->byScenario[s].seconds),
                  k + 1 < scenarios.size() ? "," : "\n");
    }
    // Where the difference is, per class (the table's scenario: mid for all).
    size_t s = scenarios.size() == 1 ? scenarios[0] : 1;
    std::map<std::string, std::pair<double, double>> diff;
    for (const ClassTotal &c : a->byScenario[s].classes())
      diff[c.cls].first = c.seconds;
    for (const ClassTotal &c : b->byScenario[s].classes())
      diff[c.cls].second = c.seconds;
    std::vector<std::pair<std::string, std::pair<double, double>>> rows(diff.begin(), diff.end());
    std::stable_sort(rows.begin(), rows.end(), [](const auto &x, const auto &y) {
      return std::fabs(x.second.first - x.second.second) >
             std::fabs(y.second.first - y.second.second);
    });
    std::printf("  per class, scenario %s (ms): %-20s %10s %10s %10s\n",
                scenarioName(kScenarios[s]), "class", "this", "against", "difference");
    for (const auto &[cls, t] : rows)
      std::printf("  %-42s %10.3f %10.3f %+10.3f\n", cls.c_str(), ms(t.first), ms(t.second),
                  ms(t.first - t.second));
  }
  return kExitOk;
}

} // namespace

/// lpc-cuda-check --estimate ...: every argument is the estimate's.
int estimateMain(int argc, char **argv) {
  EstimateOptions e;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *prefix) -> const char * {
      size_t n = std::strlen(prefix);
      return arg.compare(0, n, prefix) == 0 ? argv[i] + n : nullptr;
    };
    // "--estimate FILE" or "--estimate=FILE", the same for --against.
    auto file = [&](const char *name, std::string &out) {
      if (const char *f = value((std::string(name) + "=").c_str())) {
        out = f;
        return true;
      }
      if (arg != name)
        return false;
      if (i + 1 >= argc) {
        std::fprintf(stderr, "lpc-cuda-check: %s needs a file\n", name);
        std::exit(kExitUsage);
      }
      out = argv[++i];
      return true;
    };
    if (file("--estimate", e.file) || file("--against", e.against) ||
        file("--measured", e.measured))
      continue;
    if (const char *f = value("--scenario=")) {
      e.scenario = f;
    } else if (const char *f = value("--format=")) {
      e.format = f;
    } else if (const char *f = value("--function=")) {
      e.function = f;
    } else if (const char *f = value("--top=")) {
      char *end = nullptr;
      long n = std::strtol(f, &end, 10);
      if (!*f || *end || n < 0 || n > 1000000) {
        std::fprintf(stderr, "lpc-cuda-check: bad --top '%s'\n", f);
        return kExitUsage;
      }
      e.top = int(n);
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      return kExitOk;
    } else {
      std::fprintf(stderr, "lpc-cuda-check: unknown argument '%s' with --estimate\n%s",
                   arg.c_str(), kUsage);
      return kExitUsage;
    }
  }
  if (e.file.empty()) {
    std::fprintf(stderr, "lpc-cuda-check: --estimate needs an artifact\n%s", kUsage);
    return kExitUsage;
  }
  return estimate(e);
}

} // namespace check
} // namespace cuda
} // namespace rt
} // namespace lpc
