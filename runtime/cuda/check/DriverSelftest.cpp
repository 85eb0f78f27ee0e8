//===- DriverSelftest.cpp - lpc-cuda-check --driver-selftest --------------===//
//
// The driver API under everything else: the caching allocator reuses a freed
// block, the PTX test kernel (TestKernels.h) JIT-compiles and computes, an
// invalid PTX is reported with the JIT's log, a graph of launches replays, a
// failed capture ends the capture. Runs on the fake driver too.
//
//===----------------------------------------------------------------------===//

#include "Check.h"

#include "lpc/Runtime/CudaAllocator.h"

#include "TestKernels.h"

#include <cstdio>
#include <string>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {
namespace check {

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

} // namespace check
} // namespace cuda
} // namespace rt
} // namespace lpc
