//===- Random.cpp - tensors, parameter initializers, test data ------------===//
//
// Random numbers are drawn with std::mt19937_64 (whose output sequence the
// C++ standard fixes) and converted to uniform / normal values by the
// formulas documented in Evaluator.h, not by <random>'s distributions (whose
// algorithms differ between standard libraries). The initializers, hashName
// and the generator are the LLVM-free runtime's (lpc/Runtime/Init.h), so that
// a runtime-only trainer initializes parameters exactly as lpc does.
//
//===----------------------------------------------------------------------===//

#include "lpc/Reference/Evaluator.h"
#include "lpc/Reference/ToRuntime.h"
#include "lpc/Runtime/Init.h"
#include "lpc/Support/SplitMix.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

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
  return ::lpc::rt::hashName(seed, std::string_view(name.data(), name.size()));
}

double mlir::lpc::ref::dropoutUniform(uint64_t seed, uint64_t step,
                                      uint64_t index) {
  uint64_t h = splitmix64(splitmix64(splitmix64(seed) ^ step) ^ index);
  return static_cast<double>(h >> 40) * 0x1p-24;
}

namespace {
/// Uniform and normal numbers from mt19937_64 by fixed formulas.
using Rng = ::lpc::rt::InitRng;

::lpc::rt::InitKind runtimeKind(InitKind kind) {
  using RK = ::lpc::rt::InitKind;
  switch (kind) {
  case InitKind::zeros:
    return RK::Zeros;
  case InitKind::ones:
    return RK::Ones;
  case InitKind::constant:
    return RK::Constant;
  case InitKind::normal:
    return RK::Normal;
  case InitKind::uniform:
    return RK::Uniform;
  case InitKind::xavier_uniform:
    return RK::XavierUniform;
  case InitKind::xavier_normal:
    return RK::XavierNormal;
  case InitKind::kaiming_uniform:
    return RK::KaimingUniform;
  case InitKind::kaiming_normal:
    return RK::KaimingNormal;
  }
  llvm_unreachable("unknown InitKind");
}
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

::lpc::rt::InitSpec mlir::lpc::ref::toRuntimeInit(const InitSpec &spec) {
  ::lpc::rt::InitSpec rs;
  rs.kind = runtimeKind(spec.kind);
  rs.std = spec.std;
  rs.mean = spec.mean;
  rs.low = spec.low;
  rs.high = spec.high;
  rs.value = spec.value;
  rs.gain = spec.gain;
  return rs;
}

::lpc::rt::DType mlir::lpc::ref::toRuntimeDType(DType dtype) {
  using RD = ::lpc::rt::DType;
  switch (dtype) {
  case DType::f32: return RD::F32;
  case DType::f16: return RD::F16;
  case DType::bf16: return RD::BF16;
  case DType::f8e4m3: return RD::F8_E4M3;
  case DType::f8e5m2: return RD::F8_E5M2;
  case DType::i32: return RD::I32;
  case DType::i64: return RD::I64;
  case DType::i1: return RD::BOOL;
  }
  llvm_unreachable("unknown reference dtype");
}

Tensor mlir::lpc::ref::initializeParam(ParamOp op, uint64_t seed) {
  return initializeTensor(InitSpec::fromOp(op), op.getName(),
                          op.getResult().getType().getShape(), seed);
}

Tensor mlir::lpc::ref::initializeTensor(const InitSpec &spec,
                                        llvm::StringRef name,
                                        llvm::ArrayRef<int64_t> shape,
                                        uint64_t seed) {
  std::vector<float> values = ::lpc::rt::initializeParam(
      toRuntimeInit(spec), std::string_view(name.data(), name.size()),
      std::vector<int64_t>(shape.begin(), shape.end()), seed);
  Tensor t;
  t.dtype = DType::f32;
  t.shape.assign(shape.begin(), shape.end());
  t.data.assign(values.begin(), values.end());
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
