//===- BatchIterator.cpp - seeded, resumable batches -----------------------===//

#include "lpc/Runtime/BatchIterator.h"

#include "Position.h"
#include "lpc/Runtime/Random.h"

#include <numeric>

namespace lpc {
namespace rt {

const char *partialBatchName(PartialBatch p) { return p == PartialBatch::Pad ? "pad" : "drop"; }

Expected<BatchIterator> BatchIterator::create(int64_t numExamples,
                                              const BatchIteratorOptions &options) {
  if (numExamples < 1)
    return Error::make("batch iterator: the dataset has no examples");
  if (options.batchSize < 1)
    return Error::make("batch iterator: batch size must be >= 1, got " +
                       std::to_string(options.batchSize));
  if (options.partial == PartialBatch::Drop && numExamples < options.batchSize)
    return Error::make("batch iterator: a dataset of " + std::to_string(numExamples) +
                       " examples has no full batch of " + std::to_string(options.batchSize) +
                       " (use the 'pad' policy for the last partial batch)");
  BatchIterator it;
  it.n_ = numExamples;
  it.options_ = options;
  return it;
}

int64_t BatchIterator::batchesPerEpoch() const {
  int64_t b = options_.batchSize;
  return options_.partial == PartialBatch::Drop ? n_ / b : (n_ + b - 1) / b;
}

std::vector<int64_t> BatchIterator::epochOrder(int64_t e) const {
  std::vector<int64_t> p(static_cast<size_t>(n_));
  std::iota(p.begin(), p.end(), int64_t(0));
  if (!options_.shuffle)
    return p;
  Rng rng(mixSeed(options_.seed, static_cast<uint64_t>(e)));
  for (int64_t i = n_ - 1; i > 0; --i) {
    int64_t j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1));
    std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(j)]);
  }
  return p;
}

const std::vector<int64_t> &BatchIterator::order() {
  if (cachedEpoch_ != epoch_) {
    cachedOrder_ = epochOrder(epoch_);
    cachedEpoch_ = epoch_;
  }
  return cachedOrder_;
}

Batch BatchIterator::next() {
  const std::vector<int64_t> &p = order();
  int64_t b = options_.batchSize;
  Batch batch;
  batch.epoch = epoch_;
  batch.indexInEpoch = index_;
  batch.indices.resize(static_cast<size_t>(b));
  int64_t start = index_ * b;
  batch.realRows = std::min(b, n_ - start);
  for (int64_t r = 0; r < batch.realRows; ++r)
    batch.indices[static_cast<size_t>(r)] = p[static_cast<size_t>(start + r)];
  // Pad from the start of the epoch (cyclically if the epoch is shorter).
  for (int64_t r = batch.realRows; r < b; ++r)
    batch.indices[static_cast<size_t>(r)] = p[static_cast<size_t>((r - batch.realRows) % n_)];
  ++index_;
  batch.lastOfEpoch = index_ == batchesPerEpoch();
  if (batch.lastOfEpoch) {
    ++epoch_;
    index_ = 0;
  }
  return batch;
}

std::string BatchIterator::position() const {
  return "batches-v1;examples=" + std::to_string(n_) + ";batch=" +
         std::to_string(options_.batchSize) + ";partial=" + partialBatchName(options_.partial) +
         ";shuffle=" + (options_.shuffle ? "1" : "0") + ";seed=" + std::to_string(options_.seed) +
         ";epoch=" + std::to_string(epoch_) + ";index=" + std::to_string(index_);
}

Error BatchIterator::restore(const std::string &position) {
  static const char *const keys[] = {"examples", "batch", "partial", "shuffle",
                                     "seed",     "epoch", "index"};
  const std::string what = "data position";
  Expected<std::map<std::string, std::string>> kv =
      detail::parsePosition(position, "batches-v1", keys, 7, what);
  if (!kv)
    return kv.takeError();
  uint64_t v[7] = {0, 0, 0, 0, 0, 0, 0};
  for (int i : {0, 1, 4, 5, 6}) {
    Expected<uint64_t> x = detail::positionU64(*kv, keys[i], what);
    if (!x)
      return x.takeError();
    v[i] = *x;
  }
  const std::string &partial = (*kv)["partial"];
  const std::string &shuffle = (*kv)["shuffle"];
  if (partial != "pad" && partial != "drop")
    return makeError(what, "'partial=" + partial + "' is neither pad nor drop");
  if (shuffle != "0" && shuffle != "1")
    return makeError(what, "'shuffle=" + shuffle + "' is neither 0 nor 1");
  auto mismatch = [&](const std::string &key, const std::string &then, const std::string &now) {
    return makeError(what, "was taken with " + key + " " + then + ", this run has " + now);
  };
  if (v[0] != static_cast<uint64_t>(n_))
    return mismatch("a dataset of", (*kv)["examples"] + " examples",
                    std::to_string(n_) + " examples");
  if (v[1] != static_cast<uint64_t>(options_.batchSize))
    return mismatch("batch size", (*kv)["batch"], std::to_string(options_.batchSize));
  if (partial != partialBatchName(options_.partial))
    return mismatch("last-batch policy", partial, partialBatchName(options_.partial));
  if ((shuffle == "1") != options_.shuffle)
    return mismatch("shuffle", shuffle, options_.shuffle ? "1" : "0");
  if (v[4] != options_.seed)
    return mismatch("seed", (*kv)["seed"], std::to_string(options_.seed));
  if (v[5] > static_cast<uint64_t>(INT64_MAX))
    return makeError(what, "epoch " + (*kv)["epoch"] + " is out of range");
  if (v[6] >= static_cast<uint64_t>(batchesPerEpoch()))
    return makeError(what, "batch index " + (*kv)["index"] + " is beyond the " +
                               std::to_string(batchesPerEpoch()) + " batches of an epoch");
  epoch_ = static_cast<int64_t>(v[5]);
  index_ = static_cast<int64_t>(v[6]);
  return Error::success();
}

} // namespace rt
} // namespace lpc
