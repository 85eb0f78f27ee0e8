//===- GemmSelftest.cpp - lpc-cuda-check --gemm-selftest ------------------===//
//
// Every GEMM precision, layout and epilogue through cuBLASLt against a
// double-precision host reference (GemmReference.h) from the same rounded
// inputs, within a tolerance per output format; FP8 outputs' amax; a GEMM
// captured in a graph, bit for bit.
//
//===----------------------------------------------------------------------===//

#include "Check.h"

#include "lpc/Runtime/HostFloat.h"

#include "GemmReference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {
namespace check {
namespace {

struct GemmCase {
  GemmDesc d;
  float alpha = 1.0f;
  float aScale = 1.0f, bScale = 1.0f; // FP8 only
  double tol;
  const char *why; // what the tolerance allows for
};

std::vector<GemmCase> gemmCases() {
  using E = GemmEpilogue;
  std::vector<GemmCase> cases;
  auto add = [&](GemmDesc d, double tol, const char *why, float alpha = 1.0f,
                 float as = 1.0f, float bs = 1.0f) {
    GemmCase c;
    c.d = d, c.tol = tol, c.why = why, c.alpha = alpha, c.aScale = as, c.bScale = bs;
    cases.push_back(c);
  };
  // Tolerances are on max|C - ref| / max|ref|: accumulation order in FP32
  // (~1e-6 here) plus the rounding of the output format (half an ulp:
  // bf16 2^-9, f16 2^-12, e4m3 2^-4) and TF32's 10-bit inputs.
  add(makeDesc(67, 45, 93, 3, false, false, DType::F32, DType::F32, DType::F32, E::Bias),
      1e-5, "f32 accumulation", 0.5f);
  {
    GemmDesc d = makeDesc(128, 96, 256, 1, true, true, DType::F32, DType::F32, DType::F32,
                          E::GeluTanh);
    d.tf32 = true;
    add(d, 4e-3, "tf32 inputs (10-bit mantissa)");
  }
  add(makeDesc(256, 192, 320, 1, false, true, DType::BF16, DType::BF16, DType::BF16,
               E::BiasGeluTanh),
      8e-3, "bf16 output");
  {
    GemmDesc d = makeDesc(100, 72, 64, 2, true, false, DType::BF16, DType::BF16, DType::F32);
    d.broadcastB = true;
    add(d, 1e-5, "f32 accumulation");
  }
  add(makeDesc(96, 80, 112, 1, false, false, DType::F16, DType::F16, DType::F16, E::Bias),
      2e-3, "f16 output");
  add(makeDesc(48, 64, 80, 2, true, true, DType::F16, DType::F16, DType::F32), 1e-5,
      "f32 accumulation");
  {
    GemmDesc d = makeDesc(128, 256, 512, 1, false, true, DType::F8_E4M3, DType::F8_E4M3,
                          DType::BF16, E::Bias);
    d.fastAccum = true;
    add(d, 1.5e-2, "bf16 output, fast accumulation", 1.0f, 0.5f, 4.0f);
  }
  add(makeDesc(64, 128, 256, 2, false, true, DType::F8_E4M3, DType::F8_E5M2, DType::F32,
               E::Bias),
      1e-3, "promoted fp8 accumulation", 1.0f, 0.25f, 2.0f);
  add(makeDesc(80, 96, 128, 1, false, true, DType::F8_E5M2, DType::F8_E4M3, DType::F16,
               E::GeluTanh),
      3e-3, "f16 output", 1.0f, 2.0f, 0.125f);
  add(makeDesc(64, 64, 128, 1, false, true, DType::F8_E4M3, DType::F8_E4M3, DType::F8_E4M3,
               E::BiasGeluTanh),
      7e-2, "e4m3 output (3 mantissa bits)", 1.0f, 0.5f, 0.5f);
  add(makeDesc(64, 64, 128, 1, false, true, DType::F8_E5M2, DType::F8_E4M3, DType::F8_E5M2),
      1.3e-1, "e5m2 output (2 mantissa bits)", 1.0f, 1.0f, 1.0f);
  return cases;
}

struct GemmBuffers {
  DeviceBuffer a, b, c, bias, scales; // scales: aScale, bScale, cScale, amax
};

/// Runs one case; returns false when anything failed (after printing why).
bool runGemmCase(Device &dev, GemmEngine &engine, const GemmCase &gc, uint64_t seed,
                 Report &r) {
  const GemmDesc &d = gc.d;
  Rng rng(seed);
  size_t na = size_t(d.batch * d.m * d.k);
  size_t nb = size_t((d.broadcastB ? 1 : d.batch) * d.k * d.n);
  size_t nc = size_t(d.batch * d.m * d.n);
  std::vector<double> a = randomValues(rng, na, d.a);
  std::vector<double> b = randomValues(rng, nb, d.b);
  DType biasType = gemmBiasType(d);
  std::vector<double> bias;
  if (d.hasBias())
    bias = randomValues(rng, size_t(d.n), biasType);
  bool fp8 = d.isFP8();
  bool fp8Out = d.c == DType::F8_E4M3 || d.c == DType::F8_E5M2;
  double scale = double(gc.alpha) * (fp8 ? double(gc.aScale) * double(gc.bScale) : 1.0);
  std::vector<double> ref = referenceGemm(d, a, b, bias, scale);
  double amaxRef = 0;
  for (double v : ref)
    amaxRef = std::max(amaxRef, std::fabs(v));
  // FP8 output: quantize the largest value to ~200 (E4M3 max 448).
  float cScale = fp8Out ? float(200.0 / amaxRef) : 1.0f;

  auto fail = [&](const Error &e) {
    r.line(false, d.str(), e.message());
    return false;
  };
  std::vector<uint8_t> ha = encodeAs(d.a, a), hb = encodeAs(d.b, b);
  Expected<DeviceBuffer> da = upload(dev, ha.data(), ha.size());
  Expected<DeviceBuffer> db = upload(dev, hb.data(), hb.size());
  Expected<DeviceBuffer> dc = dev.allocate(gemmBytesC(d));
  Expected<DeviceBuffer> ds = dev.allocate(4 * kScaleAlign);
  if (!da || !db || !dc || !ds)
    return fail(!da ? da.takeError() : !db ? db.takeError() : !dc ? dc.takeError() : ds.takeError());
  GemmOperands ops;
  ops.a = da->get(), ops.b = db->get(), ops.c = dc->get(), ops.alpha = gc.alpha;
  Expected<DeviceBuffer> dbias = DeviceBuffer();
  if (d.hasBias()) {
    std::vector<uint8_t> hbias = encodeAs(biasType, bias);
    dbias = upload(dev, hbias.data(), hbias.size());
    if (!dbias)
      return fail(dbias.takeError());
    ops.bias = dbias->get();
  }
  if (fp8) {
    // amax starts at 0: a cuBLASLt that folds in the old value (max) must
    // still give max|C|, and one that writes nothing shows as 0.
    // Each scalar kScaleAlign bytes apart (cuBLASLt refuses closer ones).
    float scales[4] = {gc.aScale, gc.bScale, cScale, 0.0f};
    for (int i = 0; i < 4; ++i)
      if (Error e = dev.copyToDevice(ds->get() + i * kScaleAlign, &scales[i], sizeof(float)))
        return fail(e);
    ops.aScale = ds->get();
    ops.bScale = ds->get() + kScaleAlign;
    if (fp8Out) {
      ops.cScale = ds->get() + 2 * kScaleAlign;
      ops.amax = ds->get() + 3 * kScaleAlign;
    }
  }
  // Poison C so a GEMM that writes nothing cannot pass.
  if (Error e = dev.memset(ops.c, 0xFF, gemmBytesC(d)))
    return fail(e);
  if (Error e = engine.run(d, ops))
    return fail(e);
  std::vector<uint8_t> hc(gemmBytesC(d));
  if (Error e = dev.copyToHost(hc.data(), ops.c, hc.size()))
    return fail(e);
  std::vector<double> c = decodeAs(d.c, hc.data(), nc);

  double maxErr = 0, maxRef = 0;
  size_t nonfinite = 0;
  for (size_t i = 0; i < nc; ++i) {
    double want = ref[i] * cScale;
    if (!std::isfinite(c[i])) {
      ++nonfinite;
      continue;
    }
    maxErr = std::max(maxErr, std::fabs(c[i] - want));
    maxRef = std::max(maxRef, std::fabs(want));
  }
  double rel = maxErr / maxRef;
  bool pass = nonfinite == 0 && rel <= gc.tol;
  char detail[256];
  std::snprintf(detail, sizeof(detail), "max rel err %.3g (tol %.3g: %s)%s", rel, gc.tol,
                gc.why, nonfinite ? ", non-finite outputs" : "");
  r.line(pass, d.str(), detail);
  if (fp8Out) {
    float amax = 0;
    if (Error e = dev.copyToHost(&amax, ops.amax, 4))
      return fail(e);
    double amaxRel = std::fabs(amax - amaxRef) / amaxRef;
    std::snprintf(detail, sizeof(detail), "%.6g vs reference %.6g (rel err %.3g, tol 1e-2)",
                  double(amax), amaxRef, amaxRel);
    r.line(amaxRel <= 1e-2, "  amax of that output", detail);
    pass = pass && amaxRel <= 1e-2;
  }
  return pass;
}

/// A GEMM captured into a graph gives bit-identical results when replayed.
void gemmGraphCheck(Device &dev, GemmEngine &engine, Report &r) {
  GemmDesc d = makeDesc(128, 128, 256, 1, false, true, DType::BF16, DType::BF16, DType::BF16);
  Rng rng(99);
  std::vector<uint8_t> ha = encodeAs(d.a, randomValues(rng, size_t(d.m * d.k), d.a));
  std::vector<uint8_t> hb = encodeAs(d.b, randomValues(rng, size_t(d.n * d.k), d.b));
  Expected<DeviceBuffer> da = upload(dev, ha.data(), ha.size());
  Expected<DeviceBuffer> db = upload(dev, hb.data(), hb.size());
  Expected<DeviceBuffer> c1 = dev.allocate(gemmBytesC(d));
  Expected<DeviceBuffer> c2 = dev.allocate(gemmBytesC(d));
  if (!da || !db || !c1 || !c2) {
    r.line(false, "GEMM in a graph", "allocation failed");
    return;
  }
  GemmOperands ops;
  ops.a = da->get(), ops.b = db->get(), ops.c = c1->get();
  if (!r.step("GEMM in a graph: direct run", engine.run(d, ops)))
    return;
  ops.c = c2->get();
  Expected<Graph> g = Graph::capture(dev, [&] { return engine.run(d, ops); });
  if (!r.step("GEMM in a graph: capture", g ? Error() : g.takeError()))
    return;
  if (!r.step("GEMM in a graph: launch", g->launch()))
    return;
  std::vector<uint8_t> h1(gemmBytesC(d)), h2(gemmBytesC(d));
  if (!r.step("GEMM in a graph: download", dev.copyToHost(h1.data(), c1->get(), h1.size())) ||
      !r.step("GEMM in a graph: download", dev.copyToHost(h2.data(), c2->get(), h2.size())))
    return;
  r.line(h1 == h2, "GEMM captured in a graph matches the direct run bit for bit");
}

} // namespace

void gemmSelftest(Device &dev, Report &r) {
  std::printf("GEMM self-test (cuBLASLt; error = max|C - ref| / max|ref|, ref in double "
              "from the rounded inputs):\n");
  Expected<std::unique_ptr<GemmEngine>> engine = GemmEngine::create(dev);
  if (!r.step("create the GEMM engine", engine ? Error() : engine.takeError()))
    return;
  std::vector<GemmCase> cases = gemmCases();
  for (size_t i = 0; i < cases.size(); ++i)
    runGemmCase(dev, **engine, cases[i], 1000 + i, r);
  gemmGraphCheck(dev, **engine, r);
  std::printf("  (%zu cuBLASLt plans cached)\n", (*engine)->cachedPlans());
}

} // namespace check
} // namespace cuda
} // namespace rt
} // namespace lpc
