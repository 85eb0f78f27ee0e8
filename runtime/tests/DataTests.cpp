// DataTests.cpp - tests of the data loaders: IDX, Fashion-MNIST, synthetic data, byte corpus (groups idx, fashion-mnist, synthetic, corpus).

#include "TestHarness.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
void putBE32(std::vector<uint8_t> &v, uint32_t x) {
  v.push_back(uint8_t(x >> 24));
  v.push_back(uint8_t(x >> 16));
  v.push_back(uint8_t(x >> 8));
  v.push_back(uint8_t(x));
}

std::vector<uint8_t> idxImages(uint32_t count, uint32_t rows, uint32_t cols, uint8_t seed = 0) {
  std::vector<uint8_t> v;
  putBE32(v, kIdxImagesMagic);
  putBE32(v, count);
  putBE32(v, rows);
  putBE32(v, cols);
  for (uint64_t i = 0; i < uint64_t(count) * rows * cols; ++i)
    v.push_back(uint8_t(i * 7 + seed));
  return v;
}
std::vector<uint8_t> idxLabels(const std::vector<uint8_t> &labels) {
  std::vector<uint8_t> v;
  putBE32(v, kIdxLabelsMagic);
  putBE32(v, uint32_t(labels.size()));
  v.insert(v.end(), labels.begin(), labels.end());
  return v;
}
} // namespace

//===----------------------------------------------------------------------===//
// idx
//===----------------------------------------------------------------------===//

TEST(idx, read_plain_and_gzip) {
  std::vector<uint8_t> img = idxImages(3, 2, 4);
  std::vector<uint8_t> lab = idxLabels({7, 0, 9});
  writeBytes(tmp("img.idx"), img);
  writeBytes(tmp("lab.idx"), lab);
  Expected<IdxImages> images = readIdxImages(tmp("img.idx"));
  CHECK_OK(images);
  if (images) {
    CHECK_EQ(images->count, int64_t(3));
    CHECK_EQ(images->rows, int64_t(2));
    CHECK_EQ(images->cols, int64_t(4));
    CHECK(images->pixels == std::vector<uint8_t>(img.begin() + 16, img.end()));
  }
  Expected<std::vector<uint8_t>> labels = readIdxLabels(tmp("lab.idx"));
  CHECK(labels && *labels == std::vector<uint8_t>({7, 0, 9}));
#ifdef LPC_RUNTIME_HAVE_ZLIB
  writeBytes(tmp("img.idx.gz"), gzipBytes(img));
  writeBytes(tmp("lab.idx.gz"), gzipBytes(lab));
  Expected<IdxImages> gz = readIdxImages(tmp("img.idx.gz"));
  CHECK_OK(gz);
  CHECK(gz && images && gz->pixels == images->pixels);
  Expected<std::vector<uint8_t>> gzl = readIdxLabels(tmp("lab.idx.gz"));
  CHECK(gzl && *gzl == std::vector<uint8_t>({7, 0, 9}));
  // Two gzip members (cat a.gz b.gz) read as one stream.
  std::vector<uint8_t> half1(lab.begin(), lab.begin() + 5), half2(lab.begin() + 5, lab.end());
  std::vector<uint8_t> two = gzipBytes(half1), second = gzipBytes(half2);
  two.insert(two.end(), second.begin(), second.end());
  writeBytes(tmp("lab2.idx.gz"), two);
  Expected<std::vector<uint8_t>> twol = readIdxLabels(tmp("lab2.idx.gz"));
  CHECK_OK(twol);
  CHECK(twol && *twol == std::vector<uint8_t>({7, 0, 9}));
#else
  writeBytes(tmp("fake.gz"), {0x1f, 0x8b, 8, 0});
  CHECK_ERR(readIdxLabels(tmp("fake.gz")), "built without zlib");
#endif
}

TEST(idx, errors) {
  std::vector<uint8_t> img = idxImages(3, 2, 4);
  std::vector<uint8_t> lab = idxLabels({7, 0, 9});
  auto images = [&](const std::string &name, const std::vector<uint8_t> &bytes) {
    writeBytes(tmp(name), bytes);
    return readIdxImages(tmp(name));
  };
  auto labels = [&](const std::string &name, const std::vector<uint8_t> &bytes) {
    writeBytes(tmp(name), bytes);
    return readIdxLabels(tmp(name));
  };
  CHECK_ERR(images("e1", {0, 0}), "e1: truncated: 2 bytes, shorter than the 4-byte IDX magic");
  CHECK_ERR(images("e2", lab), "e2: wrong IDX magic 0x00000801 (an IDX label file); expected "
                               "0x00000803 (u8 images [N, rows, cols])");
  CHECK_ERR(labels("e3", img), "wrong IDX magic 0x00000803 (an IDX image file); expected 0x00000801");
  CHECK_ERR(images("e4", {'P', 'K', 3, 4, 0, 0}), "wrong IDX magic 0x504b0304 (not an IDX file)");
  CHECK_ERR(images("e5", {0, 0, 0x0D, 3, 0, 0, 0, 1}), "(an IDX file of a non-u8 element type)");
  CHECK_ERR(images("e6", {0, 0, 8, 3, 0, 0, 0, 1}),
            "truncated: the IDX header needs 16 bytes, the file has 8");
  std::vector<uint8_t> cut(img.begin(), img.end() - 5);
  CHECK_ERR(images("e7", cut), "truncated: 3 images of 2x4 need 24 bytes of data, the file has 19");
  std::vector<uint8_t> longer = img;
  longer.push_back(0);
  CHECK_ERR(images("e8", longer), "1 unexpected bytes after the 3 images of 2x4");
  CHECK_ERR(images("e9", idxImages(0, 28, 28)), "holds no images");
  CHECK_ERR(images("e10", idxImages(3, 0, 28)), "has images of size 0x28");
  std::vector<uint8_t> huge = idxImages(1, 1, 1);
  huge[4] = huge[5] = huge[8] = huge[12] = 0xFF; // ~4e9 images of ~1.6e7 x 1.6e7
  CHECK_ERR(images("e11", huge), "truncated");
  std::vector<uint8_t> labCut(lab.begin(), lab.end() - 1);
  CHECK_ERR(labels("e12", labCut), "truncated: 3 labels need 3 bytes of data, the file has 2");
  CHECK_ERR(labels("e13", idxLabels({})), "holds no labels");
  CHECK_ERR(readIdxImages(tmp("missing.idx")), "missing.idx: cannot open", "No such file");
  CHECK_ERR(readIdxImages(gTempDir), "is a directory");
#ifdef LPC_RUNTIME_HAVE_ZLIB
  std::vector<uint8_t> gz = gzipBytes(img);
  std::vector<uint8_t> gzCut(gz.begin(), gz.begin() + gz.size() / 2);
  CHECK_ERR(images("e14.gz", gzCut), "e14.gz: truncated gzip file");
  std::vector<uint8_t> gzBad = gz;
  for (size_t i = 12; i < gzBad.size() - 8; ++i)
    gzBad[i] ^= 0x5A;
  CHECK_ERR(images("e15.gz", gzBad), "e15.gz: corrupt gzip file");
  std::vector<uint8_t> gzCrc = gz;
  gzCrc[gzCrc.size() - 6] ^= 1; // CRC-32 trailer
  CHECK_ERR(images("e16.gz", gzCrc), "corrupt gzip file", "incorrect data check");
  std::vector<uint8_t> gzJunk = gz;
  gzJunk.push_back('x');
  gzJunk.push_back('y');
  gzJunk.push_back('z');
  CHECK_ERR(images("e17.gz", gzJunk), "3 bytes of trailing garbage");
#endif
}

TEST(idx, classification_dataset) {
  writeBytes(tmp("ci.idx"), idxImages(4, 2, 2));
  writeBytes(tmp("cl.idx"), idxLabels({1, 0, 2, 1}));
  writeBytes(tmp("cl3.idx"), idxLabels({1, 0, 2}));
  writeBytes(tmp("clbad.idx"), idxLabels({1, 0, 12, 1}));
  Expected<ClassificationDataset> ds =
      loadIdxClassification(tmp("ci.idx"), tmp("cl.idx"), 3, kFashionMnistNormalization, "tiny");
  CHECK_OK(ds);
  if (ds) {
    CHECK_EQ(ds->numExamples, int64_t(4));
    CHECK_EQ(ds->featureSize, int64_t(4));
    CHECK(ds->exampleShape == std::vector<int64_t>({2, 2}));
    CHECK(ds->labels == std::vector<int32_t>({1, 0, 2, 1}));
    // Pixel i is (i * 7) & 0xFF; normalization (x / 255 - 0.2860) / 0.3530.
    for (int i = 0; i < 16; ++i) {
      float want = (static_cast<float>((i * 7) & 0xFF) / 255.0f - 0.2860f) / 0.3530f;
      CHECK_EQ(ds->features[static_cast<size_t>(i)], want);
    }
    std::pair<Tensor, Tensor> batch = ds->gather({3, 0, 3});
    CHECK(batch.first.shape == std::vector<int64_t>({3, 4}));
    CHECK(batch.second.dtype == DType::I32);
    CHECK_EQ(batch.second.data<int32_t>()[0], 1);
    CHECK_EQ(batch.first.data<float>()[4], ds->features[0]);
    CHECK_EQ(batch.first.data<float>()[11], ds->features[15]);
  }
  CHECK_ERR(loadIdxClassification(tmp("ci.idx"), tmp("cl3.idx"), 3, {}, "tiny"),
            "tiny: 4 images in", "but 3 labels in");
  CHECK_ERR(loadIdxClassification(tmp("ci.idx"), tmp("clbad.idx"), 10, {}, "tiny"),
            "clbad.idx: label 12 of example 2 is out of range [0, 10)");
}

TEST(idx, fashion_mnist_layout) {
  // A fake Fashion-MNIST directory: gzipped and plain files both found.
  std::string dir = tmp("fmnist");
  ::mkdir(dir.c_str(), 0755);
  CHECK_ERR(findFashionMnist(dir), "Fashion-MNIST not found: no train-images-idx3-ubyte[.gz] in",
            dir.c_str());
  Expected<FashionMnistPaths> missing = findFashionMnist(dir);
  CHECK(!missing && missing.error().message().find("apt-get") == std::string::npos);
  writeBytes(dir + "/train-images-idx3-ubyte", idxImages(5, 28, 28));
  writeBytes(dir + "/train-labels-idx1-ubyte", idxLabels({0, 1, 2, 3, 9}));
  writeBytes(dir + "/t10k-images-idx3-ubyte", idxImages(2, 28, 27));
  CHECK_ERR(findFashionMnist(dir), "no t10k-labels-idx1-ubyte[.gz]");
  writeBytes(dir + "/t10k-labels-idx1-ubyte", idxLabels({4, 5}));
  Expected<FashionMnistPaths> paths = findFashionMnist(dir);
  CHECK_OK(paths);
  if (paths)
    CHECK_EQ(paths->trainImages, dir + "/train-images-idx3-ubyte");
  Expected<ClassificationDataset> train = loadFashionMnist(Split::Train, dir);
  CHECK_OK(train);
  if (train) {
    CHECK_EQ(train->numExamples, int64_t(5));
    CHECK_EQ(train->featureSize, int64_t(784));
    CHECK_EQ(train->numClasses, int64_t(10));
  }
  CHECK_ERR(loadFashionMnist(Split::Test, dir), "Fashion-MNIST images must be 28x28, these are 28x27");
#ifdef LPC_RUNTIME_HAVE_ZLIB
  writeBytes(dir + "/train-labels-idx1-ubyte.gz", gzipBytes(idxLabels({0, 1, 2, 3, 9})));
  paths = findFashionMnist(dir);
  CHECK(paths && paths->trainLabels == dir + "/train-labels-idx1-ubyte.gz");
#endif
  if (!isRegularFile(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz") &&
      !isRegularFile(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte"))
    CHECK_ERR(findFashionMnist(), "apt-get install dataset-fashion-mnist");
}

//===----------------------------------------------------------------------===//
// fashion-mnist (the real data, when Debian's package is installed)
//===----------------------------------------------------------------------===//

TEST(fashion_mnist, real_data) {
  Expected<FashionMnistPaths> paths = findFashionMnist();
  if (!paths)
    SKIP(paths.error().message());
  Expected<ClassificationDataset> train = loadFashionMnist(Split::Train);
  CHECK_OK(train);
  if (!train)
    return;
  CHECK_EQ(train->numExamples, int64_t(60000));
  CHECK_EQ(train->featureSize, int64_t(784));
  CHECK_EQ(train->features.size(), size_t(60000 * 784));
  std::vector<int64_t> histogram(10, 0);
  for (int32_t l : train->labels)
    ++histogram[static_cast<size_t>(l)];
  for (int c = 0; c < 10; ++c)
    CHECK_EQ(histogram[static_cast<size_t>(c)], int64_t(6000));
  CHECK_EQ(train->labels[0], 9); // the first training image is an ankle boot
  // Normalized with the training-set statistics: mean ~0, std ~1.
  double sum = 0, sumsq = 0;
  for (float f : train->features) {
    sum += f;
    sumsq += double(f) * f;
  }
  double n = static_cast<double>(train->features.size());
  double mean = sum / n, stdev = std::sqrt(sumsq / n - mean * mean);
  CHECK(std::fabs(mean) < 1e-3);
  CHECK(std::fabs(stdev - 1.0) < 1e-3);
  Expected<ClassificationDataset> test = loadFashionMnist(Split::Test);
  CHECK_OK(test);
  if (test) {
    CHECK_EQ(test->numExamples, int64_t(10000));
    std::vector<int64_t> h(10, 0);
    for (int32_t l : test->labels)
      ++h[static_cast<size_t>(l)];
    CHECK(std::all_of(h.begin(), h.end(), [](int64_t c) { return c == 1000; }));
  }
}

//===----------------------------------------------------------------------===//
// synthetic
//===----------------------------------------------------------------------===//

TEST(synthetic, shapes_and_determinism) {
  SyntheticOptions o;
  o.numExamples = 500;
  o.features = 12;
  o.classes = 5;
  o.seed = 3;
  Expected<ClassificationDataset> a = makeSyntheticClassification(o);
  Expected<ClassificationDataset> b = makeSyntheticClassification(o);
  CHECK_OK(a);
  if (!a || !b)
    return;
  CHECK_EQ(a->features.size(), size_t(500 * 12));
  CHECK_EQ(a->labels.size(), size_t(500));
  CHECK(a->features == b->features && a->labels == b->labels);
  std::vector<int> h(5, 0);
  for (int32_t l : a->labels) {
    CHECK(l >= 0 && l < 5);
    ++h[static_cast<size_t>(std::clamp(l, 0, 4))];
  }
  for (int c : h)
    CHECK(c > 25); // every class is well represented
  double sum = 0, sumsq = 0;
  for (float f : a->features) {
    sum += f;
    sumsq += double(f) * f;
  }
  double mean = sum / 6000.0, var = sumsq / 6000.0 - mean * mean;
  CHECK(std::fabs(mean) < 0.05);
  CHECK(std::fabs(var - 1.0) < 0.06);
  o.seed = 4;
  Expected<ClassificationDataset> c = makeSyntheticClassification(o);
  CHECK(c && c->features != a->features);
  o.seed = 3;
  Expected<ClassificationDataset> test = makeSyntheticClassification(o, Split::Test);
  CHECK(test && test->features != a->features);
  o.classes = 1;
  CHECK_ERR(makeSyntheticClassification(o), "classes >= 2");
}

TEST(synthetic, learnable) {
  // Softmax regression trained on the train split reaches high accuracy on
  // the test split: the teacher is shared and linear.
  SyntheticOptions o;
  o.numExamples = 2000;
  o.features = 16;
  o.classes = 4;
  o.seed = 11;
  Expected<ClassificationDataset> train = makeSyntheticClassification(o, Split::Train);
  o.numExamples = 1000;
  Expected<ClassificationDataset> test = makeSyntheticClassification(o, Split::Test);
  CHECK_OK(train);
  CHECK_OK(test);
  if (!train || !test)
    return;
  const int F = 16, C = 4;
  std::vector<double> w(F * C, 0.0);
  auto logits = [&](const float *x, double *z) {
    for (int c = 0; c < C; ++c) {
      z[c] = 0;
      for (int f = 0; f < F; ++f)
        z[c] += w[f * C + c] * x[f];
    }
  };
  for (int epoch = 0; epoch < 20; ++epoch)
    for (int64_t i = 0; i < train->numExamples; ++i) {
      const float *x = train->features.data() + i * F;
      double z[C], p[C], zmax = -1e300, sum = 0;
      logits(x, z);
      for (int c = 0; c < C; ++c)
        zmax = std::max(zmax, z[c]);
      for (int c = 0; c < C; ++c)
        sum += (p[c] = std::exp(z[c] - zmax));
      for (int c = 0; c < C; ++c) {
        double g = p[c] / sum - (c == train->labels[static_cast<size_t>(i)] ? 1.0 : 0.0);
        for (int f = 0; f < F; ++f)
          w[f * C + c] -= 0.05 * g * x[f];
      }
    }
  int correct = 0;
  for (int64_t i = 0; i < test->numExamples; ++i) {
    double z[C];
    logits(test->features.data() + i * F, z);
    int best = static_cast<int>(std::max_element(z, z + C) - z);
    correct += best == test->labels[static_cast<size_t>(i)];
  }
  double accuracy = correct / 1000.0;
  std::printf("  synthetic: softmax regression test accuracy %.3f (chance 0.25)\n", accuracy);
  CHECK(accuracy > 0.9);
}

//===----------------------------------------------------------------------===//
// corpus
//===----------------------------------------------------------------------===//

TEST(corpus, batches) {
  std::string text;
  for (int i = 0; i < 3000; ++i)
    text += static_cast<char>((i * 37 + i / 7) & 0xFF); // all byte values
  std::string path = tmp("corpus.bin");
  writeText(path, text);
  Expected<CharCorpus> corpus = loadCharCorpus(path);
  CHECK_OK(corpus);
  if (!corpus)
    return;
  CHECK_EQ(corpus->bytes.size(), size_t(3000));
  Expected<CorpusSampler> s = CorpusSampler::create(*corpus, 4, 64, 5);
  CHECK_OK(s);
  if (!s)
    return;
  bool sawHigh = false;
  std::set<int> starts;
  for (int step = 0; step < 50; ++step) {
    std::pair<Tensor, Tensor> b = s->next();
    CHECK(b.first.dtype == DType::I32 && b.first.shape == std::vector<int64_t>({4, 64}));
    CHECK(b.second.shape == std::vector<int64_t>({4, 64}));
    const int32_t *tok = b.first.data<int32_t>(), *tgt = b.second.data<int32_t>();
    for (int r = 0; r < 4; ++r) {
      // Each row is a window of the text; targets are the next bytes.
      std::string row;
      for (int t = 0; t < 64; ++t) {
        CHECK(tok[r * 64 + t] >= 0 && tok[r * 64 + t] < kCharVocabSize);
        sawHigh |= tok[r * 64 + t] >= 128;
        row += static_cast<char>(tok[r * 64 + t]);
        if (t + 1 < 64)
          CHECK_EQ(tgt[r * 64 + t], tok[r * 64 + t + 1]);
      }
      size_t at = text.find(row);
      CHECK(at != std::string::npos && at + 64 < text.size());
      if (at != std::string::npos && at + 64 < text.size()) {
        CHECK_EQ(tgt[r * 64 + 63], int32_t(static_cast<uint8_t>(text[at + 64])));
        starts.insert(static_cast<int>(at));
      }
    }
  }
  CHECK(sawHigh);
  CHECK(starts.size() > 150); // windows are spread over the text
  CHECK_EQ(s->step(), uint64_t(50));
}

TEST(corpus, resume_and_errors) {
  CharCorpus corpus = makeCharCorpus("mem", std::string(1000, 'a') + "the quick brown fox");
  Expected<CorpusSampler> a = CorpusSampler::create(corpus, 2, 16, 9);
  CHECK_OK(a);
  if (!a)
    return;
  std::vector<int32_t> t1(32), y1(32), t2(32), y2(32);
  for (int i = 0; i < 7; ++i)
    a->next(t1.data(), y1.data());
  std::string pos = a->position();
  CHECK_EQ(pos.substr(0, 20), std::string("corpus-v1;bytes=1019"));
  std::vector<std::vector<int32_t>> cont;
  for (int i = 0; i < 5; ++i) {
    a->next(t1.data(), y1.data());
    cont.push_back(t1);
  }
  Expected<CorpusSampler> b = CorpusSampler::create(corpus, 2, 16, 9);
  CHECK_OK(b->restore(pos));
  for (int i = 0; i < 5; ++i) {
    b->next(t2.data(), y2.data());
    CHECK(t2 == cont[static_cast<size_t>(i)]);
  }
  CharCorpus other = makeCharCorpus("other", std::string(1000, 'b') + "the quick brown fox");
  Expected<CorpusSampler> c = CorpusSampler::create(other, 2, 16, 9);
  CHECK_ERR(c->restore(pos), "corpus position: was taken on another text");
  Expected<CorpusSampler> d = CorpusSampler::create(corpus, 3, 16, 9);
  CHECK_ERR(d->restore(pos), "was taken with batch size 2, this run has 3");
  Expected<CorpusSampler> e = CorpusSampler::create(corpus, 2, 16, 10);
  CHECK_ERR(e->restore(pos), "was taken with seed 9, this run has 10");
  CHECK_ERR(b->restore("corpus-v1;bytes=1019"), "lacks 'fnv1a'");
  CHECK_ERR(b->restore("batches-v1;x=1"), "does not start with 'corpus-v1;'");
  CHECK_ERR(CorpusSampler::create(corpus, 2, 1019, 0), "has 1019 bytes; sequences of 1019 need at least 1020");
  CHECK_OK(CorpusSampler::create(corpus, 2, 1018, 0));
  writeText(tmp("empty.txt"), "");
  CHECK_ERR(loadCharCorpus(tmp("empty.txt")), "empty.txt: is empty");
  CHECK_ERR(loadCharCorpus(tmp("nope.txt")), "nope.txt: cannot open");
  std::pair<CharCorpus, CharCorpus> split = splitCharCorpus(corpus, 0.1);
  CHECK_EQ(split.first.bytes.size() + split.second.bytes.size(), corpus.bytes.size());
  CHECK_EQ(split.second.bytes.size(), size_t(101));
  CHECK(std::string(split.second.bytes.end() - 3, split.second.bytes.end()) == "fox");
}
