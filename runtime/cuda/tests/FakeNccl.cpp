// FakeNccl.cpp - a stand-in libnccl for machines without a GPU (tests only).
//
// Exports, with the C signatures of nccl.h (NCCL 2.28), the part of NCCL
// the runtime uses: ncclGetVersion, ncclGetUniqueId, ncclCommInitRank,
// ncclCommDestroy, ncclCommAbort, ncclCommGetAsyncError, ncclCommCount,
// ncclCommUserRank, ncclGetErrorString, ncclGetLastError, ncclAllReduce,
// ncclReduceScatter, ncclAllGather, ncclBroadcast, ncclSend, ncclRecv,
// ncclGroupStart and ncclGroupEnd, plus lpc_fake_nccl_counters()
// (FakeNcclCounters.h). It runs on the fake CUDA driver (FakeDriver.cpp),
// whose "device" pointers are host addresses, so multi-rank schedules run
// under mpirun without a GPU (tests point the runtime's $LPC_NCCL_LIBRARY at
// it).
//
// Ranks: a communicator of one rank needs no MPI. Those of several ranks
// run over MPI_COMM_WORLD (a duplicate of it per communicator, as each NCCL
// communicator is separate) of an MPI the process has already initialized:
// nranks must be the world's size, rank the world rank, and the unique id
// one this fake's ncclGetUniqueId made (rank 0 makes it, the caller
// broadcasts it). The ranks agree on the arguments before they accept
// them, so a bad argument on one rank fails ncclCommInitRank on every rank
// instead of hanging the others. A build without MPI (no
// LPC_FAKE_NCCL_HAVE_MPI) refuses more than one rank.
//
// Stream order: a collective is queued on its stream with cuLaunchHostFunc
// of the fake driver named by $LPC_CUDA_DRIVER_LIBRARY (the library the
// runtime loaded; dlopen returns the same one), so it runs when the stream
// gets there - after earlier work, before later work, at whatever
// synchronization runs the stream - and is recorded while the stream
// captures and replayed by every launch of the graph (cuStreamIsCapturing
// tells which, so that a recorded one's data lives on). The MPI calls happen
// then, so every rank must run the same schedule (as with NCCL). When it
// runs, a collective checks that its send and receive buffers lie in live
// allocations of the fake driver (lpc_fake_cuda_check_range) and aborts
// with "lpc fake NCCL: <op> ... outside any allocation" if not, as the fake
// driver does for bad launches. ncclCommDestroy first runs the
// communicator's queued collectives (NCCL's destroy finalizes, which flushes
// them); a graph that launches one after ncclCommDestroy aborts; after
// ncclCommAbort they do nothing. An MPI failure ends the process (MPI's
// default error handler), so ncclCommGetAsyncError always reports success.
//
// Results are deterministic, so tests compare them exactly: every rank
// gathers every rank's input and reduces it itself, in rank order
// (((x0 op x1) op x2) ...), accumulating in the element type, or in float
// for float16 / bfloat16, which are decoded to float and rounded (to
// nearest even) once, at the end. ncclAvg is that sum / float(nranks)
// (float and double types only; ncclInvalidArgument for integers). Integer
// sums and products wrap. Max and min propagate NaN. Real NCCL reduces in
// a topology-dependent order and rounds 16-bit types at every hop, so tests
// of float16 / bfloat16 sums against a GPU need tolerances. float8 types
// and PreMulSum ops are refused (ncclInvalidArgument). Buffers that overlap
// other than NCCL's in-place cases get correct results here and garbage on
// a GPU. Each MPI call moves at most $LPC_FAKE_NCCL_SLAB_BYTES per rank
// (default and maximum INT_MAX; set it small to test the slabbing).
// $LPC_FAKE_NCCL_VERSION overrides the version it reports (NCCL_VERSION_CODE).
//
// Point-to-point: ncclSend / ncclRecv inside ncclGroupStart / ncclGroupEnd
// are held until the outermost ncclGroupEnd, which queues them on their
// streams together, one host function per communicator and stream holding
// that stream's sends and receives in call order (outside a group a call is
// a group of its own). When it runs, every receive is posted (MPI_Irecv),
// then every send (MPI_Isend), then MPI_Waitall: the ranks' sends to each
// other cannot deadlock, whatever order they were called in. A send to self
// is matched with the receives from self in call order (a copy, no MPI);
// ncclGroupEnd refuses a group whose sends to self and receives from self
// differ in number or bytes (NCCL would hang). A receive of another byte
// count than its peer sent aborts when it runs (MPI's truncation error, or
// "lpc fake NCCL: ncclRecv from rank ..."). Like the collectives, they take
// no float8 datatype. Collectives are queued as they are called, in a group
// or not. Not thread-safe, like the fake driver.

// nccl.h includes these; including them first leaves only NCCL's own
// declarations in the default-visibility region below.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#pragma GCC visibility push(default)
#include <nccl.h>
#pragma GCC visibility pop

#include "FakeNcclCounters.h"

#ifdef LPC_FAKE_NCCL_HAVE_MPI
// The C API only (no deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

static_assert(ncclNumTypes == sizeof(LpcFakeNcclCounters::bytesSent) / sizeof(uint64_t),
              "FakeNcclCounters.h: one bytesSent entry per ncclDataType_t");

namespace {

LpcFakeNcclCounters gCounters;
thread_local std::string tLastError;
thread_local int tGroupDepth = 0;

ncclResult_t fail(ncclResult_t r, const std::string &why) {
  tLastError = "lpc fake NCCL: " + why;
  return r;
}

[[noreturn]] void die(const std::string &why) {
  std::fprintf(stderr, "lpc fake NCCL: %s\n", why.c_str());
  std::abort();
}

std::string hex(const void *p) {
  char b[32];
  std::snprintf(b, sizeof(b), "%p", p);
  return b;
}

//===----------------------------------------------------------------------===//
// The fake driver's entry points
//===----------------------------------------------------------------------===//

struct DriverHooks {
  PFN_cuLaunchHostFunc_v10000 launchHostFunc = nullptr;
  PFN_cuStreamIsCapturing_v10000 streamIsCapturing = nullptr;
  PFN_cuStreamSynchronize_v2000 streamSynchronize = nullptr;
  bool (*checkRange)(uint64_t ptr, uint64_t bytes) = nullptr;
};
DriverHooks gDriver;

/// Resolves the hooks once; an empty string when they are there, else why
/// not.
std::string loadDriver() {
  if (gDriver.launchHostFunc)
    return "";
  const char *path = std::getenv("LPC_CUDA_DRIVER_LIBRARY");
  if (!path || !*path)
    return "$LPC_CUDA_DRIVER_LIBRARY is not set: the fake NCCL queues its collectives on the "
           "streams of the fake CUDA driver that variable names";
  void *handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return std::string("cannot open $LPC_CUDA_DRIVER_LIBRARY: ") + ::dlerror();
  auto getProc =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(::dlsym(handle, "cuGetProcAddress_v2"));
  DriverHooks hooks;
  hooks.checkRange =
      reinterpret_cast<bool (*)(uint64_t, uint64_t)>(::dlsym(handle, "lpc_fake_cuda_check_range"));
  if (!getProc || !hooks.checkRange)
    return std::string(path) + " is not the lpc fake CUDA driver (no cuGetProcAddress_v2 or "
                               "lpc_fake_cuda_check_range)";
  auto resolve = [&](const char *name, int version, auto &out) {
    void *fn = nullptr;
    CUdriverProcAddressQueryResult status;
    if (getProc(name, &fn, version, 0, &status) != CUDA_SUCCESS || !fn)
      return false;
    out = reinterpret_cast<std::remove_reference_t<decltype(out)>>(fn);
    return true;
  };
  if (!resolve("cuLaunchHostFunc", 10000, hooks.launchHostFunc) ||
      !resolve("cuStreamIsCapturing", 10000, hooks.streamIsCapturing) ||
      !resolve("cuStreamSynchronize", 2000, hooks.streamSynchronize))
    return std::string(path) + " does not resolve cuLaunchHostFunc, cuStreamIsCapturing and "
                               "cuStreamSynchronize (an older fake driver?)";
  gDriver = hooks;
  return "";
}

//===----------------------------------------------------------------------===//
// Data types and reductions
//===----------------------------------------------------------------------===//

/// Bytes per element; 0 for a value that is no ncclDataType_t.
size_t typeSize(ncclDataType_t t) {
  switch (t) {
  case ncclInt8:
  case ncclUint8:
  case ncclFloat8e4m3:
  case ncclFloat8e5m2:
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  case ncclInt64:
  case ncclUint64:
  case ncclFloat64:
    return 8;
  default:
    return 0;
  }
}

bool isFloat(ncclDataType_t t) {
  return t == ncclFloat16 || t == ncclBfloat16 || t == ncclFloat32 || t == ncclFloat64;
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) { // zero or subnormal: m * 2^-24
    float v = std::ldexp(float(m), -24);
    return sign ? -v : v;
  }
  if (e == 31) // inf / NaN (payload kept)
    return floatOf(sign | 0x7f800000u | (m << 13));
  return floatOf(sign | ((e + 112) << 23) | (m << 13)); // rebias 15 -> 127
}

/// Round to nearest even; NaN stays a (quiet) NaN, overflow becomes inf.
uint16_t floatToHalf(float f) {
  uint32_t x = bitsOf(f), a = x & 0x7fffffffu;
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  if (a > 0x7f800000u)
    return sign | 0x7e00u;
  if (a >= 0x477ff000u) // >= 65520, halfway above the largest half (65504)
    return sign | 0x7c00u;
  if (a >= 0x38800000u) { // normal in half (>= 2^-14)
    uint32_t h = ((a >> 23) - 112) << 10 | (a & 0x7fffffu) >> 13, rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
      ++h; // may carry into the exponent, which is right
    return sign | uint16_t(h);
  }
  // Subnormal in half: the significand (with its implicit bit) in units of
  // 2^-24 is m >> shift.
  uint32_t m = (a & 0x7fffffu) | 0x800000u;
  int shift = -(int(a >> 23) - 127 + 1);
  if (a < 0x00800000u || shift > 24) // below 2^-25 (float subnormals too): 0
    return sign;
  uint32_t q = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1)))
    ++q;
  return sign | uint16_t(q);
}

float bfloatToFloat(uint16_t b) { return floatOf(uint32_t(b) << 16); }

uint16_t floatToBfloat(float f) {
  uint32_t x = bitsOf(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((x >> 16) | 0x40u); // quiet NaN
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

/// An element type: how it is read into the type reductions accumulate in,
/// and written back.
template <class T> struct Plain {
  using Acc = T;
  static Acc load(const char *p, size_t i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return v;
  }
  static void store(char *p, size_t i, Acc v) { std::memcpy(p + i * sizeof(T), &v, sizeof(T)); }
};
template <float (*Decode)(uint16_t), uint16_t (*Encode)(float)> struct Narrow {
  using Acc = float;
  static Acc load(const char *p, size_t i) { return Decode(Plain<uint16_t>::load(p, i)); }
  static void store(char *p, size_t i, Acc v) { Plain<uint16_t>::store(p, i, Encode(v)); }
};
using Half = Narrow<halfToFloat, floatToHalf>;
using Bfloat = Narrow<bfloatToFloat, floatToBfloat>;

template <class A> A combine(ncclRedOp_t op, A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    // Wrap, as the GPU does, without signed overflow.
    using U = std::make_unsigned_t<A>;
    if (op == ncclSum)
      return A(U(U(a) + U(b)));
    if (op == ncclProd)
      return A(U(U(a) * U(b)));
  } else {
    if (op == ncclSum)
      return a + b;
    if (op == ncclProd)
      return a * b;
    if (a != a)
      return a;
    if (b != b)
      return b;
  }
  return op == ncclMax ? (b > a ? b : a) : (b < a ? b : a);
}

/// out[i] = blocks[0][i] op blocks[1][i] op ... in rank order; `stride`:
/// bytes from one rank's block to the next.
template <class C>
void reduceAs(const char *blocks, size_t stride, int nranks, ncclRedOp_t op, char *out,
              size_t n) {
  using A = typename C::Acc;
  ncclRedOp_t step = op == ncclAvg ? ncclSum : op;
  for (size_t i = 0; i < n; ++i) {
    A acc = C::load(blocks, i);
    for (int r = 1; r < nranks; ++r)
      acc = combine(step, acc, C::load(blocks + size_t(r) * stride, i));
    if constexpr (std::is_floating_point_v<A>)
      if (op == ncclAvg)
        acc = acc / A(nranks);
    C::store(out, i, acc);
  }
}

void reduce(ncclDataType_t t, const char *blocks, size_t stride, int nranks, ncclRedOp_t op,
            char *out, size_t n) {
  switch (t) {
  case ncclInt8:
    return reduceAs<Plain<int8_t>>(blocks, stride, nranks, op, out, n);
  case ncclUint8:
    return reduceAs<Plain<uint8_t>>(blocks, stride, nranks, op, out, n);
  case ncclInt32:
    return reduceAs<Plain<int32_t>>(blocks, stride, nranks, op, out, n);
  case ncclUint32:
    return reduceAs<Plain<uint32_t>>(blocks, stride, nranks, op, out, n);
  case ncclInt64:
    return reduceAs<Plain<int64_t>>(blocks, stride, nranks, op, out, n);
  case ncclUint64:
    return reduceAs<Plain<uint64_t>>(blocks, stride, nranks, op, out, n);
  case ncclFloat16:
    return reduceAs<Half>(blocks, stride, nranks, op, out, n);
  case ncclBfloat16:
    return reduceAs<Bfloat>(blocks, stride, nranks, op, out, n);
  case ncclFloat32:
    return reduceAs<Plain<float>>(blocks, stride, nranks, op, out, n);
  case ncclFloat64:
    return reduceAs<Plain<double>>(blocks, stride, nranks, op, out, n);
  default:
    die("reduce: unchecked datatype " + std::to_string(int(t)));
  }
}

//===----------------------------------------------------------------------===//
// Communicators and the data movement under the collectives
//===----------------------------------------------------------------------===//

struct CommState {
  int rank = 0, nranks = 1;
  size_t slabBytes = INT_MAX; // per rank per MPI call
  bool destroyed = false, aborted = false;
  // Collectives queued (not captured) and not yet run, by stream: what
  // ncclCommDestroy runs first.
  std::map<cudaStream_t, uint64_t> pending;
#ifdef LPC_FAKE_NCCL_HAVE_MPI
  MPI_Comm mpi = MPI_COMM_NULL;
#endif

  void freeMpi() {
#ifdef LPC_FAKE_NCCL_HAVE_MPI
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (mpi != MPI_COMM_NULL && !finalized)
      MPI_Comm_free(&mpi);
    mpi = MPI_COMM_NULL;
#endif
  }
};

} // namespace

// The communicator handle (nccl.h declares struct ncclComm).
struct ncclComm {
  std::shared_ptr<CommState> state;
};

namespace {

#ifdef LPC_FAKE_NCCL_HAVE_MPI
void mpiCheck(int rc, const char *call) {
  if (rc != MPI_SUCCESS)
    die(std::string(call) + " failed (MPI error " + std::to_string(rc) + ")");
}
#endif

/// out = every rank's `bytes` from `in`, in rank order.
void allGatherBytes(CommState &c, const void *in, size_t bytes, void *out) {
  if (c.nranks == 1) {
    std::memcpy(out, in, bytes);
    return;
  }
#ifdef LPC_FAKE_NCCL_HAVE_MPI
  ++gCounters.mpiCalls;
  mpiCheck(MPI_Allgather(in, int(bytes), MPI_BYTE, out, int(bytes), MPI_BYTE, c.mpi),
           "MPI_Allgather");
#endif
}

/// Block j of `in` (`bytes` each) goes to rank j; out = block `rank` of
/// every rank, in rank order.
void allToAllBytes(CommState &c, const void *in, size_t bytes, void *out) {
  if (c.nranks == 1) {
    std::memcpy(out, in, bytes);
    return;
  }
#ifdef LPC_FAKE_NCCL_HAVE_MPI
  ++gCounters.mpiCalls;
  mpiCheck(MPI_Alltoall(in, int(bytes), MPI_BYTE, out, int(bytes), MPI_BYTE, c.mpi),
           "MPI_Alltoall");
#endif
}

void broadcastBytes(CommState &c, void *buf, size_t bytes, int root) {
  if (c.nranks == 1)
    return;
#ifdef LPC_FAKE_NCCL_HAVE_MPI
  ++gCounters.mpiCalls;
  mpiCheck(MPI_Bcast(buf, int(bytes), MPI_BYTE, root, c.mpi), "MPI_Bcast");
#else
  (void)buf, (void)bytes, (void)root;
#endif
}

enum class Kind { AllReduce, ReduceScatter, AllGather, Broadcast, PointToPoint };

const char *kindName(Kind k) {
  switch (k) {
  case Kind::AllReduce:
    return "ncclAllReduce";
  case Kind::ReduceScatter:
    return "ncclReduceScatter";
  case Kind::AllGather:
    return "ncclAllGather";
  case Kind::Broadcast:
    return "ncclBroadcast";
  case Kind::PointToPoint:
    return "ncclGroupEnd (ncclSend / ncclRecv)";
  }
  return "?";
}

/// One ncclSend or ncclRecv of a group.
struct Transfer {
  bool send = true;
  int peer = 0;
  char *buf = nullptr; // a send's is only read
  size_t bytes = 0;
  ncclDataType_t type = ncclUint8;
};

/// One queued collective: the callback data of its cuLaunchHostFunc.
/// `count`: elements per rank as the NCCL call names it (all-reduce and
/// broadcast count, reduce-scatter recvcount, all-gather sendcount).
/// PointToPoint: a group's transfers on one communicator and stream.
struct Op {
  Kind kind = Kind::AllReduce;
  std::shared_ptr<CommState> comm;
  const char *send = nullptr;
  char *recv = nullptr;
  size_t count = 0;
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t red = ncclSum;
  int root = 0;
  cudaStream_t stream = nullptr;
  std::vector<Transfer> transfers; // PointToPoint
  bool oneShot = true; // queued, not captured: runs once and is freed
};

// Ops recorded into graphs: a graph may launch them as long as it lives,
// which the fake cannot see, so they live as long as the process.
std::vector<std::unique_ptr<Op>> gCapturedOps;

void checkRange(const Op &op, const char *which, const void *p, uint64_t bytes) {
  if (bytes && !gDriver.checkRange(uint64_t(uintptr_t(p)), bytes))
    die(std::string(kindName(op.kind)) + ": " + which + " buffer " + hex(p) + " (" +
        std::to_string(bytes) + " bytes) lies outside any allocation");
}

std::string transferName(const Transfer &t) {
  return std::string(t.send ? "ncclSend to" : "ncclRecv from") + " rank " +
         std::to_string(t.peer);
}

/// A group's sends and receives on one stream, when the stream gets to them.
void executeTransfers(const Op &op) {
  CommState &c = *op.comm;
  for (const Transfer &t : op.transfers)
    if (t.bytes && !gDriver.checkRange(uint64_t(uintptr_t(t.buf)), t.bytes))
      die(transferName(t) + ": " + (t.send ? "send" : "receive") + " buffer " + hex(t.buf) +
          " (" + std::to_string(t.bytes) + " bytes) lies outside any allocation");
  ++gCounters.collectivesRun;
  for (const Transfer &t : op.transfers)
    if (t.send)
      gCounters.bytesSent[t.type] += t.bytes;
  // To self: the k-th send feeds the k-th receive (ncclGroupEnd checked
  // that they pair up).
  std::vector<const Transfer *> selfSends, selfRecvs;
  for (const Transfer &t : op.transfers)
    if (t.peer == c.rank)
      (t.send ? selfSends : selfRecvs).push_back(&t);
  for (size_t k = 0; k < selfSends.size() && k < selfRecvs.size(); ++k)
    if (selfSends[k]->bytes && selfSends[k]->buf != selfRecvs[k]->buf)
      std::memmove(selfRecvs[k]->buf, selfSends[k]->buf, selfSends[k]->bytes);
#ifdef LPC_FAKE_NCCL_HAVE_MPI
  if (c.nranks == 1)
    return;
  // Receives first, then sends, all non-blocking, then one wait: no rank
  // blocks in a send its peer has not posted the receive of. Transfers
  // above the slab size go as several messages; MPI keeps the messages of
  // one sender, tag and communicator in order, so the pieces line up.
  const int kTag = 1;
  std::vector<MPI_Request> requests;
  struct Posted {
    const Transfer *t;
    size_t bytes;
  };
  std::vector<Posted> posted;
  for (int pass = 0; pass < 2; ++pass)
    for (const Transfer &t : op.transfers) {
      if (t.peer == c.rank || t.send != (pass == 1))
        continue;
      for (size_t o = 0; o < t.bytes; o += c.slabBytes) {
        size_t k = std::min(c.slabBytes, t.bytes - o);
        requests.emplace_back();
        posted.push_back({&t, k});
        ++gCounters.mpiCalls;
        if (t.send)
          mpiCheck(MPI_Isend(t.buf + o, int(k), MPI_BYTE, t.peer, kTag, c.mpi, &requests.back()),
                   "MPI_Isend");
        else
          mpiCheck(MPI_Irecv(t.buf + o, int(k), MPI_BYTE, t.peer, kTag, c.mpi, &requests.back()),
                   "MPI_Irecv");
      }
    }
  if (requests.empty())
    return;
  std::vector<MPI_Status> statuses(requests.size());
  mpiCheck(MPI_Waitall(int(requests.size()), requests.data(), statuses.data()), "MPI_Waitall");
  for (size_t i = 0; i < posted.size(); ++i) {
    if (posted[i].t->send)
      continue;
    int got = 0;
    MPI_Get_count(&statuses[i], MPI_BYTE, &got);
    if (size_t(got) != posted[i].bytes)
      die(transferName(*posted[i].t) + ": " + std::to_string(posted[i].t->bytes) +
          " bytes expected, but the peer's ncclSend sent fewer (counts and datatypes of a "
          "send and its receive must match)");
  }
#endif
}

/// The collective itself, when its stream gets to it.
void execute(const Op &op) {
  CommState &c = *op.comm;
  if (c.aborted) // ncclCommAbort dropped what was in flight
    return;
  if (c.destroyed)
    die(std::string(kindName(op.kind)) +
        " on a destroyed communicator (a graph launched after ncclCommDestroy)");
  if (op.kind == Kind::PointToPoint)
    return executeTransfers(op);
  const size_t es = typeSize(op.type), n = op.count, ranks = size_t(c.nranks);
  bool reads = op.kind != Kind::Broadcast || c.rank == op.root;
  uint64_t sendBytes = n * es, recvBytes = n * es;
  if (op.kind == Kind::ReduceScatter)
    sendBytes *= ranks;
  if (op.kind == Kind::AllGather)
    recvBytes *= ranks;
  if (reads)
    checkRange(op, "send", op.send, sendBytes);
  checkRange(op, "receive", op.recv, recvBytes);
  ++gCounters.collectivesRun;
  if (reads)
    gCounters.bytesSent[op.type] += sendBytes;

  // Elements per rank per MPI call.
  const size_t slab = std::max<size_t>(1, c.slabBytes / es);
  if (op.kind == Kind::Broadcast) {
    if (reads && op.send != op.recv && n)
      std::memmove(op.recv, op.send, n * es);
    for (size_t o = 0; o < n; o += slab)
      broadcastBytes(c, op.recv + o * es, std::min(slab, n - o) * es, op.root);
    return;
  }
  std::vector<char> tmp(ranks * std::min(slab, n) * es), stage;
  for (size_t o = 0; o < n; o += slab) {
    const size_t k = std::min(slab, n - o), kb = k * es;
    switch (op.kind) {
    case Kind::AllReduce:
      // In place is safe: slab o reads send[o, o + k) before it writes
      // recv[o, o + k), and later slabs read later elements.
      allGatherBytes(c, op.send + o * es, kb, tmp.data());
      reduce(op.type, tmp.data(), kb, c.nranks, op.red, op.recv + o * es, k);
      break;
    case Kind::ReduceScatter:
      // Block j of the slab goes to rank j; in place (recv = send + rank *
      // count) rewrites only elements this slab has already read.
      stage.resize(ranks * kb);
      for (size_t j = 0; j < ranks; ++j)
        std::memcpy(stage.data() + j * kb, op.send + (j * n + o) * es, kb);
      allToAllBytes(c, stage.data(), kb, tmp.data());
      reduce(op.type, tmp.data(), kb, c.nranks, op.red, op.recv + o * es, k);
      break;
    case Kind::AllGather:
      // In place (send = recv + rank * count) writes its own block back.
      allGatherBytes(c, op.send + o * es, kb, tmp.data());
      for (size_t r = 0; r < ranks; ++r)
        std::memcpy(op.recv + (r * n + o) * es, tmp.data() + r * kb, kb);
      break;
    case Kind::Broadcast: // above
    case Kind::PointToPoint:
      break;
    }
  }
}

void CUDA_CB runOp(void *data) {
  Op *op = static_cast<Op *>(data);
  execute(*op);
  if (op->oneShot) {
    auto it = op->comm->pending.find(op->stream);
    if (it != op->comm->pending.end() && --it->second == 0)
      op->comm->pending.erase(it);
    delete op;
  }
}

/// Queues (or, while the stream captures, records) `op` on its stream.
ncclResult_t enqueue(std::unique_ptr<Op> op) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (CUresult r = gDriver.streamIsCapturing(op->stream, &status))
    return fail(ncclUnhandledCudaError, std::string(kindName(op->kind)) +
                                            ": cuStreamIsCapturing failed (CUresult " +
                                            std::to_string(int(r)) + ")");
  Op *raw = op.get();
  raw->oneShot = status == CU_STREAM_CAPTURE_STATUS_NONE;
  CommState &c = *raw->comm;
  if (raw->oneShot)
    ++c.pending[raw->stream]; // before the launch: the legacy stream runs it at once
  else
    gCapturedOps.push_back(std::move(op));
  std::string name = kindName(raw->kind);
  CUresult r = gDriver.launchHostFunc(raw->stream, runOp, raw);
  if (r != CUDA_SUCCESS) {
    if (raw->oneShot) {
      if (--c.pending[raw->stream] == 0)
        c.pending.erase(raw->stream);
    } else {
      gCapturedOps.pop_back();
    }
    return fail(ncclUnhandledCudaError, name + ": cuLaunchHostFunc failed (CUresult " +
                                            std::to_string(int(r)) + ")");
  }
  op.release(); // one-shot: runOp frees it
  return ncclSuccess;
}

const char kIdMagic[] = "lpc-fake-nccl-unique-id";

/// The argument checks every call shares: a communicator, and a datatype
/// the fake moves (not NCCL's float8 ones).
ncclResult_t checkCommAndType(const std::string &name, ncclComm_t comm,
                              ncclDataType_t type) {
  if (!comm)
    return fail(ncclInvalidArgument, name + ": null communicator");
  if (!typeSize(type))
    return fail(ncclInvalidArgument, name + ": datatype " + std::to_string(int(type)) +
                                         " is not an ncclDataType_t");
  if (type == ncclFloat8e4m3 || type == ncclFloat8e5m2)
    return fail(ncclInvalidArgument,
                name + ": float8 datatypes are not supported by the fake NCCL");
  return ncclSuccess;
}

/// NCCL's argument checks, then queues the collective.
ncclResult_t collective(Kind kind, const void *send, void *recv, size_t count,
                        ncclDataType_t type, bool reduces, ncclRedOp_t red, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  std::string name = kindName(kind);
  if (ncclResult_t r = checkCommAndType(name, comm, type))
    return r;
  CommState &c = *comm->state;
  size_t es = typeSize(type);
  if (reduces) {
    if (red < ncclSum || red > ncclAvg)
      return fail(ncclInvalidArgument, name + ": reduction op " + std::to_string(int(red)) +
                                           " is not supported by the fake NCCL (sum, prod, "
                                           "max, min and avg are)");
    if (red == ncclAvg && !isFloat(type))
      return fail(ncclInvalidArgument,
                  name + ": ncclAvg of an integer datatype is not supported by the fake NCCL");
  }
  if (kind == Kind::Broadcast && (root < 0 || root >= c.nranks))
    return fail(ncclInvalidArgument, name + ": root " + std::to_string(root) +
                                         " is not a rank of this " +
                                         std::to_string(c.nranks) + "-rank communicator");
  size_t perRank = kind == Kind::ReduceScatter || kind == Kind::AllGather ? size_t(c.nranks) : 1;
  if (count > SIZE_MAX / es / perRank)
    return fail(ncclInvalidArgument, name + ": count " + std::to_string(count) + " overflows");
  bool sends = kind != Kind::Broadcast || c.rank == root;
  if (count && ((sends && !send) || !recv))
    return fail(ncclInvalidArgument, name + ": null " + (recv ? "send" : "receive") + " buffer");
  auto op = std::make_unique<Op>();
  op->kind = kind;
  op->comm = comm->state;
  op->send = static_cast<const char *>(send);
  op->recv = static_cast<char *>(recv);
  op->count = count;
  op->type = type;
  op->red = red;
  op->root = root;
  op->stream = stream;
  if (ncclResult_t r = enqueue(std::move(op)))
    return r;
  switch (kind) {
  case Kind::AllReduce:
    ++gCounters.allReduces;
    break;
  case Kind::ReduceScatter:
    ++gCounters.reduceScatters;
    break;
  case Kind::AllGather:
    ++gCounters.allGathers;
    break;
  case Kind::Broadcast:
    ++gCounters.broadcasts;
    break;
  case Kind::PointToPoint:
    break;
  }
  return ncclSuccess;
}

/// A held ncclSend or ncclRecv: what the outermost ncclGroupEnd queues.
struct HeldTransfer {
  std::shared_ptr<CommState> comm;
  cudaStream_t stream = nullptr;
  Transfer t;
};
thread_local std::vector<HeldTransfer> tHeld;

/// Queues the held transfers: one op per communicator and stream, in the
/// order the pairs first appear, each holding its transfers in call order.
ncclResult_t issueHeld() {
  std::vector<HeldTransfer> held;
  held.swap(tHeld);
  std::vector<std::unique_ptr<Op>> ops;
  for (HeldTransfer &h : held) {
    auto it = std::find_if(ops.begin(), ops.end(), [&](const std::unique_ptr<Op> &o) {
      return o->comm == h.comm && o->stream == h.stream;
    });
    if (it == ops.end()) {
      ops.push_back(std::make_unique<Op>());
      ops.back()->kind = Kind::PointToPoint;
      ops.back()->comm = h.comm;
      ops.back()->stream = h.stream;
      it = ops.end() - 1;
    }
    (*it)->transfers.push_back(h.t);
  }
  // NCCL matches a send to self with a receive from self of the same group;
  // one without the other would never complete.
  for (const std::unique_ptr<Op> &o : ops) {
    std::vector<size_t> sends, recvs;
    for (const Transfer &t : o->transfers)
      if (t.peer == o->comm->rank)
        (t.send ? sends : recvs).push_back(t.bytes);
    if (sends != recvs)
      return fail(ncclInvalidUsage,
                  "ncclGroupEnd: the group's " + std::to_string(sends.size()) +
                      " ncclSend to self and " + std::to_string(recvs.size()) +
                      " ncclRecv from self (on one communicator and stream) do not pair up in "
                      "call order with equal byte counts");
  }
  for (std::unique_ptr<Op> &o : ops)
    if (ncclResult_t r = enqueue(std::move(o)))
      return r;
  return ncclSuccess;
}

/// NCCL's argument checks of ncclSend / ncclRecv, then holds the transfer
/// until the group ends (a call outside a group is a group of its own).
ncclResult_t pointToPoint(bool send, const void *buf, size_t count, ncclDataType_t type,
                          int peer, ncclComm_t comm, cudaStream_t stream) {
  std::string name = send ? "ncclSend" : "ncclRecv";
  if (ncclResult_t r = checkCommAndType(name, comm, type))
    return r;
  CommState &c = *comm->state;
  size_t es = typeSize(type);
  if (peer < 0 || peer >= c.nranks)
    return fail(ncclInvalidArgument, name + ": peer " + std::to_string(peer) +
                                         " is not a rank of this " +
                                         std::to_string(c.nranks) + "-rank communicator");
  if (count > SIZE_MAX / es)
    return fail(ncclInvalidArgument, name + ": count " + std::to_string(count) + " overflows");
  if (count && !buf)
    return fail(ncclInvalidArgument, name + ": null buffer");
  HeldTransfer h;
  h.comm = comm->state;
  h.stream = stream;
  h.t.send = send;
  h.t.peer = peer;
  h.t.buf = static_cast<char *>(const_cast<void *>(buf));
  h.t.bytes = count * es;
  h.t.type = type;
  tHeld.push_back(std::move(h));
  ++(send ? gCounters.sends : gCounters.recvs);
  return tGroupDepth == 0 ? issueHeld() : ncclSuccess;
}

/// What each rank tells the others in ncclCommInitRank.
struct Hello {
  int32_t ok; // its own checks passed
  char id[NCCL_UNIQUE_ID_BYTES];
};

size_t slabFromEnvironment() {
  const char *env = std::getenv("LPC_FAKE_NCCL_SLAB_BYTES");
  unsigned long long v = env && *env ? std::strtoull(env, nullptr, 10) : 0;
  return v && v < INT_MAX ? size_t(v) : size_t(INT_MAX);
}

} // namespace

#define LPC_EXPORT extern "C" __attribute__((visibility("default")))

LPC_EXPORT LpcFakeNcclCounters *lpc_fake_nccl_counters() { return &gCounters; }

ncclResult_t ncclGetVersion(int *version) {
  if (!version)
    return fail(ncclInvalidArgument, "ncclGetVersion: null pointer");
  const char *env = std::getenv("LPC_FAKE_NCCL_VERSION");
  *version = env && *env ? std::atoi(env) : NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclUnhandledCudaError:
    return "unhandled cuda error (fake NCCL: see ncclGetLastError)";
  case ncclSystemError:
    return "unhandled system error (fake NCCL: see ncclGetLastError)";
  case ncclInternalError:
    return "internal error (fake NCCL: see ncclGetLastError)";
  case ncclInvalidArgument:
    return "invalid argument (fake NCCL: see ncclGetLastError)";
  case ncclInvalidUsage:
    return "invalid usage (fake NCCL: see ncclGetLastError)";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  case ncclInProgress:
    return "NCCL operation in progress";
  default:
    return "unknown result code";
  }
}

const char *ncclGetLastError(ncclComm_t) { return tLastError.c_str(); }

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId) {
  if (!uniqueId)
    return fail(ncclInvalidArgument, "ncclGetUniqueId: null pointer");
  // The magic marks ids this fake made; the rest tells ids apart.
  static uint64_t made = 0;
  std::memset(uniqueId->internal, 0, sizeof(uniqueId->internal));
  std::memcpy(uniqueId->internal, kIdMagic, sizeof(kIdMagic));
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t tail[3] = {uint64_t(::getpid()), ++made,
                      uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec)};
  std::memcpy(uniqueId->internal + sizeof(kIdMagic), tail, sizeof(tail));
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank) {
  if (!comm)
    return fail(ncclInvalidArgument, "ncclCommInitRank: null communicator pointer");
  *comm = nullptr;
  // Checks of this rank's own arguments and environment; with several
  // ranks, every rank learns whether all of them passed before any
  // returns, so none waits for a rank that gave up.
  ncclResult_t code = ncclSuccess;
  std::string problem;
  auto refuse = [&](ncclResult_t r, std::string why) {
    if (code == ncclSuccess) {
      code = r;
      problem = "ncclCommInitRank: " + std::move(why);
    }
  };
  if (nranks < 1 || rank < 0 || rank >= nranks)
    refuse(ncclInvalidArgument,
           "rank " + std::to_string(rank) + " of " + std::to_string(nranks) + " ranks");
  if (std::memcmp(commId.internal, kIdMagic, sizeof(kIdMagic)) != 0)
    refuse(ncclInvalidArgument, "the unique id was not made by the fake NCCL's ncclGetUniqueId "
                                "(rank 0 makes it; broadcast it to every rank)");
  std::string driver = loadDriver();
  if (!driver.empty())
    refuse(ncclSystemError, driver);

  auto state = std::make_shared<CommState>();
  state->rank = rank;
  state->nranks = nranks;
  state->slabBytes = slabFromEnvironment();
  if (nranks > 1) {
#ifdef LPC_FAKE_NCCL_HAVE_MPI
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
      return fail(ncclInvalidUsage,
                  "ncclCommInitRank: MPI is not initialized (or already finalized): the fake "
                  "NCCL's ranks are MPI_COMM_WORLD's, so call MPI_Init_thread first");
    int worldSize = 0, worldRank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
    MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
    if (nranks != worldSize)
      refuse(ncclInvalidArgument, std::to_string(nranks) + " ranks, but MPI_COMM_WORLD has " +
                                      std::to_string(worldSize) +
                                      " (the fake NCCL's ranks are MPI_COMM_WORLD's)");
    else if (rank != worldRank)
      refuse(ncclInvalidArgument, "rank " + std::to_string(rank) + " in MPI_COMM_WORLD rank " +
                                      std::to_string(worldRank) +
                                      " (the fake NCCL's rank r is MPI rank r)");
    Hello mine{code == ncclSuccess, {}};
    std::memcpy(mine.id, commId.internal, sizeof(mine.id));
    std::vector<Hello> all(size_t(std::max(worldSize, 1)));
    mpiCheck(MPI_Allgather(&mine, int(sizeof(Hello)), MPI_BYTE, all.data(), int(sizeof(Hello)),
                           MPI_BYTE, MPI_COMM_WORLD),
             "MPI_Allgather");
    if (code != ncclSuccess)
      return fail(code, problem);
    for (size_t r = 0; r < all.size(); ++r) {
      std::string who = "MPI rank " + std::to_string(r);
      if (!all[r].ok)
        return fail(ncclInvalidArgument, "ncclCommInitRank: " + who +
                                             " rejected its arguments (see its error)");
      if (std::memcmp(all[r].id, mine.id, sizeof(mine.id)) != 0)
        return fail(ncclInvalidArgument, "ncclCommInitRank: " + who +
                                             " passed another unique id (broadcast rank 0's)");
    }
    // A communicator of its own, as each NCCL communicator is.
    mpiCheck(MPI_Comm_dup(MPI_COMM_WORLD, &state->mpi), "MPI_Comm_dup");
#else
    return fail(ncclInvalidUsage, "ncclCommInitRank: " + std::to_string(nranks) +
                                      " ranks, but the fake NCCL was built without MPI "
                                      "(one rank only)");
#endif
  }
  if (code != ncclSuccess)
    return fail(code, problem);
  *comm = new ncclComm{std::move(state)};
  ++gCounters.commsCreated;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm)
    return ncclSuccess;
  CommState &c = *comm->state;
  // NCCL's destroy finalizes, which completes the queued collectives: run
  // their streams (the collectives may be MPI calls other ranks wait in).
  while (!c.pending.empty()) {
    cudaStream_t s = c.pending.begin()->first;
    if (CUresult r = gDriver.streamSynchronize(s))
      return fail(ncclUnhandledCudaError,
                  "ncclCommDestroy: cuStreamSynchronize of a stream with queued collectives "
                  "failed (CUresult " +
                      std::to_string(int(r)) + ")");
    if (c.pending.count(s))
      return fail(ncclInternalError, "ncclCommDestroy: a stream's collectives did not run");
  }
  c.destroyed = true;
  c.freeMpi();
  delete comm;
  ++gCounters.commsDestroyed;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!comm)
    return ncclSuccess;
  comm->state->aborted = true;
  comm->state->freeMpi();
  delete comm;
  ++gCounters.commsDestroyed;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
  if (!comm || !asyncError)
    return fail(ncclInvalidArgument, "ncclCommGetAsyncError: null argument");
  *asyncError = ncclSuccess; // failures end the process (see the top)
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  if (!comm || !count)
    return fail(ncclInvalidArgument, "ncclCommCount: null argument");
  *count = comm->state->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  if (!comm || !rank)
    return fail(ncclInvalidArgument, "ncclCommUserRank: null argument");
  *rank = comm->state->rank;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  return collective(Kind::AllReduce, sendbuff, recvbuff, count, datatype, true, op, 0, comm,
                    stream);
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  return collective(Kind::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, true, op, 0,
                    comm, stream);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return collective(Kind::AllGather, sendbuff, recvbuff, sendcount, datatype, false, ncclSum, 0,
                    comm, stream);
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return collective(Kind::Broadcast, sendbuff, recvbuff, count, datatype, false, ncclSum, root,
                    comm, stream);
}

ncclResult_t ncclGroupStart() {
  ++tGroupDepth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (tGroupDepth == 0)
    return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  --tGroupDepth;
  return tGroupDepth == 0 ? issueHeld() : ncclSuccess;
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return pointToPoint(true, sendbuff, count, datatype, peer, comm, stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return pointToPoint(false, recvbuff, count, datatype, peer, comm, stream);
}
