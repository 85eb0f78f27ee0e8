// AttentionTests.cpp - the artifact's attention steps (lpc-cuda-tests groups
// cuda-attention: descriptions, FLOP counts, the validator's rules, the host
// stand-in, and artifacts with attention and attention_backward run end to
// end on the fake driver against a double-precision reference; cuda-cudnn:
// the cuDNN graphs built by the real libcudnn as far as it goes without a
// GPU, skipped (exit 77) where libcudnn does not load). No GPU needed.

#include "TestHarness.h"
#include "FakeDevice.h"

#include "lpc/Runtime/CudaArtifact.h"
#include "lpc/Runtime/CudaAttention.h"
#include "lpc/Runtime/CudaTrain.h"
#include "lpc/Runtime/HostFloat.h"
#include "lpc/Runtime/Json.h"
#include "lpc/Runtime/Random.h"

#include "AttentionReference.h"

#include <cmath>

using namespace lpc::rt::cuda;

namespace {

/// A strided view of an artifact, as JSON.
struct ViewSpec {
  std::string space = "arg";
  int index = 0;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
  int elemBytes = 2;

  std::string json() const {
    auto list = [](const std::vector<int64_t> &v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
      return s + "]";
    };
    return "{\"space\": \"" + space + "\", \"index\": " + std::to_string(index) +
           ", \"offset\": " + std::to_string(offset) + ", \"sizes\": " + list(sizes) +
           ", \"strides\": " + list(strides) + ", \"elem_bytes\": " + std::to_string(elemBytes) +
           "}";
  }
  /// Element (b, h, i, c) of a rank-4 view.
  int64_t at(int64_t b, int64_t h, int64_t i, int64_t c) const {
    return offset + b * strides[0] + h * strides[1] + i * strides[2] + c * strides[3];
  }
};

ViewSpec view4(const char *space, int index, int64_t offset, std::vector<int64_t> sizes,
               std::vector<int64_t> strides) {
  return ViewSpec{space, index, offset, std::move(sizes), std::move(strides), 2};
}
std::vector<int64_t> rowMajor(const std::vector<int64_t> &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;)
    st[d - 1] = st[d] * s[d];
  return st;
}
ViewSpec contiguous(const char *space, int index, std::vector<int64_t> sizes, int elemBytes = 2) {
  std::vector<int64_t> st = rowMajor(sizes);
  return ViewSpec{space, index, 0, std::move(sizes), std::move(st), elemBytes};
}

struct Slot {
  std::string dtype;
  std::vector<int64_t> shape;
};

std::string slotsJson(const std::vector<Slot> &slots) {
  std::string s = "[";
  for (size_t i = 0; i < slots.size(); ++i) {
    s += std::string(i ? ", " : "") + "{\"dtype\": \"" + slots[i].dtype + "\", \"shape\": [";
    for (size_t d = 0; d < slots[i].shape.size(); ++d)
      s += (d ? ", " : "") + std::to_string(slots[i].shape[d]);
    s += "]}";
  }
  return s + "]";
}

struct AttnSpec {
  bool backward = false;
  std::string dtype = "BF16";
  bool causal = false;
  double scale = 0.25;
  ViewSpec q, k, v, o, lse, dO, dq, dk, dv;

  std::string json() const {
    std::string s = std::string("{\"op\": \"") + (backward ? "attention_backward" : "attention") +
                    "\", \"dtype\": \"" + dtype + "\", \"causal\": " + (causal ? "true" : "false") +
                    ", \"scale\": " + jsonNumber(scale) + ", \"q\": " + q.json() +
                    ", \"k\": " + k.json() + ", \"v\": " + v.json() + ", \"o\": " + o.json() +
                    ", \"lse\": " + lse.json();
    if (backward)
      s += ", \"do\": " + dO.json() + ", \"dq\": " + dq.json() + ", \"dk\": " + dk.json() +
           ", \"dv\": " + dv.json();
    return s + "}";
  }
  static std::string jsonNumber(double x) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", x);
    return buf;
  }
};

std::string artifactJson(const std::vector<Slot> &args, const std::vector<Slot> &results,
                         const std::vector<std::string> &ops, const std::string &chip = "sm_90") {
  std::string s = "{\"format\": \"lpc-cuda-artifact\", \"version\": 2, \"chip\": \"" + chip +
                  "\", \"producer\": \"runtime/cuda/tests/AttentionTests.cpp\", \"functions\": "
                  "[{\"name\": \"attn_step\", \"args\": " +
                  slotsJson(args) + ", \"results\": " + slotsJson(results) +
                  ", \"arena_bytes\": 0, \"buffers\": [], \"modules\": [], \"ops\": [";
  for (size_t i = 0; i < ops.size(); ++i)
    s += (i ? ", " : "") + ops[i];
  return s + "]}]}";
}

//===----------------------------------------------------------------------===//
// The three end-to-end cases
//===----------------------------------------------------------------------===//

/// One artifact: a forward step and its backward, with the views' layouts.
struct Case {
  std::string name;
  DType dtype = DType::BF16;
  bool causal = false;
  int64_t B = 1, H = 1, Sq = 1, Skv = 1, D = 8, Dv = 8;
  float scale = 0.25f;
  std::vector<Slot> args, results;
  AttnSpec fwd, bwd;
  double tolOut = 0, tolGrad = 0;

  std::string json() const {
    return artifactJson(args, results, {fwd.json(), bwd.json()});
  }
};

/// Self-attention on a [B, S, 3, H, D] projection read in place (the
/// strides a fused QKV GEMM leaves), o and do in [B, S, H, D] layout, dq /
/// dk / dv into one [B, S, 3, H, D] gradient; causal, BF16.
Case selfAttentionCase() {
  Case c;
  c.name = "self-attention, strided qkv, causal, bf16";
  c.dtype = DType::BF16;
  c.causal = true;
  c.B = 2, c.H = 2, c.Sq = c.Skv = 24, c.D = c.Dv = 16;
  c.scale = 0.25f;
  int64_t B = c.B, H = c.H, S = c.Sq, D = c.D;
  c.args = {{"BF16", {B, S, 3, H, D}}, {"BF16", {B, S, H, D}}};
  c.results = {{"BF16", {B, S, H, D}}, {"F32", {B, H, S}}, {"BF16", {B, S, 3, H, D}}};
  std::vector<int64_t> qkvStrides = {S * 3 * H * D, D, 3 * H * D, 1};
  std::vector<int64_t> bshdStrides = {S * H * D, D, H * D, 1};
  std::vector<int64_t> sizes = {B, H, S, D};
  AttnSpec &f = c.fwd;
  f.dtype = "BF16", f.causal = true, f.scale = 0.25;
  f.q = view4("arg", 0, 0, sizes, qkvStrides);
  f.k = view4("arg", 0, H * D, sizes, qkvStrides);
  f.v = view4("arg", 0, 2 * H * D, sizes, qkvStrides);
  f.o = view4("result", 0, 0, sizes, bshdStrides);
  f.lse = contiguous("result", 1, {B, H, S}, 4);
  c.bwd = f;
  AttnSpec &b = c.bwd;
  b.backward = true;
  b.dO = view4("arg", 1, 0, sizes, bshdStrides);
  b.dq = view4("result", 2, 0, sizes, qkvStrides);
  b.dk = view4("result", 2, H * D, sizes, qkvStrides);
  b.dv = view4("result", 2, 2 * H * D, sizes, qkvStrides);
  c.tolOut = 1.5e-2, c.tolGrad = 3e-2; // bf16 outputs (2^-9 relative) and P, dS rounded
  return c;
}

/// Cross-attention, F16, not causal, Sq != Skv, Dv != D, k and v with
/// padded rows (row stride 16 for D = 8).
Case crossAttentionCase() {
  Case c;
  c.name = "cross-attention, padded k/v rows, Sq != Skv, Dv != D, f16";
  c.dtype = DType::F16;
  c.causal = false;
  c.B = 1, c.H = 3, c.Sq = 10, c.Skv = 33, c.D = 8, c.Dv = 24;
  c.scale = 0.35355339f;
  int64_t B = c.B, H = c.H, Sq = c.Sq, Skv = c.Skv, D = c.D, Dv = c.Dv;
  c.args = {{"F16", {B, H, Sq, D}}, {"F16", {B, H, Skv, 16}}, {"F16", {B, H, Skv, Dv}},
            {"F16", {B, H, Sq, Dv}}};
  c.results = {{"F16", {B, H, Sq, Dv}}, {"F32", {B, H, Sq}}, {"F16", {B, H, Sq, D}},
               {"F16", {B, H, Skv, D}}, {"F16", {B, H, Skv, Dv}}};
  AttnSpec &f = c.fwd;
  f.dtype = "F16", f.causal = false, f.scale = c.scale;
  f.q = contiguous("arg", 0, {B, H, Sq, D});
  f.k = view4("arg", 1, 0, {B, H, Skv, D}, {H * Skv * 16, Skv * 16, 16, 1});
  f.v = contiguous("arg", 2, {B, H, Skv, Dv});
  f.o = contiguous("result", 0, {B, H, Sq, Dv});
  f.lse = contiguous("result", 1, {B, H, Sq}, 4);
  c.bwd = f;
  AttnSpec &b = c.bwd;
  b.backward = true;
  b.dO = contiguous("arg", 3, {B, H, Sq, Dv});
  b.dq = contiguous("result", 2, {B, H, Sq, D});
  b.dk = contiguous("result", 3, {B, H, Skv, D});
  b.dv = contiguous("result", 4, {B, H, Skv, Dv});
  c.tolOut = 3e-3, c.tolGrad = 6e-3; // f16: 2^-12 relative
  return c;
}

/// Causal with Sq < Skv (the mask aligned bottom-right), BF16.
Case bottomRightCase() {
  Case c;
  c.name = "causal, Sq < Skv (bottom-right aligned), bf16";
  c.dtype = DType::BF16;
  c.causal = true;
  c.B = 1, c.H = 2, c.Sq = 12, c.Skv = 20, c.D = c.Dv = 16;
  c.scale = 0.25f;
  int64_t B = c.B, H = c.H, Sq = c.Sq, Skv = c.Skv, D = c.D;
  c.args = {{"BF16", {B, H, Sq, D}}, {"BF16", {B, H, Skv, D}}, {"BF16", {B, H, Skv, D}},
            {"BF16", {B, H, Sq, D}}};
  c.results = {{"BF16", {B, H, Sq, D}}, {"F32", {B, H, Sq}}, {"BF16", {B, H, Sq, D}},
               {"BF16", {B, H, Skv, D}}, {"BF16", {B, H, Skv, D}}};
  AttnSpec &f = c.fwd;
  f.dtype = "BF16", f.causal = true, f.scale = 0.25;
  f.q = contiguous("arg", 0, {B, H, Sq, D});
  f.k = contiguous("arg", 1, {B, H, Skv, D});
  f.v = contiguous("arg", 2, {B, H, Skv, D});
  f.o = contiguous("result", 0, {B, H, Sq, D});
  f.lse = contiguous("result", 1, {B, H, Sq}, 4);
  c.bwd = f;
  AttnSpec &b = c.bwd;
  b.backward = true;
  b.dO = contiguous("arg", 3, {B, H, Sq, D});
  b.dq = contiguous("result", 2, {B, H, Sq, D});
  b.dk = contiguous("result", 3, {B, H, Skv, D});
  b.dv = contiguous("result", 4, {B, H, Skv, D});
  c.tolOut = 1.5e-2, c.tolGrad = 3e-2;
  return c;
}

/// Gathers the logical [B, H, S, X] head (b, h) of a view of `data`
/// (decoded values of its slot) into a row-major [S, X] array.
std::vector<double> gatherHead(const ViewSpec &v, const std::vector<double> &data, int64_t b,
                               int64_t h) {
  std::vector<double> out;
  for (int64_t i = 0; i < v.sizes[2]; ++i)
    for (int64_t c = 0; c < v.sizes[3]; ++c)
      out.push_back(data[size_t(v.at(b, h, i, c))]);
  return out;
}

/// max |got - want| / max |want| over the view's head (b, h).
struct ErrorStat {
  double maxErr = 0, maxRef = 0;
  size_t nonFinite = 0;
  void add(double got, double want) {
    if (!std::isfinite(got)) {
      ++nonFinite;
      return;
    }
    maxErr = std::max(maxErr, std::fabs(got - want));
    maxRef = std::max(maxRef, std::fabs(want));
  }
  double rel() const { return maxRef > 0 ? maxErr / maxRef : maxErr; }
};

/// Runs `c` on the fake driver with the host stand-in and checks every
/// output against the double reference computed from the same (rounded)
/// inputs.
void runCase(const Case &c) {
  FakeDevice fake = openFakeDevice();
  if (!fake.device)
    return;
  Device &device = *fake.device;
  Expected<Artifact> art = parseArtifact(c.json(), c.name);
  CHECK_OK(art);
  if (!art)
    return;
  CHECK_OK(art->validate());
  HostAttention host;
  host.device = &device;
  Expected<std::unique_ptr<CudaFunction>> fn = CudaFunction::create(
      device, art->functions[0], nullptr,
      [&](const AttentionDesc &d, const AttentionOperands &o) { return host(d, o); }, c.name);
  CHECK_OK(fn);
  if (!fn)
    return;
  // Inputs: random values in [-1, 1) rounded to the dtype; every arg of the
  // case is an input (qkv / q, k, v, do).
  Rng rng(1234);
  std::vector<std::vector<double>> argValues;
  std::vector<std::vector<uint8_t>> argBytes;
  for (const Slot &s : c.args) {
    size_t n = 1;
    for (int64_t d : s.shape)
      n *= size_t(d);
    std::vector<double> v(n);
    for (double &x : v)
      x = roundTo(c.dtype, 2.0 * rng.uniform() - 1.0);
    argBytes.push_back(encodeAs(c.dtype, v));
    argValues.push_back(std::move(v));
  }
  std::vector<std::vector<uint8_t>> resultBytes;
  for (const Slot &s : c.results) {
    size_t n = s.dtype == "F32" ? 4 : 2;
    for (int64_t d : s.shape)
      n *= size_t(d);
    resultBytes.push_back(std::vector<uint8_t>(n, 0xFF)); // poison: NaNs
  }
  std::vector<const void *> argPtrs;
  std::vector<void *> resultPtrs;
  for (auto &a : argBytes)
    argPtrs.push_back(a.data());
  for (auto &r : resultBytes)
    resultPtrs.push_back(r.data());
  CHECK_OK((*fn)->runHost(argPtrs, resultPtrs));
  CHECK_EQ(host.calls, 2);
  std::vector<std::vector<double>> results;
  for (size_t i = 0; i < c.results.size(); ++i) {
    DType t = c.results[i].dtype == "F32" ? DType::F32 : c.dtype;
    results.push_back(decodeAs(t, resultBytes[i].data(), resultBytes[i].size() / dtypeSize(t)));
  }
  // The values a view reads: an arg's, or a result written by the forward.
  auto source = [&](const ViewSpec &v) -> const std::vector<double> & {
    return v.space == "arg" ? argValues[size_t(v.index)] : results[size_t(v.index)];
  };
  AttentionDesc d;
  d.dtype = c.dtype, d.causal = c.causal, d.scale = c.scale;
  d.b = c.B, d.h = c.H, d.sq = c.Sq, d.skv = c.Skv, d.d = c.D, d.dv = c.Dv;
  ErrorStat o, lse, dq, dk, dv;
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.H; ++h) {
      std::vector<double> q = gatherHead(c.fwd.q, source(c.fwd.q), b, h);
      std::vector<double> k = gatherHead(c.fwd.k, source(c.fwd.k), b, h);
      std::vector<double> v = gatherHead(c.fwd.v, source(c.fwd.v), b, h);
      std::vector<double> refO(size_t(c.Sq * c.Dv)), refLse(size_t(c.Sq));
      referenceAttentionForward(d, q.data(), k.data(), v.data(), refO.data(), refLse.data());
      std::vector<double> gotO = gatherHead(c.fwd.o, source(c.fwd.o), b, h);
      for (size_t i = 0; i < refO.size(); ++i)
        o.add(gotO[i], refO[i]);
      for (int64_t i = 0; i < c.Sq; ++i)
        lse.add(source(c.fwd.lse)[size_t((b * c.H + h) * c.Sq + i)], refLse[size_t(i)]);
      // The backward's inputs as the op got them: o (rounded) and lse as
      // the forward wrote them.
      std::vector<double> gotLse(size_t(c.Sq));
      for (int64_t i = 0; i < c.Sq; ++i)
        gotLse[size_t(i)] = source(c.fwd.lse)[size_t((b * c.H + h) * c.Sq + i)];
      std::vector<double> dO = gatherHead(c.bwd.dO, source(c.bwd.dO), b, h);
      std::vector<double> rq(size_t(c.Sq * c.D)), rk(size_t(c.Skv * c.D)),
          rv(size_t(c.Skv * c.Dv));
      referenceAttentionBackward(d, q.data(), k.data(), v.data(), gotO.data(), dO.data(),
                                 gotLse.data(), rq.data(), rk.data(), rv.data());
      std::vector<double> gq = gatherHead(c.bwd.dq, source(c.bwd.dq), b, h);
      std::vector<double> gk = gatherHead(c.bwd.dk, source(c.bwd.dk), b, h);
      std::vector<double> gv = gatherHead(c.bwd.dv, source(c.bwd.dv), b, h);
      for (size_t i = 0; i < rq.size(); ++i)
        dq.add(gq[i], rq[i]);
      for (size_t i = 0; i < rk.size(); ++i)
        dk.add(gk[i], rk[i]);
      for (size_t i = 0; i < rv.size(); ++i)
        dv.add(gv[i], rv[i]);
    }
  struct Row {
    const char *what;
    const ErrorStat &e;
    double tol;
  } rows[] = {{"o", o, c.tolOut},   {"lse", lse, 1e-5},  {"dq", dq, c.tolGrad},
              {"dk", dk, c.tolGrad}, {"dv", dv, c.tolGrad}};
  for (const Row &r : rows) {
    std::printf("    %s: %s max rel err %.3g (tol %.3g)\n", c.name.c_str(), r.what, r.e.rel(),
                r.tol);
    CHECK_EQ(r.e.nonFinite, size_t(0));
    CHECK(r.e.rel() <= r.tol);
    CHECK(r.e.maxRef > 0); // the outputs are not all zero
  }
  // The gradient slot of the self-attention case is covered exactly by
  // dq, dk and dv: nothing of it is left poisoned.
  for (size_t i = 0; i < results.size(); ++i)
    for (double x : results[i])
      if (!std::isfinite(x)) {
        CHECK(std::isfinite(x));
        break;
      }
}

} // namespace

//===----------------------------------------------------------------------===//
// cuda-attention: descriptions and counts
//===----------------------------------------------------------------------===//

TEST(cuda_attention, desc_flops_and_keys) {
  AttentionDesc d;
  d.b = 4, d.h = 32, d.sq = d.skv = 2048, d.d = d.dv = 128;
  d.causal = true;
  // 2048 x 2049 / 2 kept scores per head.
  CHECK_EQ(d.scoreElements(), 2098176.0);
  CHECK_EQ(d.flops(), 2.0 * 4 * 32 * 2098176.0 * 256);
  d.backward = true;
  CHECK_EQ(d.flops(), 2.0 * 4 * 32 * 2098176.0 * 640);
  d.backward = false;
  d.causal = false;
  CHECK_EQ(d.scoreElements(), 2048.0 * 2048.0);
  // Bottom-right: Sq 64, Skv 128: row i keeps i + 65 keys.
  d.causal = true;
  d.sq = 64, d.skv = 128;
  CHECK_EQ(d.scoreElements(), 64.0 * 65.0 + 64.0 * 63.0 / 2.0);
  // Keys tell apart what plans depend on.
  AttentionDesc e = d;
  CHECK(e.key() == d.key());
  e.k[2] = 16;
  CHECK(e.key() != d.key());
  e = d;
  e.scale = 0.5f;
  CHECK(e.key() != d.key());
  CHECK(d.str().find("attention bf16 causal, B 4 H 32 Sq 64 Skv 128 D 128 Dv 128") == 0);
}

TEST(cuda_attention, validate_desc_and_support) {
  AttentionDesc d;
  d.b = 1, d.h = 2, d.sq = 16, d.skv = 16, d.d = 64, d.dv = 64;
  d.q = d.k = d.v = d.o = {2048, 1024, 64, 1};
  CHECK_OK(validateAttention(d));
  AttentionDesc bad = d;
  bad.dtype = DType::F32;
  CHECK_ERR(validateAttention(bad), "BF16 or F16");
  bad = d, bad.d = 12;
  CHECK_ERR(validateAttention(bad), "multiples of 8 and at most 256");
  bad = d, bad.causal = true, bad.sq = 32;
  CHECK_ERR(validateAttention(bad), "Sq > Skv");
  bad = d, bad.k[3] = 2;
  CHECK_ERR(validateAttention(bad), "k's last stride must be 1");
  bad = d, bad.v[2] = 60;
  CHECK_ERR(validateAttention(bad), "v's strides must be multiples of 8");
  bad = d, bad.scale = 0.0f;
  CHECK_ERR(validateAttention(bad), "scale must be finite");
  AttentionOperands ops;
  ops.q = ops.k = ops.v = ops.o = ops.lse = 0x1000;
  CHECK_OK(validateAttention(d, ops));
  ops.k = 0x1008;
  CHECK_ERR(validateAttention(d, ops), "k is not 16-byte aligned");
  ops.k = 0;
  CHECK_ERR(validateAttention(d, ops), "k is a null pointer");
  // Version and architecture limits (cudnn-frontend's support surface).
  CHECK_OK(checkAttentionSupport(d, 91900, 9, 0));
  CHECK_ERR(checkAttentionSupport(d, 80906, 9, 0), "cuDNN 8.9.6 is too old");
  CHECK_ERR(checkAttentionSupport(d, 91900, 7, 5), "sm_80 or newer", "sm_75");
  CHECK_ERR(checkAttentionSupport(d, 91000, 9, 0), "9.10.0 and 9.10.1");
  AttentionDesc wide = d;
  wide.d = wide.dv = 256;
  CHECK_OK(checkAttentionSupport(wide, 90500, 9, 0));
  CHECK_ERR(checkAttentionSupport(wide, 90500, 8, 0), "above 128", "sm_80");
  CHECK_OK(checkAttentionSupport(wide, 91900, 8, 9));
  AttentionDesc br = d;
  br.causal = true, br.skv = 32;
  CHECK_ERR(checkAttentionSupport(br, 90500, 9, 0), "needs cuDNN 9.6");
  CHECK_OK(checkAttentionSupport(br, 90600, 9, 0));
  AttentionDesc bw = d;
  bw.backward = true, bw.skv = 100;
  bw.dO = bw.dq = bw.dk = bw.dV = bw.q;
  CHECK_ERR(checkAttentionSupport(bw, 91500, 9, 0), "Skv a multiple of 128");
  CHECK_OK(checkAttentionSupport(bw, 91600, 9, 0));
  CHECK_EQ(attentionMaxHeadDim(8), int64_t(128));
  CHECK_EQ(attentionMaxHeadDim(9), int64_t(256));
}

TEST(cuda_attention, references_on_known_values) {
  // One key: softmax is 1, o = v, lse = the score.
  AttentionDesc d;
  d.sq = 2, d.skv = 1, d.d = 2, d.dv = 3, d.scale = 0.5f;
  double q[] = {1, 2, -3, 4}, k[] = {2, 1}, v[] = {1, -2, 3};
  double o[6], lse[2];
  referenceAttentionForward(d, q, k, v, o, lse);
  CHECK_EQ(lse[0], 0.5 * 4);
  CHECK_EQ(lse[1], 0.5 * -2);
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 3; ++c)
      CHECK_EQ(o[i * 3 + c], v[c]);
  // Two equal keys: lse = s + log 2, o = the mean of the values.
  d.sq = 1, d.skv = 2, d.d = 1, d.dv = 1, d.scale = 1.0f;
  double q1[] = {3}, k2[] = {1, 1}, v2[] = {2, 6};
  referenceAttentionForward(d, q1, k2, v2, o, lse);
  CHECK(std::fabs(lse[0] - (3 + std::log(2.0))) < 1e-15);
  CHECK(std::fabs(o[0] - 4) < 1e-15);
  // Causal, Sq = Skv = 2: row 0 sees key 0 only.
  d.sq = 2, d.skv = 2, d.causal = true;
  double q2[] = {1, 1}, v3[] = {5, 7};
  referenceAttentionForward(d, q2, k2, v3, o, lse);
  CHECK_EQ(o[0], 5.0);
  CHECK(std::fabs(o[1] - 6) < 1e-15);
  // The backward against central differences of L = sum(dO * o).
  AttentionDesc g;
  g.sq = 3, g.skv = 4, g.d = 2, g.dv = 2, g.scale = 0.7f, g.causal = true;
  Rng rng(5);
  std::vector<double> Q(6), K(8), V(8), dO(6);
  for (auto *vec : {&Q, &K, &V, &dO})
    for (double &x : *vec)
      x = 2 * rng.uniform() - 1;
  auto loss = [&](const std::vector<double> &q_, const std::vector<double> &k_,
                  const std::vector<double> &v_) {
    std::vector<double> oo(6), ll(3);
    referenceAttentionForward(g, q_.data(), k_.data(), v_.data(), oo.data(), ll.data());
    double l = 0;
    for (size_t i = 0; i < 6; ++i)
      l += oo[i] * dO[i];
    return l;
  };
  std::vector<double> O(6), L(3), dQ(6), dK(8), dV(8);
  referenceAttentionForward(g, Q.data(), K.data(), V.data(), O.data(), L.data());
  referenceAttentionBackward(g, Q.data(), K.data(), V.data(), O.data(), dO.data(), L.data(),
                             dQ.data(), dK.data(), dV.data());
  double worst = 0;
  for (auto [x, grad] : {std::pair<std::vector<double> *, std::vector<double> *>{&Q, &dQ},
                         {&K, &dK},
                         {&V, &dV}})
    for (size_t i = 0; i < x->size(); ++i) {
      double keep = (*x)[i], eps = 1e-6;
      (*x)[i] = keep + eps;
      double up = loss(Q, K, V);
      (*x)[i] = keep - eps;
      double down = loss(Q, K, V);
      (*x)[i] = keep;
      worst = std::max(worst, std::fabs((up - down) / (2 * eps) - (*grad)[i]));
    }
  CHECK(worst < 1e-8);
  // Key 3 is masked for every row but the last (Skv - Sq = 1: row i sees
  // j <= i + 1), so dK's row 3 comes from row 2 only, and is not zero.
  CHECK(dK[6] != 0 || dK[7] != 0);
}

//===----------------------------------------------------------------------===//
// cuda-attention: the validator's rules, one message each
//===----------------------------------------------------------------------===//

namespace {

/// A valid forward + backward pair (B 1, H 2, S 16, D 16, bf16, causal)
/// with every view contiguous; `edit` changes the specs before the JSON.
Expected<Artifact> ruleArtifact(const std::function<void(AttnSpec &fwd, AttnSpec &bwd)> &edit,
                                const std::string &chip = "sm_90") {
  AttnSpec f;
  f.causal = true;
  f.q = contiguous("arg", 0, {1, 2, 16, 16});
  f.k = contiguous("arg", 1, {1, 2, 16, 16});
  f.v = contiguous("arg", 2, {1, 2, 16, 16});
  f.o = contiguous("result", 0, {1, 2, 16, 16});
  f.lse = contiguous("result", 1, {1, 2, 16}, 4);
  AttnSpec b = f;
  b.backward = true;
  b.dO = contiguous("arg", 3, {1, 2, 16, 16});
  b.dq = contiguous("result", 2, {1, 2, 16, 16});
  b.dk = contiguous("result", 3, {1, 2, 16, 16});
  b.dv = contiguous("result", 4, {1, 2, 16, 16});
  edit(f, b);
  std::vector<Slot> args = {{"BF16", {1, 2, 16, 16}}, {"BF16", {1, 2, 16, 16}},
                            {"BF16", {1, 2, 16, 16}}, {"BF16", {1, 2, 16, 16}},
                            {"BF16", {4096}}};
  std::vector<Slot> results = {{"BF16", {1, 2, 16, 16}}, {"F32", {1, 2, 16}},
                               {"BF16", {1, 2, 16, 16}}, {"BF16", {1, 2, 16, 16}},
                               {"BF16", {1, 2, 16, 16}}};
  Expected<Artifact> a = parseArtifact(artifactJson(args, results, {f.json(), b.json()}, chip),
                                       "rules.json");
  if (!a)
    return a;
  if (Error e = a->validate())
    return e;
  return a;
}

} // namespace

TEST(cuda_attention, validator_rules) {
  auto none = [](AttnSpec &, AttnSpec &) {};
  Expected<Artifact> ok = ruleArtifact(none);
  CHECK_OK(ok);
  if (ok) {
    const AttentionOp *a = std::get_if<AttentionOp>(&ok->functions[0].ops[0]);
    const AttentionOp *b = std::get_if<AttentionOp>(&ok->functions[0].ops[1]);
    CHECK(a && !a->backward && a->causal && a->scale == 0.25 && a->dtype == DType::BF16);
    CHECK(b && b->backward && b->dO.index == 3 && b->dv.index == 4);
    CHECK_EQ(opLabel(ok->functions[0].ops[1]), std::string("attention_backward"));
    AttentionDesc d = a->desc();
    CHECK_EQ(d.b, int64_t(1));
    CHECK_EQ(d.h, int64_t(2));
    CHECK_EQ(d.skv, int64_t(16));
    CHECK(d.q == (AttentionDesc::Strides{512, 256, 16, 1}));
  }
  const char *fwd = "rules.json: function 'attn_step', op 0 (attention): ";
  const char *bwd = "rules.json: function 'attn_step', op 1 (attention_backward): ";
  (void)bwd;
  // dtype
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) { f.dtype = "F32"; }), fwd,
            "dtype: F32 (attention takes BF16 or F16)");
  // rank
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) { f.q = contiguous("arg", 0, {2, 16, 16}); }),
            fwd, "q: attention views are rank 4 ([B, H, S, D]), not rank 3");
  // elem_bytes against the dtype
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) {
              f.k = contiguous("arg", 4, {1, 2, 16, 16}, 4);
            }),
            fwd,
            "k: elem_bytes 4 but the dtype is BF16 (2 bytes)");
  // last stride 1
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) {
              f.v.sizes = {1, 2, 8, 16};
              f.v.strides = {512, 256, 32, 2};
            }),
            fwd, "v: the last stride must be 1");
  // bounds
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) { f.q.offset = 8; }), fwd,
            "q: view of arg 0 reaches byte 1040 of 1024");
  // shapes against q / k / v
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) {
              f.k = contiguous("arg", 4, {1, 1, 16, 16});
            }),
            fwd, "k: is [1, 1, 16, 16], expected [1, 2, 16, 16] (B 1, H 2, Sq 16, D 16 from q");
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) { f.o = contiguous("result", 0, {1, 2, 8, 16}); }),
            fwd, "o: is [1, 2, 8, 16], expected [1, 2, 16, 16]");
  CHECK_ERR(ruleArtifact([](AttnSpec &, AttnSpec &b) { b.dk = contiguous("result", 3, {1, 2, 8, 16}); }),
            bwd, "dk: is [1, 2, 8, 16], expected [1, 2, 16, 16]");
  // lse: F32, contiguous, [B, H, Sq]
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) { f.lse.elemBytes = 2; }), fwd,
            "lse: lse is a contiguous [B, H, Sq] F32 view (elem_bytes 4)");
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) { f.lse = contiguous("result", 1, {1, 2, 8}, 4); }),
            fwd, "lse: is [1, 2, 8], expected [1, 2, 16]");
  // head dims: multiples of 8, at most 256
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) {
              for (ViewSpec *v : {&f.q, &f.k})
                *v = contiguous("arg", 4, {1, 2, 16, 12});
            }),
            fwd, "q: head dim D = 12: cuDNN's fused attention takes multiples of 8 up to 256");
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) {
              f.v = contiguous("arg", 4, {1, 1, 1, 264});
              f.v.sizes = {1, 2, 16, 264}, f.v.strides = {0, 0, 0, 1};
              f.o = f.v, f.o.space = "result", f.o.index = 2;
            }),
            fwd, "v: head dim Dv = 264");
  // 16-byte alignment of offsets and strides
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) {
              f.q = contiguous("arg", 4, {1, 2, 16, 16});
              f.q.offset = 4;
            }),
            fwd, "q: offset 4 and strides [512, 256, 16, 1] must be multiples of 8 elements");
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) {
              f.k = contiguous("arg", 4, {1, 2, 16, 16});
              f.k.strides = {0, 260, 16, 1};
            }),
            fwd, "k: offset 0 and strides [0, 260, 16, 1] must be multiples of 8 elements");
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) {
              f.lse = contiguous("result", 4, {1, 2, 16}, 4);
              f.lse.offset = 2;
            }),
            fwd, "lse: offset 2 must be a multiple of 4 elements");
  // causal with Sq > Skv
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) {
              f.k = contiguous("arg", 1, {1, 2, 8, 16});
              f.v = contiguous("arg", 2, {1, 2, 8, 16});
            }),
            fwd, "causal: Sq 16 > Skv 8");
  // scale
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) { f.scale = 0; }), fwd,
            "scale: must be a finite, non-zero f32");
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) { f.scale = 1e300; }), fwd,
            "scale: must be a finite, non-zero f32");
  // outputs overlapping inputs
  CHECK_ERR(ruleArtifact([](AttnSpec &f, AttnSpec &) { f.o = contiguous("arg", 0, {1, 2, 16, 16}); }),
            fwd, "o: shares bytes of arg 0 with q");
  CHECK_ERR(ruleArtifact([](AttnSpec &, AttnSpec &b) {
              b.dq = b.lse;
              b.dq.elemBytes = 2;
              b.dq.sizes = {1, 2, 16, 16};
              b.dq.strides = {0, 0, 0, 1};
            }),
            bwd, "dq: shares bytes of result 1 with lse");
  // keys the parser requires
  CHECK_ERR(parseArtifact(std::string(R"({"format": "lpc-cuda-artifact", "version": 2, "chip": "sm_90",
      "functions": [{"name": "f", "args": [], "results": [], "arena_bytes": 0, "buffers": [],
      "modules": [], "ops": [{"op": "attention", "dtype": "BF16", "scale": 1.0}]}]})"),
                          "p.json"),
            "p.json: function 'f', op 0 (attention): missing 'causal'");
  CHECK_ERR(parseArtifact(std::string(R"({"format": "lpc-cuda-artifact", "version": 2, "chip": "sm_90",
      "functions": [{"name": "f", "args": [], "results": [], "arena_bytes": 0, "buffers": [],
      "modules": [], "ops": [{"op": "attention", "dtype": "BF16", "causal": false}]}]})"),
                          "p.json"),
            "op 0 (attention): missing 'scale'");
  CHECK_ERR(parseArtifact(std::string(R"({"format": "lpc-cuda-artifact", "version": 2, "chip": "sm_90",
      "functions": [{"name": "f", "args": [], "results": [], "arena_bytes": 0, "buffers": [],
      "modules": [], "ops": [{"op": "attention_back"}]}]})"),
                          "p.json"),
            "unknown op 'attention_back' (launch, gemm, copy, attention, attention_backward, "
            "all_reduce, reduce_scatter, all_gather, all_to_all or shard)");
  // The chip's head-dim limit: 128 before sm_90.
  auto wide = [](AttnSpec &f, AttnSpec &b) {
    for (AttnSpec *s : {&f, &b})
      for (ViewSpec *v : {&s->q, &s->k, &s->v, &s->o, &s->dO, &s->dq, &s->dk, &s->dv}) {
        v->sizes = {1, 1, 2, 192};
        v->strides = {384, 384, 192, 1};
      }
    f.lse.sizes = b.lse.sizes = {1, 1, 2};
    f.lse.strides = b.lse.strides = {2, 2, 1};
  };
  CHECK_OK(ruleArtifact(wide, "sm_90"));
  CHECK_ERR(ruleArtifact(wide, "sm_80"), fwd,
            "q: head dim D = 192 is above 128, cuDNN's limit for sm_80");
}

//===----------------------------------------------------------------------===//
// cuda-attention: end to end on the fake driver
//===----------------------------------------------------------------------===//

TEST(cuda_attention, self_attention_strided_causal_bf16) { runCase(selfAttentionCase()); }
TEST(cuda_attention, cross_attention_f16) { runCase(crossAttentionCase()); }
TEST(cuda_attention, bottom_right_causal_bf16) { runCase(bottomRightCase()); }

TEST(cuda_attention, executor_needs_the_callback) {
  FakeDevice fake = openFakeDevice();
  if (!fake.device)
    return;
  Expected<Artifact> art = ruleArtifact([](AttnSpec &, AttnSpec &) {});
  CHECK_OK(art);
  if (!art)
    return;
  CHECK_ERR(CudaFunction::create(*fake.device, art->functions[0], nullptr, "rules.json"),
            "rules.json: function 'attn_step': has attention steps but no attention callback "
            "was given");
  // A failing step is reported with the op that ran it.
  Expected<std::unique_ptr<CudaFunction>> fn = CudaFunction::create(
      *fake.device, art->functions[0], nullptr,
      [](const AttentionDesc &d, const AttentionOperands &) {
        return Error::make("no engine for " + d.str());
      },
      "rules.json");
  CHECK_OK(fn);
  if (!fn)
    return;
  std::vector<std::vector<uint8_t>> args = {std::vector<uint8_t>(1024), std::vector<uint8_t>(1024),
                                            std::vector<uint8_t>(1024), std::vector<uint8_t>(1024),
                                            std::vector<uint8_t>(8192)};
  std::vector<std::vector<uint8_t>> results = {std::vector<uint8_t>(1024), std::vector<uint8_t>(128),
                                               std::vector<uint8_t>(1024), std::vector<uint8_t>(1024),
                                               std::vector<uint8_t>(1024)};
  std::vector<const void *> a;
  std::vector<void *> r;
  for (auto &x : args)
    a.push_back(x.data());
  for (auto &x : results)
    r.push_back(x.data());
  CHECK_ERR((*fn)->runHost(a, r),
            "rules.json: function 'attn_step', op 0 (attention): no engine for attention bf16 "
            "causal, B 1 H 2 Sq 16 Skv 16 D 16 Dv 16");
}

//===----------------------------------------------------------------------===//
// cuda-cudnn: the real libcudnn, without a GPU
//===----------------------------------------------------------------------===//

TEST(cuda_cudnn, graphs_build_without_a_gpu) {
  Expected<const Cudnn *> lib = loadCudnn();
  if (!lib)
    SKIP("cuDNN does not load here: " + lib.error().message());
  std::printf("    cuDNN %zu from %s\n", cudnnVersion(**lib), cudnnPath(**lib).c_str());
  struct Shape {
    bool backward, causal;
    int64_t sq, skv, d, dv;
    DType t;
  } shapes[] = {
      {false, true, 2048, 2048, 128, 128, DType::BF16},  {true, true, 2048, 2048, 128, 128, DType::BF16},
      {false, false, 10, 33, 8, 24, DType::F16},         {true, false, 10, 33, 8, 24, DType::F16},
      {false, true, 64, 128, 64, 64, DType::BF16},       {true, true, 64, 128, 64, 64, DType::BF16},
  };
  for (const Shape &s : shapes) {
    AttentionDesc d;
    d.backward = s.backward, d.causal = s.causal, d.dtype = s.t;
    d.b = 2, d.h = 4, d.sq = s.sq, d.skv = s.skv, d.d = s.d, d.dv = s.dv, d.scale = 0.125f;
    // q, k, v read in place from a [B, S, 3, H, D] projection where they
    // can be (D = Dv, Sq = Skv), else contiguous.
    if (d.d == d.dv && d.sq == d.skv) {
      AttentionDesc::Strides qkv = {d.sq * 3 * d.h * d.d, d.d, 3 * d.h * d.d, 1};
      d.q = d.k = d.v = qkv;
    } else {
      d.q = {d.h * d.sq * d.d, d.sq * d.d, d.d, 1};
      d.k = {d.h * d.skv * d.d, d.skv * d.d, d.d, 1};
      d.v = {d.h * d.skv * d.dv, d.skv * d.dv, d.dv, 1};
    }
    d.o = {d.h * d.sq * d.dv, d.sq * d.dv, d.dv, 1};
    d.dO = d.o, d.dq = d.q, d.dk = d.k, d.dV = d.v;
    AttentionGraphCheck c;
    CHECK_OK(checkAttentionGraph(**lib, d, &c));
    std::printf("    %s: %zu tensors, %zu operations, graph %s; %s\n", d.str().c_str(), c.tensors,
                c.operations, c.graphFinalized ? "finalized" : "NOT finalized",
                c.planFinalized ? "execution plan finalized"
                                : ("stopped at " + c.stoppedAt).c_str());
    CHECK(c.graphFinalized);
    // Forward: matmul, scale, softmax (max, sub, exp, sum, log, add, div),
    // matmul, plus the mask (2 indices, compare, select; + add, sub when
    // Sq != Skv). Backward: 18 without the mask (delta: mul, sum, x 1;
    // P: matmul, scale, minus stats, exp; dV: reshape, matmul; dP: matmul,
    // minus delta, x P, x scale; dK: reshape, matmul; dQ: reshape of K,
    // matmul, identity).
    size_t mask = d.causal ? 4 + (d.sq != d.skv ? 2 : 0) : 0;
    CHECK_EQ(c.operations, (d.backward ? size_t(18) : size_t(10)) + mask);
  }
}

TEST(cuda_attention, train_steps_need_cudnn) {
  // openCudaSteps builds the cuDNN engine for an artifact with attention
  // steps before anything runs; on the fake driver cuDNN cannot run (no
  // GPU for its runtime, a fake stream, or no libcudnn at all) and says
  // so, naming cuDNN and, when the library is missing, LPC_CUDNN_LIBRARY.
  FakeDevice fake = openFakeDevice();
  if (!fake.device)
    return;
  Expected<Artifact> art = ruleArtifact([](AttnSpec &, AttnSpec &) {});
  CHECK_OK(art);
  if (!art)
    return;
  Expected<CudaSteps> steps =
      openCudaSteps(art.take(), "attn_step", "attn_step", std::move(fake.device));
  CHECK_ERR(steps, "rules.json has attention steps");
  if (!steps) {
    std::string m = steps.error().message();
    Expected<const Cudnn *> lib = loadCudnn();
    std::printf("    %s\n", m.c_str());
    // Where a GPU is beside the fake one (an H200 run), cuDNN itself starts
    // and a later call fails on the fake stream: any cuDNN call is named.
    if (lib)
      CHECK(m.find("cuDNN") != std::string::npos || m.find("cudnn") != std::string::npos);
    else
      CHECK(m.find("LPC_CUDNN_LIBRARY") != std::string::npos);
  }
}
