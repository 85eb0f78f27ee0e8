//===- Tensor.cpp - host tensors ------------------------------------------===//

#include "lpc/Runtime/Tensor.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>

namespace lpc {
namespace rt {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F8_E4M3:
  case DType::F8_E5M2:
  case DType::BOOL:
    return 1;
  case DType::I64:
    return 8;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F8_E4M3:
    return "F8_E4M3";
  case DType::F8_E5M2:
    return "F8_E5M2";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  case DType::BOOL:
    return "BOOL";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType d : kAllDTypes)
    if (name == dtypeName(d))
      return d;
  return std::nullopt;
}

std::optional<int64_t> numElementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > INT64_MAX / d)
      return std::nullopt;
    n *= d;
  }
  return n;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype(dtype), shape(std::move(shape)) {
  bytes.assign(expectedBytes(), 0);
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape, std::vector<uint8_t> bytes)
    : dtype(dtype), shape(std::move(shape)), bytes(std::move(bytes)) {}

int64_t Tensor::numElements() const { return numElementsOf(shape).value_or(0); }

size_t Tensor::expectedBytes() const {
  return static_cast<size_t>(numElements()) * dtypeSize(dtype);
}

bool Tensor::isConsistent() const {
  std::optional<int64_t> n = numElementsOf(shape);
  if (!n || static_cast<uint64_t>(*n) > SIZE_MAX / dtypeSize(dtype))
    return false;
  return bytes.size() == static_cast<size_t>(*n) * dtypeSize(dtype);
}

template <typename T>
static Tensor fromValues(DType dtype, std::vector<int64_t> shape,
                         const std::vector<T> &values) {
  Tensor t(dtype, std::move(shape));
  assert(t.bytes.size() == values.size() * sizeof(T) && "value count != shape");
  std::memcpy(t.bytes.data(), values.data(),
              std::min(t.bytes.size(), values.size() * sizeof(T)));
  return t;
}

Tensor Tensor::fromF32(std::vector<int64_t> shape, const std::vector<float> &values) {
  return fromValues(DType::F32, std::move(shape), values);
}
Tensor Tensor::fromI32(std::vector<int64_t> shape, const std::vector<int32_t> &values) {
  return fromValues(DType::I32, std::move(shape), values);
}
Tensor Tensor::fromI64(std::vector<int64_t> shape, const std::vector<int64_t> &values) {
  return fromValues(DType::I64, std::move(shape), values);
}

} // namespace rt
} // namespace lpc
