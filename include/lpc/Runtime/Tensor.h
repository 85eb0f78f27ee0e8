//===- Tensor.h - host tensors of the lpc runtime ---------------*- C++ -*-===//
//
// A host buffer: element type, shape and the raw bytes, row-major and
// little-endian (the safetensors layout). BF16 / F16 / F8 elements are stored
// as their bit patterns (2 or 1 bytes each); the runtime moves them, it does
// not convert them. The runtime supports little-endian hosts only (x86-64,
// AArch64); a big-endian build fails to compile.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_TENSOR_H
#define LPC_RUNTIME_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the lpc runtime assumes a little-endian host"
#endif

namespace lpc {
namespace rt {

/// Element types; the names are safetensors' ("F32", "BF16", "F8_E4M3", ...).
/// F8_E4M3 is the "FN" variant (max 448, no infinities; MLIR's f8E4M3FN),
/// F8_E5M2 the IEEE-like one (MLIR's f8E5M2). BOOL is one byte per element.
enum class DType : uint8_t { F32, F16, BF16, F8_E4M3, F8_E5M2, I32, I64, BOOL };

inline constexpr DType kAllDTypes[] = {DType::F32,     DType::F16,
                                       DType::BF16,    DType::F8_E4M3,
                                       DType::F8_E5M2, DType::I32,
                                       DType::I64,     DType::BOOL};

/// Bytes per element.
size_t dtypeSize(DType dtype);
/// The safetensors name ("F32", "F8_E4M3", ...).
const char *dtypeName(DType dtype);
/// The DType of a safetensors name; nullopt for names lpc does not support.
std::optional<DType> parseDType(std::string_view name);

/// Number of elements of `shape` (1 for a scalar, shape []); nullopt if a
/// dimension is negative or the product overflows int64.
std::optional<int64_t> numElementsOf(const std::vector<int64_t> &shape);
/// "[2, 3]".
std::string shapeString(const std::vector<int64_t> &shape);

/// A host tensor that owns its bytes.
struct Tensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // row-major, little-endian

  Tensor() = default;
  Tensor(DType dtype, std::vector<int64_t> shape);   // zero-filled
  Tensor(DType dtype, std::vector<int64_t> shape, std::vector<uint8_t> bytes);

  int64_t numElements() const;
  /// numElements() * dtypeSize(dtype): what `bytes.size()` must be.
  size_t expectedBytes() const;
  /// True when bytes.size() == expectedBytes() and the shape is valid.
  bool isConsistent() const;

  /// Typed views of the bytes; the caller picks the type matching dtype
  /// (float for F32, int32_t for I32, int64_t for I64, uint16_t for
  /// F16/BF16 bit patterns, uint8_t for F8 and BOOL).
  template <typename T> T *data() { return reinterpret_cast<T *>(bytes.data()); }
  template <typename T> const T *data() const {
    return reinterpret_cast<const T *>(bytes.data());
  }

  /// Convenience constructors (copy `values`, which must have
  /// numElements(shape) entries).
  static Tensor fromF32(std::vector<int64_t> shape, const std::vector<float> &values);
  static Tensor fromI32(std::vector<int64_t> shape, const std::vector<int32_t> &values);
  static Tensor fromI64(std::vector<int64_t> shape, const std::vector<int64_t> &values);
};

/// A tensor that does not own its bytes (e.g. a trainer's device-mirrored
/// host buffer, written to a checkpoint without a copy).
struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t size = 0; // bytes
};

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_TENSOR_H
