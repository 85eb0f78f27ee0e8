//===- Position.h - "tag;key=value;..." strings (runtime-internal) ---------===//

#ifndef LPC_RUNTIME_POSITION_H
#define LPC_RUNTIME_POSITION_H

#include "lpc/Runtime/Error.h"
#include "lpc/Runtime/Json.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

namespace lpc {
namespace rt {
namespace detail {

/// 16 lower-case hex digits (positions record fingerprints this way).
inline std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

inline constexpr uint64_t kFnv1aOffset = 0xcbf29ce484222325ULL;

/// FNV-1a 64 of `n` bytes, continuing from `h` (start: kFnv1aOffset).
inline uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

/// Parses "tag;k1=v1;k2=v2" into {k1: v1, ...}; the tag must match, keys
/// must be unique and exactly `keys` (comma-separated list in the message).
inline Expected<std::map<std::string, std::string>>
parsePosition(const std::string &text, const std::string &tag, const char *const *keys,
              size_t numKeys, const std::string &what) {
  auto bad = [&](const std::string &why) {
    return makeError(what + " \"" + text + "\"", why);
  };
  std::map<std::string, std::string> kv;
  size_t semi = text.find(';');
  if (text.substr(0, semi) != tag)
    return bad("does not start with '" + tag + ";'");
  size_t pos = semi;
  while (pos != std::string::npos) {
    size_t start = pos + 1;
    size_t end = text.find(';', start);
    std::string item = text.substr(start, end == std::string::npos ? std::string::npos
                                                                    : end - start);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return bad("malformed entry '" + item + "' (expected key=value)");
    if (!kv.emplace(item.substr(0, eq), item.substr(eq + 1)).second)
      return bad("key '" + item.substr(0, eq) + "' appears twice");
    pos = end;
  }
  for (size_t i = 0; i < numKeys; ++i)
    if (!kv.count(keys[i]))
      return bad(std::string("lacks '") + keys[i] + "'");
  if (kv.size() != numKeys)
    for (const auto &e : kv) {
      bool known = false;
      for (size_t i = 0; i < numKeys; ++i)
        known |= e.first == keys[i];
      if (!known)
        return bad("unknown key '" + e.first + "'");
    }
  return kv;
}

inline Expected<uint64_t> positionU64(const std::map<std::string, std::string> &kv,
                                      const std::string &key, const std::string &what) {
  std::optional<uint64_t> v = parseUInt64(kv.at(key));
  if (!v)
    return makeError(what, "'" + key + "=" + kv.at(key) + "' is not a non-negative integer");
  return *v;
}

} // namespace detail
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_POSITION_H
