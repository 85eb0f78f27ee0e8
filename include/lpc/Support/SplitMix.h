//===- SplitMix.h - the hash behind lpc's counter-based RNG -----*- C++ -*-===//
//
// SplitMix64's finalizer (Steele, Lea, Flood 2014), with the state increment
// added first. Shared by the reference evaluator and the code generators,
// which must produce the same dropout masks bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_SUPPORT_SPLITMIX_H
#define LPC_SUPPORT_SPLITMIX_H

#include <cstdint>

namespace mlir {
namespace lpc {

constexpr uint64_t kSplitMixIncrement = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kSplitMixMul1 = 0xbf58476d1ce4e5b9ULL;
constexpr uint64_t kSplitMixMul2 = 0x94d049bb133111ebULL;

inline uint64_t splitmix64(uint64_t x) {
  x += kSplitMixIncrement;
  x = (x ^ (x >> 30)) * kSplitMixMul1;
  x = (x ^ (x >> 27)) * kSplitMixMul2;
  return x ^ (x >> 31);
}

} // namespace lpc
} // namespace mlir

#endif // LPC_SUPPORT_SPLITMIX_H
