//===- Slot.cpp - an argument or result of a compiled function -----------===//

#include "lpc/Runtime/Slot.h"

#include "lpc/Runtime/HostFloat.h"

#include <climits>
#include <cstdint>
#include <cstring>

namespace lpc {
namespace rt {

int64_t Slot::numElements() const {
  std::optional<int64_t> n = numElementsOf(shape);
  return n ? *n : -1;
}

size_t Slot::byteSize() const {
  std::optional<int64_t> n = numElementsOf(shape);
  int64_t size = int64_t(dtypeSize(dtype));
  if (!n || (*n > 0 && *n > INT64_MAX / size))
    return SIZE_MAX;
  return size_t(*n * size);
}

double slotValue(const Slot &slot, const void *data, int64_t i) {
  const auto *p = static_cast<const uint8_t *>(data);
  switch (slot.dtype) {
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p + 4 * i, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, p + 8 * i, 8);
    return double(v);
  }
  case DType::BOOL:
    return p[i] ? 1.0 : 0.0;
  default: // floats
    return decodeAs(slot.dtype, p + i * dtypeSize(slot.dtype), 1)[0];
  }
}

} // namespace rt
} // namespace lpc
