//===- Driver.cpp - libcuda through dlopen + cuGetProcAddress ---------------===//

#include "lpc/Runtime/CudaDriver.h"
#include "lpc/Runtime/CudaAllocator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>

namespace lpc {
namespace rt {
namespace cuda {

//===----------------------------------------------------------------------===//
// Result names
//===----------------------------------------------------------------------===//

std::string cuResultName(CUresult result) {
  // The enumerators come from cuda.h; the table lets messages name a result
  // when the driver is missing or is the stub that cannot name anything.
  switch (result) {
#define LPC_CU_NAME(e)                                                         \
  case e:                                                                      \
    return #e;
    LPC_CU_NAME(CUDA_SUCCESS)
    LPC_CU_NAME(CUDA_ERROR_INVALID_VALUE)
    LPC_CU_NAME(CUDA_ERROR_OUT_OF_MEMORY)
    LPC_CU_NAME(CUDA_ERROR_NOT_INITIALIZED)
    LPC_CU_NAME(CUDA_ERROR_DEINITIALIZED)
    LPC_CU_NAME(CUDA_ERROR_STUB_LIBRARY)
    LPC_CU_NAME(CUDA_ERROR_DEVICE_UNAVAILABLE)
    LPC_CU_NAME(CUDA_ERROR_NO_DEVICE)
    LPC_CU_NAME(CUDA_ERROR_INVALID_DEVICE)
    LPC_CU_NAME(CUDA_ERROR_DEVICE_NOT_LICENSED)
    LPC_CU_NAME(CUDA_ERROR_INVALID_IMAGE)
    LPC_CU_NAME(CUDA_ERROR_INVALID_CONTEXT)
    LPC_CU_NAME(CUDA_ERROR_NO_BINARY_FOR_GPU)
    LPC_CU_NAME(CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    LPC_CU_NAME(CUDA_ERROR_INVALID_PTX)
    LPC_CU_NAME(CUDA_ERROR_JIT_COMPILER_NOT_FOUND)
    LPC_CU_NAME(CUDA_ERROR_INVALID_SOURCE)
    LPC_CU_NAME(CUDA_ERROR_INVALID_HANDLE)
    LPC_CU_NAME(CUDA_ERROR_NOT_FOUND)
    LPC_CU_NAME(CUDA_ERROR_NOT_READY)
    LPC_CU_NAME(CUDA_ERROR_ILLEGAL_ADDRESS)
    LPC_CU_NAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    LPC_CU_NAME(CUDA_ERROR_LAUNCH_TIMEOUT)
    LPC_CU_NAME(CUDA_ERROR_LAUNCH_FAILED)
    LPC_CU_NAME(CUDA_ERROR_MISALIGNED_ADDRESS)
    LPC_CU_NAME(CUDA_ERROR_NOT_SUPPORTED)
    LPC_CU_NAME(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)
    LPC_CU_NAME(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)
    LPC_CU_NAME(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    LPC_CU_NAME(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
    LPC_CU_NAME(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED)
    LPC_CU_NAME(CUDA_ERROR_STREAM_CAPTURE_UNJOINED)
    LPC_CU_NAME(CUDA_ERROR_STREAM_CAPTURE_ISOLATION)
    LPC_CU_NAME(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    LPC_CU_NAME(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
    LPC_CU_NAME(CUDA_ERROR_UNKNOWN)
#undef LPC_CU_NAME
  default:
    return "CUresult " + std::to_string(static_cast<int>(result));
  }
}

std::string formatCudaVersion(int version) {
  return "CUDA " + std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

Driver::~Driver() {
  // cuBLASLt opens libcuda itself, so this only drops our reference.
  if (handle_)
    ::dlclose(handle_);
}

std::string Driver::describe(CUresult result) const {
  std::string text = cuResultName(result);
  const char *name = nullptr, *desc = nullptr;
  if (api_.getErrorName && api_.getErrorName(result, &name) == CUDA_SUCCESS &&
      name)
    text = name;
  if (api_.getErrorString &&
      api_.getErrorString(result, &desc) == CUDA_SUCCESS && desc)
    text += std::string(" (") + desc + ")";
  return text;
}

Error Driver::check(CUresult result, const char *call) const {
  if (result == CUDA_SUCCESS)
    return Error::success();
  return Error::make(std::string(call) + " failed: " + describe(result));
}

static Error noDriver(const std::string &why, DriverFailure *failure) {
  if (failure)
    *failure = DriverFailure::NoDriver;
  return Error::make("no NVIDIA driver: " + why +
                     " (this machine has no GPU driver)");
}

static Error broken(const std::string &why, DriverFailure *failure) {
  if (failure)
    *failure = DriverFailure::Failed;
  return Error::make(why);
}

Expected<std::unique_ptr<Driver>> Driver::load(const std::string &library,
                                               DriverFailure *failure) {
  if (failure)
    *failure = DriverFailure::None;
  // RTLD_LOCAL: nothing else in the process should bind to libcuda by name
  // through us; RTLD_NOW: a broken install fails here, not at a first call.
  void *handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *err = ::dlerror();
    std::string why = err ? err : "dlopen failed";
    if (why.find("No such file") != std::string::npos)
      return noDriver(library + " not found", failure);
    return broken("cannot load " + library + ": " + why, failure);
  }

  using GetProcAddress = PFN_cuGetProcAddress_v12000;
  auto getProc =
      reinterpret_cast<GetProcAddress>(::dlsym(handle, "cuGetProcAddress_v2"));
  if (!getProc) {
    ::dlclose(handle);
    return broken("NVIDIA driver too old: " + library +
                      " has no cuGetProcAddress_v2 (lpc needs a CUDA 12.0 or "
                      "newer driver)",
                  failure);
  }

  std::unique_ptr<Driver> driver(new Driver());
  driver->handle_ = handle;
  driver->library_ = library;
  DriverApi &api = driver->api_;

  // Each entry point at the ABI version its PFN_ typedef has (see the
  // header); flags 0: the default (legacy) stream semantics.
  auto resolve = [&](const char *symbol, int version, void **slot) -> Error {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = getProc(symbol, slot, version, 0, &status);
    if (r == CUDA_ERROR_STUB_LIBRARY)
      return noDriver(library + " is the CUDA toolkit's stub library", failure);
    if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS ||
        !*slot) {
      std::string why =
          status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
              ? "the driver is older than " + formatCudaVersion(version)
              : r != CUDA_SUCCESS ? cuResultName(r) : "symbol not found";
      return broken(std::string("NVIDIA driver (") + library + ") lacks " +
                        symbol + ": " + why,
                    failure);
    }
    return Error::success();
  };
#define LPC_CUDA_RESOLVE_ENTRY(member, symbol, version)                        \
  if (Error e = resolve(#symbol, version, reinterpret_cast<void **>(&api.member))) \
    return e;
  LPC_CUDA_DRIVER_ENTRY_POINTS(LPC_CUDA_RESOLVE_ENTRY)
#undef LPC_CUDA_RESOLVE_ENTRY

  CUresult r = api.init(0);
  if (r == CUDA_ERROR_STUB_LIBRARY)
    return noDriver(library + " is the CUDA toolkit's stub library", failure);
  if (r == CUDA_ERROR_NO_DEVICE) {
    if (failure)
      *failure = DriverFailure::NoDevice;
    return Error::make("no CUDA device: " +
                       driver->check(r, "cuInit").message());
  }
  if (r != CUDA_SUCCESS)
    return broken(driver->check(r, "cuInit").message(), failure);
  if (Error e = driver->check(api.driverGetVersion(&driver->version_),
                              "cuDriverGetVersion"))
    return broken(e.message(), failure);
  return driver;
}

namespace {
struct ProcessDriver {
  std::unique_ptr<Driver> driver;
  Error error;
  DriverFailure failure = DriverFailure::None;
};
} // namespace

static ProcessDriver &processDriver() {
  // Leaked on purpose: the driver must outlive static destructors of users.
  static ProcessDriver *state = [] {
    auto *s = new ProcessDriver();
    const char *env = std::getenv("LPC_CUDA_DRIVER_LIBRARY");
    std::string library = env && *env ? env : "libcuda.so.1";
    Expected<std::unique_ptr<Driver>> d = Driver::load(library, &s->failure);
    if (d)
      s->driver = d.take();
    else
      s->error = d.takeError();
    return s;
  }();
  return *state;
}

Expected<const Driver *> Driver::get() {
  ProcessDriver &s = processDriver();
  if (!s.driver)
    return Error::make(s.error.message());
  return static_cast<const Driver *>(s.driver.get());
}

DriverFailure Driver::failure() { return processDriver().failure; }

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

Expected<int> deviceCount(const Driver &driver) {
  int n = 0;
  if (Error e = driver.check(driver.api().deviceGetCount(&n), "cuDeviceGetCount"))
    return e;
  return n;
}

Expected<DeviceInfo> deviceInfo(const Driver &driver, int ordinal) {
  const DriverApi &api = driver.api();
  DeviceInfo info;
  info.ordinal = ordinal;
  CUdevice dev = 0;
  if (Error e = driver.check(api.deviceGet(&dev, ordinal), "cuDeviceGet"))
    return e.withContext("device " + std::to_string(ordinal));
  char name[256] = {0};
  if (Error e = driver.check(api.deviceGetName(name, sizeof(name) - 1, dev),
                             "cuDeviceGetName"))
    return e;
  info.name = name;
  struct {
    CUdevice_attribute attr;
    int *out;
  } attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.ccMajor},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.ccMinor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.multiprocessors},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &info.clockKHz},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &info.memoryClockKHz},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &info.memoryBusWidth},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &info.sharedPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &info.sharedPerBlockOptin},
  };
  for (auto &a : attrs)
    if (Error e = driver.check(api.deviceGetAttribute(a.out, a.attr, dev),
                               "cuDeviceGetAttribute"))
      return e;
  if (Error e = driver.check(api.deviceTotalMem(&info.totalMemory, dev),
                             "cuDeviceTotalMem"))
    return e;
  return info;
}

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

namespace {
/// cuMemAlloc / cuMemFree in one context.
class DriverMemory final : public DeviceMemoryBackend {
public:
  DriverMemory(const Driver &driver, CUcontext ctx)
      : driver_(driver), ctx_(ctx) {}
  Expected<uint64_t> allocate(size_t bytes) override {
    if (Error e = driver_.check(driver_.api().ctxSetCurrent(ctx_), "cuCtxSetCurrent"))
      return e;
    CUdeviceptr p = 0;
    if (Error e = driver_.check(driver_.api().memAlloc(&p, bytes), "cuMemAlloc"))
      return e.withContext("allocating " + std::to_string(bytes) + " bytes");
    return static_cast<uint64_t>(p);
  }
  Error release(uint64_t ptr, size_t) override {
    if (Error e = driver_.check(driver_.api().ctxSetCurrent(ctx_), "cuCtxSetCurrent"))
      return e;
    return driver_.check(driver_.api().memFree(static_cast<CUdeviceptr>(ptr)),
                         "cuMemFree");
  }

private:
  const Driver &driver_;
  CUcontext ctx_;
};
} // namespace

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    reset();
    allocator_ = other.allocator_;
    ptr_ = other.ptr_;
    size_ = other.size_;
    other.allocator_ = nullptr;
    other.ptr_ = 0;
    other.size_ = 0;
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (ptr_ && allocator_) {
    // Only an unknown pointer can fail, which a DeviceBuffer never holds.
    Error e = allocator_->free(ptr_);
    (void)e;
  }
  allocator_ = nullptr;
  ptr_ = 0;
  size_ = 0;
}

Expected<std::unique_ptr<Device>> Device::open(const Driver &driver,
                                               int ordinal) {
  const DriverApi &api = driver.api();
  Expected<int> count = deviceCount(driver);
  if (!count)
    return count.takeError();
  if (ordinal < 0 || ordinal >= *count)
    return Error::make("no CUDA device " + std::to_string(ordinal) + " (" +
                       std::to_string(*count) + " device(s))");
  std::unique_ptr<Device> dev(new Device());
  dev->driver_ = &driver;
  Expected<DeviceInfo> info = deviceInfo(driver, ordinal);
  if (!info)
    return info.takeError();
  dev->info_ = info.take();
  if (Error e = driver.check(api.deviceGet(&dev->device_, ordinal), "cuDeviceGet"))
    return e;
  if (Error e = driver.check(api.devicePrimaryCtxRetain(&dev->context_, dev->device_),
                             "cuDevicePrimaryCtxRetain"))
    return e;
  if (Error e = dev->makeCurrent())
    return e;
  if (Error e = driver.check(api.streamCreate(&dev->stream_, CU_STREAM_NON_BLOCKING),
                             "cuStreamCreate"))
    return e;
  dev->allocator_ = std::make_unique<CachingAllocator>(
      std::make_unique<DriverMemory>(driver, dev->context_));
  return dev;
}

Device::~Device() {
  if (!driver_)
    return;
  const DriverApi &api = driver_->api();
  if (context_)
    (void)api.ctxSetCurrent(context_);
  if (stream_)
    (void)api.streamSynchronize(stream_);
  allocator_.reset(); // needs the context: before the release below
  if (stream_)
    (void)api.streamDestroy(stream_);
  if (context_)
    (void)api.devicePrimaryCtxRelease(device_);
}

Error Device::makeCurrent() const {
  return driver_->check(driver_->api().ctxSetCurrent(context_), "cuCtxSetCurrent");
}

Expected<DeviceBuffer> Device::allocate(size_t bytes) {
  Expected<uint64_t> p = allocator_->allocate(bytes);
  if (!p)
    return p.takeError();
  return DeviceBuffer(allocator_.get(), static_cast<CUdeviceptr>(*p),
                      allocator_->blockSize(*p));
}

Error Device::copyToDevice(CUdeviceptr dst, const void *src, size_t bytes) {
  if (!bytes)
    return Error::success();
  if (Error e = makeCurrent())
    return e;
  return driver_->check(driver_->api().memcpyHtoDAsync(dst, src, bytes, stream_),
                        "cuMemcpyHtoDAsync");
}

Error Device::copyToHost(void *dst, CUdeviceptr src, size_t bytes) {
  if (!bytes)
    return Error::success();
  if (Error e = makeCurrent())
    return e;
  if (Error e = driver_->check(
          driver_->api().memcpyDtoHAsync(dst, src, bytes, stream_),
          "cuMemcpyDtoHAsync"))
    return e;
  return synchronize();
}

Error Device::copyToHostAsync(void *dst, CUdeviceptr src, size_t bytes) {
  if (!bytes)
    return Error::success();
  if (Error e = makeCurrent())
    return e;
  return driver_->check(driver_->api().memcpyDtoHAsync(dst, src, bytes, stream_),
                        "cuMemcpyDtoHAsync");
}

Error Device::copyDeviceToDevice(CUdeviceptr dst, CUdeviceptr src,
                                 size_t bytes) {
  if (!bytes)
    return Error::success();
  if (Error e = makeCurrent())
    return e;
  return driver_->check(driver_->api().memcpyDtoDAsync(dst, src, bytes, stream_),
                        "cuMemcpyDtoDAsync");
}

Error Device::memset(CUdeviceptr dst, uint8_t value, size_t bytes) {
  if (Error e = makeCurrent())
    return e;
  return driver_->check(driver_->api().memsetD8Async(dst, value, bytes, stream_),
                        "cuMemsetD8Async");
}

Error Device::synchronize() {
  if (Error e = makeCurrent())
    return e;
  return driver_->check(driver_->api().streamSynchronize(stream_),
                        "cuStreamSynchronize");
}

Error Device::memoryInfo(size_t *freeBytes, size_t *totalBytes) const {
  if (Error e = makeCurrent())
    return e;
  return driver_->check(driver_->api().memGetInfo(freeBytes, totalBytes),
                        "cuMemGetInfo");
}

Error Device::launch(CUfunction function, Dim3 grid, Dim3 block,
                     unsigned sharedBytes, void **params) {
  if (Error e = makeCurrent())
    return e;
  return driver_->check(driver_->api().launchKernel(
                            function, grid.x, grid.y, grid.z, block.x, block.y,
                            block.z, sharedBytes, stream_, params, nullptr),
                        "cuLaunchKernel");
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Module &Module::operator=(Module &&other) noexcept {
  if (this != &other) {
    reset();
    device_ = other.device_;
    module_ = other.module_;
    infoLog_ = std::move(other.infoLog_);
    other.device_ = nullptr;
    other.module_ = nullptr;
  }
  return *this;
}

void Module::reset() {
  if (module_ && device_) {
    (void)device_->makeCurrent();
    (void)device_->driver().api().moduleUnload(module_);
  }
  module_ = nullptr;
  device_ = nullptr;
}

/// The log text up to its NUL, one line (the driver separates with '\n').
static std::string oneLine(const char *buf, size_t size) {
  std::string s(buf, strnlen(buf, size));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  for (char &c : s)
    if (c == '\n')
      c = ';';
  return s;
}

Expected<Module> Module::load(Device &device, const void *image) {
  const Driver &driver = device.driver();
  if (Error e = device.makeCurrent())
    return e;
  // The JIT writes its diagnostics into these buffers; sizes go in as
  // values cast to pointers (the driver API's convention for options).
  constexpr size_t kLogSize = 16384;
  std::vector<char> infoLog(kLogSize, 0), errorLog(kLogSize, 0);
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER,
                            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {infoLog.data(),
                    reinterpret_cast<void *>(static_cast<uintptr_t>(kLogSize - 1)),
                    errorLog.data(),
                    reinterpret_cast<void *>(static_cast<uintptr_t>(kLogSize - 1))};
  Module m;
  CUresult r = driver.api().moduleLoadDataEx(&m.module_, image, 4, options, values);
  if (r != CUDA_SUCCESS) {
    std::string msg = driver.check(r, "cuModuleLoadDataEx").message();
    std::string log = oneLine(errorLog.data(), errorLog.size());
    if (!log.empty())
      msg += ": " + log;
    return Error::make(msg);
  }
  m.device_ = &device;
  m.infoLog_ = oneLine(infoLog.data(), infoLog.size());
  return m;
}

Expected<CUfunction> Module::function(const char *name) const {
  if (!module_)
    return Error::make(std::string("kernel '") + name + "': module not loaded");
  CUfunction f = nullptr;
  if (Error e = device_->driver().check(
          device_->driver().api().moduleGetFunction(&f, module_, name),
          "cuModuleGetFunction"))
    return e.withContext(std::string("kernel '") + name + "'");
  return f;
}

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

Graph &Graph::operator=(Graph &&other) noexcept {
  if (this != &other) {
    reset();
    device_ = other.device_;
    exec_ = other.exec_;
    other.device_ = nullptr;
    other.exec_ = nullptr;
  }
  return *this;
}

void Graph::reset() {
  if (exec_ && device_) {
    (void)device_->makeCurrent();
    (void)device_->driver().api().graphExecDestroy(exec_);
  }
  exec_ = nullptr;
  device_ = nullptr;
}

Expected<Graph> Graph::capture(Device &device,
                               const std::function<Error()> &body) {
  const Driver &driver = device.driver();
  const DriverApi &api = driver.api();
  if (Error e = device.makeCurrent())
    return e;
  if (Error e = driver.check(api.streamBeginCapture(
                                 device.stream(),
                                 CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                             "cuStreamBeginCapture"))
    return e;
  Error bodyError = body();
  CUgraph graph = nullptr;
  // Always end the capture, or the stream stays unusable.
  Error endError = driver.check(api.streamEndCapture(device.stream(), &graph),
                                "cuStreamEndCapture");
  if (bodyError) {
    if (graph)
      (void)api.graphDestroy(graph);
    return bodyError.withContext("during graph capture");
  }
  if (endError)
    return endError;
  Graph g;
  Error instError = driver.check(api.graphInstantiate(&g.exec_, graph, 0),
                                 "cuGraphInstantiateWithFlags");
  (void)api.graphDestroy(graph); // the executable graph is a copy
  if (instError)
    return instError;
  g.device_ = &device;
  return g;
}

Error Graph::launch() {
  if (!exec_)
    return Error::make("cuGraphLaunch: no graph");
  if (Error e = device_->makeCurrent())
    return e;
  return device_->driver().check(
      device_->driver().api().graphLaunch(exec_, device_->stream()),
      "cuGraphLaunch");
}

//===----------------------------------------------------------------------===//
// StreamTimer
//===----------------------------------------------------------------------===//

StreamTimer &StreamTimer::operator=(StreamTimer &&other) noexcept {
  if (this != &other) {
    reset();
    device_ = other.device_;
    start_ = other.start_;
    stop_ = other.stop_;
    other.device_ = nullptr;
    other.start_ = other.stop_ = nullptr;
  }
  return *this;
}

void StreamTimer::reset() {
  if (device_) {
    (void)device_->makeCurrent();
    if (start_)
      (void)device_->driver().api().eventDestroy(start_);
    if (stop_)
      (void)device_->driver().api().eventDestroy(stop_);
  }
  start_ = stop_ = nullptr;
  device_ = nullptr;
}

Expected<StreamTimer> StreamTimer::create(Device &device) {
  if (Error e = device.makeCurrent())
    return e;
  StreamTimer t;
  t.device_ = &device;
  const Driver &d = device.driver();
  if (Error e = d.check(d.api().eventCreate(&t.start_, CU_EVENT_DEFAULT), "cuEventCreate"))
    return e;
  if (Error e = d.check(d.api().eventCreate(&t.stop_, CU_EVENT_DEFAULT), "cuEventCreate"))
    return e;
  return t;
}

Error StreamTimer::start() {
  if (Error e = device_->makeCurrent())
    return e;
  return device_->driver().check(
      device_->driver().api().eventRecord(start_, device_->stream()),
      "cuEventRecord");
}

Error StreamTimer::stop() {
  if (Error e = device_->makeCurrent())
    return e;
  return device_->driver().check(
      device_->driver().api().eventRecord(stop_, device_->stream()),
      "cuEventRecord");
}

Expected<float> StreamTimer::elapsedMs() {
  const Driver &d = device_->driver();
  if (Error e = device_->makeCurrent())
    return e;
  if (Error e = d.check(d.api().eventSynchronize(stop_), "cuEventSynchronize"))
    return e;
  float ms = 0;
  if (Error e = d.check(d.api().eventElapsedTime(&ms, start_, stop_),
                        "cuEventElapsedTime"))
    return e;
  return ms;
}

//===----------------------------------------------------------------------===//
// PinnedMemory, StreamEvent
//===----------------------------------------------------------------------===//

Expected<PinnedMemory> PinnedMemory::allocate(Device &device, size_t bytes) {
  if (Error e = device.makeCurrent())
    return e;
  PinnedMemory m;
  const Driver &d = device.driver();
  if (Error e = d.check(d.api().memHostAlloc(&m.data_, std::max<size_t>(bytes, 1), 0),
                        "cuMemHostAlloc"))
    return e.withContext("page-locked memory of " + std::to_string(bytes) + " bytes");
  m.device_ = &device;
  m.size_ = bytes;
  return m;
}

PinnedMemory &PinnedMemory::operator=(PinnedMemory &&other) noexcept {
  if (this != &other) {
    reset();
    device_ = other.device_;
    data_ = other.data_;
    size_ = other.size_;
    other.device_ = nullptr;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

void PinnedMemory::reset() {
  if (data_ && device_) {
    (void)device_->makeCurrent();
    // Copies into or out of it may still be queued.
    (void)device_->synchronize();
    (void)device_->driver().api().memFreeHost(data_);
  }
  device_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

Expected<StreamEvent> StreamEvent::create(Device &device, bool timing) {
  if (Error e = device.makeCurrent())
    return e;
  StreamEvent ev;
  const Driver &d = device.driver();
  if (Error e = d.check(d.api().eventCreate(&ev.event_, timing ? CU_EVENT_DEFAULT
                                                               : CU_EVENT_DISABLE_TIMING),
                        "cuEventCreate"))
    return e;
  ev.device_ = &device;
  return ev;
}

StreamEvent &StreamEvent::operator=(StreamEvent &&other) noexcept {
  if (this != &other) {
    reset();
    device_ = other.device_;
    event_ = other.event_;
    recorded_ = other.recorded_;
    other.device_ = nullptr;
    other.event_ = nullptr;
    other.recorded_ = false;
  }
  return *this;
}

void StreamEvent::reset() {
  if (event_ && device_) {
    (void)device_->makeCurrent();
    (void)device_->driver().api().eventDestroy(event_);
  }
  device_ = nullptr;
  event_ = nullptr;
  recorded_ = false;
}

Error StreamEvent::record() {
  if (!event_)
    return Error::make("cuEventRecord: no event");
  if (Error e = device_->makeCurrent())
    return e;
  if (Error e = device_->driver().check(
          device_->driver().api().eventRecord(event_, device_->stream()), "cuEventRecord"))
    return e;
  recorded_ = true;
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Uploader
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<Uploader>> Uploader::create(Device &device,
                                                     size_t stagingBytes) {
  if (Error e = device.makeCurrent())
    return e;
  std::unique_ptr<Uploader> u(new Uploader());
  u->device_ = &device;
  const Driver &d = device.driver();
  if (Error e = d.check(d.api().streamCreate(&u->stream_, CU_STREAM_NON_BLOCKING),
                        "cuStreamCreate"))
    return e;
  if (Error e = d.check(d.api().eventCreate(&u->done_, CU_EVENT_DISABLE_TIMING),
                        "cuEventCreate"))
    return e;
  u->capacity_ = std::max<size_t>(stagingBytes, 1);
  if (Error e = d.check(d.api().memHostAlloc(&u->staging_, u->capacity_, 0),
                        "cuMemHostAlloc"))
    return e;
  return u;
}

Uploader::~Uploader() {
  if (!device_)
    return;
  (void)device_->makeCurrent();
  const DriverApi &api = device_->driver().api();
  if (stream_)
    (void)api.streamSynchronize(stream_);
  if (staging_)
    (void)api.memFreeHost(staging_);
  if (done_)
    (void)api.eventDestroy(done_);
  if (stream_)
    (void)api.streamDestroy(stream_);
}

Error Uploader::upload(CUdeviceptr dst, const void *src, size_t bytes) {
  if (!bytes)
    return Error::success();
  const Driver &d = device_->driver();
  if (Error e = device_->makeCurrent())
    return e;
  if (fenced_) {
    // The copies before the fence read the staging memory refilled below.
    if (Error e = d.check(d.api().eventSynchronize(done_), "cuEventSynchronize"))
      return e;
    fenced_ = false;
    used_ = 0;
  }
  // 256-byte steps: each copy starts at an aligned staging address.
  size_t at = (used_ + 255) & ~size_t(255);
  if (at + bytes > capacity_)
    return Error::make("upload of " + std::to_string(bytes) + " bytes exceeds the " +
                 std::to_string(capacity_) + "-byte staging memory");
  void *stage = static_cast<char *>(staging_) + at;
  std::memcpy(stage, src, bytes);
  used_ = at + bytes;
  return d.check(d.api().memcpyHtoDAsync(dst, stage, bytes, stream_),
                 "cuMemcpyHtoDAsync");
}

Error Uploader::waitFor(const StreamEvent &event) {
  if (!event.recorded())
    return Error::success();
  const Driver &d = device_->driver();
  if (Error e = device_->makeCurrent())
    return e;
  return d.check(d.api().streamWaitEvent(stream_, event.handle(), 0), "cuStreamWaitEvent");
}

Error Uploader::fence() {
  const Driver &d = device_->driver();
  if (Error e = device_->makeCurrent())
    return e;
  if (Error e = d.check(d.api().eventRecord(done_, stream_), "cuEventRecord"))
    return e;
  fenced_ = true;
  return d.check(d.api().streamWaitEvent(device_->stream(), done_, 0),
                 "cuStreamWaitEvent");
}

} // namespace cuda
} // namespace rt
} // namespace lpc
