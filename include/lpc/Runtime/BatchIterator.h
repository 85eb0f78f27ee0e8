//===- BatchIterator.h - seeded, resumable batches over a dataset -*- C++ -*-===//
//
// Splits the indices 0..N-1 of a dataset into batches of a fixed size B (the
// compiled step has a static batch size), epoch after epoch.
//
// Order: with shuffling, epoch e visits the permutation made by Fisher-Yates
// (for i = N-1 down to 1: swap(p[i], p[below(i + 1)])) from the identity with
// Rng(mixSeed(seed, e)); without it, 0..N-1. Each epoch's order depends only
// on (seed, e), so a position is (epoch, batch index) and resuming needs no
// RNG stream.
//
// Last partial batch (when B does not divide N), per PartialBatch:
//  - Pad (default): the last batch holds the r = N mod B remaining examples
//    followed by the epoch's first B - r examples again (cyclically when
//    N < B); Batch::realRows = r, so the trainer can weight metrics.
//  - Drop: the remaining r examples are skipped this epoch (they come up in
//    other epochs with shuffling). Needs N >= B.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_BATCHITERATOR_H
#define LPC_RUNTIME_BATCHITERATOR_H

#include "lpc/Runtime/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lpc {
namespace rt {

enum class PartialBatch { Pad, Drop };
const char *partialBatchName(PartialBatch p); // "pad" / "drop"

struct BatchIteratorOptions {
  int64_t batchSize = 1;
  uint64_t seed = 0;
  bool shuffle = true;
  PartialBatch partial = PartialBatch::Pad;
};

struct Batch {
  std::vector<int64_t> indices; // batchSize example indices
  int64_t realRows = 0;         // indices[0, realRows) are this epoch's new examples
  int64_t epoch = 0;            // position of this batch
  int64_t indexInEpoch = 0;
  bool lastOfEpoch = false;
};

class BatchIterator {
public:
  /// Fails on numExamples < 1, batchSize < 1, or Drop with numExamples <
  /// batchSize (no full batch).
  static Expected<BatchIterator> create(int64_t numExamples, const BatchIteratorOptions &options);

  /// The batch at the current position; advances the position.
  Batch next();

  int64_t numExamples() const { return n_; }
  int64_t batchSize() const { return options_.batchSize; }
  int64_t batchesPerEpoch() const;
  /// Position of the batch next() returns.
  int64_t epoch() const { return epoch_; }
  int64_t indexInEpoch() const { return index_; }

  /// "batches-v1;examples=N;batch=B;partial=pad;shuffle=1;seed=S;epoch=E;index=I"
  /// (safetensors metadata holds strings).
  std::string position() const;
  /// Restores a position(): the next batch is the one that followed when the
  /// position was taken. Fails, naming the difference, if the position was
  /// taken with another dataset size, batch size, partial policy, shuffle
  /// setting or seed, or is malformed.
  Error restore(const std::string &position);

  /// The order of epoch `e` (a permutation of 0..N-1).
  std::vector<int64_t> epochOrder(int64_t e) const;

private:
  BatchIterator() = default;
  const std::vector<int64_t> &order();
  int64_t n_ = 0;
  BatchIteratorOptions options_;
  int64_t epoch_ = 0, index_ = 0;
  int64_t cachedEpoch_ = -1;
  std::vector<int64_t> cachedOrder_;
};

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_BATCHITERATOR_H
