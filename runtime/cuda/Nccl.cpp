//===- Nccl.cpp - collectives of a GPU train step on NCCL ------------------===//
//
// See lpc/Runtime/CudaNccl.h. Only nccl.h's types are used at build time;
// libnccl is opened with dlopen (OpenLibrary.h) the first time a
// communicator is made.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/CudaNccl.h"

#include "lpc/Runtime/Comm.h"

#include "OpenLibrary.h"

#include <nccl.h>

#include <mutex>

namespace lpc {
namespace rt {
namespace cuda {

const char *collectiveKindName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::Shard:
    return "shard";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  }
  return "?";
}

const char *collectiveReduceName(CollectiveReduce reduce) {
  switch (reduce) {
  case CollectiveReduce::Sum:
    return "sum";
  case CollectiveReduce::Mean:
    return "mean";
  case CollectiveReduce::Max:
    return "max";
  }
  return "?";
}

std::string checkCollectiveRanks(const CollectiveDesc &desc, int runRanks) {
  if (desc.ranks == 0 || desc.ranks == runRanks)
    return "";
  // The CPU's entry points say the same (runtime/comm/Comm.cpp).
  return std::string(collectiveKindName(desc.kind)) + " was built for " +
         std::to_string(desc.ranks) + " ranks but the run has " +
         std::to_string(runRanks) +
         " (compile the step for this rank count: lpc-run under mpirun with "
         "the same -np)";
}

namespace {

// The NCCL functions lpc calls (every NCCL from 2.10, the oldest lpc takes,
// has them all: point-to-point came with 2.7).
#define LPC_NCCL_FUNCTIONS(X)                                                  \
  X(ncclGetVersion)                                                            \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRank)                                                          \
  X(ncclCommDestroy)                                                           \
  X(ncclCommAbort)                                                             \
  X(ncclCommGetAsyncError)                                                     \
  X(ncclGetErrorString)                                                        \
  X(ncclGetLastError)                                                          \
  X(ncclAllReduce)                                                             \
  X(ncclReduceScatter)                                                         \
  X(ncclAllGather)                                                             \
  X(ncclGroupStart)                                                            \
  X(ncclGroupEnd)                                                              \
  X(ncclSend)                                                                  \
  X(ncclRecv)

struct Nccl {
  NcclInfo info;
#define LPC_NCCL_MEMBER(fn) decltype(&::fn) fn = nullptr;
  LPC_NCCL_FUNCTIONS(LPC_NCCL_MEMBER)
#undef LPC_NCCL_MEMBER

  /// "ncclAllReduce failed: unhandled cuda error (run with NCCL_DEBUG=WARN
  /// for details): <NCCL's last error>".
  Error check(ncclResult_t r, const char *call, ncclComm_t comm) const {
    if (r == ncclSuccess)
      return Error::success();
    std::string text = std::string(call) + " failed: " + ncclGetErrorString(r);
    const char *last = ncclGetLastError(comm);
    if (last && *last)
      text += ": " + std::string(last);
    return Error::make(text + " (NCCL_DEBUG=WARN makes NCCL say more)");
  }
};

Expected<const Nccl *> loadNccl() {
  struct State {
    std::unique_ptr<Nccl> lib;
    Error error;
  };
  // Leaked on purpose, as the driver: used until the process ends.
  static State *state = [] {
    auto *s = new State;
    Expected<OpenedLibrary> opened = openCudaLibrary(
        "LPC_NCCL_LIBRARY", {"libnccl.so.2", "libnccl.so"},
        LPC_CUDA_TOOLKIT_LIBDIR, "NCCL",
        "install the CUDA toolkit's NCCL (libnccl2) or set LPC_NCCL_LIBRARY");
    if (!opened) {
      s->error = opened.takeError();
      return s;
    }
    auto lib = std::make_unique<Nccl>();
    lib->info.path = opened->path;
#define LPC_NCCL_RESOLVE(fn)                                                   \
  lib->fn = reinterpret_cast<decltype(&::fn)>(::dlsym(opened->handle, #fn));   \
  if (!lib->fn) {                                                              \
    s->error = Error::make(opened->path + ": no symbol " #fn " (NCCL too old?)"); \
    return s;                                                                  \
  }
    LPC_NCCL_FUNCTIONS(LPC_NCCL_RESOLVE)
#undef LPC_NCCL_RESOLVE
    if (Error e = lib->check(lib->ncclGetVersion(&lib->info.version),
                             "ncclGetVersion", nullptr)) {
      s->error = e.withContext(opened->path);
      return s;
    }
    // ncclAvg and ncclBfloat16 came with 2.10.
    if (lib->info.version < 21000) {
      s->error = Error::make(opened->path + ": NCCL " +
                             std::to_string(lib->info.version) +
                             " is too old (lpc needs 2.10 or newer)");
      return s;
    }
    s->lib = std::move(lib);
    return s;
  }();
  if (!state->lib)
    return state->error;
  return state->lib.get();
}

/// The NCCL type a reduction of `t` runs in.
Expected<ncclDataType_t> ncclType(DType t, int version) {
  switch (t) {
  case DType::F32:
    return ncclFloat32;
  case DType::F16:
    return ncclFloat16;
  case DType::BF16:
    return ncclBfloat16;
  case DType::F8_E4M3:
  case DType::F8_E5M2:
    if (version < 22400)
      return Error::make(std::string(dtypeName(t)) +
                         " collectives need NCCL 2.24 or newer");
    return t == DType::F8_E4M3 ? ncclFloat8e4m3 : ncclFloat8e5m2;
  default:
    return Error::make(std::string("NCCL does not reduce ") + dtypeName(t));
  }
}

/// On rank `rank` of `ranks`: out's block p = rank p's block `rank` of in
/// (`block` bytes each). The own block is a device copy; the others are one
/// ncclSend and one ncclRecv per peer, which ncclGroupEnd issues together
/// (so no rank waits on a peer that is itself waiting to send), all on
/// `stream` and so capturable in a graph.
Error allToAll(const Nccl &n, Device &device, int rank, int ranks,
               ncclComm_t comm, cudaStream_t stream,
               const CollectiveOperands &o, size_t block) {
  if (block == 0)
    return Error::success();
  auto at = [block](CUdeviceptr base, int p) {
    return base + CUdeviceptr(size_t(p) * block);
  };
  if (Error e =
          device.copyDeviceToDevice(at(o.out, rank), at(o.in, rank), block))
    return e;
  if (ranks == 1)
    return Error::success();
  if (Error e = n.check(n.ncclGroupStart(), "ncclGroupStart", comm))
    return e;
  Error first;
  for (int p = 0; p < ranks && !first; ++p) {
    if (p == rank)
      continue;
    first = n.check(n.ncclSend(reinterpret_cast<const void *>(at(o.in, p)),
                               block, ncclUint8, p, comm, stream),
                    "ncclSend", comm);
    if (!first)
      first = n.check(n.ncclRecv(reinterpret_cast<void *>(at(o.out, p)),
                                 block, ncclUint8, p, comm, stream),
                      "ncclRecv", comm);
  }
  // The group is closed even after a failed call: it is the thread's.
  Error end = n.check(n.ncclGroupEnd(), "ncclGroupEnd", comm);
  return first ? first : end;
}

} // namespace

Expected<std::unique_ptr<NcclComm>> NcclComm::create(Device &device, int rank,
                                                     int ranks) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    return Error::make("NCCL: rank " + std::to_string(rank) + " of " +
                       std::to_string(ranks) + " is not a rank");
  Expected<const Nccl *> lib = loadNccl();
  if (!lib)
    return lib.takeError();
  if (Error e = device.makeCurrent())
    return e;
  // Rank 0's id, through MPI, on every rank. A rank that failed to load
  // NCCL has already returned: the launcher's abort ends the others.
  ncclUniqueId id{};
  if (rank == 0)
    if (Error e = (*lib)->check((*lib)->ncclGetUniqueId(&id), "ncclGetUniqueId",
                                nullptr))
      return e;
  commBroadcastBytes(&id, sizeof(id));
  std::unique_ptr<NcclComm> c(new NcclComm(device));
  c->rank_ = rank;
  c->ranks_ = ranks;
  ncclComm_t comm = nullptr;
  if (Error e = (*lib)->check((*lib)->ncclCommInitRank(&comm, ranks, id, rank),
                              "ncclCommInitRank", nullptr))
    return e.withContext("NCCL " + std::to_string((*lib)->info.version) +
                         " (" + (*lib)->info.path + "), rank " +
                         std::to_string(rank) + " of " + std::to_string(ranks));
  c->comm_ = comm;
  return c;
}

NcclComm::~NcclComm() {
  if (!comm_)
    return;
  // Queued collectives must finish before the communicator goes.
  (void)device_.synchronize();
  Expected<const Nccl *> lib = loadNccl();
  if (lib)
    (void)(*lib)->ncclCommDestroy(static_cast<ncclComm_t>(comm_));
}

const NcclInfo &NcclComm::info() const {
  // create() loaded it.
  return (*loadNccl())->info;
}

Error NcclComm::run(const CollectiveDesc &desc,
                    const CollectiveOperands &operands) {
  std::string ranksWrong = checkCollectiveRanks(desc, ranks_);
  if (!ranksWrong.empty())
    return Error::make(ranksWrong);
  const size_t width = dtypeSize(desc.dtype);
  const size_t count = size_t(desc.count);
  if (desc.kind == CollectiveKind::Shard)
    return device_.copyDeviceToDevice(
        operands.out, operands.in + CUdeviceptr(size_t(rank_) * count * width),
        count * width);
  if (desc.kind == CollectiveKind::AllToAll && count % size_t(ranks_) != 0)
    return Error::make("all_to_all of " + std::to_string(count) +
                       " elements: not a multiple of the " +
                       std::to_string(ranks_) + " ranks");
  Expected<const Nccl *> lib = loadNccl();
  if (!lib)
    return lib.takeError();
  const Nccl &n = **lib;
  auto comm = static_cast<ncclComm_t>(comm_);
  auto stream = reinterpret_cast<cudaStream_t>(device_.stream());
  const void *in = reinterpret_cast<const void *>(operands.in);
  void *out = reinterpret_cast<void *>(operands.out);
  Error e;
  switch (desc.kind) {
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter: {
    Expected<ncclDataType_t> type = ncclType(desc.dtype, n.info.version);
    if (!type)
      return type.takeError();
    ncclRedOp_t op = desc.reduce == CollectiveReduce::Sum    ? ncclSum
                     : desc.reduce == CollectiveReduce::Mean ? ncclAvg
                                                             : ncclMax;
    e = desc.kind == CollectiveKind::AllReduce
            ? n.check(n.ncclAllReduce(in, out, count, *type, op, comm, stream),
                      "ncclAllReduce", comm)
            : n.check(n.ncclReduceScatter(in, out, count, *type, op, comm,
                                          stream),
                      "ncclReduceScatter", comm);
    break;
  }
  case CollectiveKind::AllGather:
    // Bytes: no reduction, so the type does not matter, and FP8 needs no
    // NCCL FP8 type.
    e = n.check(
        n.ncclAllGather(in, out, count * width, ncclUint8, comm, stream),
        "ncclAllGather", comm);
    break;
  case CollectiveKind::AllToAll:
    e = allToAll(n, device_, rank_, ranks_, comm, stream, operands,
                 count / size_t(ranks_) * width);
    break;
  case CollectiveKind::Shard:
    break;
  }
  if (e)
    return e;
  bytesSent_ += collectiveWireBytes(desc, ranks_);
  ++collectives_;
  return Error::success();
}

uint64_t collectiveWireBytes(const CollectiveDesc &desc, int ranks) {
  if (ranks <= 1 || desc.kind == CollectiveKind::Shard)
    return 0;
  const uint64_t n = uint64_t(ranks),
                 bytes = uint64_t(desc.count) * dtypeSize(desc.dtype);
  switch (desc.kind) {
  case CollectiveKind::AllReduce:
    return 2 * (n - 1) * bytes / n;
  case CollectiveKind::ReduceScatter: // count: the block each rank keeps
  case CollectiveKind::AllGather:     // count: the block each rank gives
    return (n - 1) * bytes;
  case CollectiveKind::AllToAll: // count: all blocks; its own one stays
    return (n - 1) * bytes / n;
  case CollectiveKind::Shard:
    break;
  }
  return 0;
}

Error runCollective(Device &device, NcclComm *comm, const CollectiveDesc &desc,
                    const CollectiveOperands &operands) {
  if (comm)
    return comm->run(desc, operands);
  // One rank: every collective is a copy of `count` elements (the mean and
  // max of one value are the value), as the CPU's entry points do.
  std::string ranksWrong = checkCollectiveRanks(desc, 1);
  if (!ranksWrong.empty())
    return Error::make(ranksWrong);
  const size_t bytes = size_t(desc.count) * dtypeSize(desc.dtype);
  if (operands.in == operands.out || bytes == 0)
    return Error::success();
  return device.copyDeviceToDevice(operands.out, operands.in, bytes);
}

} // namespace cuda
} // namespace rt
} // namespace lpc
