//===- CommTrainer.h - a trainer's place among the ranks --------*- C++ -*-===//
//
// What TrainOptions (Trainer.h) needs from Comm.h for a data-parallel run:
// this process's rank and the rank count, the collectives the trainer calls
// itself (state comparisons for --verify-ranks, ZeRO-1 checkpoint gathers)
// and the count of what the step's collectives sent. Shared by the full
// lpc-run (tools/lpc-run) and the runtime-only one (runtime/tools); header
// only, so that LpcRuntime itself stays free of MPI.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_COMMTRAINER_H
#define LPC_RUNTIME_COMMTRAINER_H

#include "lpc/Runtime/Comm.h"
#include "lpc/Runtime/Trainer.h"

#include <cstdint>
#include <utility>

namespace lpc {
namespace rt {

/// Sets `o`'s rank, ranks, --verify-ranks interval and the collectives the
/// trainer calls. The step's traffic is counted from MPI's collectives
/// (the CPU's entry points, commTraffic()); a GPU step's go through NCCL,
/// whose count the CUDA trainer sets instead.
inline void setCommTrainOptions(TrainOptions &o, int64_t verifyRanksEvery) {
  o.rank = commRank();
  o.ranks = commSize();
  o.verifyRanksEvery = verifyRanksEvery;
  o.sameOnAllRanks = [](uint64_t h) {
    uint64_t root = commBroadcastFromRoot(h);
    return !commAny(root != h);
  };
  o.allGatherBytes = [](const void *mine, size_t bytes, void *all) {
    commAllGatherBytes(mine, bytes, all);
  };
  o.commSent = [] {
    CommTraffic t = commTraffic();
    uint64_t bytes = 0;
    for (uint64_t b : t.bytes)
      bytes += b;
    return std::pair<uint64_t, uint64_t>{bytes, t.collectives};
  };
}

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_COMMTRAINER_H
