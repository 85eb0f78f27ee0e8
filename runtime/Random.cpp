//===- Random.cpp - xoshiro256** and derived distributions -----------------===//

#include "lpc/Runtime/Random.h"

// The one splitmix64 of lpc (header-only, no LLVM): the compiler's dropout
// masks, the reference evaluator and the runtime share it.
#include "lpc/Support/SplitMix.h"

#include <cmath>
#include <cstdio>

namespace lpc {
namespace rt {

uint64_t splitmix64(uint64_t x) { return mlir::lpc::splitmix64(x); }

uint64_t mixSeed(uint64_t seed, uint64_t k) { return splitmix64(splitmix64(seed) ^ k); }

Rng::Rng(uint64_t seed) {
  // The splitmix64 stream recommended for seeding xoshiro: state += golden
  // gamma, output = mix(state). Never all zero for any seed.
  uint64_t x = seed;
  for (uint64_t &w : s_) {
    w = splitmix64(x);
    x += mlir::lpc::kSplitMixIncrement;
  }
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t Rng::next() {
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::below(uint64_t n) {
  if (n <= 1)
    return 0;
  uint64_t threshold = (0 - n) % n; // 2^64 mod n
  while (true) {
    uint64_t r = next();
    if (r >= threshold)
      return r % n;
  }
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }

double Rng::normal() {
  double u1 = uniform();
  double u2 = uniform();
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(6.283185307179586 * u2);
}

std::string Rng::state() const {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "xoshiro256**:%016llx%016llx%016llx%016llx",
                static_cast<unsigned long long>(s_[0]), static_cast<unsigned long long>(s_[1]),
                static_cast<unsigned long long>(s_[2]), static_cast<unsigned long long>(s_[3]));
  return buf;
}

Error Rng::setState(const std::string &s) {
  const std::string prefix = "xoshiro256**:";
  if (s.compare(0, prefix.size(), prefix) != 0 || s.size() != prefix.size() + 64)
    return makeError("RNG state \"" + s + "\"",
                     "expected 'xoshiro256**:' followed by 64 hex digits");
  uint64_t w[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < 64; ++i) {
    char c = s[prefix.size() + i];
    uint64_t d;
    if (c >= '0' && c <= '9')
      d = static_cast<uint64_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = static_cast<uint64_t>(c - 'a' + 10);
    else
      return makeError("RNG state \"" + s + "\"", "expected lower-case hex digits");
    w[i / 16] = (w[i / 16] << 4) | d;
  }
  if ((w[0] | w[1] | w[2] | w[3]) == 0)
    return makeError("RNG state \"" + s + "\"", "the all-zero state is invalid");
  for (int i = 0; i < 4; ++i)
    s_[i] = w[i];
  return Error::success();
}

bool Rng::operator==(const Rng &o) const {
  return s_[0] == o.s_[0] && s_[1] == o.s_[1] && s_[2] == o.s_[2] && s_[3] == o.s_[3];
}

} // namespace rt
} // namespace lpc
