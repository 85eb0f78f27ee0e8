//===- Comm.cpp - data-parallel communication on MPI ---------------------===//
//
// See lpc/Runtime/Comm.h. MPI_COMM_WORLD is the data-parallel group.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Comm.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#ifdef LPC_HAVE_MPI
// The C API only (no deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace lpc {
namespace rt {

namespace {
bool initialized = false; // by commInit (so also finalized by us)
int worldRank = 0, worldSize = 1;

// The collective watchdog (commSetTimeout): when this rank entered the
// collective it is in (steady-clock milliseconds; 0: in none), and how long
// it may wait there.
std::atomic<int64_t> waitingSinceMs{0};
std::atomic<int64_t> timeoutMs{0};
std::atomic<bool> watchdogStarted{false};

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// A thread that ends this process when a collective has waited past the
/// timeout: a rank that hangs while alive (stopped, deadlocked, swapping)
/// would otherwise hold the others in MPI forever. MPI_Abort may not be
/// called from this thread (MPI_THREAD_FUNNELED), so it exits non-zero
/// instead, which makes mpirun end the job.
void watch() {
  for (;;) {
    int64_t limit = timeoutMs.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(
        limit > 0 ? std::min<int64_t>(1000, std::max<int64_t>(limit / 4, 10))
                  : 1000));
    int64_t since = waitingSinceMs.load();
    limit = timeoutMs.load();
    if (since == 0 || limit <= 0 || nowMs() - since <= limit)
      continue;
    std::fprintf(stderr,
                 "lpc-run: error: rank %d: a collective has waited %.1f s for "
                 "the other ranks (--comm-timeout=%.0f): one of them is hung "
                 "or stopped; ending the run\n",
                 worldRank, double(nowMs() - since) / 1000.0,
                 double(limit) / 1000.0);
    std::fflush(stderr);
    std::fflush(stdout);
    _exit(3);
  }
}
} // namespace

/// Marks the scope of one blocking collective for the watchdog (also used
/// by the JIT's entry points below, outside this namespace).
struct CollectiveScope {
  CollectiveScope() { waitingSinceMs.store(nowMs()); }
  ~CollectiveScope() { waitingSinceMs.store(0); }
};

void commSetTimeout(double seconds) {
  timeoutMs.store(seconds > 0 ? int64_t(seconds * 1000.0) : 0);
  if (seconds > 0 && worldSize > 1 && !watchdogStarted.exchange(true))
    std::thread(watch).detach();
}

bool commBuiltWithMpi() {
#ifdef LPC_HAVE_MPI
  return true;
#else
  return false;
#endif
}

int commLaunchedSize() {
  // Open MPI's mpirun, then MPICH / Intel MPI (Hydra's PMI).
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *v = std::getenv(var)) {
      int n = std::atoi(v);
      if (n > 0)
        return n;
    }
  return 0;
}

Error commInit(int *argc, char ***argv) {
  int launched = commLaunchedSize();
  if (launched == 0 || initialized)
    return Error::success();
#ifdef LPC_HAVE_MPI
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS)
    return Error::make("MPI_Init_thread failed");
  initialized = true;
  if (provided < MPI_THREAD_FUNNELED)
    return Error::make("MPI gives no MPI_THREAD_FUNNELED support");
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  return Error::success();
#else
  (void)argc;
  (void)argv;
  if (launched > 1)
    return Error::make(
        "started by an MPI launcher as one of " + std::to_string(launched) +
        " ranks, but this lpc was built without MPI (install libopenmpi-dev "
        "and reconfigure: CMake's find_package(MPI) found none)");
  return Error::success();
#endif
}

void commFinalize() {
#ifdef LPC_HAVE_MPI
  if (initialized) {
    MPI_Finalize();
    initialized = false;
  }
#endif
}

void commAbortAll(int code) {
#ifdef LPC_HAVE_MPI
  if (initialized && worldSize > 1) {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
  }
#else
  (void)code;
#endif
}

int commRank() { return worldRank; }
int commSize() { return worldSize; }

void commBarrier() {
#ifdef LPC_HAVE_MPI
  if (worldSize > 1) {
    CollectiveScope watched;
    MPI_Barrier(MPI_COMM_WORLD);
  }
#endif
}

void commAllReduceSum(double *values, size_t count) {
#ifdef LPC_HAVE_MPI
  if (worldSize > 1) {
    CollectiveScope watched;
    MPI_Allreduce(MPI_IN_PLACE, values, int(count), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
  }
#else
  (void)values;
  (void)count;
#endif
}

uint64_t commBroadcastFromRoot(uint64_t value) {
#ifdef LPC_HAVE_MPI
  if (worldSize > 1) {
    static_assert(sizeof(unsigned long long) == sizeof(uint64_t));
    unsigned long long v = value;
    CollectiveScope watched;
    MPI_Bcast(&v, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    return v;
  }
#endif
  return value;
}

bool commAny(bool value) {
#ifdef LPC_HAVE_MPI
  if (worldSize > 1) {
    int v = value ? 1 : 0, r = 0;
    CollectiveScope watched;
    MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return r != 0;
  }
#endif
  return value;
}

const CommSymbol *commSymbols(size_t *count) {
#define LPC_COMM_SYMBOL(NAME)                                                  \
  {"_mlir_ciface_" #NAME, reinterpret_cast<void *>(&_mlir_ciface_##NAME)}
  static const CommSymbol symbols[] = {
      LPC_COMM_SYMBOL(lpc_rt_all_reduce_f32),
      LPC_COMM_SYMBOL(lpc_rt_all_reduce_any_nonfinite_f32),
  };
#undef LPC_COMM_SYMBOL
  *count = sizeof(symbols) / sizeof(symbols[0]);
  return symbols;
}

} // namespace rt
} // namespace lpc

namespace {

/// The elements of a contiguous rank-1 view (the bufferization model passes
/// collapsed row-major buffers: stride 1, or any stride for one element).
float *elements(lpc::rt::CommMemRef1F32 *m) {
  if (m->size > 1 && m->stride != 1) {
    std::fprintf(stderr, "lpc: internal error: lpc_rt_all_reduce_* got a view "
                         "with stride %lld\n",
                 (long long)m->stride);
    std::abort();
  }
  return m->aligned + m->offset;
}

} // namespace

extern "C" void _mlir_ciface_lpc_rt_all_reduce_f32(lpc::rt::CommMemRef1F32 *in,
                                                   lpc::rt::CommMemRef1F32 *out,
                                                   int64_t kind) {
  const float *x = elements(in);
  float *y = elements(out);
  int64_t n = in->size;
  int size = lpc::rt::commSize();
  if (size == 1) {
    // One rank: sum, mean (x / 1) and max are the input.
    if (x != y)
      std::memcpy(y, x, size_t(n) * sizeof(float));
    return;
  }
#ifdef LPC_HAVE_MPI
  // MPI's count is an int: reduce in pieces of at most 2^30 elements.
  const int64_t piece = int64_t(1) << 30;
  MPI_Op op = kind == int64_t(lpc::rt::ReduceKind::Max) ? MPI_MAX : MPI_SUM;
  lpc::rt::CollectiveScope watched;
  for (int64_t at = 0; at < n; at += piece) {
    int c = int(n - at < piece ? n - at : piece);
    MPI_Allreduce(x == y ? MPI_IN_PLACE : x + at, y + at, c, MPI_FLOAT, op,
                  MPI_COMM_WORLD);
  }
  if (kind == int64_t(lpc::rt::ReduceKind::Mean)) {
    float d = float(size);
    for (int64_t i = 0; i < n; ++i)
      y[i] = y[i] / d;
  }
#else
  (void)kind;
#endif
}

extern "C" void _mlir_ciface_lpc_rt_all_reduce_any_nonfinite_f32(
    lpc::rt::CommMemRef1F32 *in, lpc::rt::CommMemRef0I1 *out) {
  const float *x = elements(in);
  bool bad = false;
  for (int64_t i = 0; i < in->size; ++i)
    bad = bad || !std::isfinite(x[i]);
  out->aligned[out->offset] = lpc::rt::commAny(bad);
}
