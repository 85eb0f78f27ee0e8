// FakeNcclCounters.h - what the fake libnccl (FakeNccl.cpp) counts, for
// tests that assert which collectives a step makes and how much they move.
// The fake exports lpc_fake_nccl_counters(); tests find it with dlsym on the
// fake's handle. Tests only.

#ifndef LPC_RUNTIME_CUDA_TESTS_FAKENCCLCOUNTERS_H
#define LPC_RUNTIME_CUDA_TESTS_FAKENCCLCOUNTERS_H

#include <cstdint>

struct LpcFakeNcclCounters {
  uint64_t commsCreated = 0;   // ncclCommInitRank that succeeded
  uint64_t commsDestroyed = 0; // ncclCommDestroy and ncclCommAbort
  // Calls that returned ncclSuccess: queued on their stream, or recorded
  // into a graph while it captured.
  uint64_t allReduces = 0;
  uint64_t reduceScatters = 0;
  uint64_t allGathers = 0;
  uint64_t broadcasts = 0;
  uint64_t sends = 0; // ncclSend and ncclRecv calls (held until their group ends)
  uint64_t recvs = 0;
  // Collectives that ran (when their stream got there; every launch of a
  // graph runs its collectives again; a group's sends and receives on one
  // stream are one), and the MPI calls they made (more than one each when a
  // collective is cut into slabs; one per MPI_Isend / MPI_Irecv).
  uint64_t collectivesRun = 0;
  uint64_t mpiCalls = 0;
  // This rank's input bytes of the collectives that ran, by ncclDataType_t
  // (ncclNumTypes entries): all-reduce count, reduce-scatter nranks *
  // recvcount, all-gather sendcount and broadcast count (root only)
  // elements, and every ncclSend's count (to self too).
  uint64_t bytesSent[12] = {};
};

/// The fake's counters since it was loaded (or last reset).
using LpcFakeNcclCountersFn = LpcFakeNcclCounters *(*)();
inline constexpr const char kLpcFakeNcclCountersSymbol[] = "lpc_fake_nccl_counters";

#endif // LPC_RUNTIME_CUDA_TESTS_FAKENCCLCOUNTERS_H
