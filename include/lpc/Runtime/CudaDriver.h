//===- CudaDriver.h - the CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// The lpc runtime talks to the GPU through the CUDA driver API without linking
// libcuda: libcuda.so.1 is opened with dlopen on first use and every entry
// point is resolved through cuGetProcAddress (the v2 ABI of CUDA 12+), for
// the exact ABI version of the cuda.h the runtime was compiled with. So every
// binary starts on a machine without a driver and says so in one line:
//
//   Expected<const Driver *> drv = Driver::get();
//   if (!drv)      // "no NVIDIA driver: libcuda.so.1 not found (...)"
//     return fail(drv.error().message());
//   Expected<std::unique_ptr<Device>> dev = Device::open(**drv, 0);
//
// cuda.h is included for its types only. Every failure is an lpc::rt::Error
// whose message names the call and the CUresult ("cuMemAlloc failed:
// CUDA_ERROR_OUT_OF_MEMORY (out of memory)"); nothing throws.
//
// Contexts: a Device holds the device's *primary* context (the one the CUDA
// runtime and cuBLASLt use as well) and one stream; its methods make that
// context current on the calling thread before they call the driver.
// Everything made from a Device (buffers, modules, graphs, timers, GEMM
// engines) must be dropped before it.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDADRIVER_H
#define LPC_RUNTIME_CUDADRIVER_H

#include "lpc/Runtime/Error.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {

class CachingAllocator;

/// Every driver entry point the runtime uses: X(member, symbol, version).
/// `version` is the CUDA version whose ABI the member has; it is both the
/// suffix of the PFN_ typedef in cudaTypedefs.h and the version passed to
/// cuGetProcAddress, so the two always agree (e.g. cuMemAlloc at 3020 is
/// cuMemAlloc_v2 with a 64-bit CUdeviceptr).
#define LPC_CUDA_DRIVER_ENTRY_POINTS(X)                                        \
  X(getErrorString, cuGetErrorString, 6000)                                    \
  X(getErrorName, cuGetErrorName, 6000)                                        \
  X(init, cuInit, 2000)                                                        \
  X(driverGetVersion, cuDriverGetVersion, 2020)                                \
  X(deviceGet, cuDeviceGet, 2000)                                              \
  X(deviceGetCount, cuDeviceGetCount, 2000)                                    \
  X(deviceGetName, cuDeviceGetName, 2000)                                      \
  X(deviceGetAttribute, cuDeviceGetAttribute, 2000)                            \
  X(deviceTotalMem, cuDeviceTotalMem, 3020)                                    \
  X(devicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000)                    \
  X(devicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, 11000)                 \
  X(ctxSetCurrent, cuCtxSetCurrent, 4000)                                      \
  X(streamCreate, cuStreamCreate, 2000)                                        \
  X(streamDestroy, cuStreamDestroy, 4000)                                      \
  X(streamSynchronize, cuStreamSynchronize, 2000)                              \
  X(memAlloc, cuMemAlloc, 3020)                                                \
  X(memFree, cuMemFree, 3020)                                                  \
  X(memGetInfo, cuMemGetInfo, 3020)                                            \
  X(memcpyHtoDAsync, cuMemcpyHtoDAsync, 3020)                                  \
  X(memcpyDtoHAsync, cuMemcpyDtoHAsync, 3020)                                  \
  X(memcpyDtoDAsync, cuMemcpyDtoDAsync, 3020)                                  \
  X(memsetD8Async, cuMemsetD8Async, 3020)                                      \
  X(moduleLoadDataEx, cuModuleLoadDataEx, 2010)                                \
  X(moduleUnload, cuModuleUnload, 2000)                                        \
  X(moduleGetFunction, cuModuleGetFunction, 2000)                              \
  X(launchKernel, cuLaunchKernel, 4000)                                        \
  X(streamBeginCapture, cuStreamBeginCapture, 10010)                           \
  X(streamEndCapture, cuStreamEndCapture, 10000)                               \
  X(graphInstantiate, cuGraphInstantiateWithFlags, 11040)                      \
  X(graphLaunch, cuGraphLaunch, 10000)                                         \
  X(graphDestroy, cuGraphDestroy, 10000)                                       \
  X(graphExecDestroy, cuGraphExecDestroy, 10000)                               \
  X(eventCreate, cuEventCreate, 2000)                                          \
  X(eventRecord, cuEventRecord, 2000)                                          \
  X(eventSynchronize, cuEventSynchronize, 2000)                                \
  X(eventElapsedTime, cuEventElapsedTime, 2000)                                \
  X(eventDestroy, cuEventDestroy, 4000)                                        \
  X(streamWaitEvent, cuStreamWaitEvent, 3020)                                  \
  X(memHostAlloc, cuMemHostAlloc, 2020)                                        \
  X(memFreeHost, cuMemFreeHost, 2000)                                          \
  X(funcGetAttribute, cuFuncGetAttribute, 2020)                                \
  X(funcSetAttribute, cuFuncSetAttribute, 9000)

/// The resolved entry points. Member names drop the `cu` prefix because
/// cuda.h #defines several of the prefixed names (cuMemAlloc -> cuMemAlloc_v2).
struct DriverApi {
#define LPC_CUDA_DECLARE_ENTRY(member, symbol, version)                        \
  PFN_##symbol##_v##version member = nullptr;
  LPC_CUDA_DRIVER_ENTRY_POINTS(LPC_CUDA_DECLARE_ENTRY)
#undef LPC_CUDA_DECLARE_ENTRY
};

/// Why the driver cannot be used. NoDriver and NoDevice mean "this machine has
/// no usable GPU" (tools exit 2, GPU tests skip); Failed is anything else.
enum class DriverFailure { None, NoDriver, NoDevice, Failed };

/// "CUDA_ERROR_INVALID_PTX": the enumerator's name, from a table built into
/// the runtime (works without a driver); "CUresult 1234" when unknown.
std::string cuResultName(CUresult result);

/// The loaded driver (libcuda) with cuInit(0) done.
class Driver {
public:
  /// The process-wide driver: the library named by $LPC_CUDA_DRIVER_LIBRARY
  /// or else libcuda.so.1, loaded and initialized on the first call
  /// (thread-safe). A failure is remembered and returned again.
  static Expected<const Driver *> get();
  /// The kind of failure get() returned (None when it succeeded).
  static DriverFailure failure();

  /// Loads `library` (a name for dlopen or a path), resolves every entry point
  /// and calls cuInit(0). Not cached; `failure` (optional) gets the kind.
  static Expected<std::unique_ptr<Driver>> load(const std::string &library,
                                                DriverFailure *failure = nullptr);

  ~Driver();
  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;

  const DriverApi &api() const { return api_; }
  /// The driver's CUDA version (cuDriverGetVersion: 12040 = 12.4).
  int version() const { return version_; }
  const std::string &library() const { return library_; }

  /// Success for CUDA_SUCCESS, else "<call> failed: NAME (description)".
  Error check(CUresult result, const char *call) const;
  /// "NAME (description)" of a result, through the driver when it knows it.
  std::string describe(CUresult result) const;

private:
  Driver() = default;
  void *handle_ = nullptr;
  DriverApi api_;
  int version_ = 0;
  std::string library_;
};

/// One device's properties.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int ccMajor = 0, ccMinor = 0; // compute capability (9.0 = Hopper)
  size_t totalMemory = 0;       // bytes
  int multiprocessors = 0;
  int clockKHz = 0;             // peak SM clock
  int memoryClockKHz = 0;
  int memoryBusWidth = 0; // bits
  int sharedPerBlock = 0;      // bytes of shared memory a block gets by default
  int sharedPerBlockOptin = 0; // ... and at most, opted in to per kernel
};

/// "CUDA 12.4" for 12040.
std::string formatCudaVersion(int version);

/// Devices the driver sees (0 is a success: cuInit reports "no device" as an
/// error first, so this is rarely 0).
Expected<int> deviceCount(const Driver &driver);
Expected<DeviceInfo> deviceInfo(const Driver &driver, int ordinal);

/// A 3-D launch extent.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// A device memory block, freed (back to its allocator) when dropped.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(CachingAllocator *allocator, CUdeviceptr ptr, size_t size)
      : allocator_(allocator), ptr_(ptr), size_(size) {}
  DeviceBuffer(DeviceBuffer &&other) noexcept { *this = std::move(other); }
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { reset(); }

  CUdeviceptr get() const { return ptr_; }
  size_t size() const { return size_; }
  explicit operator bool() const { return ptr_ != 0; }
  /// Frees the block now.
  void reset();

private:
  CachingAllocator *allocator_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
};

/// A device with its primary context, one stream and a caching allocator.
class Device {
public:
  /// Retains device `ordinal`'s primary context, makes it current on the
  /// calling thread and creates a non-blocking stream.
  static Expected<std::unique_ptr<Device>> open(const Driver &driver,
                                                int ordinal = 0);
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const Driver &driver() const { return *driver_; }
  const DeviceInfo &info() const { return info_; }
  CUdevice handle() const { return device_; }
  CUcontext context() const { return context_; }
  CUstream stream() const { return stream_; }
  CachingAllocator &allocator() { return *allocator_; }

  /// Makes the context current on the calling thread.
  Error makeCurrent() const;

  /// A block of at least `bytes` bytes from the caching allocator.
  Expected<DeviceBuffer> allocate(size_t bytes);
  /// Host -> device, ordered on the stream. The host buffer may be reused
  /// as soon as this returns (pageable copies are staged by the driver).
  Error copyToDevice(CUdeviceptr dst, const void *src, size_t bytes);
  /// Device -> host, ordered on the stream; waits for the copy.
  Error copyToHost(void *dst, CUdeviceptr src, size_t bytes);
  /// Device -> host, ordered on the stream, without waiting: `dst` must be
  /// page-locked (PinnedMemory) and holds the data after synchronize().
  /// Many of these and one synchronize() cost one wait, not one each.
  Error copyToHostAsync(void *dst, CUdeviceptr src, size_t bytes);
  /// Device -> device, ordered on the stream (capturable in a graph).
  Error copyDeviceToDevice(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
  Error memset(CUdeviceptr dst, uint8_t value, size_t bytes);
  /// Waits for everything queued on the stream.
  Error synchronize();
  /// Free and total device memory (cuMemGetInfo).
  Error memoryInfo(size_t *freeBytes, size_t *totalBytes) const;

  /// Launches `function` on the stream; `params` as cuLaunchKernel takes
  /// them (an array of pointers to each argument).
  Error launch(CUfunction function, Dim3 grid, Dim3 block,
               unsigned sharedBytes, void **params);

private:
  Device() = default;
  const Driver *driver_ = nullptr;
  DeviceInfo info_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  std::unique_ptr<CachingAllocator> allocator_;
};

/// A loaded module (PTX, compiled by the driver's JIT, or a cubin).
class Module {
public:
  /// Loads `image`: NUL-terminated PTX text or a cubin/fatbin. On failure the
  /// message carries the JIT's error log ("cuModuleLoadDataEx failed:
  /// CUDA_ERROR_INVALID_PTX (...): ptxas application ptx input, line 3; ...").
  static Expected<Module> load(Device &device, const void *image);

  Module() = default;
  Module(Module &&other) noexcept { *this = std::move(other); }
  Module &operator=(Module &&other) noexcept;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  ~Module() { reset(); }

  Expected<CUfunction> function(const char *name) const;
  /// The JIT's info log of the load (may be empty).
  const std::string &infoLog() const { return infoLog_; }

private:
  void reset();
  const Device *device_ = nullptr;
  CUmodule module_ = nullptr;
  std::string infoLog_;
};

/// An instantiated CUDA graph, captured from work queued on a stream.
class Graph {
public:
  /// Captures what `body` queues on the device's stream (capture mode
  /// thread-local: the capturing thread must not allocate device memory or
  /// synchronize inside `body`) and instantiates it. Capture always ends,
  /// also when `body` fails; the body's error is returned then.
  static Expected<Graph> capture(Device &device,
                                 const std::function<Error()> &body);

  Graph() = default;
  Graph(Graph &&other) noexcept { *this = std::move(other); }
  Graph &operator=(Graph &&other) noexcept;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  ~Graph() { reset(); }

  /// Queues the whole graph on the device's stream.
  Error launch();

private:
  void reset();
  Device *device_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

/// A pair of events that time work on the device's stream.
class StreamTimer {
public:
  static Expected<StreamTimer> create(Device &device);
  StreamTimer() = default;
  StreamTimer(StreamTimer &&other) noexcept { *this = std::move(other); }
  StreamTimer &operator=(StreamTimer &&other) noexcept;
  StreamTimer(const StreamTimer &) = delete;
  StreamTimer &operator=(const StreamTimer &) = delete;
  ~StreamTimer() { reset(); }

  Error start();
  Error stop();
  /// Milliseconds between start() and stop(); waits for stop().
  Expected<float> elapsedMs();

private:
  void reset();
  Device *device_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
};

/// Page-locked host memory (cuMemHostAlloc): what asynchronous copies to
/// and from the host need. Freed when dropped (after queued copies).
class PinnedMemory {
public:
  static Expected<PinnedMemory> allocate(Device &device, size_t bytes);
  PinnedMemory() = default;
  PinnedMemory(PinnedMemory &&other) noexcept { *this = std::move(other); }
  PinnedMemory &operator=(PinnedMemory &&other) noexcept;
  PinnedMemory(const PinnedMemory &) = delete;
  PinnedMemory &operator=(const PinnedMemory &) = delete;
  ~PinnedMemory() { reset(); }

  void *data() const { return data_; }
  size_t size() const { return size_; }
  void reset();

private:
  Device *device_ = nullptr;
  void *data_ = nullptr;
  size_t size_ = 0;
};

/// An event on the device's stream: marks the work queued before record(),
/// for another stream to wait for (Uploader::waitFor).
class StreamEvent {
public:
  /// `timing`: cuEventElapsedTime may measure between two such events.
  static Expected<StreamEvent> create(Device &device, bool timing = false);
  StreamEvent() = default;
  StreamEvent(StreamEvent &&other) noexcept { *this = std::move(other); }
  StreamEvent &operator=(StreamEvent &&other) noexcept;
  StreamEvent(const StreamEvent &) = delete;
  StreamEvent &operator=(const StreamEvent &) = delete;
  ~StreamEvent() { reset(); }

  Error record();
  bool recorded() const { return recorded_; }
  CUevent handle() const { return event_; }

private:
  void reset();
  Device *device_ = nullptr;
  CUevent event_ = nullptr;
  bool recorded_ = false;
};

/// Host-to-device copies that overlap the device's work: a second stream,
/// page-locked staging memory (a copy from pageable memory is staged by the
/// driver in the calling thread), and an event the device's stream waits
/// on. upload() copies the source into the staging memory and queues its
/// copy on the copy stream; fence() makes the device's stream wait for
/// every copy queued so far, so work queued on it afterwards sees the data.
/// The next upload() after a fence first waits for those copies (they read
/// the staging memory it refills).
class Uploader {
public:
  static Expected<std::unique_ptr<Uploader>> create(Device &device,
                                                    size_t stagingBytes);
  ~Uploader();
  Uploader(const Uploader &) = delete;
  Uploader &operator=(const Uploader &) = delete;

  Error upload(CUdeviceptr dst, const void *src, size_t bytes);
  Error fence();
  /// Copies queued from now on wait for the work `event` marks on the
  /// device's stream (whatever still reads the blocks they fill); nothing
  /// when it was never recorded.
  Error waitFor(const StreamEvent &event);

private:
  Uploader() = default;
  Device *device_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent done_ = nullptr;
  void *staging_ = nullptr;
  size_t capacity_ = 0, used_ = 0;
  bool fenced_ = false; // copies in flight from before the last fence()
};

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDADRIVER_H
