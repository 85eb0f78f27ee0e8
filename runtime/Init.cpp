//===- Init.cpp - deterministic parameter initializers ---------------------===//

#include "lpc/Runtime/Init.h"

#include "lpc/Runtime/Random.h"

#include <cmath>
#include <limits>

namespace lpc {
namespace rt {

namespace {
struct KindName {
  InitKind kind;
  const char *name;
};
constexpr KindName kKindNames[] = {
    {InitKind::Zeros, "zeros"},
    {InitKind::Ones, "ones"},
    {InitKind::Constant, "constant"},
    {InitKind::Normal, "normal"},
    {InitKind::Uniform, "uniform"},
    {InitKind::XavierUniform, "xavier_uniform"},
    {InitKind::XavierNormal, "xavier_normal"},
    {InitKind::KaimingUniform, "kaiming_uniform"},
    {InitKind::KaimingNormal, "kaiming_normal"},
};
// M_PI's digits (M_PI is not standard C++).
constexpr double kPi = 3.14159265358979323846;
} // namespace

const char *initKindName(InitKind kind) {
  for (const KindName &k : kKindNames)
    if (k.kind == kind)
      return k.name;
  return "unknown";
}

std::optional<InitKind> parseInitKind(std::string_view name) {
  for (const KindName &k : kKindNames)
    if (name == k.name)
      return k.kind;
  return std::nullopt;
}

uint64_t hashName(uint64_t seed, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL; // FNV-1a offset basis
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL; // FNV-1a prime
  }
  return splitmix64(splitmix64(seed) ^ h);
}

float roundToF32(double x) {
  // 2^128 - 2^103, halfway between FLT_MAX and 2^128: from there on, round
  // to nearest even goes to 2^128, i.e. overflows to inf.
  if (std::isfinite(x) && std::fabs(x) >= 0x1.ffffffp127)
    return x > 0 ? std::numeric_limits<float>::infinity()
                 : -std::numeric_limits<float>::infinity();
  return static_cast<float>(x);
}

double InitRng::uniform() { return static_cast<double>(engine_() >> 11) * 0x1p-53; }

double InitRng::uniform(double low, double high) { return low + (high - low) * uniform(); }

double InitRng::normal(double mean, double stddev) {
  double u1 = uniform(), u2 = uniform();
  double z = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * kPi * u2);
  return mean + stddev * z;
}

int64_t InitRng::below(int64_t n) {
  uint64_t un = static_cast<uint64_t>(n);
  uint64_t limit = UINT64_MAX - UINT64_MAX % un;
  uint64_t x;
  do
    x = engine_();
  while (x >= limit);
  return static_cast<int64_t>(x % un);
}

std::vector<float> initializeParam(const InitSpec &spec, std::string_view name,
                                   const std::vector<int64_t> &shape, uint64_t seed) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  std::vector<float> values(static_cast<size_t>(count > 0 ? count : 0), 0.0f);

  // fan_in / fan_out of an [in, out, receptive...] weight.
  double receptive = 1.0;
  for (size_t i = 2; i < shape.size(); ++i)
    receptive *= static_cast<double>(shape[i]);
  double fanIn = shape.size() >= 1 ? shape[0] * receptive : 1.0;
  double fanOut = shape.size() >= 2 ? shape[1] * receptive : 1.0;

  InitRng rng(hashName(seed, name));
  auto fill = [&](auto draw) {
    for (float &x : values)
      x = roundToF32(draw());
  };
  switch (spec.kind) {
  case InitKind::Zeros:
    fill([] { return 0.0; });
    break;
  case InitKind::Ones:
    fill([] { return 1.0; });
    break;
  case InitKind::Constant:
    fill([&] { return spec.value; });
    break;
  case InitKind::Normal:
    fill([&] { return rng.normal(spec.mean, spec.std); });
    break;
  case InitKind::Uniform:
    fill([&] { return rng.uniform(spec.low, spec.high); });
    break;
  case InitKind::XavierUniform: {
    double bound = spec.gain * std::sqrt(6.0 / (fanIn + fanOut));
    fill([&] { return rng.uniform(-bound, bound); });
    break;
  }
  case InitKind::XavierNormal: {
    double stddev = spec.gain * std::sqrt(2.0 / (fanIn + fanOut));
    fill([&] { return rng.normal(0.0, stddev); });
    break;
  }
  case InitKind::KaimingUniform: {
    double bound = spec.gain * std::sqrt(3.0 / fanIn);
    fill([&] { return rng.uniform(-bound, bound); });
    break;
  }
  case InitKind::KaimingNormal: {
    double stddev = spec.gain / std::sqrt(fanIn);
    fill([&] { return rng.normal(0.0, stddev); });
    break;
  }
  }
  return values;
}

} // namespace rt
} // namespace lpc
