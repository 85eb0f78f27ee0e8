//===- Comm.h - data-parallel communication (MPI) ---------------*- C++ -*-===//
//
// The ranks of a data-parallel run and the collectives the JIT-compiled
// train step calls (lpc.all_reduce, dialects/CollectiveBufferization.cpp).
//
// A process started by an MPI launcher (`mpirun -np N lpc-run ...`; the
// launcher's environment says so) initializes MPI once with commInit() and
// is rank r of N on MPI_COMM_WORLD. Any other process is rank 0 of 1 and
// never calls MPI: a plain `lpc-run` behaves as it did before MPI support,
// and the entry points below copy (or test) their input.
//
// MPI is optional at build time (find_package(MPI) in runtime/comm): without
// it LPC_HAVE_MPI is undefined, every process is one rank, and commInit()
// fails with a clear message when a launcher started N > 1 ranks.
//
// No LLVM/MLIR. Runtime errors inside a collective are fatal (MPI's default
// error handler ends every rank), so that no rank waits for a dead peer.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_COMM_H
#define LPC_RUNTIME_COMM_H

#include "lpc/Runtime/Error.h"

#include <cstddef>
#include <cstdint>

namespace lpc {
namespace rt {

/// Whether this lpc was built with MPI (LPC_HAVE_MPI).
bool commBuiltWithMpi();
/// The rank count an MPI launcher announced in the environment
/// (OMPI_COMM_WORLD_SIZE, PMIX_SIZE... ), 0 when none started this process.
int commLaunchedSize();
/// Initializes MPI (MPI_Init_thread, MPI_THREAD_FUNNELED: the step calls
/// collectives from the thread that runs it) when a launcher started this
/// process; otherwise does nothing. Fails when a launcher started N > 1
/// ranks and this lpc has no MPI. Call once, before anything else prints.
Error commInit(int *argc, char ***argv);
/// MPI_Finalize when commInit initialized MPI (call at a normal exit).
void commFinalize();
/// Ends every rank (MPI_Abort) with `code` when there are several; returns
/// otherwise.
void commAbortAll(int code);
/// This process's rank and the rank count (0 and 1 without MPI).
int commRank();
int commSize();
/// This rank's index among the ranks on its machine, as the launcher says
/// (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK, MPICH's MPI_LOCALRANKID, Slurm's
/// SLURM_LOCALID), else commRank(): one GPU per rank takes device
/// `commLocalRank() mod device count`.
int commLocalRank();
/// Every rank waits for the others (nothing with one rank).
void commBarrier();
/// Element-wise over ranks, in place: sum of doubles; true if any rank's
/// `value` is true. With one rank: unchanged.
void commAllReduceSum(double *values, size_t count);
bool commAny(bool value);
/// Ends this rank (stderr names it, exit code 3) when one collective waits
/// longer than `seconds` for the others, so that a rank that hangs while
/// alive does not hold the rest in MPI forever; mpirun then ends the job.
/// 0 turns the watchdog off. Nothing with one rank.
void commSetTimeout(double seconds);
/// Marks, for the watchdog above, a scope in which this rank waits for the
/// others outside MPI: a GPU step whose NCCL collectives are queued on the
/// device's stream waits for them where it synchronizes with the stream.
/// Scopes do not nest.
class CommWaitScope {
public:
  CommWaitScope();
  ~CommWaitScope();
  CommWaitScope(const CommWaitScope &) = delete;
  CommWaitScope &operator=(const CommWaitScope &) = delete;
};
/// Rank 0's `value`, on every rank (with one rank: `value`).
uint64_t commBroadcastFromRoot(uint64_t value);
/// A collective: rank 0's `bytes` bytes at `data`, on every rank (NCCL's
/// unique id, CudaNccl.h). One rank: nothing.
void commBroadcastBytes(void *data, size_t bytes);
/// A collective: `all` receives every rank's `bytes` bytes of `mine`, in
/// rank order (ZeRO-1 checkpoints gather the optimizer state's blocks).
/// One rank: a copy.
void commAllGatherBytes(const void *mine, size_t bytes, void *all);

/// The reduction kinds of lpc.all_reduce, as the entry points take them.
enum class ReduceKind : int64_t { Sum = 0, Mean = 1, Max = 2 };
/// The wire formats (lpc.all_reduce's comm_precision, by the value of
/// lpc's Precision enum).
enum class Wire : int64_t { F32 = 0, F16 = 1, BF16 = 2, E4M3 = 3, E5M2 = 4 };
constexpr int kWireFormats = 5;

/// What this rank has sent through the train step's collectives since the
/// process started (several ranks only): payload bytes per wire format, as
/// a ring all-reduce sends them (2 (N - 1) / N of the tensor's bytes; MPI
/// may choose another algorithm), and the collective count, FP8's scale
/// agreement included.
struct CommTraffic {
  uint64_t bytes[kWireFormats] = {};
  uint64_t collectives = 0;
};
CommTraffic commTraffic();
/// A narrow-format all-reduce moves a tensor in slabs of at most this many
/// elements per rank (default 2^24, which keeps MPI's int counts small).
/// For tests, which check the slabs without gigabytes; <= 0 restores it.
void commSetNarrowSlab(int64_t elementsPerRank);

/// A JIT symbol: name and address of one entry point.
struct CommSymbol {
  const char *name;
  void *address;
};
/// The entry points below (`_mlir_ciface_lpc_rt_all_reduce_*`), for the JIT
/// to register by name (as gemmSymbols()).
const CommSymbol *commSymbols(size_t *count);

/// Memref descriptors as MLIR's C interface passes them.
struct CommMemRef1F32 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};
/// The same for any element type (bf16, f16, FP8 as bytes).
struct CommMemRef1Bytes {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};
struct CommMemRef0I1 {
  bool *allocated;
  bool *aligned;
  int64_t offset;
};

} // namespace rt
} // namespace lpc

extern "C" {
/// out = reduce over ranks of `in` (kind: ReduceKind; mean = sum / ranks).
/// `in` and `out` are contiguous views of the same size (stride 1). `wire`
/// (Wire) is the format on the wire: F32 for every kind (MPI_Allreduce);
/// the others for Mean only, as lpc.all_reduce's description says
/// (include/lpc/Dialect/LpcCollectiveOps.td): every rank rounds (FP8:
/// scales by a power of two shared by all ranks, then rounds), a
/// reduce-scatter sums in f32 in rank order and rounds the mean, an
/// all-gather brings it to every rank. One rank: out = in, unrounded.
void _mlir_ciface_lpc_rt_all_reduce_f32(lpc::rt::CommMemRef1F32 *in,
                                        lpc::rt::CommMemRef1F32 *out,
                                        int64_t kind, int64_t wire);
/// out = true if an element of `in` on any rank is NaN or infinite.
void _mlir_ciface_lpc_rt_all_reduce_any_nonfinite_f32(
    lpc::rt::CommMemRef1F32 *in, lpc::rt::CommMemRef0I1 *out);
/// lpc.reduce_scatter: `in` holds `ranks` blocks of out->size elements;
/// out = this rank's block of the reduction over ranks (kind: ReduceKind),
/// summed in f32 in rank order. `wire` as for the all-reduce (narrow formats
/// for Mean only); the mean is not rounded after the sum. The run must have
/// `ranks` ranks: another count stops every rank with a message naming
/// both. One rank: out = in, unrounded.
void _mlir_ciface_lpc_rt_reduce_scatter_f32(lpc::rt::CommMemRef1F32 *in,
                                            lpc::rt::CommMemRef1F32 *out,
                                            int64_t kind, int64_t wire,
                                            int64_t ranks);
/// lpc.all_gather: out = the ranks' `in` one after the other, in rank
/// order, every value rounded to `wire` (FP8: with one power-of-two scale
/// shared by the ranks), this rank's own included. The rank count is
/// checked as above. One rank: out = in, unrounded.
void _mlir_ciface_lpc_rt_all_gather_f32(lpc::rt::CommMemRef1F32 *in,
                                        lpc::rt::CommMemRef1F32 *out,
                                        int64_t wire, int64_t ranks);
/// lpc.shard: out = this rank's block of `in` (`ranks` blocks of out->size
/// elements), a local copy. The rank count is checked as above.
void _mlir_ciface_lpc_rt_shard_f32(lpc::rt::CommMemRef1F32 *in,
                                   lpc::rt::CommMemRef1F32 *out,
                                   int64_t ranks);

/// The collectives that only move bytes, for every element type the GPU's
/// native-wire form uses (lpc-native-wire-collectives); the CPU runs that
/// form too (lpc-run --wire-kernels).
///
/// lpc.all_to_all: `in` and `out` hold `ranks` blocks of equal size; out's
/// block j = rank j's block r of `in` (on rank r). The rank count is
/// checked as above. One rank: out = in.
#define LPC_COMM_BYTE_ENTRIES(T)                                               \
  void _mlir_ciface_lpc_rt_all_to_all_##T(lpc::rt::CommMemRef1Bytes *in,      \
                                          lpc::rt::CommMemRef1Bytes *out,     \
                                          int64_t ranks);
LPC_COMM_BYTE_ENTRIES(f32)
LPC_COMM_BYTE_ENTRIES(bf16)
LPC_COMM_BYTE_ENTRIES(f16)
LPC_COMM_BYTE_ENTRIES(f8e4m3)
LPC_COMM_BYTE_ENTRIES(f8e5m2)
#undef LPC_COMM_BYTE_ENTRIES
/// lpc.all_gather of a narrow tensor: out = the ranks' `in` in rank order,
/// bytes unchanged; `wire` must be the element type's own format.
#define LPC_COMM_GATHER_ENTRY(T)                                               \
  void _mlir_ciface_lpc_rt_all_gather_##T(lpc::rt::CommMemRef1Bytes *in,      \
                                          lpc::rt::CommMemRef1Bytes *out,     \
                                          int64_t wire, int64_t ranks);
LPC_COMM_GATHER_ENTRY(bf16)
LPC_COMM_GATHER_ENTRY(f16)
LPC_COMM_GATHER_ENTRY(f8e4m3)
LPC_COMM_GATHER_ENTRY(f8e5m2)
#undef LPC_COMM_GATHER_ENTRY
}

#endif // LPC_RUNTIME_COMM_H
