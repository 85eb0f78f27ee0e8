//===- GemmBench.cpp - lpc-cuda-check --gemm-bench ------------------------===//
//
// cuBLASLt GEMM timings in TFLOP/s: per shape and precision, the median of 5
// event-timed batches and the algorithm cuBLASLt chose.
//
//===----------------------------------------------------------------------===//

#include "Check.h"

#include "lpc/Runtime/HostFloat.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {
namespace check {
namespace {

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

} // namespace

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
      Expected<DeviceBuffer> ds = dev.allocate(2 * kScaleAlign);
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
        const float one = 1.0f;
        ops.aScale = ds->get(), ops.bScale = ds->get() + kScaleAlign;
        e = dev.copyToDevice(ops.aScale, &one, sizeof(one));
        if (!e)
          e = dev.copyToDevice(ops.bScale, &one, sizeof(one));
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

} // namespace check
} // namespace cuda
} // namespace rt
} // namespace lpc
