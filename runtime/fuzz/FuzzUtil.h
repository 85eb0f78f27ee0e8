//===- FuzzUtil.h - shared bits of the runtime's libFuzzer targets -*- C++ -*-===//
//
// A fuzz target either returns normally (the input was handled: accepted or
// refused with an Error) or traps on a broken property; ASan and UBSan turn
// memory and undefined-behaviour bugs into crashes.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_FUZZ_FUZZUTIL_H
#define LPC_RUNTIME_FUZZ_FUZZUTIL_H

#include "lpc/Support/FuzzCheck.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace lpc {
namespace fuzz {

/// The readers of files take paths: the input goes to one file per process
/// (in $TMPDIR), rewritten for each input.
inline const std::string &inputPath(const char *suffix) {
  static std::string path = [&] {
    const char *dir = std::getenv("TMPDIR");
    std::string p = std::string(dir && *dir ? dir : "/tmp") + "/lpc-fuzz-" +
                    std::to_string(::getpid()) + suffix;
    return p;
  }();
  return path;
}

inline void writeInput(const std::string &path, const uint8_t *data, size_t size) {
  FILE *f = std::fopen(path.c_str(), "wb");
  LPC_FUZZ_CHECK(f != nullptr);
  LPC_FUZZ_CHECK(size == 0 || std::fwrite(data, 1, size, f) == size);
  LPC_FUZZ_CHECK(std::fclose(f) == 0);
}

} // namespace fuzz
} // namespace lpc

#endif // LPC_RUNTIME_FUZZ_FUZZUTIL_H
