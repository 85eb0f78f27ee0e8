// IteratorRandomTests.cpp - tests of BatchIterator and the Rng (groups iterator, random).

#include "TestHarness.h"

//===----------------------------------------------------------------------===//
// iterator
//===----------------------------------------------------------------------===//

static BatchIterator makeIter(int64_t n, int64_t b, uint64_t seed, PartialBatch p,
                              bool shuffle = true) {
  BatchIteratorOptions o;
  o.batchSize = b;
  o.seed = seed;
  o.partial = p;
  o.shuffle = shuffle;
  return BatchIterator::create(n, o).take();
}

TEST(iterator, epochs_are_permutations) {
  BatchIterator it = makeIter(10, 4, 1, PartialBatch::Pad);
  CHECK_EQ(it.batchesPerEpoch(), int64_t(3));
  std::vector<std::vector<int64_t>> epochs;
  for (int e = 0; e < 3; ++e) {
    std::vector<int64_t> seen;
    for (int k = 0; k < 3; ++k) {
      Batch b = it.next();
      CHECK_EQ(b.epoch, int64_t(e));
      CHECK_EQ(b.indexInEpoch, int64_t(k));
      CHECK_EQ(b.indices.size(), size_t(4));
      CHECK_EQ(b.realRows, int64_t(k < 2 ? 4 : 2));
      CHECK_EQ(b.lastOfEpoch, k == 2);
      seen.insert(seen.end(), b.indices.begin(), b.indices.begin() + b.realRows);
      if (k == 2) {
        // Padding repeats the epoch's first examples.
        std::vector<int64_t> order = it.epochOrder(e);
        CHECK_EQ(b.indices[2], order[0]);
        CHECK_EQ(b.indices[3], order[1]);
      }
    }
    std::vector<int64_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> all(10);
    for (int i = 0; i < 10; ++i)
      all[static_cast<size_t>(i)] = i;
    CHECK(sorted == all);
    CHECK(seen == it.epochOrder(e));
    epochs.push_back(seen);
  }
  CHECK(epochs[0] != epochs[1] && epochs[1] != epochs[2]);
  BatchIterator same = makeIter(10, 4, 1, PartialBatch::Pad);
  CHECK(same.epochOrder(2) == epochs[2]);
  BatchIterator other = makeIter(10, 4, 2, PartialBatch::Pad);
  CHECK(other.epochOrder(0) != epochs[0]);
  BatchIterator plain = makeIter(10, 4, 1, PartialBatch::Pad, false);
  Batch b0 = plain.next();
  CHECK(b0.indices == std::vector<int64_t>({0, 1, 2, 3}));
  // Known order: pins the documented algorithm (xoshiro256** + Fisher-Yates)
  // so that a change to it, which would break resuming old checkpoints, shows.
  std::vector<int64_t> pinned = makeIter(10, 4, 42, PartialBatch::Pad).epochOrder(0);
  std::string s;
  for (int64_t v : pinned)
    s += std::to_string(v);
  std::printf("  iterator: seed 42 epoch 0 order %s\n", s.c_str());
  CHECK_EQ(s, std::string("9342608157")); // from an independent Python model
}

TEST(iterator, drop_and_small_datasets) {
  BatchIterator it = makeIter(10, 4, 1, PartialBatch::Drop);
  CHECK_EQ(it.batchesPerEpoch(), int64_t(2));
  std::set<int64_t> seen;
  for (int k = 0; k < 2; ++k) {
    Batch b = it.next();
    CHECK_EQ(b.realRows, int64_t(4));
    seen.insert(b.indices.begin(), b.indices.end());
  }
  CHECK_EQ(seen.size(), size_t(8));
  CHECK_EQ(it.epoch(), int64_t(1));
  std::vector<int64_t> order1 = it.epochOrder(1);
  Batch b = it.next();
  CHECK(std::vector<int64_t>(order1.begin(), order1.begin() + 4) == b.indices);
  // Exact multiple: no partial batch under either policy.
  CHECK_EQ(makeIter(12, 4, 0, PartialBatch::Pad).batchesPerEpoch(), int64_t(3));
  CHECK_EQ(makeIter(12, 4, 0, PartialBatch::Drop).batchesPerEpoch(), int64_t(3));
  // Fewer examples than a batch: pad wraps around, drop refuses.
  BatchIterator tiny = makeIter(3, 8, 0, PartialBatch::Pad, false);
  Batch t = tiny.next();
  CHECK_EQ(t.realRows, int64_t(3));
  CHECK(t.indices == std::vector<int64_t>({0, 1, 2, 0, 1, 2, 0, 1}));
  CHECK(t.lastOfEpoch);
  BatchIteratorOptions o;
  o.batchSize = 8;
  o.partial = PartialBatch::Drop;
  CHECK_ERR(BatchIterator::create(3, o), "a dataset of 3 examples has no full batch of 8");
  o.batchSize = 0;
  CHECK_ERR(BatchIterator::create(3, o), "batch size must be >= 1");
  o.batchSize = 1;
  CHECK_ERR(BatchIterator::create(0, o), "no examples");
}

TEST(iterator, resume_is_identical) {
  for (PartialBatch policy : {PartialBatch::Pad, PartialBatch::Drop}) {
    const int64_t n = 1003, batch = 64;
    BatchIterator ref = makeIter(n, batch, 77, policy);
    int64_t perEpoch = ref.batchesPerEpoch();
    int64_t total = perEpoch * 5 / 2; // 2.5 epochs
    std::vector<Batch> all;
    std::vector<std::string> positions; // position before batch k
    for (int64_t k = 0; k < total; ++k) {
      positions.push_back(ref.position());
      all.push_back(ref.next());
    }
    // Restore at several points: the start, mid-epoch, an epoch boundary,
    // the last batch of an epoch, the middle of the third epoch.
    for (int64_t k : {int64_t(0), perEpoch / 2, perEpoch, perEpoch - 1, total / 2,
                      perEpoch * 2 + 3}) {
      BatchIterator resumed = makeIter(n, batch, 77, policy);
      // Through a checkpoint's metadata, as lpc-run will do it.
      std::string ck = tmp("resume.safetensors");
      CHECK_OK(writeSafetensors(ck, std::map<std::string, Tensor>{},
                                {{"data.position", positions[static_cast<size_t>(k)]}}));
      Expected<SafetensorsHeader> h = readSafetensorsHeader(ck);
      CHECK_OK(h);
      if (!h)
        continue;
      CHECK_OK(resumed.restore(h->metadata.at("data.position")));
      for (int64_t j = k; j < total; ++j) {
        Batch b = resumed.next();
        const Batch &want = all[static_cast<size_t>(j)];
        CHECK(b.indices == want.indices);
        CHECK_EQ(b.realRows, want.realRows);
        CHECK_EQ(b.epoch, want.epoch);
        CHECK_EQ(b.indexInEpoch, want.indexInEpoch);
      }
    }
  }
}

TEST(iterator, position_errors) {
  BatchIterator it = makeIter(100, 10, 5, PartialBatch::Pad);
  it.next();
  std::string pos = it.position();
  CHECK_EQ(pos, std::string("batches-v1;examples=100;batch=10;partial=pad;shuffle=1;seed=5;"
                            "epoch=0;index=1"));
  BatchIterator a = makeIter(101, 10, 5, PartialBatch::Pad);
  CHECK_ERR(a.restore(pos), "data position: was taken with a dataset of 100 examples, this run "
                            "has 101 examples");
  BatchIterator b = makeIter(100, 20, 5, PartialBatch::Pad);
  CHECK_ERR(b.restore(pos), "batch size 10, this run has 20");
  BatchIterator c = makeIter(100, 10, 6, PartialBatch::Pad);
  CHECK_ERR(c.restore(pos), "seed 5, this run has 6");
  BatchIterator d = makeIter(100, 10, 5, PartialBatch::Drop);
  CHECK_ERR(d.restore(pos), "last-batch policy pad, this run has drop");
  BatchIterator e = makeIter(100, 10, 5, PartialBatch::Pad, false);
  CHECK_ERR(e.restore(pos), "shuffle 1, this run has 0");
  BatchIterator f = makeIter(100, 10, 5, PartialBatch::Pad);
  CHECK_ERR(f.restore("garbage"), "does not start with 'batches-v1;'");
  CHECK_ERR(f.restore("batches-v1;examples=100"), "lacks 'batch'");
  CHECK_ERR(f.restore(pos + ";extra=1"), "unknown key 'extra'");
  CHECK_ERR(f.restore(pos + ";seed=5"), "key 'seed' appears twice");
  CHECK_ERR(f.restore("batches-v1;examples=100;batch=10;partial=pad;shuffle=1;seed=5;epoch=x;"
                      "index=1"),
            "'epoch=x' is not a non-negative integer");
  CHECK_ERR(f.restore("batches-v1;examples=100;batch=10;partial=pad;shuffle=1;seed=5;epoch=0;"
                      "index=10"),
            "batch index 10 is beyond the 10 batches of an epoch");
  CHECK_ERR(f.restore("batches-v1;examples=100;batch=10;partial=half;shuffle=1;seed=5;epoch=0;"
                      "index=1"),
            "neither pad nor drop");
  // A failed restore leaves the position alone.
  CHECK_EQ(f.epoch(), int64_t(0));
  CHECK_EQ(f.indexInEpoch(), int64_t(0));
}

//===----------------------------------------------------------------------===//
// random
//===----------------------------------------------------------------------===//

TEST(random, known_answers) {
  Rng r;
  CHECK_OK(r.setState("xoshiro256**:0000000000000001000000000000000200000000000000030000000000000004"));
  // Published xoshiro256** outputs for the state {1, 2, 3, 4}.
  CHECK_EQ(r.next(), uint64_t(11520));
  CHECK_EQ(r.next(), uint64_t(0));
  CHECK_EQ(r.next(), uint64_t(1509978240));
  CHECK_EQ(r.next(), uint64_t(1215971899390074240ULL));
  // Seeding through splitmix64 (values from an independent Python model).
  Rng s(42);
  CHECK_EQ(s.next(), uint64_t(0x15780b2e0c2ec716ULL));
  CHECK_EQ(s.next(), uint64_t(0x6104d9866d113a7eULL));
  CHECK_EQ(splitmix64(0), uint64_t(0xe220a8397b1dcdafULL));
  CHECK_EQ(mixSeed(7, 3), uint64_t(0x6baa78681a99f995ULL));
}

TEST(random, state_and_distributions) {
  Rng a(5);
  for (int i = 0; i < 10; ++i)
    a.next();
  std::string st = a.state();
  Rng b(0);
  CHECK_OK(b.setState(st));
  CHECK(a == b);
  CHECK_EQ(a.next(), b.next());
  CHECK_ERR(b.setState("xoshiro256**:00"), "64 hex digits");
  CHECK_ERR(b.setState("xoshiro256**:" + std::string(64, '0')), "all-zero");
  CHECK_ERR(b.setState("xoshiro256**:" + std::string(63, '0') + "G"), "hex digits");
  // below(): in range and roughly uniform.
  Rng r(9);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) {
    uint64_t v = r.below(7);
    CHECK(v < 7);
    ++counts[static_cast<size_t>(std::min<uint64_t>(v, 6))];
  }
  for (int c : counts)
    CHECK(c > 9500 && c < 10500);
  CHECK_EQ(r.below(1), uint64_t(0));
  double sum = 0, sumsq = 0;
  for (int i = 0; i < 100000; ++i) {
    double u = r.uniform();
    CHECK(u >= 0.0 && u < 1.0);
    double g = r.normal();
    sum += g;
    sumsq += g * g;
  }
  CHECK(std::fabs(sum / 1e5) < 0.02);
  CHECK(std::fabs(sumsq / 1e5 - 1.0) < 0.02);
}
