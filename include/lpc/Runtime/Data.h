//===- Data.h - training data: IDX / Fashion-MNIST, text, synthetic -*- C++ -*-===//
//
// Three sources of examples for lpc-run:
//  - IDX files (the MNIST / Fashion-MNIST format), plain or gzipped, with
//    Fashion-MNIST found where Debian's `dataset-fashion-mnist` installs it;
//  - any file as a byte-level (vocabulary 256) character corpus, sampled as
//    random windows;
//  - synthetic Gaussian features labelled by a fixed random linear teacher.
// Classification data is held as a ClassificationDataset and batched by a
// BatchIterator (BatchIterator.h); the corpus has its own CorpusSampler.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_DATA_H
#define LPC_RUNTIME_DATA_H

#include "lpc/Runtime/Error.h"
#include "lpc/Runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lpc {
namespace rt {

//===----------------------------------------------------------------------===//
// IDX files
//===----------------------------------------------------------------------===//

/// IDX magics (big-endian u32: 0x00, 0x00, type 0x08 = unsigned byte, ndims).
inline constexpr uint32_t kIdxImagesMagic = 0x00000803; // u8 [N, rows, cols]
inline constexpr uint32_t kIdxLabelsMagic = 0x00000801; // u8 [N]

struct IdxImages {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels; // [count, rows, cols], row-major
};

/// Reads an IDX image file (gzipped or not). Errors name the file and say:
/// cannot open, corrupt/truncated gzip, wrong magic (naming what the magic
/// would mean: a label file, a gzip file, ...), header truncated, no images or
/// a zero dimension, pixel data truncated, or extra bytes after the data.
Expected<IdxImages> readIdxImages(const std::string &path);
/// Reads an IDX label file (gzipped or not); same errors as readIdxImages.
Expected<std::vector<uint8_t>> readIdxLabels(const std::string &path);

//===----------------------------------------------------------------------===//
// Classification datasets
//===----------------------------------------------------------------------===//

/// Examples with a flat f32 feature vector and an integer class label.
struct ClassificationDataset {
  std::string name;                 // e.g. "fashion-mnist train"
  int64_t numExamples = 0;
  std::vector<int64_t> exampleShape; // e.g. [28, 28]; featureSize = product
  int64_t featureSize = 0;
  int64_t numClasses = 0;
  std::vector<float> features;  // [numExamples, featureSize]
  std::vector<int32_t> labels;  // [numExamples], each in [0, numClasses)

  /// Copies rows `indices` into `featuresOut` [indices.size(), featureSize]
  /// and `labelsOut` [indices.size()]. Indices must be in range.
  void gather(const std::vector<int64_t> &indices, float *featuresOut,
              int32_t *labelsOut) const;
  /// The same as tensors: F32 [B, featureSize] and I32 [B].
  std::pair<Tensor, Tensor> gather(const std::vector<int64_t> &indices) const;
};

/// Pixel normalization: f = (x / 255 - mean) / std, computed in float.
struct ImageNormalization {
  float mean = 0.0f;
  float std = 1.0f;
};

/// Fashion-MNIST's training-set pixel statistics (of x / 255): mean 0.2860,
/// std 0.3530 (computed over all 60000 * 784 training pixels: 0.28604,
/// 0.35302). Both splits are normalized with these.
inline constexpr ImageNormalization kFashionMnistNormalization{0.2860f, 0.3530f};

/// Pairs an IDX image file with an IDX label file: checks the counts agree
/// and every label is below `numClasses`, and normalizes the pixels.
Expected<ClassificationDataset> loadIdxClassification(const std::string &imagesPath,
                                                      const std::string &labelsPath,
                                                      int64_t numClasses,
                                                      ImageNormalization norm,
                                                      const std::string &name);

/// Where Debian's `dataset-fashion-mnist` package installs the files.
inline constexpr const char *kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

struct FashionMnistPaths {
  std::string trainImages, trainLabels, testImages, testLabels;
};

/// The four Fashion-MNIST files in `dir`: `train-images-idx3-ubyte`,
/// `train-labels-idx1-ubyte`, `t10k-images-idx3-ubyte`,
/// `t10k-labels-idx1-ubyte`, each with or without `.gz` (gzipped preferred).
/// If one is missing, the error says which and, for the default directory,
/// to run `apt-get install dataset-fashion-mnist`.
Expected<FashionMnistPaths> findFashionMnist(const std::string &dir = kFashionMnistDir);

enum class Split { Train, Test };

/// Fashion-MNIST train (60000) or test (10000) split: features [N, 784]
/// (exampleShape [28, 28]) normalized with kFashionMnistNormalization, labels
/// in [0, 10). Checks the images are 28x28.
Expected<ClassificationDataset> loadFashionMnist(Split split,
                                                 const std::string &dir = kFashionMnistDir);

/// Synthetic classification data a model can learn: features x ~ N(0, 1)
/// (f32), labels argmax_c (x . w_c + noise * N(0, 1)), where the teacher
/// w_c, c < classes, are fixed random unit vectors. The teacher depends only
/// on `seed`; the examples on (seed, split), so Train and Test share a teacher.
struct SyntheticOptions {
  int64_t numExamples = 4096;
  int64_t features = 784;
  int64_t classes = 10;
  uint64_t seed = 0;
  float noise = 0.0f; // label noise: std of the Gaussian added to the logits
};
Expected<ClassificationDataset> makeSyntheticClassification(const SyntheticOptions &options,
                                                            Split split = Split::Train);

//===----------------------------------------------------------------------===//
// Character-level text corpus
//===----------------------------------------------------------------------===//

/// Byte-level vocabulary: token = byte value (what the GPT example's
/// vocabulary of 256 expects).
inline constexpr int kCharVocabSize = 256;

struct CharCorpus {
  std::string name;
  std::vector<uint8_t> bytes;
  /// FNV-1a 64 of the bytes (recorded in sampler positions to catch a resume
  /// on a different text).
  uint64_t fingerprint() const;
};

/// Any file, byte for byte (gzipped files are decompressed). Fails on a
/// missing or empty file.
Expected<CharCorpus> loadCharCorpus(const std::string &path);
/// A corpus from memory (for tests and generated text).
CharCorpus makeCharCorpus(std::string name, const std::string &text);
/// Splits off the last `valFraction` of the bytes as a validation corpus:
/// {train, val}. valFraction in [0, 1).
std::pair<CharCorpus, CharCorpus> splitCharCorpus(const CharCorpus &corpus, double valFraction);

/// Random windows of a corpus as next-token batches. Step k (0, 1, ...)
/// draws, with Rng(mixSeed(seed, k)), one start per row
/// s_r = below(size - seq) and gives tokens[r, t] = bytes[s_r + t],
/// targets[r, t] = bytes[s_r + t + 1]. The position is just k, so resuming
/// needs no RNG state. The corpus must outlive the sampler.
class CorpusSampler {
public:
  /// Fails when the corpus has fewer than seq + 1 bytes or batch/seq < 1.
  static Expected<CorpusSampler> create(const CharCorpus &corpus, int64_t batch,
                                        int64_t seq, uint64_t seed);

  /// Fills tokens and targets, each [batch, seq] int32, then advances.
  void next(int32_t *tokens, int32_t *targets);
  /// The same as I32 tensors [batch, seq]: {tokens, targets}.
  std::pair<Tensor, Tensor> next();

  int64_t batch() const { return batch_; }
  int64_t seq() const { return seq_; }
  uint64_t step() const { return step_; }

  /// "corpus-v1;bytes=N;fnv1a=HEX;batch=B;seq=S;seed=X;step=K".
  std::string position() const;
  /// Restores a position(); fails, saying what differs, when it was taken
  /// on another corpus or with another batch, seq or seed.
  Error restore(const std::string &position);

private:
  CorpusSampler() = default;
  const CharCorpus *corpus_ = nullptr;
  int64_t batch_ = 0, seq_ = 0;
  uint64_t seed_ = 0, step_ = 0, fingerprint_ = 0;
};

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_DATA_H
