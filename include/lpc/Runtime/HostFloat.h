//===- HostFloat.h - host encode/decode of bf16, f16 and FP8 ----*- C++ -*-===//
//
// The GPU checks (lpc-cuda-check --gemm-selftest, the unit tests) build GEMM
// operands on the host in every format and read results back, so they need
// exact conversions: round to nearest, ties to even, subnormals kept. FP8
// encodes saturate to the largest finite value (as lpc's quantize and PTX's
// cvt.satfinite do); bf16 and f16 overflow to infinity (IEEE). The trainer
// reads metrics of any format with decodeAs.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_HOSTFLOAT_H
#define LPC_RUNTIME_HOSTFLOAT_H

#include "lpc/Runtime/Tensor.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace lpc {
namespace rt {

/// A binary floating-point format with `expBits` exponent and `manBits`
/// mantissa bits. `fn`: no infinities, NaN = all ones (E4M3FN); otherwise
/// IEEE-like (the all-ones exponent holds infinities and NaNs).
struct MiniFloat {
  int expBits, manBits;
  bool fn;
  bool saturate; // encode: clamp overflow to the largest finite value

  int bias() const { return (1 << (expBits - 1)) - 1; }
  uint32_t maxExpField() const { return fn ? (1u << expBits) - 1 : (1u << expBits) - 2; }
  uint32_t maxManAtMaxExp() const { return fn ? (1u << manBits) - 2 : (1u << manBits) - 1; }

  uint32_t encode(double x) const {
    const uint32_t signBit = 1u << (expBits + manBits);
    uint32_t sign = std::signbit(x) ? signBit : 0;
    uint32_t allOnesExp = ((1u << expBits) - 1) << manBits;
    uint32_t maxFinite = (maxExpField() << manBits) | maxManAtMaxExp();
    if (std::isnan(x))
      return fn ? (sign | allOnesExp | ((1u << manBits) - 1))
                : (sign | allOnesExp | (1u << (manBits - 1)));
    double a = std::fabs(x);
    if (std::isinf(a))
      return sign | (fn || saturate ? maxFinite : allOnesExp);
    if (a == 0)
      return sign;
    int e2 = 0;
    std::frexp(a, &e2); // a = f * 2^e2, f in [0.5, 1)
    int exponent = e2 - 1;
    const int minExp = 1 - bias();
    if (exponent < minExp)
      exponent = minExp; // subnormal: fixed scale
    // Significand scaled to an integer with manBits fraction bits; exact in
    // double for every input format here, then rounded half to even.
    double q = std::ldexp(a, manBits - exponent);
    double r = std::nearbyint(q);
    uint64_t mant = static_cast<uint64_t>(r);
    if (mant >> (manBits + 1)) { // rounded up to the next binade
      mant >>= 1;
      ++exponent;
    }
    uint32_t expField, manField;
    if (mant < (uint64_t(1) << manBits)) {
      expField = 0; // subnormal (or zero)
      manField = static_cast<uint32_t>(mant);
    } else {
      expField = static_cast<uint32_t>(exponent + bias());
      manField = static_cast<uint32_t>(mant - (uint64_t(1) << manBits));
    }
    if (expField > maxExpField() ||
        (expField == maxExpField() && manField > maxManAtMaxExp()))
      return sign | (fn || saturate ? maxFinite : allOnesExp);
    return sign | (expField << manBits) | manField;
  }

  /// encode(x) for a float, without double arithmetic (the gradients a
  /// data-parallel step sends in a narrow format go through here). Exact
  /// for formats whose smallest subnormal is a normal float (f16, FP8):
  /// smaller floats round to zero there, as encode does. Not for bf16,
  /// whose subnormals reach below float's normals.
  uint32_t encodeFloat(float x) const {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    const uint32_t sign = (u >> 31) << (expBits + manBits);
    const uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) // inf, NaN
      return encode(double(x));
    const int e = int(a >> 23);
    if (e == 0) // zero or a float subnormal: below half the target's least
      return sign;
    const uint64_t sig = (a & 0x7fffffu) | 0x800000u;
    const int exponent = e - 127, minExp = 1 - bias();
    int shift = 23 - manBits + (exponent < minExp ? minExp - exponent : 0);
    if (shift > 40)
      return sign;
    uint64_t q = sig >> shift;
    const uint64_t rem = sig & ((uint64_t(1) << shift) - 1),
                   half = uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      ++q;
    uint32_t bits;
    if (exponent < minExp) {
      bits = uint32_t(q); // subnormal; 2^manBits is the least normal
    } else {
      int ex = exponent;
      if (q >> (manBits + 1)) { // rounded up to the next binade
        q >>= 1;
        ++ex;
      }
      bits = (uint32_t(ex + bias()) << manBits) |
             uint32_t(q - (uint64_t(1) << manBits));
    }
    const uint32_t maxFinite = (maxExpField() << manBits) | maxManAtMaxExp();
    if (bits > maxFinite)
      return sign | (fn || saturate ? maxFinite
                                    : ((1u << expBits) - 1) << manBits);
    return sign | bits;
  }

  double decode(uint32_t bits) const {
    bool neg = (bits >> (expBits + manBits)) & 1;
    uint32_t e = (bits >> manBits) & ((1u << expBits) - 1);
    uint32_t m = bits & ((1u << manBits) - 1);
    double v;
    if (fn && e == (1u << expBits) - 1 && m == (1u << manBits) - 1)
      return NAN;
    if (!fn && e == (1u << expBits) - 1)
      v = m ? NAN : INFINITY;
    else if (e == 0)
      v = std::ldexp(double(m), 1 - bias() - manBits);
    else
      v = std::ldexp(double(m + (1u << manBits)), int(e) - bias() - manBits);
    return neg ? -v : v;
  }
};

inline constexpr MiniFloat kBF16{8, 7, false, false};
inline constexpr MiniFloat kF16{5, 10, false, false};
inline constexpr MiniFloat kE4M3{4, 3, true, true};
inline constexpr MiniFloat kE5M2{5, 2, false, true};

/// The format of a 1- or 2-byte DType (F32 and others: none).
inline const MiniFloat *miniFloatOf(DType t) {
  switch (t) {
  case DType::BF16:
    return &kBF16;
  case DType::F16:
    return &kF16;
  case DType::F8_E4M3:
    return &kE4M3;
  case DType::F8_E5M2:
    return &kE5M2;
  default:
    return nullptr;
  }
}

/// Rounds `x` to `t` (F32, BF16, F16, F8_*), returning the value as double.
inline double roundTo(DType t, double x) {
  if (t == DType::F32)
    return static_cast<double>(static_cast<float>(x));
  const MiniFloat *f = miniFloatOf(t);
  return f->decode(f->encode(x));
}

/// Encodes `values` (already representable, or rounded here) as `t`'s bytes.
inline std::vector<uint8_t> encodeAs(DType t, const std::vector<double> &values) {
  size_t w = dtypeSize(t);
  std::vector<uint8_t> out(values.size() * w);
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == DType::F32) {
      float f = static_cast<float>(values[i]);
      std::memcpy(&out[i * 4], &f, 4);
      continue;
    }
    uint32_t bits = miniFloatOf(t)->encode(values[i]);
    if (w == 2) {
      uint16_t b = static_cast<uint16_t>(bits);
      std::memcpy(&out[i * 2], &b, 2);
    } else {
      out[i] = static_cast<uint8_t>(bits);
    }
  }
  return out;
}

/// Decodes `n` elements of `t` from `bytes`.
inline std::vector<double> decodeAs(DType t, const uint8_t *bytes, size_t n) {
  std::vector<double> out(n);
  size_t w = dtypeSize(t);
  for (size_t i = 0; i < n; ++i) {
    if (t == DType::F32) {
      float f;
      std::memcpy(&f, bytes + i * 4, 4);
      out[i] = f;
    } else if (w == 2) {
      uint16_t b;
      std::memcpy(&b, bytes + i * 2, 2);
      out[i] = miniFloatOf(t)->decode(b);
    } else {
      out[i] = miniFloatOf(t)->decode(bytes[i]);
    }
  }
  return out;
}

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_HOSTFLOAT_H
