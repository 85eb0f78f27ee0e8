//===- Init.h - deterministic parameter initializers ------------*- C++ -*-===//
//
// The initial values of an lpc.param, computed without LLVM/MLIR so that a
// runtime-only trainer starts from exactly the numbers lpc uses (lpc's
// reference evaluator, lpc-eval, lpc-run and lpc-jit call initializeParam
// through ref::initializeTensor: there is one implementation).
//
// PyTorch's formulas, with fan_in = dim 0 and fan_out = dim 1 of an
// [in, out] weight, each times the product of dims 2.. when rank > 2
// (fan_in = 1 for rank 0, fan_out = 1 for rank < 2):
//   zeros, ones, constant(value)
//   normal(mean, std); uniform(low, high)
//   xavier_uniform:  U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out))
//   xavier_normal:   N(0, gain * sqrt(2 / (fan_in + fan_out)))
//   kaiming_uniform: U(-b, b), b = gain * sqrt(3 / fan_in)
//   kaiming_normal:  N(0, gain / sqrt(fan_in))
//
// Random numbers come from std::mt19937_64 (whose output sequence the C++
// standard fixes) seeded with hashName(seed, name), so a parameter's values
// do not depend on the order of declaration, and are turned into uniform /
// normal values by fixed formulas (InitRng), never by <random>'s
// distributions (whose algorithms differ between standard libraries). Each
// value is computed in double and rounded to the nearest f32 (ties to even;
// beyond the f32 range: +-inf). libm's log/cos/sqrt are used: exact across
// runs on one machine, last-bit differences across libms are possible.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_INIT_H
#define LPC_RUNTIME_INIT_H

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

namespace lpc {
namespace rt {

/// The initializers of lpc.param (same names and order as the dialect's
/// InitKind).
enum class InitKind {
  Zeros,
  Ones,
  Constant,
  Normal,
  Uniform,
  XavierUniform,
  XavierNormal,
  KaimingUniform,
  KaimingNormal,
};

/// The dialect's spelling: "zeros", "ones", "constant", "normal", "uniform",
/// "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal".
const char *initKindName(InitKind kind);
/// Inverse of initKindName; nullopt for any other string.
std::optional<InitKind> parseInitKind(std::string_view name);

/// An initializer and its attributes (the defaults of lpc.param's).
struct InitSpec {
  InitKind kind = InitKind::Zeros;
  double std = 1.0, mean = 0.0, low = -1.0, high = 1.0, value = 0.0, gain = 1.0;
};

/// splitmix64(splitmix64(seed) ^ FNV-1a-64(name)): the seed of a named
/// stream (a parameter's initializer; lpc's random inputs).
uint64_t hashName(uint64_t seed, std::string_view name);

/// The values of parameter `name` of shape `shape` (row-major, product of the
/// dims elements; one for rank 0) for `seed`.
std::vector<float> initializeParam(const InitSpec &spec, std::string_view name,
                                   const std::vector<int64_t> &shape, uint64_t seed);

/// Round-to-nearest-even conversion to f32; finite values that round beyond
/// the f32 range give +-inf (as IEEE and llvm::APFloat do; a plain
/// static_cast<float> is undefined there), NaN stays NaN. Subnormals are kept
/// unless the FPU flushes them (-ffast-math).
float roundToF32(double x);

/// The generator behind initializeParam (lpc's reference evaluator draws its
/// random test data from it too): std::mt19937_64 and fixed formulas.
class InitRng {
public:
  explicit InitRng(uint64_t seed) : engine_(seed) {}
  /// Uniform in [0, 1) with 53 random bits: (next >> 11) * 2^-53.
  double uniform();
  /// low + (high - low) * uniform().
  double uniform(double low, double high);
  /// Box-Muller, one value per two uniforms: mean + stddev * z,
  /// z = sqrt(-2 ln(1 - u1)) * cos(2 pi u2); 1 - u1 is in (0, 1], so the log
  /// is finite.
  double normal(double mean, double stddev);
  /// Uniform integer in [0, n), n >= 1: draws x until x < 2^64 - 2^64 mod n
  /// (rejection, no modulo bias), returns x mod n.
  int64_t below(int64_t n);

private:
  std::mt19937_64 engine_;
};

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_INIT_H
