//===- Random.cpp - tensors, parameter initializers, test data ------------===//
//
// Random numbers are drawn with std::mt19937_64 (whose output sequence the
// C++ standard fixes) and converted to uniform / normal values by the
// formulas documented in Evaluator.h, not by <random>'s distributions (whose
// algorithms differ between standard libraries).
//
//===----------------------------------------------------------------------===//

#include "lpc/Reference/Evaluator.h"
#include "lpc/Support/SplitMix.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::ref;

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Tensor Tensor::filled(DType dtype, llvm::ArrayRef<int64_t> shape,
                      double value) {
  Tensor t;
  t.dtype = dtype;
  t.shape.assign(shape.begin(), shape.end());
  t.data.assign(t.numElements(), roundToFormat(value, dtype));
  return t;
}

std::string mlir::lpc::ref::typeString(const Tensor &t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "tensor<";
  for (int64_t d : t.shape)
    os << d << "x";
  os << dtypeName(t.dtype) << ">";
  return s;
}

//===----------------------------------------------------------------------===//
// Hashing and random numbers
//===----------------------------------------------------------------------===//

uint64_t mlir::lpc::ref::splitmix64(uint64_t x) {
  return mlir::lpc::splitmix64(x);
}

uint64_t mlir::lpc::ref::hashName(uint64_t seed, llvm::StringRef name) {
  uint64_t h = 0xcbf29ce484222325ULL; // FNV-1a offset basis
  for (unsigned char c : name.bytes()) {
    h ^= c;
    h *= 0x100000001b3ULL; // FNV-1a prime
  }
  return splitmix64(splitmix64(seed) ^ h);
}

double mlir::lpc::ref::dropoutUniform(uint64_t seed, uint64_t step,
                                      uint64_t index) {
  uint64_t h = splitmix64(splitmix64(splitmix64(seed) ^ step) ^ index);
  return static_cast<double>(h >> 40) * 0x1p-24;
}

namespace {
/// Uniform and normal numbers from mt19937_64 by fixed formulas.
class Rng {
public:
  explicit Rng(uint64_t seed) : engine(seed) {}
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine() >> 11) * 0x1p-53; }
  double uniform(double low, double high) {
    return low + (high - low) * uniform();
  }
  /// Box-Muller; 1 - u1 is in (0, 1], so the log is finite.
  double normal(double mean, double stddev) {
    double u1 = uniform(), u2 = uniform();
    double z = std::sqrt(-2.0 * std::log(1.0 - u1)) *
               std::cos(2.0 * M_PI * u2);
    return mean + stddev * z;
  }
  /// Uniform integer in [0, n), n >= 1 (rejection sampling, no modulo bias).
  int64_t below(int64_t n) {
    uint64_t un = static_cast<uint64_t>(n);
    uint64_t limit = UINT64_MAX - UINT64_MAX % un;
    uint64_t x;
    do
      x = engine();
    while (x >= limit);
    return static_cast<int64_t>(x % un);
  }

private:
  std::mt19937_64 engine;
};
} // namespace

//===----------------------------------------------------------------------===//
// Parameter initializers
//===----------------------------------------------------------------------===//

InitSpec InitSpec::fromOp(ParamOp op) {
  InitSpec s;
  s.kind = op.getInit();
  auto get = [](std::optional<llvm::APFloat> a, double &into) {
    if (a)
      into = a->convertToDouble();
  };
  get(op.getStd(), s.std);
  get(op.getMean(), s.mean);
  get(op.getLow(), s.low);
  get(op.getHigh(), s.high);
  get(op.getValue(), s.value);
  get(op.getGain(), s.gain);
  return s;
}

Tensor mlir::lpc::ref::initializeParam(ParamOp op, uint64_t seed) {
  return initializeTensor(InitSpec::fromOp(op), op.getName(),
                          op.getResult().getType().getShape(), seed);
}

Tensor mlir::lpc::ref::initializeTensor(const InitSpec &spec,
                                        llvm::StringRef name,
                                        llvm::ArrayRef<int64_t> shape,
                                        uint64_t seed) {
  Tensor t = Tensor::filled(DType::f32, shape, 0.0);
  // fan_in / fan_out of an [in, out, receptive...] weight.
  double receptive = 1.0;
  for (size_t i = 2; i < shape.size(); ++i)
    receptive *= static_cast<double>(shape[i]);
  double fanIn = shape.size() >= 1 ? shape[0] * receptive : 1.0;
  double fanOut = shape.size() >= 2 ? shape[1] * receptive : 1.0;

  Rng rng(hashName(seed, name));
  auto fill = [&](auto draw) {
    for (double &x : t.data)
      x = roundToFormat(draw(), DType::f32);
  };
  switch (spec.kind) {
  case InitKind::zeros:
    fill([] { return 0.0; });
    break;
  case InitKind::ones:
    fill([] { return 1.0; });
    break;
  case InitKind::constant:
    fill([&] { return spec.value; });
    break;
  case InitKind::normal:
    fill([&] { return rng.normal(spec.mean, spec.std); });
    break;
  case InitKind::uniform:
    fill([&] { return rng.uniform(spec.low, spec.high); });
    break;
  case InitKind::xavier_uniform: {
    double bound = spec.gain * std::sqrt(6.0 / (fanIn + fanOut));
    fill([&] { return rng.uniform(-bound, bound); });
    break;
  }
  case InitKind::xavier_normal: {
    double stddev = spec.gain * std::sqrt(2.0 / (fanIn + fanOut));
    fill([&] { return rng.normal(0.0, stddev); });
    break;
  }
  case InitKind::kaiming_uniform: {
    double bound = spec.gain * std::sqrt(3.0 / fanIn);
    fill([&] { return rng.uniform(-bound, bound); });
    break;
  }
  case InitKind::kaiming_normal: {
    double stddev = spec.gain / std::sqrt(fanIn);
    fill([&] { return rng.normal(0.0, stddev); });
    break;
  }
  }
  return t;
}

//===----------------------------------------------------------------------===//
// Random test data
//===----------------------------------------------------------------------===//

Tensor mlir::lpc::ref::randomTensor(DType dtype, llvm::ArrayRef<int64_t> shape,
                                    uint64_t seed, double stddev,
                                    int64_t maxInt) {
  Tensor t = Tensor::filled(dtype, shape, 0.0);
  Rng rng(splitmix64(seed));
  for (double &x : t.data) {
    if (dtype == DType::i1) {
      x = static_cast<double>(rng.below(2));
    } else if (!isFloat(dtype)) {
      x = static_cast<double>(rng.below(std::max<int64_t>(maxInt, 1)));
    } else {
      // Redraw values that round to zero or overflow; give up (keeping the
      // smallest positive value of the format) only for absurd stddevs.
      auto usable = [](double v) { return v != 0.0 && std::isfinite(v); };
      x = 0.0;
      for (int attempt = 0; attempt < 64 && !usable(x); ++attempt)
        x = roundToFormat(rng.normal(0.0, stddev), dtype);
      if (!usable(x))
        x = fromBits(1, dtype);
    }
  }
  return t;
}
