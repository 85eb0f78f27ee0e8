// FakeDriver.cpp - a stand-in libcuda for machines without a GPU (tests only).
//
// Exports cuGetProcAddress_v2 and, through it, the driver entry points the
// runtime resolves, implemented on host memory: a "device" pointer is a
// malloc'ed address, copies are memcpy, and kernels run on the CPU. The fake
// JIT "compiles" PTX whose every `.entry` is in its table of host
// implementations (lpc_test_axpy of runtime/cuda/TestKernels.h and the
// fake-only kernels there), declared with exactly the parameters the host
// implementation reads (PtxScan.h). Launches check what a real GPU would
// only fault on: every pointer and view lies in a live allocation, and for
// the fake-only kernels the parameter array ends with a null right after
// the declared parameters (a count check).
//
// Streams are asynchronous, as on a GPU, and as lazy as the API allows:
// launches, device copies, memsets, copies from page-locked memory
// (cuMemHostAlloc, read when the copy runs) and to it wait in their stream
// and run only when something needs them: cuStreamSynchronize,
// cuEventSynchronize, a copy into pageable host memory (which waits for its
// stream, as the driver's does), or work on another stream that waits for
// an event recorded after them (cuStreamWaitEvent). A copy from pageable
// memory takes its source at once (the driver stages it) and writes the
// device when its stream gets there. So a missing wait, a block refilled
// while an earlier step may still read it, or a host read before a
// synchronization shows as wrong data. Stream capture records work and
// graphs replay it. The JIT "fails" on kBrokenPtx's bogus instruction with
// a ptxas-like log. lpc_fake_cuda_counters() (FakeDriverCounters.h) counts
// copies and waits for tests. $LPC_FAKE_CUDA_DRIVER_VERSION overrides the
// version it reports (12080). This lets the Device / Module / Graph /
// StreamTimer / CudaFunction code and lpc-cuda-check --driver-selftest run
// in the normal test run; the real driver is exercised by the same code on
// a GPU. For the fake libnccl (FakeNccl.cpp), which queues its collectives
// on these streams, cuGetProcAddress_v2 also resolves two entry points the
// runtime does not use (cuLaunchHostFunc, cuStreamIsCapturing), and
// lpc_fake_cuda_check_range() checks a collective's buffers.

#include "lpc/Runtime/CudaDriver.h" // the entry point list

#include <cuda.h>
#include <cudaTypedefs.h>

#include "../PtxScan.h"
#include "FakeDriverCounters.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace {

CUcontext const kContext = reinterpret_cast<CUcontext>(uintptr_t(0xC0A7E47));

// Work queued on a stream: run when something needs it (see the top), or
// recorded while capturing and queued by every launch of the graph.
using Work = std::function<void()>;
struct Stream {
  bool capturing = false;
  std::vector<Work> captured;
  std::deque<Work> pending; // queued, not yet run
  uint64_t queued = 0, done = 0; // work ever queued / run
  bool running = false;
};
std::set<Stream *> gStreams;
LpcFakeCudaCounters gCounters;

/// Runs `s`'s work up to position `pos` (its first `pos` items ever queued).
void runUntil(Stream *s, uint64_t pos) {
  while (s->done < pos) {
    if (s->running) {
      // Work that waits (through events) for work queued after itself.
      std::fprintf(stderr, "lpc fake CUDA driver: streams wait for each other "
                           "(a deadlock on a GPU)\n");
      std::abort();
    }
    Work w = std::move(s->pending.front());
    s->pending.pop_front();
    s->running = true;
    w();
    s->running = false;
    ++s->done;
  }
}
void drain(Stream *s) { runUntil(s, s->queued); }
void drainAll() {
  for (Stream *s : gStreams)
    drain(s);
}

// An event: where it was last recorded (stream and position in it).
struct Event {
  int recorded = 0;
  Stream *stream = nullptr;
  uint64_t pos = 0;
};
std::map<const void *, size_t> gPinned; // cuMemHostAlloc'ed blocks
bool isPinned(const void *p, size_t n) {
  auto it = gPinned.upper_bound(p);
  if (it == gPinned.begin())
    return false;
  --it;
  auto *base = static_cast<const char *>(it->first);
  auto *q = static_cast<const char *>(p);
  return q >= base && q + n <= base + it->second;
}
struct Graph {
  std::vector<Work> work;
};

std::map<CUdeviceptr, size_t> gAllocations;

// What the last failed call found wrong, for cuGetErrorString: tests see
// "cuLaunchKernel failed: CUDA_ERROR_ILLEGAL_ADDRESS (fake: ...)".
CUresult gLastResult = CUDA_SUCCESS;
std::string gLastError;

CUresult failWith(CUresult r, std::string why) {
  gLastResult = r;
  gLastError = "fake: " + std::move(why);
  return r;
}

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

/// Bytes [p, p + bytes) lie in one live allocation.
bool inAllocation(uint64_t p, uint64_t bytes) {
  auto it = gAllocations.upper_bound(CUdeviceptr(p));
  if (it == gAllocations.begin())
    return false;
  --it;
  return p >= it->first && p - it->first <= it->second && bytes <= it->second - (p - it->first);
}

//===----------------------------------------------------------------------===//
// Kernels: host implementations of the kernels the fake JIT "compiles"
//===----------------------------------------------------------------------===//

/// An f32 memref view as MLIR's expanded descriptor passes it.
struct View {
  float *base = nullptr;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
  float &at(int64_t i) const { return base[offset + i * strides[0]]; }
  float &at(int64_t i, int64_t j) const { return base[offset + i * strides[0] + j * strides[1]]; }
};

/// One decoded parameter.
struct Arg {
  View view;
  CUdeviceptr ptr = 0;
  int64_t i = 0;
  double f = 0;
};

/// A kernel the fake knows. `signature`, one token per logical parameter:
/// V<rank> an f32 memref view (3 + 2 * rank kernel parameters), p a raw
/// pointer, f f32, d f64, l i64, i i32/u32. `terminated`: the caller must
/// end the parameter array with a null, which the fake checks to catch a
/// wrong parameter count (the real driver ignores the extra entry).
struct Kernel {
  const char *name;
  const char *signature;
  bool terminated;
  void (*run)(const std::vector<Arg> &args, uint64_t threads);
};

void runAxpy(const std::vector<Arg> &a, uint64_t threads) {
  float *x = reinterpret_cast<float *>(uintptr_t(a[0].ptr));
  float *y = reinterpret_cast<float *>(uintptr_t(a[1].ptr));
  float alpha = float(a[2].f);
  uint64_t n = uint64_t(a[3].i);
  for (uint64_t i = 0; i < n && i < threads; ++i)
    y[i] = alpha * x[i] + y[i];
}

// y = a * x + b over two 2-D views of the same sizes.
void runAffine2d(const std::vector<Arg> &a, uint64_t) {
  const View &x = a[0].view, &y = a[1].view;
  for (int64_t i = 0; i < y.sizes[0]; ++i)
    for (int64_t j = 0; j < y.sizes[1]; ++j)
      y.at(i, j) = float(a[2].f) * x.at(i, j) + float(a[3].f);
}

// out[i] = start + i * num / den: one parameter of each scalar kind.
void runRamp(const std::vector<Arg> &a, uint64_t) {
  const View &out = a[0].view;
  for (int64_t i = 0; i < out.sizes[0]; ++i)
    out.at(i) = float(a[1].f + double(i) * double(a[2].i) / double(a[3].i));
}

const Kernel kKernels[] = {
    {"lpc_test_axpy", "p p f i", false, runAxpy},
    {"lpc_fake_affine_2d", "V2 V2 f f", true, runAffine2d},
    {"lpc_fake_ramp", "V1 d l i", true, runRamp},
};

const Kernel *findKernel(const std::string &name) {
  for (const Kernel &k : kKernels)
    if (name == k.name)
      return &k;
  return nullptr;
}

std::vector<std::string> tokens(const char *signature) {
  std::vector<std::string> out;
  std::string cur;
  for (const char *c = signature;; ++c) {
    if (*c == ' ' || !*c) {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
      if (!*c)
        return out;
    } else {
      cur += *c;
    }
  }
}

/// The kernel parameter sizes (bytes) a signature stands for.
std::vector<unsigned> paramLayout(const Kernel &k) {
  std::vector<unsigned> sizes;
  for (const std::string &t : tokens(k.signature)) {
    if (t[0] == 'V') {
      int rank = std::atoi(t.c_str() + 1);
      sizes.insert(sizes.end(), size_t(3 + 2 * rank), 8);
    } else {
      sizes.push_back(t == "f" || t == "i" ? 4 : 8);
    }
  }
  return sizes;
}

/// Decodes and checks the parameters of one launch; a failure says why.
CUresult decodeArgs(const Kernel &k, void **params, std::vector<Arg> &args) {
  size_t slot = 0;
  auto next = [&](void *out, size_t bytes) { std::memcpy(out, params[slot++], bytes); };
  for (const std::string &t : tokens(k.signature)) {
    Arg a;
    std::string where = std::string(k.name) + " param " + std::to_string(slot);
    if (t[0] == 'V') {
      size_t rank = size_t(std::atoi(t.c_str() + 1));
      CUdeviceptr allocated = 0, aligned = 0;
      next(&allocated, 8);
      next(&aligned, 8);
      next(&a.view.offset, 8);
      a.view.sizes.resize(rank);
      a.view.strides.resize(rank);
      for (int64_t &s : a.view.sizes)
        next(&s, 8);
      for (int64_t &s : a.view.strides)
        next(&s, 8);
      if (allocated != aligned)
        return failWith(CUDA_ERROR_INVALID_VALUE, where + ": allocated " + hex(allocated) +
                                                      " != aligned " + hex(aligned));
      // The extreme elements must lie in the allocation the base is in.
      int64_t lo = a.view.offset, hi = a.view.offset;
      bool empty = false;
      for (size_t d = 0; d < rank; ++d) {
        if (a.view.sizes[d] <= 0)
          empty = a.view.sizes[d] == 0 || empty;
        else if (a.view.strides[d] < 0)
          lo += (a.view.sizes[d] - 1) * a.view.strides[d];
        else
          hi += (a.view.sizes[d] - 1) * a.view.strides[d];
      }
      if (!inAllocation(aligned, 0))
        return failWith(CUDA_ERROR_ILLEGAL_ADDRESS,
                        where + ": pointer " + hex(aligned) + " is in no live allocation");
      if (!empty && (lo < 0 || !inAllocation(aligned + uint64_t(lo) * 4,
                                              uint64_t(hi - lo + 1) * 4)))
        return failWith(CUDA_ERROR_ILLEGAL_ADDRESS,
                        where + ": view elements [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "] leave the allocation at " + hex(aligned));
      a.view.base = reinterpret_cast<float *>(uintptr_t(aligned));
    } else if (t == "p") {
      next(&a.ptr, 8);
      if (!inAllocation(a.ptr, 0))
        return failWith(CUDA_ERROR_ILLEGAL_ADDRESS,
                        where + ": pointer " + hex(a.ptr) + " is in no live allocation");
    } else if (t == "f") {
      float f = 0;
      next(&f, 4);
      a.f = f;
    } else if (t == "d") {
      next(&a.f, 8);
    } else if (t == "l") {
      next(&a.i, 8);
    } else {
      uint32_t u = 0;
      next(&u, 4);
      a.i = u;
    }
    args.push_back(std::move(a));
  }
  if (k.terminated && params[slot] != nullptr)
    return failWith(CUDA_ERROR_INVALID_VALUE,
                    std::string(k.name) + " takes " + std::to_string(slot) +
                        " parameters; the array has more (no null after them)");
  return CUDA_SUCCESS;
}

/// A loaded module: the kernels its PTX defines.
struct FakeModule {
  std::vector<const Kernel *> kernels;
};

void queue(CUstream s, Work w) {
  Stream *st = reinterpret_cast<Stream *>(s);
  if (!st) { // the legacy default stream: the runtime never uses it
    drainAll();
    w();
  } else if (st->capturing) {
    st->captured.push_back(std::move(w));
  } else {
    st->pending.push_back(std::move(w));
    ++st->queued;
  }
}

CUresult fake_init(unsigned flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }
CUresult fake_driverGetVersion(int *v) {
  const char *env = std::getenv("LPC_FAKE_CUDA_DRIVER_VERSION");
  *v = env && *env ? std::atoi(env) : 12080;
  return CUDA_SUCCESS;
}
CUresult fake_getErrorName(CUresult r, const char **s) {
  switch (r) {
  case CUDA_ERROR_INVALID_PTX:
    *s = "CUDA_ERROR_INVALID_PTX";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NOT_FOUND:
    *s = "CUDA_ERROR_NOT_FOUND";
    return CUDA_SUCCESS;
  default:
    *s = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult fake_getErrorString(CUresult r, const char **s) {
  *s = r == CUDA_ERROR_INVALID_PTX        ? "a PTX JIT compilation failed (fake)"
       : r == gLastResult && !gLastError.empty() ? gLastError.c_str()
                                                 : "fake driver error";
  return CUDA_SUCCESS;
}
CUresult fake_deviceGetCount(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}
CUresult fake_deviceGet(CUdevice *d, int ordinal) {
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult fake_deviceGetName(char *name, int len, CUdevice) {
  std::strncpy(name, "lpc fake GPU", size_t(len));
  return CUDA_SUCCESS;
}
// Hopper's shared memory per block: by default, and opted in to.
constexpr int kSharedPerBlock = 48 << 10, kSharedOptin = 227 << 10;

CUresult fake_deviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice) {
  switch (attr) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *v = 9;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *v = 0;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *v = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
    *v = 1980000;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *v = kSharedPerBlock;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *v = kSharedOptin;
    break;
  default:
    *v = 1;
  }
  return CUDA_SUCCESS;
}
CUresult fake_deviceTotalMem(size_t *bytes, CUdevice) {
  *bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}
CUresult fake_devicePrimaryCtxRetain(CUcontext *ctx, CUdevice) {
  *ctx = kContext;
  return CUDA_SUCCESS;
}
CUresult fake_devicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult fake_ctxSetCurrent(CUcontext ctx) {
  return ctx == kContext || !ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
CUresult fake_streamCreate(CUstream *s, unsigned) {
  Stream *st = new Stream();
  gStreams.insert(st);
  *s = reinterpret_cast<CUstream>(st);
  return CUDA_SUCCESS;
}
CUresult fake_streamDestroy(CUstream s) {
  Stream *st = reinterpret_cast<Stream *>(s);
  drain(st); // the driver lets queued work finish
  gStreams.erase(st);
  delete st;
  return CUDA_SUCCESS;
}
CUresult fake_streamSynchronize(CUstream s) {
  Stream *st = reinterpret_cast<Stream *>(s);
  if (st->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  ++gCounters.streamSyncs;
  drain(st);
  return CUDA_SUCCESS;
}
CUresult fake_memAlloc(CUdeviceptr *p, size_t bytes) {
  if (bytes > (size_t(1) << 34))
    return CUDA_ERROR_OUT_OF_MEMORY;
  void *m = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!m)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *p = CUdeviceptr(uintptr_t(m));
  gAllocations[*p] = bytes;
  return CUDA_SUCCESS;
}
CUresult fake_memFree(CUdeviceptr p) {
  drainAll(); // cuMemFree waits for work that may use the memory
  if (!gAllocations.erase(p))
    return CUDA_ERROR_INVALID_VALUE;
  std::free(reinterpret_cast<void *>(uintptr_t(p)));
  return CUDA_SUCCESS;
}
CUresult fake_memGetInfo(size_t *freeBytes, size_t *total) {
  *total = size_t(80) << 30;
  *freeBytes = *total - (size_t(1) << 30);
  return CUDA_SUCCESS;
}
CUresult fake_memcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  if (!inAllocation(dst, n))
    return failWith(CUDA_ERROR_INVALID_VALUE, "copy to " + hex(dst) + " leaves its allocation");
  ++gCounters.copiesToDevice;
  void *to = reinterpret_cast<void *>(uintptr_t(dst));
  if (isPinned(src, n)) {
    queue(s, [=] { std::memcpy(to, src, n); }); // reads the source when it runs
    return CUDA_SUCCESS;
  }
  // Pageable: the driver stages the source before it returns.
  auto staged = std::make_shared<std::vector<char>>(static_cast<const char *>(src),
                                                    static_cast<const char *>(src) + n);
  queue(s, [=] { std::memcpy(to, staged->data(), n); });
  return CUDA_SUCCESS;
}
CUresult fake_memcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) {
  if (!inAllocation(src, n))
    return failWith(CUDA_ERROR_INVALID_VALUE, "copy from " + hex(src) + " leaves its allocation");
  const void *from = reinterpret_cast<const void *>(uintptr_t(src));
  if (isPinned(dst, n)) {
    ++gCounters.copiesToPinnedHost;
    queue(s, [=] { std::memcpy(dst, from, n); }); // the host waits for it
    return CUDA_SUCCESS;
  }
  // Pageable: the driver returns once the copy is done, after the stream's
  // earlier work.
  ++gCounters.copiesToPageableHost;
  Stream *st = reinterpret_cast<Stream *>(s);
  if (st && st->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (st)
    drain(st);
  else
    drainAll();
  std::memcpy(dst, from, n);
  return CUDA_SUCCESS;
}
CUresult fake_memcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  if (!inAllocation(dst, n) || !inAllocation(src, n))
    return failWith(CUDA_ERROR_INVALID_VALUE, "device copy of " + std::to_string(n) +
                                                  " bytes " + hex(src) + " -> " + hex(dst) +
                                                  " leaves an allocation");
  queue(s, [=] {
    std::memmove(reinterpret_cast<void *>(uintptr_t(dst)),
                 reinterpret_cast<const void *>(uintptr_t(src)), n);
  });
  return CUDA_SUCCESS;
}
CUresult fake_memsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
  if (!inAllocation(dst, n))
    return failWith(CUDA_ERROR_INVALID_VALUE, "memset of " + hex(dst) + " leaves its allocation");
  queue(s, [=] { std::memset(reinterpret_cast<void *>(uintptr_t(dst)), v, n); });
  return CUDA_SUCCESS;
}
CUresult fake_moduleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *opts,
                           void **values) {
  char *errorLog = nullptr, *infoLog = nullptr;
  size_t errorSize = 0, infoSize = 0;
  for (unsigned i = 0; i < n; ++i) {
    uintptr_t v = reinterpret_cast<uintptr_t>(values[i]);
    if (opts[i] == CU_JIT_ERROR_LOG_BUFFER)
      errorLog = static_cast<char *>(values[i]);
    else if (opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      errorSize = v;
    else if (opts[i] == CU_JIT_INFO_LOG_BUFFER)
      infoLog = static_cast<char *>(values[i]);
    else if (opts[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
      infoSize = v;
  }
  std::string text = static_cast<const char *>(image);
  auto jitError = [&](CUresult r, const std::string &log) {
    if (errorLog && errorSize)
      std::strncpy(errorLog, log.c_str(), errorSize - 1);
    return r;
  };
  if (text.find("lpc.not.an.instruction") != std::string::npos)
    return jitError(CUDA_ERROR_INVALID_PTX,
                    "ptxas application ptx input, line 8; error   : Not a name of any "
                    "known instruction: 'lpc'\nptxas fatal   : Ptx assembly aborted due "
                    "to errors\n");
  // The fake "compiles" a kernel it has a host implementation of, declared
  // with exactly the parameters that implementation reads.
  auto mod = std::make_unique<FakeModule>();
  for (const std::string &name : lpc::rt::cuda::ptx::entryNames(text)) {
    const Kernel *k = findKernel(name);
    if (!k)
      return jitError(CUDA_ERROR_INVALID_IMAGE, "fake JIT: no host implementation of kernel '" +
                                                    name + "'\n");
    std::optional<std::vector<unsigned>> declared = lpc::rt::cuda::ptx::entryParams(text, name);
    if (!declared || *declared != paramLayout(*k))
      return jitError(CUDA_ERROR_INVALID_PTX, "fake JIT: kernel '" + name +
                                                  "' does not declare the parameters its host "
                                                  "implementation reads (" +
                                                  k->signature + ")\n");
    mod->kernels.push_back(k);
  }
  if (mod->kernels.empty())
    return CUDA_ERROR_INVALID_IMAGE;
  if (infoLog && infoSize)
    std::strncpy(infoLog,
                 mod->kernels.size() == 1
                     ? "fake JIT: 1 kernel\n"
                     : ("fake JIT: " + std::to_string(mod->kernels.size()) + " kernels\n").c_str(),
                 infoSize - 1);
  *m = reinterpret_cast<CUmodule>(mod.release());
  return CUDA_SUCCESS;
}
CUresult fake_moduleUnload(CUmodule m) {
  delete reinterpret_cast<FakeModule *>(m);
  return CUDA_SUCCESS;
}
CUresult fake_moduleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  for (const Kernel *k : reinterpret_cast<FakeModule *>(m)->kernels)
    if (std::strcmp(name, k->name) == 0) {
      *f = reinterpret_cast<CUfunction>(const_cast<Kernel *>(k));
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}
// Dynamic shared memory each kernel may use (cuFuncSetAttribute); absent:
// the default, kSharedPerBlock (the fake kernels have no static shared).
std::map<const Kernel *, int> gMaxDynamicShared;

const Kernel *kernelOf(CUfunction f) {
  for (const Kernel &known : kKernels)
    if (reinterpret_cast<CUfunction>(const_cast<Kernel *>(&known)) == f)
      return &known;
  return nullptr;
}
int maxDynamicShared(const Kernel *k) {
  auto it = gMaxDynamicShared.find(k);
  return it == gMaxDynamicShared.end() ? kSharedPerBlock : it->second;
}
CUresult fake_funcGetAttribute(int *v, CUfunction_attribute attr, CUfunction f) {
  const Kernel *k = kernelOf(f);
  if (!k)
    return CUDA_ERROR_INVALID_HANDLE;
  switch (attr) {
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *v = 0;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *v = maxDynamicShared(k);
    return CUDA_SUCCESS;
  default:
    return failWith(CUDA_ERROR_NOT_SUPPORTED, "cuFuncGetAttribute " + std::to_string(attr));
  }
}
CUresult fake_funcSetAttribute(CUfunction f, CUfunction_attribute attr, int value) {
  const Kernel *k = kernelOf(f);
  if (!k)
    return CUDA_ERROR_INVALID_HANDLE;
  if (attr != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    return failWith(CUDA_ERROR_NOT_SUPPORTED, "cuFuncSetAttribute " + std::to_string(attr));
  if (value < 0 || value > kSharedOptin)
    return failWith(CUDA_ERROR_INVALID_VALUE, std::string(k->name) + ": " +
                                                  std::to_string(value) +
                                                  " bytes of dynamic shared memory exceed "
                                                  "the device's opt-in limit");
  gMaxDynamicShared[k] = value;
  return CUDA_SUCCESS;
}
CUresult fake_launchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                           unsigned by, unsigned bz, unsigned shared, CUstream s,
                           void **params, void **extra) {
  const Kernel *k = kernelOf(f);
  if (!k || extra || !params)
    return failWith(CUDA_ERROR_INVALID_VALUE, "not a fake kernel, or no parameter array");
  if (!gx || !gy || !gz || !bx || !by || !bz)
    return failWith(CUDA_ERROR_INVALID_VALUE, std::string(k->name) + ": an empty grid or block");
  if (shared > unsigned(maxDynamicShared(k)))
    return failWith(CUDA_ERROR_INVALID_VALUE,
                    std::string(k->name) + ": " + std::to_string(shared) +
                        " bytes of dynamic shared memory, above the " +
                        std::to_string(maxDynamicShared(k)) +
                        " it may use (cuFuncSetAttribute MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  uint64_t threads = uint64_t(gx) * gy * gz * bx * by * bz;
  std::vector<Arg> args;
  if (CUresult r = decodeArgs(*k, params, args))
    return r;
  if (k->run == runAxpy && (gy != 1 || gz != 1 || by != 1 || bz != 1 ||
                            uint64_t(gx) * bx < uint64_t(args[3].i)))
    return failWith(CUDA_ERROR_INVALID_VALUE, "lpc_test_axpy: the 1-D grid must cover n");
  ++gCounters.launches;
  queue(s, [k, args, threads] { k->run(args, threads); });
  return CUDA_SUCCESS;
}
CUresult fake_streamBeginCapture(CUstream s, CUstreamCaptureMode) {
  Stream *st = reinterpret_cast<Stream *>(s);
  if (st->capturing)
    return CUDA_ERROR_ILLEGAL_STATE;
  st->capturing = true;
  st->captured.clear();
  return CUDA_SUCCESS;
}
CUresult fake_streamEndCapture(CUstream s, CUgraph *g) {
  Stream *st = reinterpret_cast<Stream *>(s);
  if (!st->capturing)
    return CUDA_ERROR_ILLEGAL_STATE;
  st->capturing = false;
  *g = reinterpret_cast<CUgraph>(new Graph{std::move(st->captured)});
  st->captured.clear();
  return CUDA_SUCCESS;
}
CUresult fake_graphInstantiate(CUgraphExec *e, CUgraph g, unsigned long long) {
  *e = reinterpret_cast<CUgraphExec>(new Graph(*reinterpret_cast<Graph *>(g)));
  return CUDA_SUCCESS;
}
CUresult fake_graphLaunch(CUgraphExec e, CUstream s) {
  for (const Work &w : reinterpret_cast<Graph *>(e)->work)
    queue(s, w);
  return CUDA_SUCCESS;
}
CUresult fake_graphDestroy(CUgraph g) {
  delete reinterpret_cast<Graph *>(g);
  return CUDA_SUCCESS;
}
CUresult fake_graphExecDestroy(CUgraphExec e) {
  delete reinterpret_cast<Graph *>(e);
  return CUDA_SUCCESS;
}
CUresult fake_eventCreate(CUevent *e, unsigned) {
  *e = reinterpret_cast<CUevent>(new Event());
  return CUDA_SUCCESS;
}
CUresult fake_eventRecord(CUevent e, CUstream s) {
  Event *ev = reinterpret_cast<Event *>(e);
  Stream *st = reinterpret_cast<Stream *>(s);
  if (st && st->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; // the runtime never does
  ++ev->recorded;
  ev->stream = st;
  ev->pos = st ? st->queued : 0;
  return CUDA_SUCCESS;
}
CUresult fake_eventSynchronize(CUevent e) {
  Event *ev = reinterpret_cast<Event *>(e);
  ++gCounters.eventSyncs;
  if (ev->stream)
    runUntil(ev->stream, ev->pos);
  return CUDA_SUCCESS;
}
CUresult fake_eventElapsedTime(float *ms, CUevent start, CUevent stop) {
  Event *a = reinterpret_cast<Event *>(start), *b = reinterpret_cast<Event *>(stop);
  if (!a->recorded || !b->recorded)
    return CUDA_ERROR_INVALID_HANDLE; // not recorded
  if ((a->stream && a->stream->done < a->pos) || (b->stream && b->stream->done < b->pos))
    return CUDA_ERROR_NOT_READY; // the work before it has not run
  *ms = 0.25f;
  return CUDA_SUCCESS;
}
CUresult fake_eventDestroy(CUevent e) {
  delete reinterpret_cast<Event *>(e);
  return CUDA_SUCCESS;
}
CUresult fake_streamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  if (flags)
    return CUDA_ERROR_INVALID_VALUE;
  Event *ev = reinterpret_cast<Event *>(e);
  if (!ev->recorded || !ev->stream)
    return CUDA_SUCCESS; // nothing to wait for
  Stream *st = reinterpret_cast<Stream *>(s);
  if (st->capturing && ev->stream != st)
    return CUDA_ERROR_STREAM_CAPTURE_ISOLATION; // the runtime never does
  ++gCounters.streamWaits;
  // Work queued on `s` from now on runs after the event's work (the wait
  // refers to the record before this call, not to later ones).
  Stream *target = ev->stream;
  uint64_t pos = ev->pos;
  queue(s, [target, pos] { runUntil(target, pos); });
  return CUDA_SUCCESS;
}
CUresult fake_memHostAlloc(void **p, size_t bytes, unsigned flags) {
  if (flags)
    return CUDA_ERROR_INVALID_VALUE; // the runtime asks for plain pinned memory
  *p = std::malloc(std::max<size_t>(bytes, 1));
  if (!*p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  gPinned[*p] = bytes;
  return CUDA_SUCCESS;
}
CUresult fake_memFreeHost(void *p) {
  drainAll(); // queued copies may read or write it
  if (!gPinned.erase(p))
    return failWith(CUDA_ERROR_INVALID_VALUE, "cuMemFreeHost of memory cuMemHostAlloc did not give");
  std::free(p);
  return CUDA_SUCCESS;
}

// Fake-only entry points (not in CudaDriver.h): FakeNccl.cpp queues its
// collectives with cuLaunchHostFunc, recorded like other work while the
// stream captures, and asks cuStreamIsCapturing whether the callback data
// must outlive one run (a graph replays it).
CUresult fake_launchHostFunc(CUstream s, CUhostFn fn, void *userData) {
  if (!fn)
    return CUDA_ERROR_INVALID_VALUE;
  queue(s, [fn, userData] { fn(userData); });
  return CUDA_SUCCESS;
}
CUresult fake_streamIsCapturing(CUstream s, CUstreamCaptureStatus *status) {
  Stream *st = reinterpret_cast<Stream *>(s);
  *status = st && st->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

struct Entry {
  const char *name;
  void *fn;
  int minVersion;
};
// One entry per entry point the runtime resolves (CudaDriver.h), each
// checked to have exactly the type of the PFN_ typedef the runtime calls it
// through.
#define LPC_FAKE_CHECK(member, symbol, version)                                \
  static_assert(std::is_same_v<decltype(&fake_##member), PFN_##symbol##_v##version>, \
                #symbol ": wrong signature");
LPC_CUDA_DRIVER_ENTRY_POINTS(LPC_FAKE_CHECK)
#define LPC_FAKE_ENTRY(member, symbol, version)                                \
  {#symbol, reinterpret_cast<void *>(&fake_##member), version},
const Entry kEntries[] = {LPC_CUDA_DRIVER_ENTRY_POINTS(LPC_FAKE_ENTRY)};
#define LPC_FAKE_ONLY_ENTRY_POINTS(X)                                          \
  X(launchHostFunc, cuLaunchHostFunc, 10000)                                   \
  X(streamIsCapturing, cuStreamIsCapturing, 10000)
LPC_FAKE_ONLY_ENTRY_POINTS(LPC_FAKE_CHECK)
const Entry kFakeOnlyEntries[] = {LPC_FAKE_ONLY_ENTRY_POINTS(LPC_FAKE_ENTRY)};
#undef LPC_FAKE_ONLY_ENTRY_POINTS
#undef LPC_FAKE_ENTRY
#undef LPC_FAKE_CHECK

// A request must name a version at least the entry point's own, as the
// runtime does.
CUresult resolve(const Entry &e, void **pfn, int version, CUdriverProcAddressQueryResult *status) {
  if (version < e.minVersion) {
    if (status)
      *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = e.fn;
  if (status)
    *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

} // namespace

extern "C" __attribute__((visibility("default"))) LpcFakeCudaCounters *lpc_fake_cuda_counters() {
  return &gCounters;
}

// For the fake libnccl: whether [ptr, ptr + bytes) lies in one live
// allocation (what a collective's buffers must, or a GPU would fault).
extern "C" __attribute__((visibility("default"))) bool lpc_fake_cuda_check_range(uint64_t ptr,
                                                                                 uint64_t bytes) {
  return inAllocation(ptr, bytes);
}

// The exported symbol, as in libcuda (the v2 ABI of CUDA 12+).
extern "C" __attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                    CUdriverProcAddressQueryResult *status) {
  *pfn = nullptr;
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  for (const Entry &e : kEntries)
    if (std::strcmp(e.name, symbol) == 0)
      return resolve(e, pfn, version, status);
  for (const Entry &e : kFakeOnlyEntries)
    if (std::strcmp(e.name, symbol) == 0)
      return resolve(e, pfn, version, status);
  if (status)
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}
