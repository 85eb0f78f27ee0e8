//===- lpc-cuda-check.cpp - is there a usable GPU, and does it compute right? ===//
//
//   lpc-cuda-check                     driver version and devices
//   lpc-cuda-check --driver-selftest   + allocator, PTX load / launch / JIT
//                                        error log, graph capture, events
//   lpc-cuda-check --gemm-selftest     + every GEMM precision against a
//                                        double-precision host reference
//   lpc-cuda-check --attention-selftest + cuDNN attention forward and
//                                        backward (small shapes and a
//                                        d4096-GPT one) against a double
//                                        reference, in a CUDA graph, timed
//   lpc-cuda-check --nccl-selftest     + NCCL collectives (all_reduce sum /
//                                        mean / max, reduce_scatter,
//                                        all_gather, shard; FP8 all_to_all
//                                        and all_gather) of an artifact
//                                        function, direct and in a CUDA
//                                        graph, against a host reference;
//                                        one rank, or every rank of mpirun
//   lpc-cuda-check --gemm-bench[=MxNxK,...] [--bench-precisions=P,...]
//                  [--bench-iters=N]   cuBLASLt GEMM timings in TFLOP/s
//   lpc-cuda-check --print-test-ptx    the PTX test kernel (no GPU needed)
//   lpc-cuda-check --artifact=FILE     loads and validates a CUDA artifact
//                                        (docs/cuda-artifact.md) and
//                                        summarizes it (no GPU needed)
//   lpc-cuda-check --print-test-artifact  the fake-driver test artifact
//   lpc-cuda-check --estimate FILE [--against FILE2] [--scenario=S]
//                  [--format=table|json] [--top=N] [--function=NAME]
//                                      the modelled H200 cost of an artifact's
//                                        step (CudaEstimate.h; no GPU needed)
//   --device=N                         the device to test (default 0)
//
// Exit codes: 0 all good; 1 a check failed, an artifact is invalid, or
// something broke; 2 no NVIDIA
// driver or no GPU (one line saying which; ctest's SKIP_RETURN_CODE for GPU
// tests); 64 bad usage. Needs only the runtime, never LLVM/MLIR.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/CudaAllocator.h"
#include "lpc/Runtime/Comm.h"
#include "lpc/Runtime/CudaArtifact.h"
#include "lpc/Runtime/CudaAttention.h"
#include "lpc/Runtime/CudaDriver.h"
#include "lpc/Runtime/CudaEstimate.h"
#include "lpc/Runtime/CudaGemm.h"
#include "lpc/Runtime/CudaNccl.h"
#include "lpc/Runtime/Json.h"
#include "lpc/Runtime/Random.h"

#include "AttentionReference.h"
#include "GemmReference.h"
#include "lpc/Runtime/HostFloat.h"
#include "TestKernels.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace lpc::rt;
using namespace lpc::rt::cuda;

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitNoGpu = 2, kExitUsage = 64;

const char kUsage[] =
    "usage: lpc-cuda-check [--driver-selftest] [--gemm-selftest] [--attention-selftest]\n"
    "                      [--nccl-selftest] (under mpirun: every rank, one GPU each)\n"
    "                      [--gemm-bench[=MxNxK,...]] [--bench-precisions=P,...]\n"
    "                      [--bench-iters=N] [--device=N] [--print-test-ptx]\n"
    "       lpc-cuda-check --artifact=FILE | --print-test-artifact\n"
    "       lpc-cuda-check --estimate FILE [--against FILE2] [--scenario=low|mid|high|all]\n"
    "                      [--format=table|json] [--top=N] [--function=NAME]\n"
    "--estimate: the modelled cost of FILE's train step on an H200 (a model, not a\n"
    "  measurement; no GPU needed): step time, per-class totals, GEMMs by shape and\n"
    "  precision, the N most expensive ops (default 10), FP8 machinery; --against:\n"
    "  the ratio of the two steps per scenario (FILE / FILE2). Default scenario all;\n"
    "  the model: docs/cost-model.md\n"
    "bench precisions: bf16 f16 tf32 f32 fp8 fp8-fast fp8-e5m2 "
    "(default bf16,fp8-fast,fp8)\n"
    "exit: 0 ok, 1 failed, 2 no NVIDIA driver or GPU, 64 usage\n";

struct Options {
  bool driverSelftest = false, gemmSelftest = false, bench = false;
  bool attentionSelftest = false, attentionHost = false, ncclSelftest = false;
  bool deviceGiven = false;
  std::string benchShapes = "4096x4096x4096,8192x2048x8192";
  std::string benchPrecisions = "bf16,fp8-fast,fp8";
  int benchIters = 20;
  int device = 0;
};

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GiB", bytes / 1073741824.0);
  return buf;
}

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  return buf;
}

std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos)
      comma = s.size();
    if (comma > start)
      out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

/// Collects "ok"/"FAIL" lines and remembers whether anything failed.
struct Report {
  bool ok = true;
  void line(bool pass, const std::string &what, const std::string &detail = "") {
    std::printf("  %-4s %s%s%s\n", pass ? "ok" : "FAIL", what.c_str(),
                detail.empty() ? "" : ": ", detail.c_str());
    std::fflush(stdout);
    ok = ok && pass;
  }
  /// A step that must succeed for the rest to make sense.
  bool step(const std::string &what, const Error &e) {
    if (e)
      line(false, what, e.message());
    return !e;
  }
};

//===----------------------------------------------------------------------===//
// Driver self-test
//===----------------------------------------------------------------------===//

Expected<DeviceBuffer> upload(Device &dev, const void *data, size_t bytes) {
  Expected<DeviceBuffer> buf = dev.allocate(bytes);
  if (!buf)
    return buf.takeError();
  if (Error e = dev.copyToDevice(buf->get(), data, bytes))
    return e;
  return buf;
}

template <typename T> Expected<std::vector<T>> download(Device &dev, CUdeviceptr p, size_t n) {
  std::vector<T> out(n);
  if (Error e = dev.copyToHost(out.data(), p, n * sizeof(T)))
    return e;
  return out;
}

void driverSelftest(Device &dev, Report &r) {
  std::printf("driver self-test:\n");
  CachingAllocator &alloc = dev.allocator();

  // Allocator: a freed block comes back for a request of the same rounded size.
  {
    AllocatorStats before = alloc.stats();
    Expected<DeviceBuffer> b1 = dev.allocate(1000);
    if (!r.step("allocate", b1 ? Error() : b1.takeError()))
      return;
    CUdeviceptr p1 = b1->get();
    b1->reset();
    Expected<DeviceBuffer> b2 = dev.allocate(900); // rounds to the same 1024
    if (!r.step("allocate", b2 ? Error() : b2.takeError()))
      return;
    AllocatorStats after = alloc.stats();
    r.line(b2->get() == p1 && after.cacheHits == before.cacheHits + 1 &&
               after.backendAllocations == before.backendAllocations + 1,
           "caching allocator reuses a freed block",
           "in use " + std::to_string(after.inUse) + " B, held " +
               std::to_string(after.held) + " B");
  }

  // Module load and launch: y = a x + y with exactly representable values.
  const unsigned n = (1u << 20) + 3; // not a multiple of the block size
  std::vector<float> x(n), y0(n);
  for (unsigned i = 0; i < n; ++i) {
    x[i] = float(i % 1000);
    y0[i] = float(i % 7) - 3.0f;
  }
  Expected<Module> mod = Module::load(dev, kTestPtx);
  if (!r.step("load the PTX test kernel", mod ? Error() : mod.takeError()))
    return;
  Expected<CUfunction> fn = mod->function(kTestKernelName);
  if (!r.step("cuModuleGetFunction", fn ? Error() : fn.takeError()))
    return;
  Expected<DeviceBuffer> dx = upload(dev, x.data(), n * 4);
  Expected<DeviceBuffer> dy = upload(dev, y0.data(), n * 4);
  if (!r.step("upload", !dx ? dx.takeError() : !dy ? dy.takeError() : Error()))
    return;
  CUdeviceptr px = dx->get(), py = dy->get();
  auto launch = [&](float a) {
    unsigned count = n;
    void *params[] = {&px, &py, &a, &count};
    return dev.launch(*fn, Dim3{(n + 255) / 256, 1, 1}, Dim3{256, 1, 1}, 0, params);
  };
  if (!r.step("cuLaunchKernel", launch(2.0f)))
    return;
  Expected<std::vector<float>> got = download<float>(dev, py, n);
  if (!r.step("download", got ? Error() : got.takeError()))
    return;
  size_t bad = 0;
  for (unsigned i = 0; i < n; ++i)
    bad += (*got)[i] != 2.0f * x[i] + y0[i];
  r.line(bad == 0, "PTX kernel (JIT) computes y = a x + y",
         std::to_string(n) + " elements, " + std::to_string(bad) + " wrong");

  // A JIT error carries the JIT's log.
  Expected<Module> broken = Module::load(dev, kBrokenPtx);
  std::string msg = broken ? "loaded" : broken.error().message();
  r.line(!broken && msg.find("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX") == 0 &&
             msg.find("line") != std::string::npos,
         "invalid PTX is reported with the JIT log", msg);

  // Graph: three launches captured once, replayed twice.
  if (Error e = dev.copyToDevice(py, y0.data(), n * 4); !r.step("reset y", e))
    return;
  Expected<Graph> graph = Graph::capture(dev, [&]() -> Error {
    for (float a : {1.0f, 2.0f, 3.0f})
      if (Error e = launch(a))
        return e;
    return Error();
  });
  if (!r.step("graph capture", graph ? Error() : graph.takeError()))
    return;
  Expected<StreamTimer> timer = StreamTimer::create(dev);
  if (!r.step("events", timer ? Error() : timer.takeError()))
    return;
  if (!r.step("graph launch", timer->start()) || !r.step("graph launch", graph->launch()) ||
      !r.step("graph launch", graph->launch()) || !r.step("event record", timer->stop()))
    return;
  Expected<float> ms = timer->elapsedMs();
  got = download<float>(dev, py, n);
  if (!r.step("download", got ? Error() : got.takeError()))
    return;
  bad = 0;
  for (unsigned i = 0; i < n; ++i)
    bad += (*got)[i] != 12.0f * x[i] + y0[i];
  char detail[128];
  std::snprintf(detail, sizeof(detail), "%u elements, %zu wrong, %.3f ms for 6 launches", n,
                bad, ms ? double(*ms) : -1.0);
  r.line(bad == 0 && ms && *ms > 0, "graph of 3 launches replayed twice", detail);
  if (!ms)
    r.line(false, "cuEventElapsedTime", ms.error().message());

  // Capture ends cleanly when the body fails, and the stream stays usable.
  Expected<Graph> failing = Graph::capture(dev, [] { return Error::make("test failure"); });
  r.line(!failing && failing.error().message().find("test failure") != std::string::npos &&
             !dev.synchronize(),
         "a failed capture ends the capture");
}

//===----------------------------------------------------------------------===//
// GEMM self-test
//===----------------------------------------------------------------------===//

struct GemmCase {
  GemmDesc d;
  float alpha = 1.0f;
  float aScale = 1.0f, bScale = 1.0f; // FP8 only
  double tol;
  const char *why; // what the tolerance allows for
};

GemmDesc makeDesc(int64_t m, int64_t n, int64_t k, int64_t batch, bool ta, bool tb,
                  DType a, DType b, DType c, GemmEpilogue ep = GemmEpilogue::None) {
  GemmDesc d;
  d.m = m, d.n = n, d.k = k, d.batch = batch, d.transA = ta, d.transB = tb;
  d.a = a, d.b = b, d.c = c, d.epilogue = ep;
  return d;
}

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

/// Random values, never zero: magnitudes in [0.25, 2) with random signs,
/// rounded to `t`.
std::vector<double> randomValues(Rng &rng, size_t n, DType t) {
  std::vector<double> v(n);
  for (double &x : v) {
    double mag = 0.25 + 1.75 * rng.uniform();
    x = roundTo(t, rng.uniform() < 0.5 ? -mag : mag);
  }
  return v;
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
  Expected<DeviceBuffer> ds = dev.allocate(64);
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
    float scales[4] = {gc.aScale, gc.bScale, cScale, 0.0f};
    if (Error e = dev.copyToDevice(ds->get(), scales, sizeof(scales)))
      return fail(e);
    ops.aScale = ds->get();
    ops.bScale = ds->get() + 4;
    if (fp8Out) {
      ops.cScale = ds->get() + 8;
      ops.amax = ds->get() + 12;
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

//===----------------------------------------------------------------------===//
// Attention self-test (cuDNN)
//===----------------------------------------------------------------------===//

/// One attention case: q, k, v read in place from one [B, S, 3, H, D]
/// projection when Sq = Skv and D = Dv (as lpc's GPT does), else separate
/// contiguous tensors; forward, then backward with a random dO.
struct AttentionCase {
  const char *what;
  DType dtype;
  bool causal;
  int64_t b, h, sq, skv, d, dv;
  /// (batch, head) pairs checked against the double reference (all when
  /// empty): the reference costs ~1 GFLOP per head at S = 2048.
  std::vector<std::pair<int64_t, int64_t>> heads;
};

/// Uniform values in [-1, 1) as `t`'s bits (2 bytes each), cheaply.
std::vector<uint16_t> randomHalfBits(Rng &rng, size_t n, DType t) {
  const MiniFloat &f = t == DType::F16 ? kF16 : kBF16;
  std::vector<uint16_t> out(n);
  for (uint16_t &x : out)
    x = uint16_t(f.encode(2.0 * rng.uniform() - 1.0));
  return out;
}

/// What runs the steps: cuDNN's engine, or (--attention-selftest=host, on
/// the fake driver) the host stand-in, which checks this self-test itself.
struct AttentionRunner {
  AttentionCallback run;
  std::function<std::string()> planInfo;
  bool capturable = true;
};

bool runAttentionCase(Device &dev, const AttentionRunner &engine, const AttentionCase &ac,
                      Report &r) {
  const MiniFloat &fmt = ac.dtype == DType::F16 ? kF16 : kBF16;
  AttentionDesc d;
  d.dtype = ac.dtype, d.causal = ac.causal;
  d.b = ac.b, d.h = ac.h, d.sq = ac.sq, d.skv = ac.skv, d.d = ac.d, d.dv = ac.dv;
  d.scale = float(1.0 / std::sqrt(double(ac.d)));
  bool packed = d.sq == d.skv && d.d == d.dv;
  // Element offsets of q, k, v in the input block, and their strides.
  int64_t qOff = 0, kOff = 0, vOff = 0, inElems = 0;
  if (packed) {
    d.q = d.k = d.v = {d.sq * 3 * d.h * d.d, d.d, 3 * d.h * d.d, 1};
    kOff = d.h * d.d, vOff = 2 * d.h * d.d;
    inElems = d.b * d.sq * 3 * d.h * d.d;
  } else {
    d.q = {d.h * d.sq * d.d, d.sq * d.d, d.d, 1};
    d.k = {d.h * d.skv * d.d, d.skv * d.d, d.d, 1};
    d.v = {d.h * d.skv * d.dv, d.skv * d.dv, d.dv, 1};
    kOff = d.b * d.h * d.sq * d.d;
    vOff = kOff + d.b * d.h * d.skv * d.d;
    inElems = vOff + d.b * d.h * d.skv * d.dv;
  }
  d.o = {d.h * d.sq * d.dv, d.sq * d.dv, d.dv, 1};
  std::string name = std::string(ac.what) + ": " + d.str();
  auto fail = [&](const Error &e) {
    r.line(false, name, e.message());
    return false;
  };
  Rng rng(77);
  std::vector<uint16_t> in = randomHalfBits(rng, size_t(inElems), d.dtype);
  size_t oElems = size_t(d.b * d.h * d.sq * d.dv), rows = size_t(d.b * d.h * d.sq);
  std::vector<uint16_t> dOBits = randomHalfBits(rng, oElems, d.dtype);
  Expected<DeviceBuffer> dIn = upload(dev, in.data(), in.size() * 2);
  Expected<DeviceBuffer> dDO = upload(dev, dOBits.data(), dOBits.size() * 2);
  Expected<DeviceBuffer> dO = dev.allocate(oElems * 2), dLse = dev.allocate(rows * 4),
                         dGrad = dev.allocate(size_t(inElems) * 2);
  if (!dIn || !dDO || !dO || !dLse || !dGrad)
    return fail(!dIn ? dIn.takeError() : !dDO ? dDO.takeError() : !dO ? dO.takeError()
                : !dLse ? dLse.takeError() : dGrad.takeError());
  AttentionOperands ops;
  ops.q = dIn->get() + CUdeviceptr(qOff * 2), ops.k = dIn->get() + CUdeviceptr(kOff * 2);
  ops.v = dIn->get() + CUdeviceptr(vOff * 2), ops.o = dO->get(), ops.lse = dLse->get();
  // Poison the outputs so a step that writes nothing cannot pass.
  for (auto [p, n] : {std::pair<CUdeviceptr, size_t>{ops.o, oElems * 2}, {ops.lse, rows * 4},
                      {dGrad->get(), size_t(inElems) * 2}})
    if (Error e = dev.memset(p, 0xFF, n))
      return fail(e);
  if (Error e = engine.run(d, ops))
    return fail(e);
  std::string plan = engine.planInfo();
  AttentionDesc bd = d;
  bd.backward = true;
  bd.dO = d.o, bd.dq = d.q, bd.dk = d.k, bd.dV = d.v;
  AttentionOperands bops = ops;
  bops.dO = dDO->get();
  bops.dq = dGrad->get() + CUdeviceptr(qOff * 2), bops.dk = dGrad->get() + CUdeviceptr(kOff * 2);
  bops.dV = dGrad->get() + CUdeviceptr(vOff * 2);
  if (Error e = engine.run(bd, bops))
    return fail(e);
  std::string bplan = engine.planInfo();
  std::vector<uint16_t> o(oElems), grad(static_cast<size_t>(inElems));
  std::vector<float> lse(rows);
  if (Error e = dev.copyToHost(o.data(), ops.o, o.size() * 2))
    return fail(e);
  if (Error e = dev.copyToHost(lse.data(), ops.lse, lse.size() * 4))
    return fail(e);
  if (Error e = dev.copyToHost(grad.data(), dGrad->get(), grad.size() * 2))
    return fail(e);
  // The reference, per checked head, from the same rounded inputs.
  std::vector<std::pair<int64_t, int64_t>> heads = ac.heads;
  if (heads.empty())
    for (int64_t b = 0; b < d.b; ++b)
      for (int64_t h = 0; h < d.h; ++h)
        heads.push_back({b, h});
  auto head = [&](const std::vector<uint16_t> &bits, int64_t off, const AttentionDesc::Strides &st,
                  int64_t b, int64_t h, int64_t n, int64_t w) {
    std::vector<double> out(size_t(n * w));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < w; ++c)
        out[size_t(i * w + c)] = fmt.decode(bits[size_t(off + b * st[0] + h * st[1] + i * st[2] + c)]);
    return out;
  };
  double errO = 0, refO = 0, errLse = 0, errG[3] = {0, 0, 0}, refG[3] = {0, 0, 0};
  size_t nonFinite = 0;
  for (auto [b, h] : heads) {
    std::vector<double> q = head(in, qOff, d.q, b, h, d.sq, d.d);
    std::vector<double> k = head(in, kOff, d.k, b, h, d.skv, d.d);
    std::vector<double> v = head(in, vOff, d.v, b, h, d.skv, d.dv);
    std::vector<double> ro(size_t(d.sq * d.dv)), rl(size_t(d.sq));
    referenceAttentionForward(d, q.data(), k.data(), v.data(), ro.data(), rl.data());
    std::vector<double> go = head(o, 0, d.o, b, h, d.sq, d.dv);
    std::vector<double> gl(size_t(d.sq));
    for (int64_t i = 0; i < d.sq; ++i) {
      gl[size_t(i)] = lse[size_t((b * d.h + h) * d.sq + i)];
      if (!std::isfinite(gl[size_t(i)]))
        ++nonFinite;
      errLse = std::max(errLse, std::fabs(gl[size_t(i)] - rl[size_t(i)]));
    }
    for (size_t i = 0; i < ro.size(); ++i) {
      if (!std::isfinite(go[i]))
        ++nonFinite;
      errO = std::max(errO, std::fabs(go[i] - ro[i]));
      refO = std::max(refO, std::fabs(ro[i]));
    }
    std::vector<double> dOh = head(dOBits, 0, d.o, b, h, d.sq, d.dv);
    std::vector<double> rq(size_t(d.sq * d.d)), rk(size_t(d.skv * d.d)), rv(size_t(d.skv * d.dv));
    referenceAttentionBackward(d, q.data(), k.data(), v.data(), go.data(), dOh.data(), gl.data(),
                               rq.data(), rk.data(), rv.data());
    const std::vector<double> *refs[3] = {&rq, &rk, &rv};
    std::vector<double> got[3] = {head(grad, qOff, d.q, b, h, d.sq, d.d),
                                  head(grad, kOff, d.k, b, h, d.skv, d.d),
                                  head(grad, vOff, d.v, b, h, d.skv, d.dv)};
    for (int g = 0; g < 3; ++g)
      for (size_t i = 0; i < got[g].size(); ++i) {
        if (!std::isfinite(got[g][i]))
          ++nonFinite;
        errG[g] = std::max(errG[g], std::fabs(got[g][i] - (*refs[g])[i]));
        refG[g] = std::max(refG[g], std::fabs((*refs[g])[i]));
      }
  }
  // Tolerances on max|err| / max|ref|: the output format's rounding (bf16
  // 2^-9, f16 2^-12) plus P and dS rounded to it for the second GEMMs.
  double tolOut = d.dtype == DType::F16 ? 5e-3 : 2e-2, tolGrad = d.dtype == DType::F16 ? 1e-2 : 5e-2;
  bool ok = nonFinite == 0;
  char detail[512];
  std::snprintf(detail, sizeof(detail),
                "%zu of %lld heads checked; o %.3g (tol %.3g), lse abs %.3g (tol 1e-3), dq %.3g, "
                "dk %.3g, dv %.3g (tol %.3g)%s; forward %s; backward %s",
                heads.size(), (long long)(d.b * d.h), errO / refO, tolOut, errLse,
                errG[0] / refG[0], errG[1] / refG[1], errG[2] / refG[2], tolGrad,
                nonFinite ? ", NON-FINITE outputs" : "", plan.c_str(), bplan.c_str());
  ok = ok && errO / refO <= tolOut && errLse <= 1e-3;
  for (int g = 0; g < 3; ++g)
    ok = ok && errG[g] / refG[g] <= tolGrad;
  r.line(ok, name, detail);
  if (!engine.capturable)
    return ok;
  // A forward captured into a CUDA graph gives the direct run's bits.
  Expected<DeviceBuffer> o2 = dev.allocate(oElems * 2);
  if (!o2)
    return fail(o2.takeError());
  AttentionOperands gops = ops;
  gops.o = o2->get();
  Expected<Graph> g = Graph::capture(dev, [&] { return engine.run(d, gops); });
  if (!r.step("  attention in a graph: capture", g ? Error() : g.takeError()))
    return false;
  if (!r.step("  attention in a graph: launch", g->launch()))
    return false;
  std::vector<uint16_t> o2h(oElems);
  if (!r.step("  attention in a graph: download", dev.copyToHost(o2h.data(), o2->get(), oElems * 2)))
    return false;
  r.line(o2h == o, "  forward captured in a CUDA graph matches the direct run bit for bit");
  return ok && o2h == o;
}

/// Times forward and backward of a case (median of 5 runs of 5).
void attentionTiming(Device &dev, AttentionEngine &engine, const AttentionCase &ac) {
  AttentionDesc d;
  d.dtype = ac.dtype, d.causal = ac.causal;
  d.b = ac.b, d.h = ac.h, d.sq = ac.sq, d.skv = ac.skv, d.d = ac.d, d.dv = ac.dv;
  d.scale = float(1.0 / std::sqrt(double(ac.d)));
  d.q = d.k = d.v = {d.sq * 3 * d.h * d.d, d.d, 3 * d.h * d.d, 1};
  d.o = {d.h * d.sq * d.dv, d.sq * d.dv, d.dv, 1};
  size_t in = size_t(d.b * d.sq * 3 * d.h * d.d) * 2, out = size_t(d.b * d.h * d.sq * d.dv) * 2;
  Expected<DeviceBuffer> x = dev.allocate(in), o = dev.allocate(out), lse = dev.allocate(size_t(d.b * d.h * d.sq) * 4),
                         dO = dev.allocate(out), g = dev.allocate(in);
  Expected<StreamTimer> timer = StreamTimer::create(dev);
  if (!x || !o || !lse || !dO || !g || !timer)
    return;
  for (CUdeviceptr p : {x->get(), dO->get()})
    (void)dev.memset(p, 0x3C, p == x->get() ? in : out); // small positive values
  AttentionOperands ops;
  ops.q = x->get(), ops.k = x->get() + CUdeviceptr(d.h * d.d * 2), ops.v = x->get() + CUdeviceptr(2 * d.h * d.d * 2);
  ops.o = o->get(), ops.lse = lse->get();
  AttentionDesc bd = d;
  bd.backward = true, bd.dO = d.o, bd.dq = d.q, bd.dk = d.k, bd.dV = d.v;
  AttentionOperands bops = ops;
  bops.dO = dO->get(), bops.dq = g->get(), bops.dk = g->get() + CUdeviceptr(d.h * d.d * 2);
  bops.dV = g->get() + CUdeviceptr(2 * d.h * d.d * 2);
  for (int pass = 0; pass < 2; ++pass) {
    const AttentionDesc &dd = pass ? bd : d;
    const AttentionOperands &oo = pass ? bops : ops;
    std::vector<double> times;
    Error e = engine.run(dd, oo); // warm-up (plans)
    if (!e)
      e = dev.synchronize();
    for (int rep = 0; rep < 5 && !e; ++rep) {
      e = timer->start();
      for (int i = 0; i < 5 && !e; ++i)
        e = engine.run(dd, oo);
      if (!e)
        e = timer->stop();
      if (!e) {
        Expected<float> ms = timer->elapsedMs();
        if (!ms)
          e = ms.takeError();
        else
          times.push_back(double(*ms) / 5);
      }
    }
    if (e) {
      std::printf("  timing %s: %s\n", dd.str().c_str(), e.message().c_str());
      return;
    }
    std::sort(times.begin(), times.end());
    double ms = times[times.size() / 2];
    std::printf("  timing %s: %.3f ms, %.1f TFLOP/s (FLOPs as cuDNN's benchmarks count them; "
                "measured)\n",
                dd.str().c_str(), ms, dd.flops() / (ms * 1e-3) / 1e12);
  }
}

void attentionSelftest(Device &dev, Report &r, bool host) {
  std::printf("attention self-test (%s; error = max|x - ref| / max|ref| over "
              "the checked heads, ref in double from the rounded inputs):\n",
              host ? "the host stand-in, small shapes: checks the self-test itself"
                   : "cuDNN fused attention");
  if (host) {
    HostAttention stand;
    stand.device = &dev;
    AttentionRunner runner{std::ref(stand), [] { return std::string("host stand-in"); }, false};
    const AttentionCase small[] = {
        {"small, causal, qkv in place", DType::BF16, true, 1, 2, 32, 32, 16, 16, {}},
        {"small, cross, f16", DType::F16, false, 1, 2, 24, 40, 16, 32, {}},
        {"small, causal bottom-right", DType::BF16, true, 1, 1, 16, 48, 16, 16, {{0, 0}}},
    };
    for (const AttentionCase &c : small)
      runAttentionCase(dev, runner, c, r);
    return;
  }
  Expected<const Cudnn *> lib = loadCudnn();
  if (!r.step("load cuDNN", lib ? Error() : lib.takeError()))
    return;
  std::printf("  cuDNN %zu (%s)\n", cudnnVersion(**lib), cudnnPath(**lib).c_str());
  Expected<std::unique_ptr<AttentionEngine>> engine = AttentionEngine::create(dev);
  if (!r.step("create the attention engine", engine ? Error() : engine.takeError()))
    return;
  const AttentionCase cases[] = {
      {"small, causal, qkv in place", DType::BF16, true, 2, 3, 128, 128, 64, 64, {}},
      {"small, cross, f16", DType::F16, false, 1, 2, 96, 160, 64, 64, {}},
      {"small, causal bottom-right", DType::BF16, true, 1, 2, 64, 128, 64, 64, {}},
      {"d4096 GPT block", DType::BF16, true, 4, 32, 2048, 2048, 128, 128, {{0, 0}, {3, 31}}},
  };
  AttentionEngine &eng = **engine;
  AttentionRunner runner{[&](const AttentionDesc &d, const AttentionOperands &o) { return eng.run(d, o); },
                         [&] { return eng.lastPlanInfo(); }, true};
  for (const AttentionCase &c : cases)
    runAttentionCase(dev, runner, c, r);
  attentionTiming(dev, **engine, cases[3]);
  std::printf("  (%zu cuDNN plans cached, workspace %s)\n", (*engine)->cachedPlans(),
              mib((*engine)->workspaceBytes()).c_str());
}

//===----------------------------------------------------------------------===//
// NCCL self-test (data-parallel collectives)
//===----------------------------------------------------------------------===//

/// The collective steps of an artifact function through NCCL (or the
/// fake): every rank passes its own random input; the results are checked
/// against sums over every rank's input (MPI gathers them) in double. f32
/// sums in NCCL's order differ from rank order by a few ulps of the
/// magnitudes summed; gathers and shards are exact. The FP8 cases (the
/// --comm-precision=fp8 wire: an all_to_all and an all_gather of FP8 bytes)
/// move random bytes, NaN encodings included, and are checked byte for
/// byte against what every rank's seed gives. Then again in a CUDA graph
/// (NCCL's calls are capturable). Only rank 0 prints; a failure on any rank
/// fails every rank.
void ncclSelftest(Device &dev, Report &r) {
  const int ranks = commSize(), rank = commRank();
  // The other ranks' stdout is /dev/null (main): their failures go to stderr.
  const bool quiet = rank != 0;
  auto line = [&](bool pass, const std::string &what, const std::string &detail) {
    r.line(pass, what, detail);
    if (quiet && !pass)
      std::fprintf(stderr, "lpc-cuda-check: rank %d: FAIL %s: %s\n", rank, what.c_str(),
                   detail.c_str());
  };
  Expected<std::unique_ptr<NcclComm>> comm = NcclComm::create(dev, rank, ranks);
  if (!comm) {
    // Every rank fails here together (a library or bootstrap problem).
    line(false, "NCCL communicator", comm.error().message());
    return;
  }
  std::printf("NCCL self-test: NCCL %d (%s), %d rank(s)\n", (*comm)->info().version,
                (*comm)->info().path.c_str(), ranks);
  // Odd sizes: nothing lines up with NCCL's chunks. The f32 input, and
  // the same values rounded to bf16 for the bf16 collectives
  // (lpc-native-wire-collectives' form).
  const int64_t k = 4099, n = k * ranks;
  std::vector<double> xd(static_cast<size_t>(n));
  Rng rng(0x5eed + uint64_t(rank));
  for (double &v : xd)
    v = (rng.uniform() * 4.0 - 2.0) * (1.0 + rank); // never all zero
  std::vector<float> x(xd.begin(), xd.end());
  std::vector<uint8_t> xb = encodeAs(DType::BF16, xd);
  // Every rank's inputs (as each type holds them), for the references.
  std::vector<float> all(size_t(n) * size_t(ranks));
  std::vector<uint8_t> allbBytes(xb.size() * size_t(ranks));
  commAllGatherBytes(x.data(), x.size() * sizeof(float), all.data());
  commAllGatherBytes(xb.data(), xb.size(), allbBytes.data());
  std::vector<double> allb = decodeAs(DType::BF16, allbBytes.data(), allbBytes.size() / 2);
  // The FP8 input: any byte (the data-movement collectives never look at
  // the values). Every rank can make every rank's from its seed.
  auto fp8Input = [n](int q) {
    Rng bytes(0xf8f8 + uint64_t(q));
    std::vector<uint8_t> v(static_cast<size_t>(n));
    for (uint8_t &b : v)
      b = uint8_t(bytes.next() >> 56);
    return v;
  };
  std::vector<uint8_t> x8 = fp8Input(rank);
  std::vector<std::vector<uint8_t>> all8;
  for (int q = 0; q < ranks; ++q)
    all8.push_back(fp8Input(q));

  auto slot = [](DType t, int64_t elems) {
    Slot s;
    s.dtype = t;
    s.shape = {elems};
    return s;
  };
  auto view = [](ViewSpace space, uint64_t index, DType t, int64_t elems) {
    View v;
    v.space = space;
    v.index = index;
    v.sizes = {elems};
    v.strides = {1};
    v.elemBytes = uint32_t(dtypeSize(t));
    return v;
  };
  struct Case {
    const char *what;
    CollectiveKind kind;
    CollectiveReduce reduce;
    DType dtype;
    int64_t outElems;
  } cases[] = {
      {"all_reduce sum", CollectiveKind::AllReduce, CollectiveReduce::Sum, DType::F32, n},
      {"all_reduce mean", CollectiveKind::AllReduce, CollectiveReduce::Mean, DType::F32, n},
      {"all_reduce max", CollectiveKind::AllReduce, CollectiveReduce::Max, DType::F32, n},
      {"reduce_scatter sum", CollectiveKind::ReduceScatter, CollectiveReduce::Sum, DType::F32, k},
      {"reduce_scatter mean", CollectiveKind::ReduceScatter, CollectiveReduce::Mean, DType::F32,
       k},
      {"all_gather", CollectiveKind::AllGather, CollectiveReduce::Sum, DType::F32, n * ranks},
      {"shard", CollectiveKind::Shard, CollectiveReduce::Sum, DType::F32, k},
      {"all_reduce mean BF16", CollectiveKind::AllReduce, CollectiveReduce::Mean, DType::BF16, n},
      {"reduce_scatter mean BF16", CollectiveKind::ReduceScatter, CollectiveReduce::Mean,
       DType::BF16, k},
      {"all_to_all F8_E4M3", CollectiveKind::AllToAll, CollectiveReduce::Sum, DType::F8_E4M3, n},
      {"all_gather F8_E4M3", CollectiveKind::AllGather, CollectiveReduce::Sum, DType::F8_E4M3,
       n * ranks},
  };
  // The argument each dtype's cases read.
  auto argOf = [](DType t) { return t == DType::F32 ? 0 : t == DType::BF16 ? 1 : 2; };
  ArtifactFunction f;
  f.name = "nccl_selftest";
  f.args = {slot(DType::F32, n), slot(DType::BF16, n), slot(DType::F8_E4M3, n)};
  for (const Case &c : cases) {
    CollectiveOp op;
    op.kind = c.kind;
    op.reduce = c.reduce;
    op.dtype = c.dtype;
    op.ranks = c.kind == CollectiveKind::AllReduce ? 0 : ranks;
    op.in = view(ViewSpace::Arg, uint64_t(argOf(c.dtype)), c.dtype, n);
    op.out = view(ViewSpace::Result, f.results.size(), c.dtype, c.outElems);
    f.results.push_back(slot(c.dtype, c.outElems));
    f.ops.push_back(op);
  }
  NcclComm *nccl = comm->get();
  StepCallbacks steps;
  steps.collective = [&dev, nccl](const CollectiveDesc &d, const CollectiveOperands &o) {
    return runCollective(dev, nccl, d, o);
  };
  Expected<std::unique_ptr<CudaFunction>> fn =
      CudaFunction::create(dev, f, std::move(steps), "the NCCL self-test");
  if (!fn) {
    line(false, "NCCL self-test function", fn.error().message());
    return;
  }
  std::vector<std::vector<uint8_t>> out;
  for (const Case &c : cases)
    out.emplace_back(size_t(c.outElems) * dtypeSize(c.dtype), 0xff); // NaNs

  // The references, in double. f32 sums in NCCL's order differ from any
  // other order by a few ulps of the magnitudes summed; bf16 ones round
  // every partial sum (NCCL) or the total (the fake) to 8 bits.
  auto expected = [&](const Case &c, int64_t i, double *tol) -> double {
    *tol = 0;
    if (c.dtype == DType::F8_E4M3) // bytes: expectedByte
      return 0;
    if (c.kind == CollectiveKind::AllGather)
      return all[size_t(i)];
    if (c.kind == CollectiveKind::Shard)
      return x[size_t(rank * k + i)];
    int64_t at = c.kind == CollectiveKind::ReduceScatter ? rank * k + i : i;
    const bool bf16 = c.dtype == DType::BF16;
    double sum = 0, mag = 0, mx = -INFINITY;
    for (int q = 0; q < ranks; ++q) {
      size_t j = size_t(q) * size_t(n) + size_t(at);
      double v = bf16 ? allb[j] : double(all[j]);
      sum += v, mag += std::fabs(v), mx = std::max(mx, v);
    }
    if (c.reduce == CollectiveReduce::Max)
      return mx;
    bool mean = c.reduce == CollectiveReduce::Mean;
    *tol = (bf16 ? ranks * std::ldexp(1.0, -8) : 2.0 * ranks * 6e-8) * mag /
           (mean ? ranks : 1);
    return mean ? sum / ranks : sum;
  };
  for (int pass = 0; pass < 2; ++pass) {
    const char *how = pass == 0 ? "" : " (CUDA graph)";
    for (auto &o : out)
      std::fill(o.begin(), o.end(), uint8_t(0xff));
    std::vector<const void *> args{x.data(), xb.data(), x8.data()};
    std::vector<void *> results;
    for (auto &o : out)
      results.push_back(o.data());
    Error e;
    if (pass == 1)
      e = (*fn)->captureGraph();
    if (!e)
      e = (*fn)->runHost(args, results);
    if (pass == 1 && !e && !(*fn)->lastRunHasGraph())
      e = Error::make("the run did not replay the captured graph");
    bool ranOk = !e;
    if (commAny(!ranOk)) {
      line(false, std::string("NCCL collectives") + how,
           ranOk ? "another rank failed" : e.message());
      return;
    }
    for (size_t ci = 0; ci < out.size(); ++ci) {
      const Case &c = cases[ci];
      if (c.dtype == DType::F8_E4M3) {
        // Out's block j (k elements): rank j's block `rank` (all_to_all),
        // or rank j's whole input (all_gather, blocks of n).
        const bool toAll = c.kind == CollectiveKind::AllToAll;
        const int64_t block = toAll ? k : n;
        auto want = [&](int64_t i) {
          int64_t j = i / block, at = i % block + (toAll ? rank * k : 0);
          return all8[size_t(j)][size_t(at)];
        };
        int64_t bad = -1;
        for (int64_t i = 0; i < c.outElems && bad < 0; ++i)
          if (out[ci][size_t(i)] != want(i))
            bad = i;
        bool okHere = bad < 0, okAll = !commAny(!okHere);
        char detail[160];
        if (!okHere)
          std::snprintf(detail, sizeof(detail),
                        "rank %d element %lld: byte 0x%02x, expected 0x%02x", rank,
                        (long long)bad, out[ci][size_t(bad)], want(bad));
        else
          std::snprintf(detail, sizeof(detail), "%lld elements%s, bit-exact",
                        (long long)c.outElems, okAll ? "" : " (another rank failed)");
        line(okAll && okHere, std::string(c.what) + how, detail);
        continue;
      }
      std::vector<double> got = decodeAs(c.dtype, out[ci].data(), size_t(c.outElems));
      double worst = 0;
      int64_t bad = -1;
      for (int64_t i = 0; i < c.outElems; ++i) {
        double tol = 0, want = expected(c, i, &tol);
        double err = std::fabs(got[size_t(i)] - want);
        if (!(err <= tol)) {
          bad = i;
          break;
        }
        worst = std::max(worst, err);
      }
      bool okHere = bad < 0, okAll = !commAny(!okHere);
      char detail[160];
      if (!okHere) {
        double tol = 0, want = expected(c, bad, &tol);
        std::snprintf(detail, sizeof(detail), "rank %d element %lld: %.9g, expected %.9g",
                      rank, (long long)bad, got[size_t(bad)], want);
      } else {
        std::snprintf(detail, sizeof(detail), "%lld elements%s, max error %.3g",
                      (long long)c.outElems, okAll ? "" : " (another rank failed)", worst);
      }
      line(okAll && okHere, std::string(c.what) + how, detail);
    }
  }
  std::printf("  queued by rank 0: %llu bytes (as a ring sends them) in %llu collectives "
              "(the graph's when captured)\n",
                (unsigned long long)(*comm)->bytesSent(),
                (unsigned long long)(*comm)->collectives());
}

//===----------------------------------------------------------------------===//
// GEMM benchmark
//===----------------------------------------------------------------------===//

struct BenchPrecision {
  const char *name;
  DType a, b, c;
  bool tf32, fastAccum;
};

const BenchPrecision kBenchPrecisions[] = {
    {"bf16", DType::BF16, DType::BF16, DType::BF16, false, false},
    {"f16", DType::F16, DType::F16, DType::F16, false, false},
    {"tf32", DType::F32, DType::F32, DType::F32, true, false},
    {"f32", DType::F32, DType::F32, DType::F32, false, false},
    {"fp8-fast", DType::F8_E4M3, DType::F8_E4M3, DType::BF16, false, true},
    {"fp8", DType::F8_E4M3, DType::F8_E4M3, DType::BF16, false, false},
    {"fp8-e5m2", DType::F8_E4M3, DType::F8_E5M2, DType::BF16, false, true},
};

/// Fills `bytes` of device memory with random values of `t` (a 1 MiB host
/// pattern, copied repeatedly).
Error fillRandom(Device &dev, CUdeviceptr p, size_t bytes, DType t, Rng &rng) {
  size_t chunkElems = (size_t(1) << 20) / dtypeSize(t);
  std::vector<uint8_t> chunk = encodeAs(t, randomValues(rng, chunkElems, t));
  for (size_t off = 0; off < bytes; off += chunk.size())
    if (Error e = dev.copyToDevice(p + off, chunk.data(), std::min(chunk.size(), bytes - off)))
      return e;
  return dev.synchronize();
}

bool parseShape(const std::string &s, int64_t *m, int64_t *n, int64_t *k) {
  long long a, b, c;
  char tail;
  if (std::sscanf(s.c_str(), "%lldx%lldx%lld%c", &a, &b, &c, &tail) != 3 || a < 1 || b < 1 ||
      c < 1)
    return false;
  *m = a, *n = b, *k = c;
  return true;
}

int gemmBench(Device &dev, const Options &opt) {
  std::printf("GEMM benchmark (cuBLASLt heuristic algorithm, A [M,K] x B^T [N,K] -> C "
              "[M,N], %d GEMMs per timing, median of 5; TFLOP/s = 2MNK / time):\n",
              opt.benchIters);
  Expected<std::unique_ptr<GemmEngine>> engine = GemmEngine::create(dev);
  if (!engine) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n", engine.error().message().c_str());
    return kExitFailed;
  }
  Expected<StreamTimer> timer = StreamTimer::create(dev);
  if (!timer) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n", timer.error().message().c_str());
    return kExitFailed;
  }
  std::printf("  %-16s %-9s %10s %9s  %s\n", "MxNxK", "precision", "ms/GEMM", "TFLOP/s",
              "cuBLASLt algorithm");
  int status = kExitOk;
  Rng rng(7);
  for (const std::string &shape : splitList(opt.benchShapes)) {
    int64_t m, n, k;
    if (!parseShape(shape, &m, &n, &k)) {
      std::fprintf(stderr, "lpc-cuda-check: bad shape '%s' (want MxNxK)\n", shape.c_str());
      return kExitUsage;
    }
    for (const std::string &pname : splitList(opt.benchPrecisions)) {
      const BenchPrecision *p = nullptr;
      for (const BenchPrecision &c : kBenchPrecisions)
        if (pname == c.name)
          p = &c;
      if (!p) {
        std::fprintf(stderr, "lpc-cuda-check: unknown precision '%s'\n%s", pname.c_str(),
                     kUsage);
        return kExitUsage;
      }
      GemmDesc d = makeDesc(m, n, k, 1, false, true, p->a, p->b, p->c);
      d.tf32 = p->tf32;
      d.fastAccum = p->fastAccum;
      auto fail = [&](const Error &e) {
        std::printf("  %-16s %-9s FAILED: %s\n", shape.c_str(), p->name, e.message().c_str());
        status = kExitFailed;
      };
      if (Error e = validateGemm(d)) {
        fail(e);
        continue;
      }
      Expected<DeviceBuffer> da = dev.allocate(gemmBytesA(d));
      Expected<DeviceBuffer> db = dev.allocate(gemmBytesB(d));
      Expected<DeviceBuffer> dc = dev.allocate(gemmBytesC(d));
      Expected<DeviceBuffer> ds = dev.allocate(16);
      if (!da || !db || !dc || !ds) {
        fail(!da ? da.takeError() : !db ? db.takeError() : !dc ? dc.takeError() : ds.takeError());
        continue;
      }
      GemmOperands ops;
      ops.a = da->get(), ops.b = db->get(), ops.c = dc->get();
      Error e = fillRandom(dev, ops.a, gemmBytesA(d), d.a, rng);
      if (!e)
        e = fillRandom(dev, ops.b, gemmBytesB(d), d.b, rng);
      if (!e && d.isFP8()) {
        float ones[2] = {1.0f, 1.0f};
        e = dev.copyToDevice(ds->get(), ones, sizeof(ones));
        ops.aScale = ds->get(), ops.bScale = ds->get() + 4;
      }
      for (int i = 0; i < 3 && !e; ++i) // warm-up (the first call plans)
        e = engine->get()->run(d, ops);
      if (!e)
        e = dev.synchronize();
      std::vector<double> times;
      for (int rep = 0; rep < 5 && !e; ++rep) {
        e = timer->start();
        for (int i = 0; i < opt.benchIters && !e; ++i)
          e = engine->get()->run(d, ops);
        if (!e)
          e = timer->stop();
        if (!e) {
          Expected<float> ms = timer->elapsedMs();
          if (!ms)
            e = ms.takeError();
          else
            times.push_back(double(*ms) / opt.benchIters);
        }
      }
      if (e) {
        fail(e);
        continue;
      }
      std::sort(times.begin(), times.end());
      double ms = times[times.size() / 2];
      double tflops = 2.0 * double(m) * double(n) * double(k) / (ms * 1e-3) / 1e12;
      std::printf("  %-16s %-9s %10.4f %9.1f  %s\n", shape.c_str(), p->name, ms, tflops,
                  engine->get()->lastPlanInfo().c_str());
      std::fflush(stdout);
    }
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Artifacts
//===----------------------------------------------------------------------===//

/// "640 bytes" below a MiB, else "12.5 MiB".
std::string bytesText(size_t bytes) {
  return bytes < (size_t(1) << 20) ? std::to_string(bytes) + " bytes" : mib(bytes);
}

/// "3 x a, 1 x b" of counted names, in name order.
std::string counts(const std::map<std::string, int> &m) {
  std::string out;
  for (const auto &kv : m)
    out += (out.empty() ? "" : ", ") + std::to_string(kv.second) + " x " + kv.first;
  return out.empty() ? "none" : out;
}

/// Loads, validates and summarizes an artifact in one paragraph.
int checkArtifact(const std::string &path) {
  Expected<Artifact> art = loadArtifact(path);
  if (!art) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n", art.error().message().c_str());
    return kExitFailed;
  }
  std::printf("%s: valid lpc CUDA artifact v%d for %s%s%s, %zu function(s).\n", path.c_str(),
              kArtifactVersion, art->chip.c_str(), art->producer.empty() ? "" : " by ",
              art->producer.c_str(), art->functions.size());
  for (const ArtifactFunction &f : art->functions) {
    size_t launches = 0, gemms = 0, copies = 0;
    std::set<std::string> kernels;
    std::map<std::string, int> gemmTypes, attentionTypes, collectiveTypes;
    for (const ArtifactOp &op : f.ops) {
      if (const LaunchOp *l = std::get_if<LaunchOp>(&op)) {
        ++launches;
        // Kernels of different modules may share a name.
        kernels.insert(std::to_string(l->module) + "/" + l->kernel);
      } else if (const GemmOp *g = std::get_if<GemmOp>(&op)) {
        ++gemms;
        std::string t = std::string(dtypeName(g->aType)) + "x" + dtypeName(g->bType) + "->" +
                        dtypeName(g->cType) + (g->aScale ? " scaled" : "") +
                        (g->bias ? " +bias" : "");
        ++gemmTypes[t];
      } else if (const AttentionOp *a = std::get_if<AttentionOp>(&op)) {
        ++attentionTypes[std::string(a->backward ? "backward " : "forward ") +
                         dtypeName(a->dtype) + (a->causal ? " causal" : "")];
      } else if (const CollectiveOp *c = std::get_if<CollectiveOp>(&op)) {
        ++collectiveTypes[opLabel(op) + " " + dtypeName(c->dtype)];
      } else {
        ++copies;
      }
    }
    size_t argBytes = 0, resultBytes = 0;
    for (const ArtifactSlot &s : f.args)
      argBytes += s.byteSize();
    for (const ArtifactSlot &s : f.results)
      resultBytes += s.byteSize();
    std::printf("  %s: %zu args (%s), %zu results (%s); %zu ops: %zu launches of %zu kernels "
                "in %zu modules, %zu GEMMs (%s), %zu copies; arena %s in %zu buffers.\n",
                f.name.c_str(), f.args.size(), bytesText(argBytes).c_str(), f.results.size(),
                bytesText(resultBytes).c_str(), f.ops.size(), launches, kernels.size(),
                f.modules.size(), gemms, counts(gemmTypes).c_str(), copies,
                bytesText(size_t(f.arenaBytes)).c_str(), f.buffers.size());
    if (!attentionTypes.empty())
      std::printf("    attention steps (cuDNN): %s.\n", counts(attentionTypes).c_str());
    if (!collectiveTypes.empty())
      std::printf("    collective steps (NCCL): %s.\n", counts(collectiveTypes).c_str());
  }
  // cuDNN builds the attention graphs' descriptors without a GPU too.
  std::set<std::string> attnSeen;
  for (const ArtifactFunction &f : art->functions)
    for (const ArtifactOp &op : f.ops)
      if (const AttentionOp *a = std::get_if<AttentionOp>(&op))
        attnSeen.insert(a->desc().key());
  if (!attnSeen.empty()) {
    Expected<const Cudnn *> dnn = loadCudnn();
    if (!dnn) {
      std::printf("cuDNN not loaded (%s): attention graphs not checked.\n",
                  dnn.error().message().c_str());
    } else {
      std::set<std::string> done;
      size_t heuristic = 0, configs = 0;
      std::string stopped;
      for (const ArtifactFunction &f : art->functions)
        for (size_t i = 0; i < f.ops.size(); ++i)
          if (const AttentionOp *a = std::get_if<AttentionOp>(&f.ops[i])) {
            AttentionDesc d = a->desc();
            if (!done.insert(d.key()).second)
              continue;
            AttentionGraphCheck c;
            if (Error e = checkAttentionGraph(**dnn, d, &c)) {
              std::fprintf(stderr, "lpc-cuda-check: %s: function '%s', op %zu: %s\n",
                           path.c_str(), f.name.c_str(), i, e.message().c_str());
              return kExitFailed;
            }
            heuristic += c.planFinalized;
            configs += c.engineConfigs;
            if (stopped.empty())
              stopped = c.stoppedAt;
          }
      std::string how = heuristic == done.size()
                            ? "and an execution plan of each"
                            : "without a GPU it stops at " + stopped + "; " +
                                  std::to_string(configs) + " engine configurations offered";
      std::printf("cuDNN %zu builds the operation graphs of all %zu distinct attention steps "
                  "(%s).\n",
                  cudnnVersion(**dnn), done.size(), how.c_str());
    }
  }
  // cuBLASLt's descriptor calls need no GPU: where the library is here, it
  // must accept every GEMM as the runtime will describe it (types, layout,
  // scale pointers, epilogue).
  Expected<const CublasLt *> lt = loadCublasLt();
  if (!lt) {
    std::printf("cuBLASLt not loaded (%s): GEMM descriptors not checked.\n",
                lt.error().message().c_str());
    return kExitOk;
  }
  std::set<std::string> seen;
  for (const ArtifactFunction &f : art->functions)
    for (size_t i = 0; i < f.ops.size(); ++i)
      if (const GemmOp *g = std::get_if<GemmOp>(&f.ops[i])) {
        GemmDesc d = g->desc();
        if (!seen.insert(d.str()).second)
          continue;
        if (Error e = checkGemmDescriptors(**lt, d)) {
          std::fprintf(stderr, "lpc-cuda-check: %s: function '%s', op %zu: %s\n", path.c_str(),
                       f.name.c_str(), i, e.message().c_str());
          return kExitFailed;
        }
      }
  std::printf("cuBLASLt %zu accepts the descriptors of all %zu distinct GEMMs.\n",
              cublasLtVersion(**lt), seen.size());
  return kExitOk;
}

//===----------------------------------------------------------------------===//
// Estimates (CudaEstimate.h)
//===----------------------------------------------------------------------===//

struct EstimateOptions {
  std::string file, against, function;
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
  if (opt.format == "json") {
    std::string out = "{\"estimate\": " + estimateJson(opt.file, *a, opt.top, scenarios);
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
    if (file("--estimate", e.file) || file("--against", e.against))
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

} // namespace

int main(int argc, char **argv) {
  // Needs no driver: a machine without a GPU can judge what it will run.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--estimate") == 0 || std::strncmp(argv[i], "--estimate=", 11) == 0)
      return estimateMain(argc, argv);
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *prefix) -> const char * {
      size_t n = std::strlen(prefix);
      return arg.compare(0, n, prefix) == 0 ? argv[i] + n : nullptr;
    };
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      return kExitOk;
    } else if (arg == "--print-test-ptx") {
      std::printf("%s", kTestPtx);
      return kExitOk;
    } else if (arg == "--print-test-artifact") {
      std::printf("%s", testArtifactJson().c_str());
      return kExitOk;
    } else if (const char *v = value("--artifact=")) {
      // Needs no driver: a machine without a GPU can check what it will run.
      return checkArtifact(v);

    } else if (arg == "--driver-selftest") {
      opt.driverSelftest = true;
    } else if (arg == "--gemm-selftest") {
      opt.gemmSelftest = true;
    } else if (arg == "--nccl-selftest") {
      opt.ncclSelftest = true;
    } else if (arg == "--attention-selftest") {
      opt.attentionSelftest = true;
    } else if (arg == "--attention-selftest=host") {
      // The self-test's own checks with the host stand-in instead of cuDNN
      // (small shapes; the fake driver's tests run it).
      opt.attentionSelftest = opt.attentionHost = true;
    } else if (arg == "--gemm-bench") {
      opt.bench = true;
    } else if (const char *v = value("--gemm-bench=")) {
      opt.bench = true;
      opt.benchShapes = v;
    } else if (const char *v = value("--bench-precisions=")) {
      opt.benchPrecisions = v;
    } else if (const char *v = value("--bench-iters=")) {
      opt.benchIters = std::atoi(v);
      if (opt.benchIters < 1) {
        std::fprintf(stderr, "lpc-cuda-check: bad --bench-iters '%s'\n", v);
        return kExitUsage;
      }
    } else if (const char *v = value("--device=")) {
      char *end = nullptr;
      opt.device = int(std::strtol(v, &end, 10));
      opt.deviceGiven = true;
      if (!*v || *end || opt.device < 0) {
        std::fprintf(stderr, "lpc-cuda-check: bad --device '%s'\n", v);
        return kExitUsage;
      }
    } else {
      std::fprintf(stderr, "lpc-cuda-check: unknown argument '%s'\n%s", arg.c_str(), kUsage);
      return kExitUsage;
    }
  }

  // Under mpirun (the NCCL self-test on several ranks): MPI first.
  if (Error e = commInit(&argc, &argv)) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n", e.message().c_str());
    return kExitFailed;
  }
  struct Finalize {
    ~Finalize() { commFinalize(); }
  } finalize;
  if (commSize() > 1 && commRank() != 0)
    // Rank 0 says what the machine has; the others only their failures.
    if (!std::freopen("/dev/null", "w", stdout))
      return kExitFailed;
  Expected<const Driver *> driver = Driver::get();
  if (!driver) {
    DriverFailure f = Driver::failure();
    std::fprintf(stderr, "lpc-cuda-check: %s\n", driver.error().message().c_str());
    return f == DriverFailure::NoDriver || f == DriverFailure::NoDevice ? kExitNoGpu
                                                                        : kExitFailed;
  }
  const Driver &drv = **driver;
  Expected<int> count = deviceCount(drv);
  if (!count) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n", count.error().message().c_str());
    return kExitFailed;
  }
  std::printf("NVIDIA driver: %s (%s), %d device(s)\n", formatCudaVersion(drv.version()).c_str(),
              drv.library().c_str(), *count);
  if (*count == 0) {
    std::fprintf(stderr, "lpc-cuda-check: no CUDA device\n");
    return kExitNoGpu;
  }
  for (int i = 0; i < *count; ++i) {
    Expected<DeviceInfo> info = deviceInfo(drv, i);
    if (!info) {
      std::fprintf(stderr, "lpc-cuda-check: %s\n", info.error().message().c_str());
      return kExitFailed;
    }
    std::printf("device %d: %s, compute capability %d.%d, %s, %d SMs, %d MHz\n", i,
                info->name.c_str(), info->ccMajor, info->ccMinor,
                gib(info->totalMemory).c_str(), info->multiprocessors, info->clockKHz / 1000);
  }
  Expected<const CublasLt *> lt = loadCublasLt();
  if (lt) {
    std::printf("cuBLASLt: %zu (%s)\n", cublasLtVersion(**lt), cublasLtPath(**lt).c_str());
    if (Error e = checkCublasLtDriver(cublasLtVersion(**lt), drv.version()))
      std::printf("cuBLASLt: unusable with this driver: %s\n", e.message().c_str());
  } else
    std::printf("cuBLASLt: unavailable: %s\n", lt.error().message().c_str());
  Expected<const Cudnn *> dnn = loadCudnn();
  if (dnn)
    std::printf("cuDNN: %zu (%s)\n", cudnnVersion(**dnn), cudnnPath(**dnn).c_str());
  else
    std::printf("cuDNN: unavailable: %s\n", dnn.error().message().c_str());
  // Settings that change how the work runs (gpu-check.sh's diagnostic
  // reruns), so that a log says which run it is.
  std::string settings;
  for (const char *name :
       {"CUDA_LAUNCH_BLOCKING", "CUBLASLT_LOG_LEVEL", "LPC_CUDA_GRAPHS", "LPC_CUDA_SYNC_OPS",
       "CUDNN_LOGLEVEL_DBG", "LPC_CUDNN_LIBRARY", "NCCL_DEBUG", "LPC_NCCL_LIBRARY"})
    if (const char *v = std::getenv(name))
      settings += std::string(" ") + name + "=" + v;
  if (!settings.empty())
    std::printf("settings:%s\n", settings.c_str());
  std::fflush(stdout);

  if (!opt.driverSelftest && !opt.gemmSelftest && !opt.attentionSelftest && !opt.bench &&
      !opt.ncclSelftest)
    return kExitOk;
  // One GPU per rank: the ranks on a machine take its devices in turn.
  if (commSize() > 1 && !opt.deviceGiven)
    opt.device = commLocalRank() % *count;
  if (opt.device >= *count) {
    std::fprintf(stderr, "lpc-cuda-check: no device %d\n", opt.device);
    return kExitUsage;
  }
  Expected<std::unique_ptr<Device>> dev = Device::open(drv, opt.device);
  if (!dev) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n", dev.error().message().c_str());
    return kExitFailed;
  }
  Report report;
  if (opt.driverSelftest)
    driverSelftest(**dev, report);
  if (opt.gemmSelftest)
    gemmSelftest(**dev, report);
  if (opt.attentionSelftest)
    attentionSelftest(**dev, report, opt.attentionHost);
  if (opt.ncclSelftest)
    ncclSelftest(**dev, report);
  if (opt.driverSelftest || opt.gemmSelftest || opt.attentionSelftest || opt.ncclSelftest)
    std::printf("%s\n", report.ok ? "all checks passed" : "SOME CHECKS FAILED");
  int status = report.ok ? kExitOk : kExitFailed;
  if (opt.bench) {
    int b = gemmBench(**dev, opt);
    if (b != kExitOk)
      status = b;
  }
  AllocatorStats s = (*dev)->allocator().stats();
  std::printf("device memory: peak in use %s, peak held %s, %llu allocations (%llu from the "
              "cache)\n",
              mib(s.peakInUse).c_str(), mib(s.peakHeld).c_str(),
              static_cast<unsigned long long>(s.allocations),
              static_cast<unsigned long long>(s.cacheHits));
  if (status != kExitOk)
    commAbortAll(status); // under mpirun: no rank waits for this one
  return status;
}
