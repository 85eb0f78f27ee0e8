//===- Random.h - portable, serializable random numbers ---------*- C++ -*-===//
//
// xoshiro256** (Blackman & Vigna, https://prng.di.unimi.it/) seeded through
// splitmix64. Every derived quantity is computed by a formula written here,
// never by <random>'s distributions (whose output differs between standard
// libraries), so a seed gives the same numbers with any C++17 compiler:
//
//   seed s      -> state[i] = splitmix64 stream of s (i = 0..3)
//   next()      -> xoshiro256** output (64 bits)
//   below(n)    -> uniform in [0, n): draws r = next() until r >= 2^64 mod n,
//                  returns r mod n (rejection, no modulo bias)
//   uniform()   -> (next() >> 11) * 2^-53, in [0, 1)
//   normal()    -> Box-Muller: sqrt(-2 ln(1 - u1)) * cos(2 pi u2); one
//                  normal per two uniforms (no cached second value, so the
//                  state is just the four words). Uses libm's log/cos/sqrt:
//                  exact across runs on one machine, last-bit differences
//                  across libms are possible.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_RANDOM_H
#define LPC_RUNTIME_RANDOM_H

#include "lpc/Runtime/Error.h"

#include <cstdint>
#include <string>

namespace lpc {
namespace rt {

/// splitmix64 finalizer: a bijective 64-bit mix (also used to derive
/// per-epoch / per-step seeds: mixSeed(seed, k)).
uint64_t splitmix64(uint64_t x);
/// A seed for stream `k` of `seed`: splitmix64(splitmix64(seed) ^ k).
uint64_t mixSeed(uint64_t seed, uint64_t k);

class Rng {
public:
  explicit Rng(uint64_t seed = 0);

  uint64_t next();
  /// Uniform integer in [0, n); n must be > 0.
  uint64_t below(uint64_t n);
  /// Uniform double in [0, 1).
  double uniform();
  /// Standard normal.
  double normal();

  /// "xoshiro256**:" + four 16-digit hex words: the complete state.
  std::string state() const;
  /// Restores a state() string; the error names what is wrong with it.
  Error setState(const std::string &s);

  bool operator==(const Rng &o) const;
  bool operator!=(const Rng &o) const { return !(*this == o); }

private:
  uint64_t s_[4];
};

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_RANDOM_H
