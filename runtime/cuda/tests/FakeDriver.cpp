// FakeDriver.cpp - a stand-in libcuda for machines without a GPU (tests only).
//
// Exports cuGetProcAddress_v2 and, through it, the driver entry points the
// runtime resolves, implemented on host memory: a "device" pointer is a
// malloc'ed address, copies are memcpy, and the one kernel it knows,
// lpc_test_axpy (runtime/cuda/TestKernels.h), runs on the CPU. Stream capture
// records launches and graphs replay them. The JIT "fails" on kBrokenPtx's
// bogus instruction with a ptxas-like log. This lets the Device / Module /
// Graph / StreamTimer code and lpc-cuda-check --driver-selftest run in the
// normal test run; the real driver is exercised by the same code on a GPU.

#include "lpc/Runtime/CudaDriver.h" // the entry point list

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace {

CUcontext const kContext = reinterpret_cast<CUcontext>(uintptr_t(0xC0A7E47));
CUfunction const kAxpy = reinterpret_cast<CUfunction>(uintptr_t(0xA8B1));

struct Launch {
  CUdeviceptr x, y;
  float a;
  unsigned n;
};
struct Stream {
  bool capturing = false;
  std::vector<Launch> captured;
};
struct Graph {
  std::vector<Launch> launches;
};

std::map<CUdeviceptr, size_t> gAllocations;

void runAxpy(const Launch &l) {
  float *x = reinterpret_cast<float *>(uintptr_t(l.x));
  float *y = reinterpret_cast<float *>(uintptr_t(l.y));
  for (unsigned i = 0; i < l.n; ++i)
    y[i] = l.a * x[i] + y[i];
}

CUresult fake_init(unsigned flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }
CUresult fake_driverGetVersion(int *v) {
  *v = 12080;
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
  *s = r == CUDA_ERROR_INVALID_PTX ? "a PTX JIT compilation failed (fake)" : "fake driver error";
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
  *s = reinterpret_cast<CUstream>(new Stream());
  return CUDA_SUCCESS;
}
CUresult fake_streamDestroy(CUstream s) {
  delete reinterpret_cast<Stream *>(s);
  return CUDA_SUCCESS;
}
CUresult fake_streamSynchronize(CUstream s) {
  return reinterpret_cast<Stream *>(s)->capturing ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                                                  : CUDA_SUCCESS;
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
CUresult fake_memcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream) {
  std::memcpy(reinterpret_cast<void *>(uintptr_t(dst)), src, n);
  return CUDA_SUCCESS;
}
CUresult fake_memcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream) {
  std::memcpy(dst, reinterpret_cast<const void *>(uintptr_t(src)), n);
  return CUDA_SUCCESS;
}
CUresult fake_memsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream) {
  std::memset(reinterpret_cast<void *>(uintptr_t(dst)), v, n);
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
  if (text.find("lpc.not.an.instruction") != std::string::npos) {
    const char log[] = "ptxas application ptx input, line 8; error   : Not a name of any "
                       "known instruction: 'lpc'\nptxas fatal   : Ptx assembly aborted due "
                       "to errors\n";
    if (errorLog && errorSize)
      std::strncpy(errorLog, log, errorSize - 1);
    return CUDA_ERROR_INVALID_PTX;
  }
  if (text.find(".entry lpc_test_axpy") == std::string::npos)
    return CUDA_ERROR_INVALID_IMAGE;
  if (infoLog && infoSize)
    std::strncpy(infoLog, "fake JIT: 1 kernel\n", infoSize - 1);
  *m = reinterpret_cast<CUmodule>(new int(1));
  return CUDA_SUCCESS;
}
CUresult fake_moduleUnload(CUmodule m) {
  delete reinterpret_cast<int *>(m);
  return CUDA_SUCCESS;
}
CUresult fake_moduleGetFunction(CUfunction *f, CUmodule, const char *name) {
  if (std::strcmp(name, "lpc_test_axpy") != 0)
    return CUDA_ERROR_NOT_FOUND;
  *f = kAxpy;
  return CUDA_SUCCESS;
}
CUresult fake_launchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned, CUstream s, void **params,
                       void **extra) {
  if (f != kAxpy || extra || !params || gy != 1 || gz != 1 || by != 1 || bz != 1)
    return CUDA_ERROR_INVALID_VALUE;
  Launch l{*static_cast<CUdeviceptr *>(params[0]), *static_cast<CUdeviceptr *>(params[1]),
           *static_cast<float *>(params[2]), *static_cast<unsigned *>(params[3])};
  if (uint64_t(gx) * bx < l.n)
    return CUDA_ERROR_INVALID_VALUE; // the grid must cover n
  Stream *st = reinterpret_cast<Stream *>(s);
  if (st->capturing)
    st->captured.push_back(l);
  else
    runAxpy(l);
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
  *g = reinterpret_cast<CUgraph>(new Graph{st->captured});
  return CUDA_SUCCESS;
}
CUresult fake_graphInstantiate(CUgraphExec *e, CUgraph g, unsigned long long) {
  *e = reinterpret_cast<CUgraphExec>(new Graph(*reinterpret_cast<Graph *>(g)));
  return CUDA_SUCCESS;
}
CUresult fake_graphLaunch(CUgraphExec e, CUstream) {
  for (const Launch &l : reinterpret_cast<Graph *>(e)->launches)
    runAxpy(l);
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
  *e = reinterpret_cast<CUevent>(new int(0));
  return CUDA_SUCCESS;
}
CUresult fake_eventRecord(CUevent e, CUstream) {
  ++*reinterpret_cast<int *>(e);
  return CUDA_SUCCESS;
}
CUresult fake_eventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult fake_eventElapsedTime(float *ms, CUevent start, CUevent stop) {
  if (!*reinterpret_cast<int *>(start) || !*reinterpret_cast<int *>(stop))
    return CUDA_ERROR_INVALID_HANDLE; // not recorded
  *ms = 0.25f;
  return CUDA_SUCCESS;
}
CUresult fake_eventDestroy(CUevent e) {
  delete reinterpret_cast<int *>(e);
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
#undef LPC_FAKE_CHECK
#define LPC_FAKE_ENTRY(member, symbol, version)                                \
  {#symbol, reinterpret_cast<void *>(&fake_##member), version},
const Entry kEntries[] = {LPC_CUDA_DRIVER_ENTRY_POINTS(LPC_FAKE_ENTRY)};
#undef LPC_FAKE_ENTRY

} // namespace

// The one exported symbol, as in libcuda (the v2 ABI of CUDA 12+). A request
// must name a version at least the entry point's own, as the runtime does.
extern "C" __attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                    CUdriverProcAddressQueryResult *status) {
  *pfn = nullptr;
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  for (const Entry &e : kEntries) {
    if (std::strcmp(e.name, symbol) != 0)
      continue;
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
  if (status)
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}
