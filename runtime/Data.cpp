//===- Data.cpp - IDX / Fashion-MNIST, synthetic data, text corpus ----------===//

#include "lpc/Runtime/Data.h"

#include "Position.h"
#include "lpc/Runtime/File.h"
#include "lpc/Runtime/Random.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>

namespace lpc {
namespace rt {

//===----------------------------------------------------------------------===//
// IDX
//===----------------------------------------------------------------------===//

namespace {
uint32_t readBE32(const uint8_t *p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

/// What a magic number probably is, for the wrong-magic message.
std::string describeMagic(uint32_t magic) {
  if (magic == kIdxImagesMagic)
    return " (an IDX image file)";
  if (magic == kIdxLabelsMagic)
    return " (an IDX label file)";
  if ((magic >> 16) == 0x1f8b)
    return " (a gzip file that could not be decompressed)";
  if ((magic >> 16) == 0 && ((magic >> 8) & 0xFF) != 0x08)
    return " (an IDX file of a non-u8 element type)";
  if ((magic >> 16) == 0)
    return " (a u8 IDX file with " + std::to_string(magic & 0xFF) + " dimensions)";
  return " (not an IDX file)";
}

/// Reads a u8 IDX file with `ndims` dimensions; returns the dims and leaves
/// the data (after the header) in `data` from `dataOffset`.
Expected<std::vector<int64_t>> readIdxHeader(const std::vector<uint8_t> &file, uint32_t magic,
                                             const char *expected, const std::string &path) {
  if (file.size() < 4)
    return makeError(path, "truncated: " + std::to_string(file.size()) +
                               " bytes, shorter than the 4-byte IDX magic");
  uint32_t got = readBE32(file.data());
  if (got != magic)
    return makeError(path, "wrong IDX magic " + hex32(got) + describeMagic(got) + "; expected " +
                               hex32(magic) + " (" + expected + ")");
  size_t ndims = magic & 0xFF;
  size_t headerSize = 4 + 4 * ndims;
  if (file.size() < headerSize)
    return makeError(path, "truncated: the IDX header needs " + std::to_string(headerSize) +
                               " bytes, the file has " + std::to_string(file.size()));
  std::vector<int64_t> dims;
  for (size_t i = 0; i < ndims; ++i)
    dims.push_back(static_cast<int64_t>(readBE32(file.data() + 4 + 4 * i)));
  return dims;
}

Error checkIdxData(const std::vector<uint8_t> &file, size_t headerSize, uint64_t need,
                   const std::string &what, const std::string &path) {
  uint64_t have = file.size() - headerSize;
  if (have < need)
    return makeError(path, "truncated: " + what + " need " + std::to_string(need) +
                               " bytes of data, the file has " + std::to_string(have));
  if (have > need)
    return makeError(path, std::to_string(have - need) + " unexpected bytes after the " + what +
                               " (wrong header?)");
  return Error::success();
}
} // namespace

Expected<IdxImages> readIdxImages(const std::string &path) {
  Expected<std::vector<uint8_t>> file = readFileMaybeGzip(path);
  if (!file)
    return file.takeError();
  Expected<std::vector<int64_t>> dims =
      readIdxHeader(*file, kIdxImagesMagic, "u8 images [N, rows, cols]", path);
  if (!dims)
    return dims.takeError();
  IdxImages images;
  images.count = (*dims)[0];
  images.rows = (*dims)[1];
  images.cols = (*dims)[2];
  std::string sizes = std::to_string(images.count) + " images of " +
                      std::to_string(images.rows) + "x" + std::to_string(images.cols);
  if (images.count == 0)
    return makeError(path, "holds no images");
  if (images.rows == 0 || images.cols == 0)
    return makeError(path, "has images of size " + std::to_string(images.rows) + "x" +
                               std::to_string(images.cols));
  uint64_t pixelsPerImage = uint64_t(images.rows) * uint64_t(images.cols); // < 2^64
  if (uint64_t(images.count) > UINT64_MAX / pixelsPerImage)
    return makeError(path, "truncated: " + sizes + " is more data than any file holds");
  if (Error e = checkIdxData(*file, 16, uint64_t(images.count) * pixelsPerImage, sizes, path))
    return e;
  images.pixels.assign(file->begin() + 16, file->end());
  return images;
}

Expected<std::vector<uint8_t>> readIdxLabels(const std::string &path) {
  Expected<std::vector<uint8_t>> file = readFileMaybeGzip(path);
  if (!file)
    return file.takeError();
  Expected<std::vector<int64_t>> dims = readIdxHeader(*file, kIdxLabelsMagic, "u8 labels [N]", path);
  if (!dims)
    return dims.takeError();
  uint64_t count = uint64_t((*dims)[0]);
  if (count == 0)
    return makeError(path, "holds no labels");
  if (Error e = checkIdxData(*file, 8, count, std::to_string(count) + " labels", path))
    return e;
  return std::vector<uint8_t>(file->begin() + 8, file->end());
}

//===----------------------------------------------------------------------===//
// Classification datasets
//===----------------------------------------------------------------------===//

void ClassificationDataset::gather(const std::vector<int64_t> &indices, float *featuresOut,
                                   int32_t *labelsOut) const {
  for (size_t r = 0; r < indices.size(); ++r) {
    int64_t i = indices[r];
    assert(i >= 0 && i < numExamples && "example index out of range");
    std::memcpy(featuresOut + r * featureSize, features.data() + i * featureSize,
                sizeof(float) * static_cast<size_t>(featureSize));
    labelsOut[r] = labels[static_cast<size_t>(i)];
  }
}

std::pair<Tensor, Tensor> ClassificationDataset::gather(const std::vector<int64_t> &indices) const {
  int64_t b = static_cast<int64_t>(indices.size());
  Tensor x(DType::F32, {b, featureSize});
  Tensor y(DType::I32, {b});
  gather(indices, x.data<float>(), y.data<int32_t>());
  return {std::move(x), std::move(y)};
}

Expected<ClassificationDataset> loadIdxClassification(const std::string &imagesPath,
                                                      const std::string &labelsPath,
                                                      int64_t numClasses, ImageNormalization norm,
                                                      const std::string &name) {
  Expected<IdxImages> images = readIdxImages(imagesPath);
  if (!images)
    return images.takeError();
  Expected<std::vector<uint8_t>> labels = readIdxLabels(labelsPath);
  if (!labels)
    return labels.takeError();
  if (static_cast<int64_t>(labels->size()) != images->count)
    return makeError(name, std::to_string(images->count) + " images in " + imagesPath + " but " +
                               std::to_string(labels->size()) + " labels in " + labelsPath);
  if (!(norm.std > 0.0f) || !std::isfinite(norm.mean))
    return makeError(name, "invalid normalization (std must be > 0)");
  ClassificationDataset ds;
  ds.name = name;
  ds.numExamples = images->count;
  ds.exampleShape = {images->rows, images->cols};
  ds.featureSize = images->rows * images->cols;
  ds.numClasses = numClasses;
  for (size_t i = 0; i < labels->size(); ++i)
    if ((*labels)[i] >= numClasses)
      return makeError(labelsPath, "label " + std::to_string((*labels)[i]) + " of example " +
                                       std::to_string(i) + " is out of range [0, " +
                                       std::to_string(numClasses) + ")");
  ds.labels.assign(labels->begin(), labels->end());
  float table[256];
  for (int v = 0; v < 256; ++v)
    table[v] = (static_cast<float>(v) / 255.0f - norm.mean) / norm.std;
  ds.features.resize(images->pixels.size());
  for (size_t i = 0; i < images->pixels.size(); ++i)
    ds.features[i] = table[images->pixels[i]];
  return ds;
}

namespace {
/// The first existing of `dir/base.gz`, `dir/base`; empty if neither.
std::string findIdx(const std::string &dir, const std::string &base) {
  for (const std::string &candidate : {dir + "/" + base + ".gz", dir + "/" + base})
    if (isRegularFile(candidate))
      return candidate;
  return "";
}
} // namespace

Expected<FashionMnistPaths> findFashionMnist(const std::string &dir) {
  FashionMnistPaths p;
  struct Want {
    std::string *out;
    const char *base;
  } wants[] = {{&p.trainImages, "train-images-idx3-ubyte"},
               {&p.trainLabels, "train-labels-idx1-ubyte"},
               {&p.testImages, "t10k-images-idx3-ubyte"},
               {&p.testLabels, "t10k-labels-idx1-ubyte"}};
  for (const Want &w : wants) {
    *w.out = findIdx(dir, w.base);
    if (w.out->empty()) {
      std::string msg = "Fashion-MNIST not found: no " + std::string(w.base) + "[.gz] in " + dir;
      if (dir == kFashionMnistDir)
        msg += " (install it with `apt-get install dataset-fashion-mnist`, or give the "
               "directory that holds the IDX files)";
      return Error::make(msg);
    }
  }
  return p;
}

Expected<ClassificationDataset> loadFashionMnist(Split split, const std::string &dir) {
  Expected<FashionMnistPaths> paths = findFashionMnist(dir);
  if (!paths)
    return paths.takeError();
  bool train = split == Split::Train;
  std::string name = train ? "fashion-mnist train" : "fashion-mnist test";
  Expected<ClassificationDataset> ds =
      loadIdxClassification(train ? paths->trainImages : paths->testImages,
                            train ? paths->trainLabels : paths->testLabels, 10,
                            kFashionMnistNormalization, name);
  if (!ds)
    return ds;
  if (ds->exampleShape != std::vector<int64_t>{28, 28})
    return makeError(train ? paths->trainImages : paths->testImages,
                     "Fashion-MNIST images must be 28x28, these are " +
                         std::to_string(ds->exampleShape[0]) + "x" +
                         std::to_string(ds->exampleShape[1]));
  return ds;
}

Expected<ClassificationDataset> makeSyntheticClassification(const SyntheticOptions &o,
                                                            Split split) {
  if (o.numExamples < 1 || o.features < 1 || o.classes < 2)
    return Error::make("synthetic data: need examples >= 1, features >= 1 and classes >= 2 "
                       "(got " + std::to_string(o.numExamples) + ", " +
                       std::to_string(o.features) + ", " + std::to_string(o.classes) + ")");
  if (!(o.noise >= 0.0f) || !std::isfinite(o.noise))
    return Error::make("synthetic data: noise must be finite and >= 0");
  // Teacher: `classes` random unit vectors of `features` entries (stream 0).
  std::vector<double> teacher(static_cast<size_t>(o.classes * o.features));
  Rng trng(mixSeed(o.seed, 0));
  for (int64_t c = 0; c < o.classes; ++c) {
    double norm = 0;
    double *w = teacher.data() + c * o.features;
    for (int64_t f = 0; f < o.features; ++f) {
      w[f] = trng.normal();
      norm += w[f] * w[f];
    }
    norm = std::sqrt(norm);
    for (int64_t f = 0; f < o.features; ++f)
      w[f] /= norm;
  }
  ClassificationDataset ds;
  ds.name = split == Split::Train ? "synthetic train" : "synthetic test";
  ds.numExamples = o.numExamples;
  ds.exampleShape = {o.features};
  ds.featureSize = o.features;
  ds.numClasses = o.classes;
  ds.features.resize(static_cast<size_t>(o.numExamples * o.features));
  ds.labels.resize(static_cast<size_t>(o.numExamples));
  // Examples: stream 1 (train) or 2 (test).
  Rng rng(mixSeed(o.seed, split == Split::Train ? 1 : 2));
  for (int64_t i = 0; i < o.numExamples; ++i) {
    float *x = ds.features.data() + i * o.features;
    for (int64_t f = 0; f < o.features; ++f)
      x[f] = static_cast<float>(rng.normal());
    int32_t best = 0;
    double bestLogit = 0;
    for (int64_t c = 0; c < o.classes; ++c) {
      const double *w = teacher.data() + c * o.features;
      double logit = 0;
      for (int64_t f = 0; f < o.features; ++f)
        logit += static_cast<double>(x[f]) * w[f];
      if (o.noise > 0)
        logit += static_cast<double>(o.noise) * rng.normal();
      if (c == 0 || logit > bestLogit) {
        best = static_cast<int32_t>(c);
        bestLogit = logit;
      }
    }
    ds.labels[static_cast<size_t>(i)] = best;
  }
  return ds;
}

//===----------------------------------------------------------------------===//
// Character corpus
//===----------------------------------------------------------------------===//

uint64_t CharCorpus::fingerprint() const {
  return detail::fnv1a(detail::kFnv1aOffset, bytes.data(), bytes.size());
}

Expected<CharCorpus> loadCharCorpus(const std::string &path) {
  Expected<std::vector<uint8_t>> data = readFileMaybeGzip(path);
  if (!data)
    return data.takeError();
  if (data->empty())
    return makeError(path, "is empty; a text corpus needs at least seq + 1 bytes");
  CharCorpus c;
  c.name = path;
  c.bytes = data.take();
  return c;
}

CharCorpus makeCharCorpus(std::string name, const std::string &text) {
  CharCorpus c;
  c.name = std::move(name);
  c.bytes.assign(text.begin(), text.end());
  return c;
}

std::pair<CharCorpus, CharCorpus> splitCharCorpus(const CharCorpus &corpus, double valFraction) {
  if (!(valFraction >= 0.0))
    valFraction = 0.0;
  if (valFraction > 1.0)
    valFraction = 1.0;
  size_t n = corpus.bytes.size();
  size_t val = static_cast<size_t>(std::floor(static_cast<double>(n) * valFraction));
  CharCorpus train, v;
  train.name = corpus.name + " (train)";
  v.name = corpus.name + " (val)";
  train.bytes.assign(corpus.bytes.begin(), corpus.bytes.begin() + (n - val));
  v.bytes.assign(corpus.bytes.begin() + (n - val), corpus.bytes.end());
  return {std::move(train), std::move(v)};
}

Expected<CorpusSampler> CorpusSampler::create(const CharCorpus &corpus, int64_t batch,
                                              int64_t seq, uint64_t seed) {
  if (batch < 1 || seq < 1)
    return makeError(corpus.name, "batch and sequence length must be >= 1 (got " +
                                      std::to_string(batch) + ", " + std::to_string(seq) + ")");
  if (corpus.bytes.size() < static_cast<uint64_t>(seq) + 1)
    return makeError(corpus.name, "has " + std::to_string(corpus.bytes.size()) +
                                      " bytes; sequences of " + std::to_string(seq) +
                                      " need at least " + std::to_string(seq + 1));
  CorpusSampler s;
  s.corpus_ = &corpus;
  s.batch_ = batch;
  s.seq_ = seq;
  s.seed_ = seed;
  s.fingerprint_ = corpus.fingerprint();
  return s;
}

void CorpusSampler::next(int32_t *tokens, int32_t *targets) {
  const std::vector<uint8_t> &bytes = corpus_->bytes;
  uint64_t windows = bytes.size() - static_cast<uint64_t>(seq_); // starts in [0, windows)
  Rng rng(mixSeed(seed_, step_));
  for (int64_t r = 0; r < batch_; ++r) {
    uint64_t start = rng.below(windows);
    for (int64_t t = 0; t < seq_; ++t) {
      tokens[r * seq_ + t] = bytes[start + t];
      targets[r * seq_ + t] = bytes[start + t + 1];
    }
  }
  ++step_;
}

std::pair<Tensor, Tensor> CorpusSampler::next() {
  Tensor tokens(DType::I32, {batch_, seq_});
  Tensor targets(DType::I32, {batch_, seq_});
  next(tokens.data<int32_t>(), targets.data<int32_t>());
  return {std::move(tokens), std::move(targets)};
}

using detail::hex64;

std::string CorpusSampler::position() const {
  return "corpus-v1;bytes=" + std::to_string(corpus_->bytes.size()) + ";fnv1a=" +
         hex64(fingerprint_) + ";batch=" + std::to_string(batch_) + ";seq=" +
         std::to_string(seq_) + ";seed=" + std::to_string(seed_) + ";step=" +
         std::to_string(step_);
}

Error CorpusSampler::restore(const std::string &position) {
  static const char *const keys[] = {"bytes", "fnv1a", "batch", "seq", "seed", "step"};
  const std::string what = "corpus position";
  Expected<std::map<std::string, std::string>> kv =
      detail::parsePosition(position, "corpus-v1", keys, 6, what);
  if (!kv)
    return kv.takeError();
  uint64_t values[6] = {0, 0, 0, 0, 0, 0};
  for (int i : {0, 2, 3, 4, 5}) {
    Expected<uint64_t> v = detail::positionU64(*kv, keys[i], what);
    if (!v)
      return v.takeError();
    values[i] = *v;
  }
  auto mismatch = [&](const std::string &key, const std::string &then, const std::string &now) {
    return makeError(what, "was taken with " + key + " " + then + ", this run has " + now);
  };
  if (values[0] != corpus_->bytes.size() || (*kv)["fnv1a"] != hex64(fingerprint_))
    return makeError(what, "was taken on another text (" + (*kv)["bytes"] + " bytes, FNV-1a " +
                               (*kv)["fnv1a"] + "; " + corpus_->name + " has " +
                               std::to_string(corpus_->bytes.size()) + " bytes, FNV-1a " +
                               hex64(fingerprint_) + ")");
  if (values[2] != static_cast<uint64_t>(batch_))
    return mismatch("batch size", (*kv)["batch"], std::to_string(batch_));
  if (values[3] != static_cast<uint64_t>(seq_))
    return mismatch("sequence length", (*kv)["seq"], std::to_string(seq_));
  if (values[4] != seed_)
    return mismatch("seed", (*kv)["seed"], std::to_string(seed_));
  step_ = values[5];
  return Error::success();
}

} // namespace rt
} // namespace lpc
