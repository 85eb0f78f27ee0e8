//===- Comm.cpp - data-parallel communication on MPI ---------------------===//
//
// See lpc/Runtime/Comm.h. MPI_COMM_WORLD is the data-parallel group.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Comm.h"
#include "lpc/Runtime/HostFloat.h"

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
using CollectiveScope = CommWaitScope;
CommWaitScope::CommWaitScope() { waitingSinceMs.store(nowMs()); }
CommWaitScope::~CommWaitScope() { waitingSinceMs.store(0); }

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

namespace {
// Bytes this rank has sent by wire format (commTraffic).
CommTraffic traffic;
// The most elements per rank one step of a narrow all-reduce moves
// (commSetNarrowSlab).
std::atomic<int64_t> narrowSlab{int64_t(1) << 24};

#ifdef LPC_HAVE_MPI
/// Counts what a ring all-reduce of `n` elements of `width` bytes sends
/// from each rank: 2 (N - 1) / N of them (a reduce-scatter, then an
/// all-gather).
void countAllReduce(int wire, int64_t n, int width) {
  traffic.bytes[wire] += uint64_t(2 * (worldSize - 1)) * uint64_t(n) *
                         uint64_t(width) / uint64_t(worldSize);
  ++traffic.collectives;
}
#endif
} // namespace

CommTraffic commTraffic() { return traffic; }

void commSetNarrowSlab(int64_t elementsPerRank) {
  narrowSlab.store(elementsPerRank > 0 ? elementsPerRank : int64_t(1) << 24);
}

int commRank() { return worldRank; }

int commLocalRank() {
  for (const char *var :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *v = std::getenv(var); v && *v)
      return std::atoi(v);
  return worldRank;
}
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

void commBroadcastBytes(void *data, size_t bytes) {
#ifdef LPC_HAVE_MPI
  if (worldSize > 1 && bytes) {
    CollectiveScope watched;
    MPI_Bcast(data, int(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
  }
#else
  (void)data;
  (void)bytes;
#endif
}

void commAllGatherBytes(const void *mine, size_t bytes, void *all) {
#ifdef LPC_HAVE_MPI
  if (worldSize > 1) {
    // In slabs: MPI counts are ints.
    const size_t slab = size_t(1) << 30;
    std::vector<uint8_t> got(std::min(bytes, slab) * size_t(worldSize));
    for (size_t at = 0; at < bytes; at += slab) {
      size_t n = std::min(slab, bytes - at);
      CollectiveScope watched;
      MPI_Allgather(static_cast<const uint8_t *>(mine) + at, int(n), MPI_BYTE,
                    got.data(), int(n), MPI_BYTE, MPI_COMM_WORLD);
      for (int r = 0; r < worldSize; ++r)
        std::memcpy(static_cast<uint8_t *>(all) + size_t(r) * bytes + at,
                    got.data() + size_t(r) * n, n);
    }
    return;
  }
#endif
  if (bytes)
    std::memcpy(all, mine, bytes);
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
      LPC_COMM_SYMBOL(lpc_rt_reduce_scatter_f32),
      LPC_COMM_SYMBOL(lpc_rt_all_gather_f32),
      LPC_COMM_SYMBOL(lpc_rt_shard_f32),
      LPC_COMM_SYMBOL(lpc_rt_all_to_all_f32),
      LPC_COMM_SYMBOL(lpc_rt_all_to_all_bf16),
      LPC_COMM_SYMBOL(lpc_rt_all_to_all_f16),
      LPC_COMM_SYMBOL(lpc_rt_all_to_all_f8e4m3),
      LPC_COMM_SYMBOL(lpc_rt_all_to_all_f8e5m2),
      LPC_COMM_SYMBOL(lpc_rt_all_gather_bf16),
      LPC_COMM_SYMBOL(lpc_rt_all_gather_f16),
      LPC_COMM_SYMBOL(lpc_rt_all_gather_f8e4m3),
      LPC_COMM_SYMBOL(lpc_rt_all_gather_f8e5m2),
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

#ifdef LPC_HAVE_MPI
namespace lpc {
namespace rt {
namespace {

/// A narrow wire format: its width and how float arrays go to and from it.
/// Exact round to nearest even everywhere (MiniFloat's rules); the loops
/// are written so that the compiler vectorizes the bf16 ones, and FP8
/// encodes through a table instead of the generic encoder.
class WireFormat {
public:
  explicit WireFormat(Wire w) : wire(w) {
    const MiniFloat &f = format();
    width = w == Wire::F16 || w == Wire::BF16 ? 2 : 1;
    maxFinite = w == Wire::E4M3 ? 448.0 : w == Wire::E5M2 ? 57344.0 : 0.0;
    if (w == Wire::BF16)
      return; // bit shifts
    decodeTable.resize(size_t(1) << (8 * width));
    for (size_t b = 0; b < decodeTable.size(); ++b)
      decodeTable[b] = float(f.decode(uint32_t(b)));
    if (width == 1) {
      // FP8 from a float's top 16 bits (its bf16 truncation p) and whether
      // the low 16 are zero. Every FP8 tie point is a bf16 value, so no
      // tie lies strictly between p and the next bf16 value: the floats
      // there all round like their midpoint.
      encodeTable.resize(size_t(1) << 17);
      for (uint32_t p = 0; p < (1u << 16); ++p) {
        float lo, mid;
        uint32_t u = p << 16, m = u | 0x8000u;
        std::memcpy(&lo, &u, 4);
        std::memcpy(&mid, &m, 4);
        encodeTable[2 * p] = uint8_t(f.encode(double(lo)));
        encodeTable[2 * p + 1] = uint8_t(f.encode(double(mid)));
      }
    }
  }

  int width = 0;           // bytes per element
  double maxFinite = 0;    // FP8: the scaled amax goes here; 0 otherwise

  /// out[i] = x[i] * scale in this format (x[i] for bf16/f16: scale 1).
  void encode(const float *x, float scale, uint8_t *out, int64_t n) const {
    if (wire == Wire::BF16) {
      uint16_t *o = reinterpret_cast<uint16_t *>(out);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t u;
        float v = x[i];
        std::memcpy(&u, &v, 4);
        uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
        uint32_t quiet = (u >> 16) | 0x40u; // a NaN stays a (quiet) NaN
        o[i] = uint16_t((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
      }
    } else if (width == 1) {
      for (int64_t i = 0; i < n; ++i) {
        uint32_t u;
        float v = x[i] * scale;
        std::memcpy(&u, &v, 4);
        out[i] = encodeTable[2 * (u >> 16) + ((u & 0xffffu) != 0)];
      }
    } else {
      const MiniFloat &f = format();
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h = uint16_t(f.encodeFloat(x[i]));
        std::memcpy(out + 2 * i, &h, 2);
      }
    }
  }

  /// acc[i] += the i-th value of `in`.
  void accumulate(const uint8_t *in, float *acc, int64_t n) const {
    if (wire == Wire::BF16) {
      const uint16_t *h = reinterpret_cast<const uint16_t *>(in);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t u = uint32_t(h[i]) << 16;
        float v;
        std::memcpy(&v, &u, 4);
        acc[i] += v;
      }
    } else if (width == 1) {
      for (int64_t i = 0; i < n; ++i)
        acc[i] += decodeTable[in[i]];
    } else {
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        acc[i] += decodeTable[h];
      }
    }
  }

  /// out[i] = the i-th value of `in` times `scale` (1 but for FP8).
  void decode(const uint8_t *in, float scale, float *out, int64_t n) const {
    if (wire == Wire::BF16) {
      const uint16_t *h = reinterpret_cast<const uint16_t *>(in);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t u = uint32_t(h[i]) << 16;
        std::memcpy(out + i, &u, 4);
      }
    } else if (width == 1) {
      for (int64_t i = 0; i < n; ++i)
        out[i] = decodeTable[in[i]] * scale;
    } else {
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        out[i] = decodeTable[h];
      }
    }
  }

private:
  const MiniFloat &format() const {
    return wire == Wire::F16    ? kF16
           : wire == Wire::BF16 ? kBF16
           : wire == Wire::E4M3 ? kE4M3
                                : kE5M2;
  }

  Wire wire;
  std::vector<float> decodeTable;   // f16, FP8
  std::vector<uint8_t> encodeTable; // FP8
};

const WireFormat &wireFormat(Wire w) {
  static const WireFormat f16(Wire::F16), bf16(Wire::BF16), e4m3(Wire::E4M3),
      e5m2(Wire::E5M2);
  return w == Wire::F16 ? f16 : w == Wire::BF16 ? bf16 : w == Wire::E4M3 ? e4m3 : e5m2;
}

/// FP8's power-of-two scale for a tensor of which this rank holds `x` (n
/// elements), from the largest magnitude over every rank (so the ranks agree
/// on it, and unscaling is exact); 1 for the other formats, with no
/// communication. NaN when an element on any rank is not finite: the
/// caller then makes its whole result NaN, so that found-inf still sees it.
float sharedScale(const WireFormat &f, const float *x, int64_t n) {
  if (f.maxFinite <= 0)
    return 1.0f;
  float amax = 0.0f;
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) {
    amax = std::max(amax, std::fabs(x[i]));
    finite = finite && std::isfinite(x[i]);
  }
  if (!finite)
    amax = INFINITY;
  MPI_Allreduce(MPI_IN_PLACE, &amax, 1, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
  countAllReduce(int(Wire::F32), 1, 4);
  if (!std::isfinite(amax))
    return NAN;
  if (amax == 0.0f)
    return 1.0f;
  int e = int(std::floor(std::log2(f.maxFinite / double(amax))));
  return std::ldexp(1.0f, std::min(e, 126));
}

/// The mean over ranks of `x` in a narrow format (Comm.h): per slab, an
/// all-to-all of the rounded values (the reduce-scatter), f32 sums in rank
/// order, and an all-gather of the rounded means.
void narrowMean(const float *x, float *y, int64_t n, Wire wire) {
  const WireFormat &f = wireFormat(wire);
  const int ranks = worldSize;
  lpc::rt::CollectiveScope watched;
  const float scale = sharedScale(f, x, n);
  if (std::isnan(scale)) {
    std::fill(y, y + n, NAN);
    return;
  }
  const float inv = 1.0f / scale;
  // Slabs of at most 2^24 elements per rank keep MPI's int counts small.
  const int64_t perRank =
      std::max<int64_t>(1, std::min<int64_t>((n + ranks - 1) / ranks,
                                             narrowSlab.load()));
  const int64_t slab = perRank * ranks;
  std::vector<uint8_t> send(size_t(slab * f.width)), recv(send.size()),
      mine(size_t(perRank * f.width)), all(send.size());
  std::vector<float> acc(static_cast<size_t>(perRank));
  for (int64_t at = 0; at < n; at += slab) {
    const int64_t len = std::min(slab, n - at);
    f.encode(x + at, scale, send.data(), len);
    std::fill(send.begin() + len * f.width, send.end(), 0); // padding: +0
    const int bytes = int(perRank * f.width);
    MPI_Alltoall(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE,
                 MPI_COMM_WORLD);
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int r = 0; r < ranks; ++r) // rank order: the same sums everywhere
      f.accumulate(recv.data() + size_t(r) * bytes, acc.data(), perRank);
    for (float &a : acc)
      a = a / float(ranks);
    f.encode(acc.data(), 1.0f, mine.data(), perRank);
    MPI_Allgather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE,
                  MPI_COMM_WORLD);
    f.decode(all.data(), inv, y + at, len);
    traffic.bytes[int(wire)] +=
        2 * uint64_t(ranks - 1) * uint64_t(perRank * f.width);
    traffic.collectives += 2;
  }
}

/// The elements per rank one step of reduceScatter / allGather moves.
int64_t slabOf(int64_t perRank) {
  return std::max<int64_t>(1, std::min(perRank, narrowSlab.load()));
}

/// lpc.reduce_scatter on N > 1 ranks (Comm.h): per slab, an all-to-all of
/// the values on the wire (rank r's block to rank r), then sums (or maxima)
/// in f32 in rank order.
void reduceScatter(const float *x, float *y, int64_t k, ReduceKind kind,
                   Wire wire) {
  const int ranks = worldSize;
  const WireFormat *f = wire == Wire::F32 ? nullptr : &wireFormat(wire);
  const int width = f ? f->width : 4;
  lpc::rt::CollectiveScope watched;
  const float scale = f ? sharedScale(*f, x, k * ranks) : 1.0f;
  if (std::isnan(scale)) {
    std::fill(y, y + k, NAN);
    return;
  }
  const float inv = 1.0f / scale;
  const int64_t perRank = slabOf(k);
  std::vector<uint8_t> send(size_t(perRank * ranks * width)),
      recv(send.size());
  for (int64_t at = 0; at < k; at += perRank) {
    const int64_t len = std::min(perRank, k - at);
    const int bytes = int(len * width);
    for (int r = 0; r < ranks; ++r) {
      const float *block = x + int64_t(r) * k + at;
      uint8_t *to = send.data() + size_t(r) * size_t(bytes);
      if (f)
        f->encode(block, scale, to, len);
      else
        std::memcpy(to, block, size_t(bytes));
    }
    MPI_Alltoall(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE,
                 MPI_COMM_WORLD);
    // Rank order from rank 0's values: the same sums every run, and
    // -0 + -0 stays -0 as in an MPI sum.
    float *acc = y + at;
    if (f) {
      f->decode(recv.data(), 1.0f, acc, len);
      for (int r = 1; r < ranks; ++r)
        f->accumulate(recv.data() + size_t(r) * size_t(bytes), acc, len);
    } else {
      std::memcpy(acc, recv.data(), size_t(bytes));
      for (int r = 1; r < ranks; ++r) {
        const float *v = reinterpret_cast<const float *>(
            recv.data() + size_t(r) * size_t(bytes));
        if (kind == ReduceKind::Max) {
          for (int64_t i = 0; i < len; ++i) // NaN wins, as in the reference
            acc[i] = std::isnan(acc[i]) || acc[i] >= v[i] ? acc[i] : v[i];
        } else {
          for (int64_t i = 0; i < len; ++i)
            acc[i] += v[i];
        }
      }
    }
    if (kind == ReduceKind::Mean)
      for (int64_t i = 0; i < len; ++i)
        acc[i] = acc[i] / float(ranks) * inv;
    traffic.bytes[int(wire)] += uint64_t(ranks - 1) * uint64_t(bytes);
    ++traffic.collectives;
  }
}

void allGatherBytes(const uint8_t *x, uint8_t *y, int64_t block, int width,
                    Wire wire);

/// lpc.all_gather on N > 1 ranks: per slab, this rank's values on the wire
/// (MPI_Allgather), every rank's block decoded into its place. In fp32 the
/// values travel as they are: allGatherBytes.
void allGather(const float *x, float *y, int64_t k, Wire wire) {
  if (wire == Wire::F32)
    return allGatherBytes(reinterpret_cast<const uint8_t *>(x),
                          reinterpret_cast<uint8_t *>(y), k * 4, 4, wire);
  const int ranks = worldSize;
  const WireFormat &f = wireFormat(wire);
  lpc::rt::CollectiveScope watched;
  const float scale = sharedScale(f, x, k);
  if (std::isnan(scale)) {
    std::fill(y, y + k * ranks, NAN);
    return;
  }
  const float inv = 1.0f / scale;
  const int64_t perRank = slabOf(k);
  std::vector<uint8_t> mine(size_t(perRank * f.width)),
      all(size_t(perRank * ranks * f.width));
  for (int64_t at = 0; at < k; at += perRank) {
    const int64_t len = std::min(perRank, k - at);
    const int bytes = int(len * f.width);
    f.encode(x + at, scale, mine.data(), len);
    MPI_Allgather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE,
                  MPI_COMM_WORLD);
    for (int r = 0; r < ranks; ++r)
      f.decode(all.data() + size_t(r) * size_t(bytes), inv,
               y + int64_t(r) * k + at, len);
    traffic.bytes[int(wire)] += uint64_t(ranks - 1) * uint64_t(bytes);
    ++traffic.collectives;
  }
}

/// lpc.all_to_all on N > 1 ranks: blocks of `block` bytes, per slab an
/// MPI_Alltoall of packed pieces (MPI's counts are ints).
void allToAllBytes(const uint8_t *x, uint8_t *y, int64_t block, int width,
                   Wire wire) {
  const int ranks = worldSize;
  lpc::rt::CollectiveScope watched;
  const int64_t piece = slabOf(block / width) * width;
  std::vector<uint8_t> send(size_t(piece * ranks)), recv(send.size());
  for (int64_t at = 0; at < block; at += piece) {
    const int64_t len = std::min(piece, block - at);
    for (int r = 0; r < ranks; ++r)
      std::memcpy(send.data() + size_t(r * len), x + r * block + at,
                  size_t(len));
    MPI_Alltoall(send.data(), int(len), MPI_BYTE, recv.data(), int(len),
                 MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < ranks; ++r)
      std::memcpy(y + r * block + at, recv.data() + size_t(r * len),
                  size_t(len));
    traffic.bytes[int(wire)] += uint64_t(ranks - 1) * uint64_t(len);
    ++traffic.collectives;
  }
}

/// lpc.all_gather of values that travel as they are (fp32, or a narrow
/// tensor of the GPU's form) on N > 1 ranks: bytes, per slab.
void allGatherBytes(const uint8_t *x, uint8_t *y, int64_t block, int width,
                    Wire wire) {
  const int ranks = worldSize;
  lpc::rt::CollectiveScope watched;
  const int64_t piece = slabOf(block / width) * width;
  std::vector<uint8_t> all(size_t(piece * ranks));
  for (int64_t at = 0; at < block; at += piece) {
    const int64_t len = std::min(piece, block - at);
    MPI_Allgather(x + at, int(len), MPI_BYTE, all.data(), int(len), MPI_BYTE,
                  MPI_COMM_WORLD);
    for (int r = 0; r < ranks; ++r)
      std::memcpy(y + r * block + at, all.data() + size_t(r * len),
                  size_t(len));
    traffic.bytes[int(wire)] += uint64_t(ranks - 1) * uint64_t(len);
    ++traffic.collectives;
  }
}

} // namespace
} // namespace rt
} // namespace lpc
#endif

extern "C" void _mlir_ciface_lpc_rt_all_reduce_f32(lpc::rt::CommMemRef1F32 *in,
                                                   lpc::rt::CommMemRef1F32 *out,
                                                   int64_t kind, int64_t wire) {
  const float *x = elements(in);
  float *y = elements(out);
  int64_t n = in->size;
  int size = lpc::rt::commSize();
  if (wire < 0 || wire >= lpc::rt::kWireFormats ||
      (wire != int64_t(lpc::rt::Wire::F32) &&
       kind != int64_t(lpc::rt::ReduceKind::Mean))) {
    // The verifier of lpc.all_reduce refuses these.
    std::fprintf(stderr,
                 "lpc: internal error: lpc_rt_all_reduce_f32 got kind %lld "
                 "with wire format %lld\n",
                 (long long)kind, (long long)wire);
    std::abort();
  }
  if (size == 1) {
    // One rank: sum, mean (x / 1) and max are the input; nothing is sent,
    // so nothing is rounded.
    if (x != y)
      std::memcpy(y, x, size_t(n) * sizeof(float));
    return;
  }
#ifdef LPC_HAVE_MPI
  if (wire != int64_t(lpc::rt::Wire::F32)) {
    if (x == y) { // the all-to-all reads x while y is written
      std::vector<float> copy(x, x + n);
      lpc::rt::narrowMean(copy.data(), y, n, lpc::rt::Wire(wire));
    } else {
      lpc::rt::narrowMean(x, y, n, lpc::rt::Wire(wire));
    }
    return;
  }
  // MPI's count is an int: reduce in pieces of at most 2^30 elements.
  const int64_t piece = int64_t(1) << 30;
  MPI_Op op = kind == int64_t(lpc::rt::ReduceKind::Max) ? MPI_MAX : MPI_SUM;
  lpc::rt::CollectiveScope watched;
  for (int64_t at = 0; at < n; at += piece) {
    int c = int(n - at < piece ? n - at : piece);
    MPI_Allreduce(x == y ? MPI_IN_PLACE : x + at, y + at, c, MPI_FLOAT, op,
                  MPI_COMM_WORLD);
  }
  lpc::rt::countAllReduce(int(lpc::rt::Wire::F32), n, 4);
  if (kind == int64_t(lpc::rt::ReduceKind::Mean)) {
    float d = float(size);
    for (int64_t i = 0; i < n; ++i)
      y[i] = y[i] / d;
  }
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

namespace {

/// The checks the sharding entry points share: a known wire format (and
/// kind), and the rank count the step was built for against the run's.
void checkSharding(const char *op, int64_t wire, int64_t ranks) {
  if (wire < 0 || wire >= lpc::rt::kWireFormats) {
    std::fprintf(stderr, "lpc: internal error: %s got wire format %lld\n",
                 op, (long long)wire);
    std::abort();
  }
  const int size = lpc::rt::commSize();
  if (ranks == size)
    return;
  std::fprintf(stderr,
               "lpc: error: rank %d: the train step's %s is built for %lld "
               "ranks, but this run has %d\n",
               lpc::rt::commRank(), op, (long long)ranks, size);
  std::fflush(stderr);
  lpc::rt::commAbortAll(1);
  std::exit(1);
}

} // namespace

extern "C" void _mlir_ciface_lpc_rt_reduce_scatter_f32(
    lpc::rt::CommMemRef1F32 *in, lpc::rt::CommMemRef1F32 *out, int64_t kind,
    int64_t wire, int64_t ranks) {
  checkSharding("lpc.reduce_scatter", wire, ranks);
  if (kind < 0 || kind > 2 ||
      (wire != int64_t(lpc::rt::Wire::F32) &&
       kind != int64_t(lpc::rt::ReduceKind::Mean)) ||
      in->size != out->size * ranks) {
    // The verifier of lpc.reduce_scatter refuses these.
    std::fprintf(stderr,
                 "lpc: internal error: lpc_rt_reduce_scatter_f32 got kind "
                 "%lld, wire format %lld, %lld elements in and %lld out\n",
                 (long long)kind, (long long)wire, (long long)in->size,
                 (long long)out->size);
    std::abort();
  }
  const float *x = elements(in);
  float *y = elements(out);
  if (ranks == 1) { // nothing sent, nothing rounded
    if (x != y)
      std::memmove(y, x, size_t(out->size) * sizeof(float));
    return;
  }
#ifdef LPC_HAVE_MPI
  lpc::rt::reduceScatter(x, y, out->size, lpc::rt::ReduceKind(kind),
                         lpc::rt::Wire(wire));
#endif
}

extern "C" void _mlir_ciface_lpc_rt_all_gather_f32(lpc::rt::CommMemRef1F32 *in,
                                                   lpc::rt::CommMemRef1F32 *out,
                                                   int64_t wire,
                                                   int64_t ranks) {
  checkSharding("lpc.all_gather", wire, ranks);
  if (out->size != in->size * ranks) {
    std::fprintf(stderr,
                 "lpc: internal error: lpc_rt_all_gather_f32 got %lld "
                 "elements in and %lld out\n",
                 (long long)in->size, (long long)out->size);
    std::abort();
  }
  const float *x = elements(in);
  float *y = elements(out);
  if (ranks == 1) {
    if (x != y)
      std::memmove(y, x, size_t(out->size) * sizeof(float));
    return;
  }
#ifdef LPC_HAVE_MPI
  lpc::rt::allGather(x, y, in->size, lpc::rt::Wire(wire));
#endif
}

extern "C" void _mlir_ciface_lpc_rt_shard_f32(lpc::rt::CommMemRef1F32 *in,
                                              lpc::rt::CommMemRef1F32 *out,
                                              int64_t ranks) {
  checkSharding("lpc.shard", int64_t(lpc::rt::Wire::F32), ranks);
  if (in->size != out->size * ranks) {
    std::fprintf(stderr,
                 "lpc: internal error: lpc_rt_shard_f32 got %lld elements in "
                 "and %lld out\n",
                 (long long)in->size, (long long)out->size);
    std::abort();
  }
  const float *x = elements(in) + size_t(lpc::rt::commRank()) * out->size;
  float *y = elements(out);
  if (x != y)
    std::memmove(y, x, size_t(out->size) * sizeof(float));
}

namespace {

/// The first byte of a contiguous rank-1 view of `width`-byte elements.
uint8_t *bytesOf(lpc::rt::CommMemRef1Bytes *m, int width, const char *entry) {
  if (m->size > 1 && m->stride != 1) {
    std::fprintf(stderr,
                 "lpc: internal error: %s got a view with stride %lld\n",
                 entry, (long long)m->stride);
    std::abort();
  }
  return static_cast<uint8_t *>(m->aligned) + m->offset * width;
}

void allToAll(lpc::rt::CommMemRef1Bytes *in, lpc::rt::CommMemRef1Bytes *out,
              int64_t ranks, int width, lpc::rt::Wire wire,
              const char *entry) {
  checkSharding("lpc.all_to_all", int64_t(wire), ranks);
  if (in->size != out->size || in->size % ranks != 0) {
    std::fprintf(stderr,
                 "lpc: internal error: %s got %lld elements in and %lld out "
                 "for %lld ranks\n",
                 entry, (long long)in->size, (long long)out->size,
                 (long long)ranks);
    std::abort();
  }
  const uint8_t *x = bytesOf(in, width, entry);
  uint8_t *y = bytesOf(out, width, entry);
  if (ranks == 1) {
    if (x != y)
      std::memmove(y, x, size_t(out->size) * size_t(width));
    return;
  }
#ifdef LPC_HAVE_MPI
  lpc::rt::allToAllBytes(x, y, in->size / ranks * width, width, wire);
#else
  (void)wire;
#endif
}

void allGatherNarrow(lpc::rt::CommMemRef1Bytes *in,
                     lpc::rt::CommMemRef1Bytes *out, int64_t wire,
                     int64_t ranks, int width, lpc::rt::Wire own,
                     const char *entry) {
  checkSharding("lpc.all_gather", wire, ranks);
  if (wire != int64_t(own) || out->size != in->size * ranks) {
    // The verifier of lpc.all_gather refuses these.
    std::fprintf(stderr,
                 "lpc: internal error: %s got wire format %lld, %lld "
                 "elements in and %lld out\n",
                 entry, (long long)wire, (long long)in->size,
                 (long long)out->size);
    std::abort();
  }
  const uint8_t *x = bytesOf(in, width, entry);
  uint8_t *y = bytesOf(out, width, entry);
  if (ranks == 1) {
    if (x != y)
      std::memmove(y, x, size_t(out->size) * size_t(width));
    return;
  }
#ifdef LPC_HAVE_MPI
  lpc::rt::allGatherBytes(x, y, in->size * width, width, own);
#endif
}

} // namespace

#define LPC_COMM_ALL_TO_ALL(T, WIDTH, WIRE)                                     \
  extern "C" void _mlir_ciface_lpc_rt_all_to_all_##T(                          \
      lpc::rt::CommMemRef1Bytes *in, lpc::rt::CommMemRef1Bytes *out,           \
      int64_t ranks) {                                                         \
    allToAll(in, out, ranks, WIDTH, lpc::rt::Wire::WIRE,                       \
             "lpc_rt_all_to_all_" #T);                                         \
  }
LPC_COMM_ALL_TO_ALL(f32, 4, F32)
LPC_COMM_ALL_TO_ALL(bf16, 2, BF16)
LPC_COMM_ALL_TO_ALL(f16, 2, F16)
LPC_COMM_ALL_TO_ALL(f8e4m3, 1, E4M3)
LPC_COMM_ALL_TO_ALL(f8e5m2, 1, E5M2)
#undef LPC_COMM_ALL_TO_ALL

#define LPC_COMM_ALL_GATHER(T, WIDTH, WIRE)                                     \
  extern "C" void _mlir_ciface_lpc_rt_all_gather_##T(                          \
      lpc::rt::CommMemRef1Bytes *in, lpc::rt::CommMemRef1Bytes *out,           \
      int64_t wire, int64_t ranks) {                                           \
    allGatherNarrow(in, out, wire, ranks, WIDTH, lpc::rt::Wire::WIRE,          \
                    "lpc_rt_all_gather_" #T);                                  \
  }
LPC_COMM_ALL_GATHER(bf16, 2, BF16)
LPC_COMM_ALL_GATHER(f16, 2, F16)
LPC_COMM_ALL_GATHER(f8e4m3, 1, E4M3)
LPC_COMM_ALL_GATHER(f8e5m2, 1, E5M2)
#undef LPC_COMM_ALL_GATHER
