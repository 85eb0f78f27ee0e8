// CudaTests.cpp - tests of runtime/cuda (lpc-cuda-tests): groups cuda-float,
// cuda-reference, cuda-allocator, cuda-driver, cuda-gemm run everywhere;
// cuda-gpu needs a GPU and is skipped (exit 77) without one.

#include "TestHarness.h"

#include "lpc/Runtime/CudaAllocator.h"
#include "lpc/Runtime/CudaDriver.h"
#include "lpc/Runtime/CudaGemm.h"

#include "GemmReference.h"
#include "lpc/Runtime/HostFloat.h"
#include "TestKernels.h"

#include <dlfcn.h>

using namespace lpc::rt;
using namespace lpc::rt::cuda;

#ifndef LPC_CUDA_TOOLKIT_LIBDIR
#define LPC_CUDA_TOOLKIT_LIBDIR ""
#endif

//===----------------------------------------------------------------------===//
// cuda-float: host encodings used by the GPU checks
//===----------------------------------------------------------------------===//

TEST(cuda_float, known_values) {
  CHECK_EQ(kBF16.encode(1.0), 0x3F80u);
  CHECK_EQ(kBF16.encode(-2.5), 0xC020u);
  CHECK_EQ(kBF16.encode(1.0 + 1.0 / 256), 0x3F80u);     // tie -> even
  CHECK_EQ(kBF16.encode(1.0 + 3.0 / 256), 0x3F82u);     // tie -> even (up)
  CHECK_EQ(kBF16.encode(3.3895313892515355e38), 0x7F7Fu); // max
  CHECK_EQ(kBF16.encode(3.4e38), 0x7F80u);               // overflow -> inf
  CHECK_EQ(kBF16.encode(NAN) & 0x7FC0u, 0x7FC0u);
  CHECK_EQ(kF16.encode(1.0), 0x3C00u);
  CHECK_EQ(kF16.encode(65504.0), 0x7BFFu);
  CHECK_EQ(kF16.encode(65519.0), 0x7BFFu);
  CHECK_EQ(kF16.encode(65520.0), 0x7C00u); // rounds to infinity
  CHECK_EQ(kF16.encode(std::ldexp(1.0, -24)), 0x0001u);
  CHECK_EQ(kF16.encode(std::ldexp(1.0, -25)), 0x0000u); // tie -> even (zero)
  CHECK_EQ(kF16.encode(-0.0), 0x8000u);
  CHECK_EQ(kE4M3.encode(1.0), 0x38u);
  CHECK_EQ(kE4M3.encode(448.0), 0x7Eu);
  CHECK_EQ(kE4M3.encode(-448.0), 0xFEu);
  CHECK_EQ(kE4M3.encode(1e6), 0x7Eu);       // saturates
  CHECK_EQ(kE4M3.encode(INFINITY), 0x7Eu);  // saturates
  CHECK_EQ(kE4M3.encode(NAN) & 0x7Fu, 0x7Fu);
  CHECK_EQ(kE4M3.encode(std::ldexp(1.0, -9)), 0x01u);     // min subnormal
  CHECK_EQ(kE4M3.encode(std::ldexp(1.0, -10)), 0x00u);    // tie -> even
  CHECK_EQ(kE4M3.encode(3 * std::ldexp(1.0, -10)), 0x02u); // tie -> even
  CHECK_EQ(kE4M3.encode(std::ldexp(1.0, -6)), 0x08u);     // min normal
  CHECK_EQ(kE5M2.encode(1.0), 0x3Cu);
  CHECK_EQ(kE5M2.encode(57344.0), 0x7Bu);
  CHECK_EQ(kE5M2.encode(1e9), 0x7Bu); // saturates
  CHECK_EQ(kE5M2.encode(std::ldexp(1.0, -16)), 0x01u);
  CHECK(std::isinf(kE5M2.decode(0x7C)));
  CHECK(std::isnan(kE5M2.decode(0x7D)));
  CHECK(std::isnan(kE4M3.decode(0x7F)));
  CHECK_EQ(kE4M3.decode(0x7E), 448.0);
  CHECK_EQ(kE4M3.decode(0x01), std::ldexp(1.0, -9));
  CHECK_EQ(kF16.decode(0x7BFF), 65504.0);
  CHECK_EQ(kBF16.decode(0x3F80), 1.0);
}

TEST(cuda_float, every_pattern_round_trips) {
  for (const MiniFloat *f : {&kBF16, &kF16, &kE4M3, &kE5M2}) {
    uint32_t count = 1u << (1 + f->expBits + f->manBits);
    int bad = 0;
    for (uint32_t bits = 0; bits < count; ++bits) {
      double v = f->decode(bits);
      if (std::isnan(v) || (std::isinf(v) && f->saturate))
        continue;
      bad += f->encode(v) != bits;
    }
    CHECK_EQ(bad, 0);
  }
}

TEST(cuda_float, bf16_matches_integer_rounding) {
  // bf16 RNE as the usual bit trick: add 0x7FFF + lsb, truncate.
  Rng rng(5);
  int bad = 0;
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng.next());
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f))
      continue;
    uint32_t expect = (bits + 0x7FFFu + ((bits >> 16) & 1)) >> 16;
    bad += kBF16.encode(f) != expect;
  }
  CHECK_EQ(bad, 0);
}

#ifdef __FLT16_MAX__
TEST(cuda_float, f16_matches_compiler) {
  Rng rng(6);
  int bad = 0;
  for (int i = 0; i < 200000; ++i) {
    // Floats around f16's range, including subnormals and overflow.
    float f = static_cast<float>(std::ldexp(rng.uniform() * 2 - 1, int(rng.below(44)) - 26));
    _Float16 h = static_cast<_Float16>(f);
    uint16_t hb;
    std::memcpy(&hb, &h, 2);
    bad += kF16.encode(f) != hb;
  }
  CHECK_EQ(bad, 0);
}
#endif

//===----------------------------------------------------------------------===//
// cuda-reference: the host GEMM the GPU results are compared with
//===----------------------------------------------------------------------===//

TEST(cuda_reference, layouts_bias_gelu) {
  // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]] (row-major, M = N = K = 2).
  GemmDesc d;
  d.m = d.n = d.k = 2;
  std::vector<double> a = {1, 2, 3, 4}, b = {5, 6, 7, 8}, none;
  CHECK(referenceGemm(d, a, b, none, 1.0) == (std::vector<double>{19, 22, 43, 50}));
  d.transA = true; // A buffer holds A^T
  CHECK(referenceGemm(d, a, b, none, 1.0) == (std::vector<double>{26, 30, 38, 44}));
  d.transA = false, d.transB = true; // B buffer holds B^T
  CHECK(referenceGemm(d, a, b, none, 1.0) == (std::vector<double>{17, 23, 39, 53}));
  d.transB = false, d.epilogue = GemmEpilogue::Bias;
  CHECK(referenceGemm(d, a, b, {100, 200}, 2.0) ==
        (std::vector<double>{138, 244, 186, 300}));
  d.epilogue = GemmEpilogue::GeluTanh;
  std::vector<double> g = referenceGemm(d, {1, 0, 0, 1}, {-1, 0, 0, 3}, none, 1.0);
  CHECK(std::fabs(g[0] - (-0.15880800939172324)) < 1e-12); // gelu_tanh(-1)
  CHECK(std::fabs(g[3] - 2.996362607918227) < 1e-12);      // gelu_tanh(3)
  // Batched, B broadcast.
  GemmDesc bd;
  bd.m = bd.n = bd.k = 1, bd.batch = 3, bd.broadcastB = true;
  CHECK(referenceGemm(bd, {1, 2, 3}, {10}, none, 1.0) == (std::vector<double>{10, 20, 30}));
}

//===----------------------------------------------------------------------===//
// cuda-allocator: bookkeeping against a fake backend
//===----------------------------------------------------------------------===//

namespace {
/// What the fake backend holds; outlives the allocator that owns the backend.
struct Ledger {
  size_t capacity = SIZE_MAX, used = 0;
  std::map<uint64_t, size_t> live;
};
/// Hands out fake addresses, at most `capacity` bytes at a time.
struct FakeMemory final : DeviceMemoryBackend {
  explicit FakeMemory(Ledger &ledger) : ledger(ledger) {}
  Ledger &ledger;
  uint64_t next = 0x10000000;
  Expected<uint64_t> allocate(size_t bytes) override {
    if (ledger.used + bytes > ledger.capacity)
      return Error::make("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (fake)");
    uint64_t p = next;
    next += (bytes + 255) / 256 * 256 + 256;
    ledger.live[p] = bytes;
    ledger.used += bytes;
    return p;
  }
  Error release(uint64_t ptr, size_t bytes) override {
    auto it = ledger.live.find(ptr);
    if (it == ledger.live.end() || it->second != bytes)
      return Error::make("fake: bad release");
    ledger.used -= bytes;
    ledger.live.erase(it);
    return Error();
  }
};
} // namespace

TEST(cuda_allocator, rounding) {
  CHECK_EQ(CachingAllocator::roundSize(0), size_t(512));
  CHECK_EQ(CachingAllocator::roundSize(1), size_t(512));
  CHECK_EQ(CachingAllocator::roundSize(512), size_t(512));
  CHECK_EQ(CachingAllocator::roundSize(513), size_t(1024));
  CHECK_EQ(CachingAllocator::roundSize((1 << 20) - 1), size_t(1 << 20));
  CHECK_EQ(CachingAllocator::roundSize(1 << 20), size_t(1 << 20));
  CHECK_EQ(CachingAllocator::roundSize((1 << 20) + 1), size_t((1 << 20) + (1 << 17)));
  CHECK_EQ(CachingAllocator::roundSize(size_t(3) << 20), size_t(3) << 20);
  CHECK_EQ(CachingAllocator::roundSize((size_t(3) << 20) + 1), (size_t(3) << 20) + (1 << 18));
  // Waste is below 1/8 for every large size.
  Rng rng(1);
  for (int i = 0; i < 10000; ++i) {
    size_t n = (size_t(1) << 20) + rng.below(size_t(1) << 34);
    size_t r = CachingAllocator::roundSize(n);
    CHECK(r >= n && double(r - n) < double(n) / 8);
  }
}

TEST(cuda_allocator, reuse_and_stats) {
  Ledger ledger;
  {
    CachingAllocator a(std::make_unique<FakeMemory>(ledger));
    Expected<uint64_t> p1 = a.allocate(1000);
    Expected<uint64_t> p2 = a.allocate(3000);
    CHECK_OK(p1);
    CHECK_OK(p2);
    CHECK_EQ(a.blockSize(*p1), size_t(1024));
    AllocatorStats s = a.stats();
    CHECK_EQ(s.inUse, size_t(1024 + 3072));
    CHECK_EQ(s.held, size_t(1024 + 3072));
    CHECK_EQ(s.backendAllocations, uint64_t(2));
    CHECK_OK(a.free(*p1));
    s = a.stats();
    CHECK_EQ(s.inUse, size_t(3072));
    CHECK_EQ(s.held, size_t(4096));
    CHECK_EQ(s.peakInUse, size_t(4096));
    // Same rounded size: the cached block comes back, no backend call.
    Expected<uint64_t> p3 = a.allocate(600);
    CHECK_OK(p3);
    CHECK_EQ(*p3, *p1);
    s = a.stats();
    CHECK_EQ(s.cacheHits, uint64_t(1));
    CHECK_EQ(s.backendAllocations, uint64_t(2));
    CHECK_EQ(s.allocations, uint64_t(3));
    // Another size does not take it.
    CHECK_OK(a.free(*p3));
    Expected<uint64_t> p4 = a.allocate(2048);
    CHECK_OK(p4);
    CHECK(*p4 != *p1);
    CHECK_EQ(a.stats().held, size_t(1024 + 3072 + 2048));
    CHECK_EQ(a.stats().peakHeld, size_t(1024 + 3072 + 2048));
    // Double free and foreign pointers are errors that change nothing.
    CHECK_ERR(a.free(*p3), "not a live block", "double free");
    CHECK_ERR(a.free(12345), "not a live block");
    CHECK_EQ(a.stats().inUse, size_t(3072 + 2048));
    // releaseCached returns only free blocks.
    CHECK_OK(a.releaseCached());
    s = a.stats();
    CHECK_EQ(s.held, size_t(3072 + 2048));
    CHECK_EQ(s.backendReleases, uint64_t(1));
    CHECK_EQ(ledger.live.size(), size_t(2));
    a.resetPeaks();
    CHECK_EQ(a.stats().peakHeld, s.held);
  }
  // The destructor returned the blocks still in use, too.
  CHECK(ledger.live.empty());
}

TEST(cuda_allocator, out_of_memory_releases_cache_and_retries) {
  Ledger ledger;
  ledger.capacity = size_t(4) << 20;
  CachingAllocator a(std::make_unique<FakeMemory>(ledger));
  Expected<uint64_t> big = a.allocate(size_t(3) << 20);
  CHECK_OK(big);
  CHECK_OK(a.free(*big)); // cached: 3 MiB held, 0 in use
  // 2 MiB does not fit next to the cached 3 MiB: the cache goes, then it fits.
  Expected<uint64_t> other = a.allocate(size_t(2) << 20);
  CHECK_OK(other);
  AllocatorStats s = a.stats();
  CHECK_EQ(s.held, size_t(2) << 20);
  CHECK_EQ(s.backendReleases, uint64_t(1));
  // Too big even with an empty cache: a clear error, stats unchanged.
  Expected<uint64_t> huge = a.allocate(size_t(8) << 20);
  CHECK_ERR(huge, "device allocation of 8388608 bytes failed", "in use 2.0 MiB",
            "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK_EQ(a.stats().held, size_t(2) << 20);
}

//===----------------------------------------------------------------------===//
// cuda-driver: loading libcuda (no GPU needed)
//===----------------------------------------------------------------------===//

TEST(cuda_driver, result_names) {
  CHECK_EQ(cuResultName(CUDA_SUCCESS), std::string("CUDA_SUCCESS"));
  CHECK_EQ(cuResultName(CUDA_ERROR_INVALID_PTX), std::string("CUDA_ERROR_INVALID_PTX"));
  CHECK_EQ(cuResultName(CUDA_ERROR_NO_DEVICE), std::string("CUDA_ERROR_NO_DEVICE"));
  CHECK_EQ(cuResultName(static_cast<CUresult>(12345)), std::string("CUresult 12345"));
  CHECK_EQ(formatCudaVersion(12040), std::string("CUDA 12.4"));
  CHECK_EQ(formatCudaVersion(13000), std::string("CUDA 13.0"));
}

TEST(cuda_driver, missing_library) {
  DriverFailure f = DriverFailure::None;
  Expected<std::unique_ptr<Driver>> d = Driver::load("/nonexistent/libcuda.so.1", &f);
  CHECK_ERR(d, "no NVIDIA driver: /nonexistent/libcuda.so.1 not found (this machine has no "
               "GPU driver)");
  CHECK(f == DriverFailure::NoDriver);
}

TEST(cuda_driver, not_a_driver) {
  // A real library without cuGetProcAddress_v2 (libdl is always there).
  DriverFailure f = DriverFailure::None;
  Expected<std::unique_ptr<Driver>> d = Driver::load("libdl.so.2", &f);
  CHECK_ERR(d, "NVIDIA driver too old: libdl.so.2 has no cuGetProcAddress_v2");
  CHECK(f == DriverFailure::Failed);
}

TEST(cuda_driver, toolkit_stub_library) {
  std::string stub = std::string(LPC_CUDA_TOOLKIT_LIBDIR) + "/stubs/libcuda.so";
  if (std::string(LPC_CUDA_TOOLKIT_LIBDIR).empty() || !isRegularFile(stub))
    SKIP("no CUDA toolkit stub library at " + stub);
  DriverFailure f = DriverFailure::None;
  Expected<std::unique_ptr<Driver>> d = Driver::load(stub, &f);
  CHECK_ERR(d, "no NVIDIA driver: ", "is the CUDA toolkit's stub library");
  CHECK(f == DriverFailure::NoDriver);
}

TEST(cuda_driver, process_driver_or_clean_error) {
  Expected<const Driver *> d = Driver::get();
  if (d) {
    CHECK((*d)->version() >= 12000);
    CHECK(Driver::failure() == DriverFailure::None);
    return;
  }
  const std::string &msg = d.error().message();
  CHECK(msg.rfind("no NVIDIA driver: ", 0) == 0 || msg.rfind("no CUDA device: ", 0) == 0);
  CHECK(Driver::failure() == DriverFailure::NoDriver ||
        Driver::failure() == DriverFailure::NoDevice);
  // Where the loader cannot see libcuda.so.1 at all, the message is exact.
  const char *env = std::getenv("LPC_CUDA_DRIVER_LIBRARY");
  void *probe = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (probe)
    ::dlclose(probe);
  else if (!env || !*env)
    CHECK_EQ(msg, std::string("no NVIDIA driver: libcuda.so.1 not found (this machine has "
                              "no GPU driver)"));
  // A second call gives the same answer.
  CHECK_EQ(Driver::get().error().message(), msg);
}

//===----------------------------------------------------------------------===//
// cuda-fake-driver: Device, Module, Graph, StreamTimer on tests/FakeDriver.cpp
//===----------------------------------------------------------------------===//

static std::unique_ptr<Driver> fakeDriver() {
  Expected<std::unique_ptr<Driver>> d = Driver::load(LPC_FAKE_CUDA_DRIVER);
  CHECK_OK(d);
  return d ? d.take() : nullptr;
}

TEST(cuda_fake_driver, load_and_devices) {
  std::unique_ptr<Driver> drv = fakeDriver();
  if (!drv)
    return;
  CHECK_EQ(drv->version(), 12080);
  CHECK_EQ(drv->library(), std::string(LPC_FAKE_CUDA_DRIVER));
  Expected<int> n = deviceCount(*drv);
  CHECK_OK(n);
  CHECK_EQ(*n, 1);
  Expected<DeviceInfo> info = deviceInfo(*drv, 0);
  CHECK_OK(info);
  CHECK_EQ(info->name, std::string("lpc fake GPU"));
  CHECK_EQ(info->ccMajor, 9);
  CHECK_EQ(info->multiprocessors, 132);
  CHECK_EQ(info->totalMemory, size_t(80) << 30);
  CHECK_ERR(deviceInfo(*drv, 3), "device 3: cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE",
            "(fake driver error)");
  CHECK_ERR(Device::open(*drv, 1), "no CUDA device 1 (1 device(s))");
  // Results the driver can name come from the driver.
  CHECK_EQ(drv->describe(CUDA_ERROR_INVALID_PTX),
           std::string("CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed (fake))"));
  CHECK_ERR(drv->check(CUDA_ERROR_NOT_FOUND, "cuFoo"), "cuFoo failed: CUDA_ERROR_NOT_FOUND");
}

TEST(cuda_fake_driver, memory_modules_graphs) {
  std::unique_ptr<Driver> drv = fakeDriver();
  if (!drv)
    return;
  Expected<std::unique_ptr<Device>> opened = Device::open(*drv, 0);
  CHECK_OK(opened);
  if (!opened)
    return;
  Device &dev = **opened;
  const unsigned n = 1000;
  std::vector<float> x(n), y(n);
  for (unsigned i = 0; i < n; ++i)
    x[i] = float(i), y[i] = 1.0f;
  Expected<DeviceBuffer> dx = dev.allocate(n * 4), dy = dev.allocate(n * 4);
  CHECK_OK(dx);
  CHECK_OK(dy);
  if (!dx || !dy)
    return;
  CHECK_EQ(dx->size(), size_t(4096));
  CHECK_EQ(dev.allocator().stats().inUse, size_t(8192));
  CHECK_OK(dev.copyToDevice(dx->get(), x.data(), n * 4));
  CHECK_OK(dev.copyToDevice(dy->get(), y.data(), n * 4));

  Expected<Module> mod = Module::load(dev, kTestPtx);
  CHECK_OK(mod);
  if (!mod)
    return;
  CHECK_EQ(mod->infoLog(), std::string("fake JIT: 1 kernel"));
  Expected<CUfunction> fn = mod->function(kTestKernelName);
  CHECK_OK(fn);
  CHECK_ERR(mod->function("nope"), "kernel 'nope': cuModuleGetFunction failed: "
                                   "CUDA_ERROR_NOT_FOUND");
  Expected<Module> broken = Module::load(dev, kBrokenPtx);
  CHECK_ERR(broken, "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT "
                    "compilation failed (fake)): ptxas application ptx input, line 8; "
                    "error   : Not a name of any known instruction: 'lpc';ptxas fatal");
  if (!fn)
    return;
  CUdeviceptr px = dx->get(), py = dy->get();
  auto launch = [&](float a) {
    unsigned count = n;
    void *params[] = {&px, &py, &a, &count};
    return dev.launch(*fn, Dim3{4, 1, 1}, Dim3{256, 1, 1}, 0, params);
  };
  CHECK_OK(launch(2.0f));
  CHECK_OK(dev.copyToHost(y.data(), py, n * 4));
  CHECK_EQ(y[10], 21.0f);

  // Capture records; nothing runs until the graph is launched.
  Expected<Graph> g = Graph::capture(dev, [&] {
    Error e = launch(1.0f);
    return e ? e : launch(10.0f);
  });
  CHECK_OK(g);
  CHECK_OK(dev.copyToHost(y.data(), py, n * 4));
  CHECK_EQ(y[10], 21.0f);
  Expected<StreamTimer> t = StreamTimer::create(dev);
  CHECK_OK(t);
  if (!g || !t)
    return;
  CHECK_OK(t->start());
  CHECK_OK(g->launch());
  CHECK_OK(g->launch());
  CHECK_OK(t->stop());
  Expected<float> ms = t->elapsedMs();
  CHECK_OK(ms);
  CHECK_OK(dev.copyToHost(y.data(), py, n * 4));
  CHECK_EQ(y[10], 21.0f + 2 * 11.0f * 10.0f);
  // A failing body still ends the capture: the stream synchronizes again.
  Expected<Graph> failing = Graph::capture(dev, [] { return Error::make("body failed"); });
  CHECK_ERR(failing, "during graph capture: body failed");
  CHECK_OK(dev.synchronize());
  // Moves keep one owner.
  Graph moved = g.take();
  CHECK_OK(moved.launch());
  Graph empty;
  CHECK_ERR(empty.launch(), "no graph");

  // cuBLASLt cannot start on the fake driver; the engine says why (a
  // cuBLASLt 13 needs a newer driver than the fake's CUDA 12.8).
  if (Expected<const CublasLt *> lt = loadCublasLt()) {
    Expected<std::unique_ptr<GemmEngine>> engine = GemmEngine::create(dev);
    CHECK_ERR(engine, cublasLtVersion(**lt) >= 130000 ? "needs an NVIDIA driver for CUDA 13.0"
                                                      : "cublasLtCreate failed: ");
  }
  dx->reset();
  dy->reset();
  CHECK_EQ(dev.allocator().stats().inUse, size_t(0));
}

//===----------------------------------------------------------------------===//
// cuda-gemm: argument validation and cuBLASLt descriptors (no GPU needed)
//===----------------------------------------------------------------------===//

static GemmDesc gemm(int64_t m, int64_t n, int64_t k, DType a, DType b, DType c,
                     bool ta = false, bool tb = false) {
  GemmDesc d;
  d.m = m, d.n = n, d.k = k, d.a = a, d.b = b, d.c = c, d.transA = ta, d.transB = tb;
  return d;
}

static GemmDesc fp8(DType a = DType::F8_E4M3, DType b = DType::F8_E4M3,
                    DType c = DType::BF16) {
  return gemm(128, 256, 512, a, b, c, false, true);
}

/// Every description the layer supports, over layouts, batches, epilogues.
static std::vector<GemmDesc> supportedDescs() {
  std::vector<GemmDesc> all;
  const GemmEpilogue eps[] = {GemmEpilogue::None, GemmEpilogue::Bias, GemmEpilogue::GeluTanh,
                              GemmEpilogue::BiasGeluTanh};
  for (GemmEpilogue ep : eps) {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const std::pair<DType, DType> types[] = {{DType::F32, DType::F32},
                                                 {DType::BF16, DType::BF16},
                                                 {DType::BF16, DType::F32},
                                                 {DType::F16, DType::F16},
                                                 {DType::F16, DType::F32}};
        for (auto [a, c] : types) {
          GemmDesc d = gemm(33, 17, 9, a, a, c, ta, tb);
          d.epilogue = ep;
          all.push_back(d);
          d.batch = 3;
          d.broadcastB = ta;
          all.push_back(d);
        }
      }
    GemmDesc t = gemm(64, 64, 64, DType::F32, DType::F32, DType::F32);
    t.tf32 = true, t.epilogue = ep;
    all.push_back(t);
    const std::pair<DType, DType> fp8Types[] = {{DType::F8_E4M3, DType::F8_E4M3},
                                                {DType::F8_E4M3, DType::F8_E5M2},
                                                {DType::F8_E5M2, DType::F8_E4M3}};
    for (auto [a, b] : fp8Types)
      for (DType c : {DType::F32, DType::BF16, DType::F16, DType::F8_E4M3, DType::F8_E5M2}) {
        if (c == DType::F8_E5M2 && a == DType::F8_E4M3 && b == DType::F8_E4M3)
          continue;
        for (bool fast : {false, true}) {
          GemmDesc d = fp8(a, b, c);
          d.fastAccum = fast, d.epilogue = ep, d.batch = fast ? 2 : 1;
          all.push_back(d);
        }
      }
  }
  return all;
}

static GemmOperands operandsFor(const GemmDesc &d) {
  GemmOperands ops;
  ops.a = 0x100000, ops.b = 0x200000, ops.c = 0x300000;
  if (d.hasBias())
    ops.bias = 0x400000;
  if (d.isFP8()) {
    ops.aScale = 0x500000, ops.bScale = 0x500010;
    if (d.c == DType::F8_E4M3 || d.c == DType::F8_E5M2)
      ops.cScale = 0x500020, ops.amax = 0x500030;
  }
  return ops;
}

TEST(cuda_gemm, supported_descriptions_validate) {
  for (const GemmDesc &d : supportedDescs()) {
    CHECK_OK(validateGemm(d));
    CHECK_OK(validateGemm(d, operandsFor(d)));
  }
}

TEST(cuda_gemm, fp8_rules) {
  GemmDesc d = fp8();
  d.transB = false;
  CHECK_ERR(validateGemm(d), "FP8 GEMMs need cuBLASLt's TN layout", "B transposed, [N, K]");
  d = fp8();
  d.transA = true;
  CHECK_ERR(validateGemm(d), "TN layout");
  d = fp8();
  d.k = 520;
  CHECK_ERR(validateGemm(d), "M, N and K multiples of 16 (got M = 128, N = 256, K = 520)");
  d = fp8();
  d.n = 100;
  CHECK_ERR(validateGemm(d), "M, N and K multiples of 16");
  d = fp8();
  d.m = 8;
  CHECK_ERR(validateGemm(d), "M, N and K multiples of 16");
  d.m = 16;
  CHECK_OK(validateGemm(d));
  CHECK_ERR(validateGemm(fp8(DType::F8_E5M2, DType::F8_E5M2)),
            "E5M2 x E5M2 is not supported by cuBLASLt");
  CHECK_ERR(validateGemm(fp8(DType::F8_E4M3, DType::BF16)),
            "FP8 GEMMs need both A and B in FP8 (got f8_e4m3 x bf16)");
  CHECK_ERR(validateGemm(fp8(DType::F8_E4M3, DType::F8_E4M3, DType::F8_E5M2)),
            "an E5M2 output needs an E5M2 operand");
  CHECK_ERR(validateGemm(fp8(DType::F8_E4M3, DType::F8_E4M3, DType::I32)),
            "FP8 GEMMs write f32, bf16, f16");
  d = fp8();
  d.tf32 = true;
  CHECK_ERR(validateGemm(d), "tf32 applies to f32 GEMMs only");
  // The message names the GEMM.
  CHECK_ERR(validateGemm(fp8(DType::F8_E5M2, DType::F8_E5M2)),
            "GEMM f8_e5m2 x f8_e5m2 -> bf16, 128x256x512 (MxNxK), A, B^T: ");
}

TEST(cuda_gemm, type_and_shape_rules) {
  CHECK_ERR(validateGemm(gemm(0, 4, 4, DType::F32, DType::F32, DType::F32)),
            "M, N, K and batch must be at least 1");
  GemmDesc d = gemm(4, 4, 4, DType::F32, DType::F32, DType::F32);
  d.batch = 0;
  CHECK_ERR(validateGemm(d), "at least 1");
  CHECK_ERR(validateGemm(gemm(int64_t(1) << 31, 4, 4, DType::F32, DType::F32, DType::F32)),
            "a dimension is 2^31 or more");
  CHECK_ERR(validateGemm(gemm(4, 4, 4, DType::BF16, DType::F16, DType::F32)),
            "A and B must have the same type (bf16 x f16)");
  CHECK_ERR(validateGemm(gemm(4, 4, 4, DType::F32, DType::F32, DType::BF16)),
            "f32 GEMMs write f32");
  CHECK_ERR(validateGemm(gemm(4, 4, 4, DType::BF16, DType::BF16, DType::F16)),
            "bf16 GEMMs write bf16 or f32");
  CHECK_ERR(validateGemm(gemm(4, 4, 4, DType::I32, DType::I32, DType::I32)),
            "unsupported operand type i32");
  d = gemm(4, 4, 4, DType::BF16, DType::BF16, DType::BF16);
  d.tf32 = true;
  CHECK_ERR(validateGemm(d), "tf32 applies to f32 GEMMs only");
  d.tf32 = false, d.fastAccum = true;
  CHECK_ERR(validateGemm(d), "fast accumulation applies to FP8 GEMMs only");
}

TEST(cuda_gemm, pointer_rules) {
  GemmDesc d = gemm(8, 8, 8, DType::BF16, DType::BF16, DType::BF16);
  GemmOperands ops = operandsFor(d);
  ops.b = 0;
  CHECK_ERR(validateGemm(d, ops), "B is a null pointer");
  ops = operandsFor(d);
  ops.a += 1;
  CHECK_ERR(validateGemm(d, ops), "A (0x100001) is not 2-byte aligned");
  ops = operandsFor(d);
  ops.bias = 0x400000;
  CHECK_ERR(validateGemm(d, ops), "a bias pointer without a bias epilogue");
  d.epilogue = GemmEpilogue::BiasGeluTanh;
  ops.bias = 0;
  CHECK_ERR(validateGemm(d, ops), "the epilogue needs a bias pointer");
  d.epilogue = GemmEpilogue::None;
  ops = operandsFor(d);
  ops.aScale = 0x500000;
  CHECK_ERR(validateGemm(d, ops), "scale and amax pointers apply to FP8 GEMMs only");

  GemmDesc f = fp8();
  ops = operandsFor(f);
  ops.c += 8; // bf16-aligned, not 16-byte aligned
  CHECK_ERR(validateGemm(f, ops), "C (0x300008) is not 16-byte aligned");
  ops = operandsFor(f);
  ops.amax = 0x500030;
  CHECK_ERR(validateGemm(f, ops), "amax is computed for FP8 outputs only");
  ops = operandsFor(f);
  ops.cScale = 0x500020;
  CHECK_ERR(validateGemm(f, ops), "cScale applies to FP8 outputs only");
  GemmDesc q = fp8(DType::F8_E4M3, DType::F8_E4M3, DType::F8_E4M3);
  ops = operandsFor(q);
  ops.cScale = 0;
  CHECK_ERR(validateGemm(q, ops), "an FP8 output needs cScale");
  ops = operandsFor(q);
  ops.aScale = 0x500004; // 4-byte aligned: cuBLASLt refuses it
  CHECK_ERR(validateGemm(q, ops), "is not 16-byte aligned (cuBLASLt refuses it)");
  // Scales are optional for FP8 inputs (1 when absent).
  ops = operandsFor(f);
  ops.aScale = ops.bScale = 0;
  CHECK_OK(validateGemm(f, ops));
}

TEST(cuda_gemm, bias_types_sizes_names) {
  CHECK(gemmBiasType(fp8(DType::F8_E4M3, DType::F8_E4M3, DType::F32)) == DType::BF16);
  CHECK(gemmBiasType(fp8(DType::F8_E4M3, DType::F8_E4M3, DType::F8_E4M3)) == DType::BF16);
  CHECK(gemmBiasType(fp8(DType::F8_E4M3, DType::F8_E5M2, DType::F16)) == DType::F16);
  CHECK(gemmBiasType(gemm(4, 4, 4, DType::BF16, DType::BF16, DType::F32)) == DType::F32);
  GemmDesc d = gemm(3, 5, 7, DType::BF16, DType::BF16, DType::F32, true, false);
  d.batch = 2;
  CHECK_EQ(gemmBytesA(d), size_t(2 * 3 * 7 * 2));
  CHECK_EQ(gemmBytesB(d), size_t(2 * 7 * 5 * 2));
  CHECK_EQ(gemmBytesC(d), size_t(2 * 3 * 5 * 4));
  d.broadcastB = true;
  d.epilogue = GemmEpilogue::BiasGeluTanh;
  CHECK_EQ(gemmBytesB(d), size_t(7 * 5 * 2));
  CHECK_EQ(d.str(), std::string("bf16 x bf16 -> f32, 2 x 3x5x7 (MxNxK), A^T, B (broadcast), "
                                "bias+gelu"));
}

TEST(cuda_gemm, cublaslt_descriptors) {
  // cuBLASLt's descriptor calls work without a GPU: every attribute the
  // layer sets must be accepted by the library (names, sizes, values).
  Expected<const CublasLt *> lt = loadCublasLt();
  if (!lt)
    SKIP(lt.error().message());
  CHECK(cublasLtVersion(**lt) >= 120000);
  for (const GemmDesc &d : supportedDescs())
    CHECK_OK(checkGemmDescriptors(**lt, d));
  CHECK_ERR(checkGemmDescriptors(**lt, fp8(DType::F8_E5M2, DType::F8_E5M2)), "E5M2 x E5M2");
}

//===----------------------------------------------------------------------===//
// cuda-gpu: needs a GPU (skipped without one)
//===----------------------------------------------------------------------===//

/// The process's device 0, or null after SKIP-worthy failure.
static Device *gpu(std::string *why) {
  static std::unique_ptr<Device> dev;
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    Expected<const Driver *> d = Driver::get();
    if (!d) {
      error = d.error().message();
    } else {
      Expected<std::unique_ptr<Device>> opened = Device::open(**d, 0);
      if (opened)
        dev = opened.take();
      else
        error = opened.error().message();
    }
  }
  *why = error;
  return dev.get();
}

#define REQUIRE_GPU(dev)                                                                     \
  std::string why_;                                                                          \
  Device *dev = gpu(&why_);                                                                  \
  if (!dev) {                                                                                \
    if (Driver::failure() == DriverFailure::NoDriver ||                                      \
        Driver::failure() == DriverFailure::NoDevice)                                        \
      SKIP("no GPU: " + why_);                                                               \
    fail(__FILE__, __LINE__, "GPU unusable: " + why_);                                       \
    return;                                                                                  \
  }

TEST(cuda_gpu, device_and_copies) {
  REQUIRE_GPU(dev);
  CHECK(!dev->info().name.empty());
  CHECK(dev->info().ccMajor >= 5);
  CHECK(dev->info().totalMemory > 0);
  size_t freeBytes = 0, total = 0;
  CHECK_OK(dev->memoryInfo(&freeBytes, &total));
  CHECK(freeBytes > 0 && freeBytes <= total);
  std::vector<uint8_t> host(100000);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = uint8_t(i * 7);
  Expected<DeviceBuffer> buf = dev->allocate(host.size());
  CHECK_OK(buf);
  if (!buf)
    return;
  CHECK_OK(dev->copyToDevice(buf->get(), host.data(), host.size()));
  std::vector<uint8_t> back(host.size());
  CHECK_OK(dev->copyToHost(back.data(), buf->get(), back.size()));
  CHECK(back == host);
  CHECK_OK(dev->memset(buf->get(), 0xAB, 10));
  CHECK_OK(dev->copyToHost(back.data(), buf->get(), 10));
  CHECK_EQ(int(back[9]), 0xAB);
}

TEST(cuda_gpu, module_launch_and_jit_errors) {
  REQUIRE_GPU(dev);
  Expected<Module> mod = Module::load(*dev, kTestPtx);
  CHECK_OK(mod);
  if (!mod)
    return;
  Expected<CUfunction> fn = mod->function(kTestKernelName);
  CHECK_OK(fn);
  CHECK_ERR(mod->function("no_such_kernel"), "kernel 'no_such_kernel'",
            "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND");
  if (!fn)
    return;
  unsigned n = 1000;
  std::vector<float> x(n, 2.0f), y(n, 1.0f);
  Expected<DeviceBuffer> dx = dev->allocate(n * 4), dy = dev->allocate(n * 4);
  CHECK_OK(dx);
  CHECK_OK(dy);
  if (!dx || !dy)
    return;
  CHECK_OK(dev->copyToDevice(dx->get(), x.data(), n * 4));
  CHECK_OK(dev->copyToDevice(dy->get(), y.data(), n * 4));
  CUdeviceptr px = dx->get(), py = dy->get();
  float a = 3.0f;
  void *params[] = {&px, &py, &a, &n};
  CHECK_OK(dev->launch(*fn, Dim3{4, 1, 1}, Dim3{256, 1, 1}, 0, params));
  CHECK_OK(dev->copyToHost(y.data(), py, n * 4));
  CHECK_EQ(y[0], 7.0f);
  CHECK_EQ(y[n - 1], 7.0f);
  Expected<Module> broken = Module::load(*dev, kBrokenPtx);
  CHECK_ERR(broken, "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX", "line");
}

TEST(cuda_gpu, small_gemm_matches_reference) {
  REQUIRE_GPU(dev);
  Expected<std::unique_ptr<GemmEngine>> engine = GemmEngine::create(*dev);
  CHECK_OK(engine);
  if (!engine)
    return;
  GemmDesc d = gemm(5, 3, 4, DType::F32, DType::F32, DType::F32, false, true);
  d.epilogue = GemmEpilogue::Bias;
  std::vector<float> a(20), b(12), bias = {0.5f, -1.0f, 2.0f};
  for (int i = 0; i < 20; ++i)
    a[i] = float(i % 5) - 1.5f;
  for (int i = 0; i < 12; ++i)
    b[i] = float(i % 4) + 0.25f;
  Expected<DeviceBuffer> da = dev->allocate(80), db = dev->allocate(48), dc = dev->allocate(60),
                         dbias = dev->allocate(12);
  if (!da || !db || !dc || !dbias) {
    CHECK(false);
    return;
  }
  CHECK_OK(dev->copyToDevice(da->get(), a.data(), 80));
  CHECK_OK(dev->copyToDevice(db->get(), b.data(), 48));
  CHECK_OK(dev->copyToDevice(dbias->get(), bias.data(), 12));
  GemmOperands ops;
  ops.a = da->get(), ops.b = db->get(), ops.c = dc->get(), ops.bias = dbias->get();
  CHECK_OK((*engine)->run(d, ops));
  CHECK_OK((*engine)->run(d, ops)); // second call: cached plan
  CHECK_EQ((*engine)->cachedPlans(), size_t(1));
  std::vector<float> c(15);
  CHECK_OK(dev->copyToHost(c.data(), dc->get(), 60));
  std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end()),
      biasd(bias.begin(), bias.end());
  std::vector<double> ref = referenceGemm(d, ad, bd, biasd, 1.0);
  for (int i = 0; i < 15; ++i)
    CHECK(std::fabs(c[i] - ref[i]) <= 1e-5 * (1 + std::fabs(ref[i])));
  // Validation happens before the GPU is touched.
  GemmDesc bad = fp8(DType::F8_E5M2, DType::F8_E5M2);
  CHECK_ERR((*engine)->run(bad, ops), "E5M2 x E5M2");
}
