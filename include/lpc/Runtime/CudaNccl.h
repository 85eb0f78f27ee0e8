//===- CudaNccl.h - collectives of a GPU train step on NCCL -----*- C++ -*-===//
//
// The collective steps of a CUDA artifact (all_reduce, reduce_scatter,
// all_gather, all_to_all, shard: lpc.all_reduce and its kin after the GPU
// pipeline; see docs/cuda-artifact.md) and the NCCL communicator that runs
// them, one process per GPU. libnccl (the CUDA toolkit's, NCCL 2.x) is
// opened with dlopen at run time, as cuBLASLt and cuDNN are: lpc builds and
// its tests run without it, and `$LPC_NCCL_LIBRARY` names another (the
// tests' fake).
//
// The communicator is bootstrapped over MPI (Comm.h): rank 0 asks NCCL for
// a unique id and MPI broadcasts it, then every rank joins with
// ncclCommInitRank. Collectives are queued on the Device's stream (so they
// are ordered with the kernels and GEMMs around them and can be captured in
// a CUDA graph) and sum in the element type (f32), in NCCL's order, not
// rank order: a GPU run is not bit-identical to a CPU run of the same step.
// The data-movement collectives (all_gather, all_to_all) move bytes
// (ncclUint8), so any dtype travels, FP8 included, without NCCL's own FP8
// types (2.24+, sm_90); all_to_all is a group of ncclSend / ncclRecv (in
// every NCCL since 2.7; ncclAlltoAll only came with 2.28).
//
// With one rank no NCCL is needed: runCollective() without a communicator
// does what the CPU's entry points do with one rank (a copy).
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDANCCL_H
#define LPC_RUNTIME_CUDANCCL_H

#include "lpc/Runtime/CudaDriver.h"
#include "lpc/Runtime/Error.h"
#include "lpc/Runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>

namespace lpc {
namespace rt {
namespace cuda {

/// What a collective step does (CudaArtifact.h's CollectiveOp):
///   AllReduce      out = reduce over ranks of in      (count = in = out)
///   ReduceScatter  out = this rank's block of the reduction of in
///                  (in: `ranks` blocks of count = out's elements)
///   AllGather      out = every rank's in, in rank order (count = in)
///   Shard          out = this rank's block of in, no communication
///                  (in: `ranks` blocks of count)
///   AllToAll       out's block j = rank j's block r of in, on rank r
///                  (in and out: `ranks` blocks of count / ranks)
enum class CollectiveKind : uint8_t {
  AllReduce,
  ReduceScatter,
  AllGather,
  Shard,
  AllToAll
};
enum class CollectiveReduce : uint8_t { Sum, Mean, Max };
/// "all_reduce", "reduce_scatter", "all_gather", "shard", "all_to_all".
const char *collectiveKindName(CollectiveKind kind);
/// "sum", "mean", "max".
const char *collectiveReduceName(CollectiveReduce reduce);

struct CollectiveDesc {
  CollectiveKind kind = CollectiveKind::AllReduce;
  CollectiveReduce reduce = CollectiveReduce::Sum; // AllReduce, ReduceScatter
  DType dtype = DType::F32;
  /// Elements per rank: of in and out (AllReduce, AllToAll), of out
  /// (ReduceScatter, Shard), of in (AllGather).
  int64_t count = 0;
  /// The rank count the step was built for (0: any; AllReduce's).
  int64_t ranks = 0;
};

struct CollectiveOperands {
  CUdeviceptr in = 0, out = 0;
};

/// How many ranks a run of `desc` needs to match (`runRanks` is the run's):
/// "" when they agree, else the message that names both.
std::string checkCollectiveRanks(const CollectiveDesc &desc, int runRanks);

/// What the loaded libnccl is.
struct NcclInfo {
  std::string path;
  int version = 0; // ncclGetVersion: 22809 for 2.28.9
};

/// One rank's NCCL communicator on `device`.
class NcclComm {
public:
  /// Opens libnccl (once per process) and joins rank `rank` of `ranks`:
  /// rank 0's unique id reaches the others through MPI (Comm.h's
  /// commBroadcastBytes), so every rank must call this, in the same order.
  /// The device's context is current on the calling thread.
  static Expected<std::unique_ptr<NcclComm>> create(Device &device, int rank,
                                                    int ranks);
  ~NcclComm();
  NcclComm(const NcclComm &) = delete;
  NcclComm &operator=(const NcclComm &) = delete;

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  const NcclInfo &info() const;

  /// Queues `desc` on the device's stream (capturable in a graph). A
  /// reduction's element type must be one NCCL reduces (F32, BF16, F16, and
  /// FP8 from NCCL 2.24 on sm_90); gathers and all-to-alls move any type as
  /// bytes. A mismatched rank count is an error before anything is queued.
  Error run(const CollectiveDesc &desc, const CollectiveOperands &operands);

  /// Bytes this rank has queued for sending (collectiveWireBytes) and the
  /// collectives queued (a CUDA graph's replays queue nothing here).
  uint64_t bytesSent() const { return bytesSent_; }
  uint64_t collectives() const { return collectives_; }

private:
  NcclComm(Device &device) : device_(device) {}
  Device &device_;
  void *comm_ = nullptr; // ncclComm_t
  int rank_ = 0, ranks_ = 1;
  uint64_t bytesSent_ = 0, collectives_ = 0;
};

/// The bytes one of `ranks` ranks sends for `desc`, as a ring sends them:
/// 2 (N - 1) / N of an all-reduce's payload, (N - 1) / N of a
/// reduce-scatter's input, an all-gather's output or an all-to-all's input
/// (its own block stays); 0 for a shard or one rank.
uint64_t collectiveWireBytes(const CollectiveDesc &desc, int ranks);

/// Runs `desc` on `device`'s stream: through `comm` when there is one,
/// else as one rank (every kind is a device copy then; a step built for
/// another rank count is an error).
Error runCollective(Device &device, NcclComm *comm, const CollectiveDesc &desc,
                    const CollectiveOperands &operands);

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDANCCL_H
