//===- Estimate.cpp - a cost model of CUDA artifacts ----------------------===//
//
// See CudaEstimate.h for the model and docs/cost-model.md for its method,
// classes and limits. Deterministic: no timing, no randomness; the same
// artifact gives the same figures.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/CudaEstimate.h"

#include "PtxScan.h"
#include "PtxWarp.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>

namespace lpc {
namespace rt {
namespace cuda {

const char *scenarioName(Scenario s) {
  switch (s) {
  case Scenario::Low:
    return "low";
  case Scenario::Mid:
    return "mid";
  case Scenario::High:
    return "high";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// The constants: low (optimistic) / mid / high (pessimistic). Sources are
// public; /work/shared/gpu-model/report.md (assumptions 1-6) and
// docs/cost-model.md discuss them.
//===----------------------------------------------------------------------===//

namespace {

// H100/H200 SXM dense peaks (NVIDIA H100 Tensor Core GPU datasheet; the
// H200 has the same GH100 die, SM count and clocks): BF16/F16 989.4,
// TF32 494.7, FP32 (no tensor cores) 66.9 TFLOP/s. TF32 and F32 GEMMs are
// taken at the same fraction of their peak as BF16 GEMMs.
constexpr double kPeakBf16 = 989.4e12, kPeakTf32 = 494.7e12, kPeakF32 = 66.9e12;

/// Attention rates: forward, backward; forward causal, backward causal.
struct AttentionRates {
  double fwd, bwd, fwdCausal, bwdCausal;
};

constexpr CostConstants makeConstants(double bf16, double fp8, double split, double bw,
                                      double node, double l2Lat, double dramLat,
                                      double sectors, double columnStores, AttentionRates attn) {
  return CostConstants{bf16,
                       fp8,
                       split,
                       bf16 * (kPeakTf32 / kPeakBf16),
                       bf16 * (kPeakF32 / kPeakBf16),
                       bw,
                       node,
                       l2Lat,
                       dramLat,
                       sectors,
                       columnStores,
                       attn.fwd,
                       attn.bwd,
                       attn.fwdCausal,
                       attn.bwdCausal};
}

// cuDNN fused attention (BF16, D = Dv = 128), TFLOP/s as cuDNN's benchmark
// counts them (AttentionDesc::flops: non-masked score elements only): NVIDIA's
// published H200 run of cuDNN 9.19.1 (cudnn-frontend, benchmark/
// sdpa_benchmark_training/results/h200_919_only_cudnn/
// llama3.1_20260227_034703.csv; B 1, 64 query heads, Sq = Skv):
//   S = 2048: no mask fwd 633 / bwd 504, causal 484 / 370  (mid)
//   S = 4096: no mask fwd 671 / bwd 560, causal 591 / 474  (low: longer
//             sequences, or more heads in a wave, run faster)
//   high: the mid figures x 0.9 (an assumption, the GEMM rates' high/mid
//   spread: another cuDNN 9 release, strided q/k/v, clocks under load).
constexpr AttentionRates kAttnLow{671e12, 560e12, 591e12, 474e12};
constexpr AttentionRates kAttnMid{633e12, 504e12, 484e12, 370e12};
constexpr AttentionRates kAttnHigh{633e12 * 0.9, 504e12 * 0.9, 484e12 * 0.9, 370e12 * 0.9};

const CostConstants kConstants[3] = {
    // BF16 GEMMs 780 / 720 / 650 TFLOP/s: torchao's roofline model
    //   (torchao/testing/training/roofline_utils.py) takes 78% of the H100
    //   peak for large GEMMs "based on experimental observation" (771);
    //   public H100 cuBLASLt runs of 8192^3 give 650-750.
    // FP8 fast-accum GEMMs 1550 / 1350 / 1200 TFLOP/s: torchao's 78% of
    //   1979 (1544); a public cuBLASLt E4M3 TN crosscheck measured
    //   1599-1631 at 8192^3; PyTorch's _scaled_mm ~1175 on the same hosts.
    // FP8 without fast accumulation (promoted accumulator, dgrad/wgrad):
    //   0.95 / 0.90 / 0.80 x (an assumption: promotion costs some issue
    //   slots; no public measurement found).
    // DRAM 4.4 / 4.1 / 3.8 TB/s: 92 / 85 / 79% of the H200's 4.8 TB/s
    //   (NVIDIA H200 datasheet); 92% is torchao's achievable fraction for
    //   pointwise kernels.
    // Per graph node 1.5 / 2.5 / 3.5 us: torchao uses 2 us, from a trace of
    //   a one-element Triton kernel on an H100 (launch, ramp, drain, gap).
    // Dependent-load latency, L2 hit 0.12 / 0.2 / 0.35 us, DRAM under load
    //   0.35 / 0.5 / 0.8 us: the nominal 200 / 400 cycles at 1.98 GHz of a
    //   published GPU model (PMC10448217, Table 3: V100, A100, H100), raised
    //   for load. The least certain constant (+-2x).
    // L2 -> SM sectors for scalar byte gathers 9 / 7 / 5.5 TB/s: ~ one
    //   32-byte sector per clock per L2 slice pair; an L1-side model (one
    //   128-byte line per clock per SM) gives the same order.
    // Partial-sector stores (sectors a warp's stores touch but do not fill,
    //   ptx::warpStores: the rows of a transposed copy when each lane writes
    //   its own) 1.7 / 1.4 / 1.0 TB/s of sectors: fitted to
    //   the first H200 run (2026-12-04, lpc-run --profile-ops, cuBLASLt
    //   13.1, driver 580): the d_model-4096 block's FP8 cast-and-transpose
    //   kernels took 0.72-0.82 ms for 33.5 M such stores (1.3-1.5 TB/s),
    //   the smaller ones 1.0-1.4 TB/s; the DRAM term alone said 0.14 ms.
    // Attention: kAttnLow / kAttnMid / kAttnHigh above.
    makeConstants(780e12, 1550e12, 0.95, 4.4e12, 1.5e-6, 0.12e-6, 0.35e-6, 9e12, 1.7e12,
                  kAttnLow),
    makeConstants(720e12, 1350e12, 0.90, 4.1e12, 2.5e-6, 0.20e-6, 0.50e-6, 7e12, 1.4e12,
                  kAttnMid),
    makeConstants(650e12, 1200e12, 0.80, 3.8e12, 3.5e-6, 0.35e-6, 0.80e-6, 5.5e12, 1.0e12,
                  kAttnHigh),
};

} // namespace

const CostConstants &costConstants(Scenario s) { return kConstants[int(s)]; }

//===----------------------------------------------------------------------===//
// Bytes a kernel moves
//===----------------------------------------------------------------------===//

namespace {

/// A view's [first, last] element offsets.
std::pair<int64_t, int64_t> elementRange(const View &v) {
  int64_t lo = v.offset, hi = v.offset;
  for (size_t d = 0; d < v.sizes.size(); ++d) {
    if (v.sizes[d] == 0)
      return {0, -1};
    int64_t span = (v.sizes[d] - 1) * v.strides[d];
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi};
}

/// Bytes of distinct elements of `v`: stride-0 (broadcast) dimensions once,
/// and never more than its extent (overlapping windows).
double footprint(const View &v) {
  auto [lo, hi] = elementRange(v);
  if (hi < lo)
    return 0;
  double unique = 1;
  for (size_t d = 0; d < v.sizes.size(); ++d)
    if (v.strides[d] != 0)
      unique *= double(v.sizes[d]);
  return std::min(unique, double(hi - lo + 1)) * v.elemBytes;
}

/// Bytes moved through some views of one op in one direction: views of the
/// same space count their union (at most the sum of their footprints, at
/// most the bytes between the lowest and highest).
class Traffic {
public:
  void add(const View &v) {
    auto [lo, hi] = elementRange(v);
    if (hi < lo)
      return;
    Space &s = spaces_[{int(v.space), v.index}];
    s.sum += footprint(v);
    s.ranges.push_back({double(lo) * v.elemBytes, double(hi + 1) * v.elemBytes});
  }
  double bytes() const {
    double total = 0;
    for (const auto &kv : spaces_) {
      std::vector<std::pair<double, double>> r = kv.second.ranges;
      std::sort(r.begin(), r.end());
      double covered = 0, end = -1;
      for (auto [a, b] : r) {
        a = std::max(a, end);
        if (b > a)
          covered += b - a;
        end = std::max(end, b);
      }
      total += std::min(kv.second.sum, covered);
    }
    return total;
  }

private:
  struct Space {
    double sum = 0;
    std::vector<std::pair<double, double>> ranges;
  };
  std::map<std::pair<int, uint64_t>, Space> spaces_;
};

/// An op writing at most this much (or a sixteenth of what it reads) is
/// bookkeeping or a reduction, not a model op (the FP8 machinery rule).
constexpr double kSmallWriteBytes = 64 * 1024;

double viewBytes(const View &v) { return double(std::max<int64_t>(0, v.numElements())) * v.elemBytes; }

//===----------------------------------------------------------------------===//
// What the PTX of a kernel says (a simple instruction scan, no data flow)
//===----------------------------------------------------------------------===//

struct PtxFacts {
  int byteLoads = 0;     // scalar 1-byte global loads (ld.global.u8 etc.)
  bool hasLoop = false;  // a backward branch
  int loopLoads = 0;     // most global loads between a loop's label and branch
  // Every global store: its line in the kernel body, whether it sits in a
  // loop (runs once per serial iteration), and whether the scan alone takes
  // it for a column store: a scalar (<= 4-byte) store in a group of 4 or
  // more off one base register whose offsets lie 128 bytes or more apart
  // (the rows of a transposed copy). What a warp's store touches comes from
  // ptx::warpStores where it can tell; the scan's guess stands where not.
  struct Store {
    size_t line;
    bool inLoop, column;
  };
  std::vector<Store> stores;
};

/// The body of `.entry name` (between its braces); empty if absent.
std::string_view entryBody(std::string_view ptx, std::string_view name) {
  size_t at = 0;
  while ((at = ptx.find(".entry", at)) != std::string_view::npos) {
    size_t i = ptx::skipSpace(ptx, at + 6);
    at += 6;
    if (ptx.compare(i, name.size(), name) != 0 ||
        (i + name.size() < ptx.size() && ptx::isIdentChar(ptx[i + name.size()])))
      continue;
    size_t open = ptx.find('{', i);
    if (open == std::string_view::npos)
      return {};
    int depth = 0;
    for (size_t j = open; j < ptx.size(); ++j) {
      if (ptx[j] == '{')
        ++depth;
      else if (ptx[j] == '}' && --depth == 0)
        return ptx.substr(open + 1, j - open - 1);
    }
    return {};
  }
  return {};
}

/// Launch `l`'s kernel parameter values as cuLaunchKernel gets them
/// (Executor.cpp), each view's buffer at a made-up base of its own: the
/// warp analysis needs addresses relative to each other, not real ones.
std::vector<uint64_t> sampleParams(const LaunchOp &l) {
  std::vector<uint64_t> v;
  for (const LaunchParam &p : l.params) {
    switch (p.kind) {
    case LaunchParam::Kind::View: {
      // 2^36 bytes apart per buffer, spaces 2^60 apart: 256-byte aligned.
      uint64_t base = (uint64_t(p.view.space) + 1) << 60 | (p.view.index & 0xffffff) << 36;
      v.insert(v.end(), {base, base, uint64_t(p.view.offset)});
      for (int64_t x : p.view.sizes)
        v.push_back(uint64_t(x));
      for (int64_t x : p.view.strides)
        v.push_back(uint64_t(x));
      break;
    }
    case LaunchParam::Kind::I64:
    case LaunchParam::Kind::I32:
      v.push_back(uint64_t(p.i));
      break;
    case LaunchParam::Kind::F32:
    case LaunchParam::Kind::F64:
      v.push_back(0); // not an index
      break;
    }
  }
  return v;
}

PtxFacts scanKernel(std::string_view body) {
  PtxFacts f;
  std::map<std::string, size_t> labels; // label -> line number
  std::vector<int> loadsBefore{0};      // global loads in lines [0, i)
  size_t lineNo = 0;
  std::vector<std::pair<size_t, std::string>> branches; // (line, target)
  struct Store {
    std::string base;
    long long offset;
    size_t line;
  };
  std::vector<Store> stores; // scalar global stores
  std::vector<size_t> allStores; // lines of every global store
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string_view::npos)
      end = body.size();
    std::string_view line = body.substr(start, end - start);
    start = end + 1;
    size_t b = ptx::skipSpace(line, 0);
    line = line.substr(b);
    int load = 0;
    if (!line.empty() && line.back() == ':' && line.front() == '$') {
      labels[std::string(line.substr(0, line.size() - 1))] = lineNo;
    } else if (line.rfind("st.global", 0) == 0 || (line.rfind("@", 0) == 0 &&
                                                          line.find(" st.global") != std::string_view::npos)) {
      allStores.push_back(lineNo);
      if (line.front() == '@')
        line = line.substr(ptx::skipSpace(line, line.find(" st.global")));
      // "st.global.b32 [%rd179+-8192], %r975;": scalar, base and offset.
      size_t sp = line.find_first_of(" \t");
      std::string_view op = line.substr(0, sp);
      bool vec = op.find(".v2") != std::string_view::npos ||
                 op.find(".v4") != std::string_view::npos;
      bool wide = op.find("64") != std::string_view::npos;
      size_t lb = line.find('['), rb = line.find(']');
      if (!vec && !wide && lb != std::string_view::npos && rb != std::string_view::npos) {
        std::string_view addr = line.substr(lb + 1, rb - lb - 1);
        size_t plus = addr.find('+');
        long long off = plus == std::string_view::npos
                            ? 0
                            : std::strtoll(std::string(addr.substr(plus + 1)).c_str(), nullptr, 10);
        stores.push_back({std::string(addr.substr(0, plus)), off, lineNo});
      }
    } else if (line.rfind("ld.global", 0) == 0) {
      load = 1;
      size_t sp = line.find_first_of(" \t");
      std::string_view op = line.substr(0, sp);
      bool vec = op.find(".v2") != std::string_view::npos ||
                 op.find(".v4") != std::string_view::npos;
      if (!vec && (op.size() >= 3 && (op.substr(op.size() - 3) == ".u8" ||
                                      op.substr(op.size() - 3) == ".b8" ||
                                      op.substr(op.size() - 3) == ".s8")))
        ++f.byteLoads;
    } else {
      // "@%p1 bra $L__BB0_2;" or "bra.uni $L__BB0_1;"
      size_t bra = line.find("bra");
      if (bra != std::string_view::npos && (bra == 0 || line[bra - 1] == ' ' || line[bra - 1] == '\t')) {
        size_t t = line.find('$', bra);
        size_t e = line.find(';', t);
        if (t != std::string_view::npos && e != std::string_view::npos)
          branches.push_back({lineNo, std::string(line.substr(t, e - t))});
      }
    }
    loadsBefore.push_back(loadsBefore.back() + load);
    ++lineNo;
  }
  std::vector<std::pair<size_t, size_t>> loops; // (label line, branch line)
  for (const auto &[at, target] : branches) {
    auto it = labels.find(target);
    if (it == labels.end() || it->second > at)
      continue;
    f.hasLoop = true;
    f.loopLoads = std::max(f.loopLoads, loadsBefore[at + 1] - loadsBefore[it->second]);
    loops.push_back({it->second, at});
  }
  std::map<std::string, std::vector<const Store *>> byBase;
  for (const Store &st : stores)
    byBase[st.base].push_back(&st);
  std::vector<size_t> columns;
  for (const auto &[base, group] : byBase) {
    if (group.size() < 4)
      continue;
    std::vector<long long> offs;
    for (const Store *st : group)
      offs.push_back(st->offset);
    std::sort(offs.begin(), offs.end());
    bool apart = true;
    for (size_t i = 1; i < offs.size(); ++i)
      apart = apart && offs[i] - offs[i - 1] >= 128;
    if (apart)
      for (const Store *st : group)
        columns.push_back(st->line);
  }
  for (size_t at : allStores) {
    bool inLoop = false;
    for (auto [from, to] : loops)
      inLoop = inLoop || (at > from && at < to);
    f.stores.push_back(
        {at, inLoop, std::find(columns.begin(), columns.end(), at) != columns.end()});
  }
  return f;
}

//===----------------------------------------------------------------------===//
// Classes
//===----------------------------------------------------------------------===//

bool isFp8Slot(const Slot &s) {
  return s.state.rfind("fp8", 0) == 0 || s.metric.rfind("fp8", 0) == 0;
}

bool isOptimizerState(const Slot &s) {
  return s.state == "exp_avg" || s.state == "exp_avg_sq" || s.state == "momentum_buffer";
}

const Slot *slotOf(const ArtifactFunction &f, const View &v) {
  if (v.space == ViewSpace::Arg && v.index < f.args.size())
    return &f.args[v.index];
  if (v.space == ViewSpace::Result && v.index < f.results.size())
    return &f.results[v.index];
  return nullptr;
}

std::string gemmPrecision(const GemmOp &g) {
  if (g.aType == DType::F8_E4M3 || g.aType == DType::F8_E5M2)
    return g.fastAccum ? "FP8 fast-acc" : "FP8 split-acc";
  if (g.aType == DType::F32)
    return g.tf32 ? "TF32" : "F32";
  return dtypeName(g.aType);
}

double gemmRate(const GemmOp &g, const CostConstants &c) {
  switch (g.aType) {
  case DType::F8_E4M3:
  case DType::F8_E5M2:
    return c.fp8Flops * (g.fastAccum ? 1.0 : c.fp8SplitFactor);
  case DType::F32:
    return g.tf32 ? c.tf32Flops : c.f32Flops;
  default:
    return c.bf16Flops; // BF16, F16: the same peak
  }
}

/// The fraction of the large-shape rate a GEMM gets: wave quantization of
/// 128x256 output tiles over the SMs (at least half: split-K and stream-K
/// recover the rest of small grids) times a K factor (short K: the
/// pipeline's prologue and epilogue are not hidden). Guesses that matter
/// only for small or skinny GEMMs (docs/cost-model.md).
double gemmShapeFactor(int64_t batch, int64_t m, int64_t n, int64_t k) {
  double tiles = double(batch) * std::ceil(double(m) / Machine::gemmTileM) *
                 std::ceil(double(n) / Machine::gemmTileN);
  double waves = std::ceil(tiles / Machine::sms);
  double wave = std::max(0.5, tiles / (waves * Machine::sms));
  double kf = k >= 1024 ? 1.0 : k >= 512 ? 0.9 : k >= 256 ? 0.75 : 0.6;
  return wave * kf;
}

} // namespace

//===----------------------------------------------------------------------===//
// The estimate
//===----------------------------------------------------------------------===//

FunctionEstimate estimateFunction(const ArtifactFunction &f, Scenario scenario) {
  const CostConstants &c = costConstants(scenario);
  FunctionEstimate est;
  est.function = f.name;
  est.scenario = scenario;
  std::map<std::pair<uint64_t, std::string>, PtxFacts> ptxFacts;

  // Which views each op reads and writes (for bytes and the FP8 data flow).
  struct Access {
    std::vector<const View *> reads, writes;
    bool fp8Use = false; // an FP8 GEMM: its reads are FP8 uses
  };
  std::vector<Access> access(f.ops.size());

  for (size_t i = 0; i < f.ops.size(); ++i) {
    OpCost op;
    op.index = i;
    op.label = opLabel(f.ops[i]);
    Access &acc = access[i];
    double fixed = c.nodeSeconds;
    if (const GemmOp *g = std::get_if<GemmOp>(&f.ops[i])) {
      ++est.gemms;
      GemmDesc d = g->desc();
      op.batch = d.batch, op.m = d.m, op.n = d.n, op.k = d.k;
      op.precision = gemmPrecision(*g);
      op.cType = dtypeName(g->cType);
      op.cls = "gemm " + op.precision;
      op.flops = 2.0 * double(d.batch) * double(d.m) * double(d.n) * double(d.k);
      for (const View *v : {&g->a, &g->b})
        acc.reads.push_back(v);
      for (const std::optional<View> *v : {&g->aScale, &g->bScale, &g->bias})
        if (*v)
          acc.reads.push_back(&**v);
      acc.writes.push_back(&g->c);
      acc.fp8Use = g->aType == DType::F8_E4M3 || g->aType == DType::F8_E5M2;
      op.readBytes = viewBytes(g->a) + viewBytes(g->b) + (g->bias ? viewBytes(*g->bias) : 0);
      op.writeBytes = viewBytes(g->c);
      double compute = op.flops / (gemmRate(*g, c) * gemmShapeFactor(d.batch, d.m, d.n, d.k));
      double memory = (op.readBytes + op.writeBytes) / c.dramBytesPerS;
      op.bound = compute >= memory ? "compute" : "DRAM";
      op.seconds = std::max(compute, memory) + fixed;
      est.gemmSeconds += op.seconds;
    } else if (const AttentionOp *a = std::get_if<AttentionOp>(&f.ops[i])) {
      // cuDNN's fused kernel: its FLOPs at the achieved rate, or its
      // operands' bytes at DRAM bandwidth, whichever is longer.
      ++est.attentions;
      op.cls = "attention";
      AttentionDesc d = a->desc();
      op.flops = d.flops();
      op.batch = d.b, op.m = d.sq, op.n = d.skv, op.k = d.d;
      if (a->backward) {
        for (const View *v : {&a->q, &a->k, &a->v, &a->o, &a->dO, &a->lse})
          acc.reads.push_back(v);
        for (const View *v : {&a->dq, &a->dk, &a->dv})
          acc.writes.push_back(v);
      } else {
        for (const View *v : {&a->q, &a->k, &a->v})
          acc.reads.push_back(v);
        for (const View *v : {&a->o, &a->lse})
          acc.writes.push_back(v);
      }
      for (const View *v : acc.reads)
        op.readBytes += viewBytes(*v);
      for (const View *v : acc.writes)
        op.writeBytes += viewBytes(*v);
      double rate = a->backward ? (a->causal ? c.attnBwdCausalFlops : c.attnBwdFlops)
                                : (a->causal ? c.attnFwdCausalFlops : c.attnFwdFlops);
      double compute = op.flops / rate;
      double memory = (op.readBytes + op.writeBytes) / c.dramBytesPerS;
      op.bound = compute >= memory ? "compute" : "DRAM";
      op.seconds = std::max(compute, memory) + fixed;
      est.attentionSeconds += op.seconds;
    } else if (std::holds_alternative<CopyOp>(f.ops[i]) ||
               std::holds_alternative<CollectiveOp>(f.ops[i])) {
      // One view read, one written, at DRAM bandwidth. A collective's is
      // what the GPU itself moves (NCCL reads the input and writes the
      // output); the wire is not modelled here.
      const CollectiveOp *co = std::get_if<CollectiveOp>(&f.ops[i]);
      const CopyOp *cp = std::get_if<CopyOp>(&f.ops[i]);
      const View &src = co ? co->in : cp->src, &dst = co ? co->out : cp->dst;
      op.cls = co ? "collective" : "copy";
      acc.reads.push_back(&src);
      acc.writes.push_back(&dst);
      op.readBytes = viewBytes(src);
      op.writeBytes = viewBytes(dst);
      double t = (op.readBytes + op.writeBytes) / c.dramBytesPerS;
      op.bound = t > fixed ? "DRAM" : "fixed";
      op.seconds = t + fixed;
      if (co) {
        ++est.collectives;
        est.collectiveBytes += std::max(op.readBytes, op.writeBytes);
        est.collectiveSeconds += op.seconds;
      } else {
        ++est.copies;
        est.copySeconds += op.seconds;
      }
    } else {
      const LaunchOp &l = std::get<LaunchOp>(f.ops[i]);
      ++est.launches;
      Traffic reads, writes;
      bool known = l.access.size() == l.params.size();
      est.accessKnown = est.accessKnown && known;
      for (size_t p = 0; p < l.params.size(); ++p) {
        if (l.params[p].kind != LaunchParam::Kind::View)
          continue;
        const View &v = l.params[p].view;
        uint8_t a = known ? l.access[p] : LaunchOp::AccessRead;
        if (a & LaunchOp::AccessRead) {
          reads.add(v);
          acc.reads.push_back(&v);
        }
        if (a & LaunchOp::AccessWrite) {
          writes.add(v);
          acc.writes.push_back(&v);
        }
      }
      op.readBytes = reads.bytes();
      op.writeBytes = writes.bytes();
      op.threads = int64_t(l.grid.x) * l.grid.y * l.grid.z * l.block.x * l.block.y * l.block.z;
      op.serialIters = l.serialIters.value_or(0);
      auto key = std::make_pair(l.module, l.kernel);
      auto it = ptxFacts.find(key);
      if (it == ptxFacts.end())
        it = ptxFacts.emplace(key, scanKernel(entryBody(f.modules[l.module].ptx, l.kernel))).first;
      const PtxFacts &px = it->second;

      double dram = (op.readBytes + op.writeBytes) / c.dramBytesPerS;
      // The latency chain: each thread runs its loop's iterations one after
      // the other, one dependent global load each, except that the loads of
      // an unrolled loop body (several in the PTX loop, or no PTX loop left)
      // are in flight together. Threads beyond what the SMs hold run in
      // further waves.
      double capacity = double(Machine::sms) * Machine::threadsPerSm;
      double waves = std::max(1.0, double(op.threads) / capacity);
      double rounds = 1;
      if (op.serialIters > 0)
        rounds += px.hasLoop ? double(op.serialIters) / std::max(1, px.loopLoads) : 1.0;
      double latency = op.readBytes <= double(Machine::l2ResidentBytes) ? c.l2LatencyS
                                                                         : c.dramLatencyS;
      double chain = waves * rounds * latency;
      // Scalar byte loads: each lane's costs a whole 32-byte sector (the FP8
      // transposes gather bytes of 16 rows per thread).
      double sectors = double(px.byteLoads) * double(op.threads) * Machine::sectorBytes /
                       c.sectorBytesPerS;
      // Partial-sector stores: each 32-byte sector a warp's store touches
      // without filling it costs a sector (the FP8 transposed copies when
      // each lane writes its own rows). Per thread, from the warp analysis;
      // for a store it cannot resolve, one per lane if the scan takes it
      // for a column store.
      std::map<size_t, ptx::WarpStore> warp = ptx::warpStores(
          entryBody(f.modules[l.module].ptx, l.kernel), sampleParams(l),
          uint64_t(l.block.x) * l.block.y * l.block.z, uint64_t(op.threads));
      double partialSectors = 0;
      for (const PtxFacts::Store &st : px.stores) {
        auto w = warp.find(st.line);
        bool known = w != warp.end();
        double lane = known ? double(w->second.partial) / w->second.lanes : st.column ? 1.0 : 0.0;
        double runs = known && w->second.runs > 0 ? w->second.runs
                      : st.inLoop                 ? double(std::max<int64_t>(op.serialIters, 1))
                                                  : 1.0;
        partialSectors += lane * runs * (known ? w->second.threads : double(op.threads));
      }
      double columns = partialSectors * Machine::sectorBytes / c.columnStoreBytesPerS;
      double t = std::max({dram, chain, sectors, columns});
      op.bound = t == columns && columns > 0   ? "col stores"
                 : t == sectors && sectors > 0 ? "L2 sectors"
                 : t == dram                   ? "DRAM"
                                               : "latency";
      op.seconds = t + fixed;
      est.launchSeconds += op.seconds;
    }
    est.fixedSeconds += fixed;
    est.seconds += op.seconds;
    est.ops.push_back(std::move(op));
  }

  // FP8 machinery, backwards: an op is machinery when what it writes is
  // FP8 state or metrics, or is read later only by FP8 GEMMs (operands,
  // scales) and other machinery, or is never read (but not all of it).
  // Values are (space, index). A write that
  // covers its whole space and does not read it redefines the value: reads
  // after it do not see earlier writes, and a result written again later
  // does not leave the function from the earlier write (lpc writes a zero
  // into the step slot to copy from, before the step's own update).
  if (est.accessKnown) {
    struct Value {
      bool read = false, allFp8 = true; // the readers since the last write seen
      bool redefined = false;            // a later write covers it all
    };
    std::map<std::pair<int, uint64_t>, Value> values;
    auto keyOf = [](const View *v) { return std::make_pair(int(v->space), v->index); };
    auto spaceBytes = [&](const View *v) -> double {
      if (const Slot *s = slotOf(f, *v))
        return double(s->byteSize());
      return v->index < f.buffers.size() ? double(f.buffers[v->index].bytes) : -1;
    };
    for (size_t i = f.ops.size(); i-- > 0;) {
      OpCost &op = est.ops[i];
      const Access &acc = access[i];
      // At least one output goes to FP8 (a write nobody reads is neutral).
      bool machinery = false, other = std::holds_alternative<GemmOp>(f.ops[i]) ||
                                      std::holds_alternative<AttentionOp>(f.ops[i]) ||
                                      std::holds_alternative<CollectiveOp>(f.ops[i]);
      for (const View *w : acc.writes) {
        const Slot *s = slotOf(f, *w);
        if (s && w->space == ViewSpace::Result && isFp8Slot(*s)) {
          machinery = true;
          continue;
        }
        const Value &v = values[keyOf(w)];
        bool escapes = w->space == ViewSpace::Result && !v.redefined;
        if (escapes || (v.read && !v.allFp8))
          other = true;
        else if (v.read)
          machinery = true;
      }
      // ... and it is FP8's own kind of work: writing FP8 bytes or FP8
      // state, or small results (scales, statistics, their stages), not a
      // model op whose output only FP8 happens to consume (a layernorm
      // before an FP8 GEMM).
      bool writesByte = false, fp8State = false;
      for (const View *w : acc.writes) {
        const Slot *s = slotOf(f, *w);
        writesByte = writesByte || w->elemBytes == 1;
        fp8State = fp8State || (s && isFp8Slot(*s));
      }
      bool small = op.writeBytes <= kSmallWriteBytes || op.writeBytes * 16 <= op.readBytes;
      machinery = machinery && !other && (writesByte || fp8State || small);
      op.fp8Machinery = machinery;
      for (const View *w : acc.writes) {
        bool alsoRead = std::any_of(acc.reads.begin(), acc.reads.end(), [&](const View *r) {
          return keyOf(r) == keyOf(w);
        });
        if (!alsoRead && footprint(*w) >= spaceBytes(w))
          values[keyOf(w)] = Value{false, true, true};
      }
      for (const View *r : acc.reads) {
        Value &v = values[keyOf(r)];
        v.read = true;
        v.allFp8 = v.allFp8 && (machinery || acc.fp8Use);
      }
    }
  }

  // Classes of launches and copies from what they touch.
  for (size_t i = 0; i < f.ops.size(); ++i) {
    OpCost &op = est.ops[i];
    if (std::holds_alternative<GemmOp>(f.ops[i]) || std::holds_alternative<AttentionOp>(f.ops[i]) ||
        std::holds_alternative<CollectiveOp>(f.ops[i]))
      continue;
    const Access &acc = access[i];
    bool readsByte = false, writesByte = false, writesWide = false, fp8State = false,
         optimizer = false;
    for (const View *v : acc.reads) {
      readsByte = readsByte || v->elemBytes == 1;
      if (const Slot *s = slotOf(f, *v)) {
        fp8State = fp8State || isFp8Slot(*s);
        optimizer = optimizer || isOptimizerState(*s);
      }
    }
    for (const View *v : acc.writes) {
      writesByte = writesByte || v->elemBytes == 1;
      writesWide = writesWide || v->elemBytes != 1;
      if (const Slot *s = slotOf(f, *v)) {
        fp8State = fp8State || isFp8Slot(*s);
        optimizer = optimizer || isOptimizerState(*s);
      }
    }
    bool copy = std::holds_alternative<CopyOp>(f.ops[i]);
    if (op.fp8Machinery) {
      ++est.fp8MachineryOps;
      est.fp8MachinerySeconds += op.seconds;
      if (copy)
        op.cls = "fp8 copy";
      else if (writesByte && !writesWide && readsByte)
        op.cls = "fp8 transpose";
      else if (writesByte)
        op.cls = "fp8 cast";
      else if (fp8State)
        op.cls = "fp8 scale/history";
      else
        op.cls = "fp8 statistics";
    } else if (!copy) {
      const LaunchOp &l = std::get<LaunchOp>(f.ops[i]);
      if (l.access.size() != l.params.size())
        op.cls = "kernel"; // reads and writes unknown
      else if (optimizer)
        op.cls = "optimizer";
      else if (op.threads == 1)
        op.cls = "one-thread";
      else if (op.writeBytes * 4 <= op.readBytes)
        op.cls = "reduction";
      else
        op.cls = "elementwise";
    }
  }
  return est;
}

std::vector<ClassTotal> FunctionEstimate::classes() const {
  std::map<std::string, ClassTotal> m;
  for (const OpCost &op : ops) {
    ClassTotal &t = m[op.cls];
    t.cls = op.cls;
    ++t.count;
    t.bytes += op.readBytes + op.writeBytes;
    t.seconds += op.seconds;
    t.fp8Machinery = op.fp8Machinery;
  }
  std::vector<ClassTotal> out;
  for (auto &kv : m)
    out.push_back(kv.second);
  std::stable_sort(out.begin(), out.end(), [](const ClassTotal &a, const ClassTotal &b) {
    return a.seconds > b.seconds;
  });
  return out;
}

std::vector<GemmGroup> FunctionEstimate::gemmGroups() const {
  std::map<std::tuple<std::string, std::string, int64_t, int64_t, int64_t, int64_t>, GemmGroup> m;
  for (const OpCost &op : ops) {
    if (op.precision.empty())
      continue;
    GemmGroup &g = m[{op.precision, op.cType, op.batch, op.m, op.n, op.k}];
    g.precision = op.precision;
    g.cType = op.cType;
    g.batch = op.batch, g.m = op.m, g.n = op.n, g.k = op.k;
    ++g.count;
    g.flops += op.flops;
    g.seconds += op.seconds;
  }
  std::vector<GemmGroup> out;
  for (auto &kv : m)
    out.push_back(kv.second);
  std::stable_sort(out.begin(), out.end(), [](const GemmGroup &a, const GemmGroup &b) {
    return a.seconds > b.seconds;
  });
  return out;
}

const ArtifactFunction *estimatedFunction(const Artifact &artifact, const std::string &name) {
  if (!name.empty())
    return artifact.find(name);
  for (const ArtifactFunction &f : artifact.functions) {
    const std::string suffix = "_train_step";
    if (f.name.size() >= suffix.size() &&
        f.name.compare(f.name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return &f;
  }
  return artifact.functions.empty() ? nullptr : &artifact.functions[0];
}

} // namespace cuda
} // namespace rt
} // namespace lpc
