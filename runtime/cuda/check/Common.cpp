//===- Common.cpp - helpers several lpc-cuda-check modes use --------------===//
//
// Declared in Check.h.
//
//===----------------------------------------------------------------------===//

#include "Check.h"

#include "lpc/Runtime/HostFloat.h"

#include <cstdio>

namespace lpc {
namespace rt {
namespace cuda {
namespace check {

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GiB", bytes / 1073741824.0);
  return buf;
}

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  return buf;
}

std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos)
      comma = s.size();
    if (comma > start)
      out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Expected<DeviceBuffer> upload(Device &dev, const void *data, size_t bytes) {
  Expected<DeviceBuffer> buf = dev.allocate(bytes);
  if (!buf)
    return buf.takeError();
  if (Error e = dev.copyToDevice(buf->get(), data, bytes))
    return e;
  return buf;
}

GemmDesc makeDesc(int64_t m, int64_t n, int64_t k, int64_t batch, bool ta, bool tb,
                  DType a, DType b, DType c, GemmEpilogue ep) {
  GemmDesc d;
  d.m = m, d.n = n, d.k = k, d.batch = batch, d.transA = ta, d.transB = tb;
  d.a = a, d.b = b, d.c = c, d.epilogue = ep;
  return d;
}

std::vector<double> randomValues(Rng &rng, size_t n, DType t) {
  std::vector<double> v(n);
  for (double &x : v) {
    double mag = 0.25 + 1.75 * rng.uniform();
    x = roundTo(t, rng.uniform() < 0.5 ? -mag : mag);
  }
  return v;
}

} // namespace check
} // namespace cuda
} // namespace rt
} // namespace lpc
