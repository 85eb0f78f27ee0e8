//===- FuzzCheck.h - the property check of lpc's libFuzzer targets -*- C++ -*-===//
//
// One definition for the runtime's reader targets (runtime/fuzz) and the
// compiler's (tools/fuzz-model): a property that must hold for every input
// reports where and what, with an optional printf-style detail, and aborts,
// so that libFuzzer saves the input as a crash. No LLVM: the runtime's
// targets link none.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_SUPPORT_FUZZCHECK_H
#define LPC_SUPPORT_FUZZCHECK_H

#include <cstdio>
#include <cstdlib>

// In mlir::lpc, like SplitMix.h, so that code that uses namespace mlir (the
// compiler's target) sees one `lpc`; the header itself needs no MLIR.
namespace mlir {
namespace lpc {
namespace fuzz {

[[noreturn]] inline void propertyFailed(const char *file, int line,
                                        const char *cond) {
  std::fprintf(stderr, "%s:%d: property failed: %s\n", file, line, cond);
  std::abort();
}

template <typename... Args>
[[noreturn]] void propertyFailed(const char *file, int line, const char *cond,
                                 const char *detail, Args... args) {
  std::fprintf(stderr, "%s:%d: property failed: %s\n  ", file, line, cond);
  std::fprintf(stderr, detail, args...);
  std::fprintf(stderr, "\n");
  std::abort();
}

} // namespace fuzz
} // namespace lpc
} // namespace mlir

/// LPC_FUZZ_CHECK(cond) or LPC_FUZZ_CHECK(cond, "printf format", args...).
#define LPC_FUZZ_CHECK(cond, ...)                                              \
  do {                                                                         \
    if (!(cond))                                                               \
      ::mlir::lpc::fuzz::propertyFailed(__FILE__, __LINE__,                          \
                                  #cond __VA_OPT__(, ) __VA_ARGS__);           \
  } while (0)

#endif // LPC_SUPPORT_FUZZCHECK_H
