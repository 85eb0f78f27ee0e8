// TestHarness.h - shared harness of lpc-runtime-tests: TEST/CHECK*/SKIP macros, test registry, helpers.
//
// A tiny harness (the runtime builds without exceptions and without any test
// framework): TEST(group, name) registers a test; CHECK* record failures and
// go on. Every *Tests.cpp of this directory includes it; TestMain.cpp runs the
// registered tests (see there for the command line).
//
#ifndef LPC_RUNTIME_TESTS_TESTHARNESS_H
#define LPC_RUNTIME_TESTS_TESTHARNESS_H

#include "lpc/Runtime/BatchIterator.h"
#include "lpc/Runtime/Data.h"
#include "lpc/Runtime/Error.h"
#include "lpc/Runtime/File.h"
#include "lpc/Runtime/Json.h"
#include "lpc/Runtime/Metrics.h"
#include "lpc/Runtime/Random.h"
#include "lpc/Runtime/Safetensors.h"
#include "lpc/Runtime/Tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#ifdef LPC_RUNTIME_HAVE_ZLIB
#include <zlib.h>
#endif

using namespace lpc::rt;

//===----------------------------------------------------------------------===//
// Harness
//===----------------------------------------------------------------------===//

struct TestCase {
  std::string group, name;
  void (*fn)();
};
inline std::vector<TestCase> &registry() {
  static std::vector<TestCase> r;
  return r;
}
struct Registrar {
  Registrar(const char *group, const char *name, void (*fn)()) {
    std::string g = group;
    std::replace(g.begin(), g.end(), '_', '-');
    registry().push_back({g, name, fn});
  }
};

inline int gFailures = 0;     // in the current test
inline bool gSkipped = false; // current test skipped
inline std::string gSkipReason;

inline void fail(const char *file, int line, const std::string &msg) {
  ++gFailures;
  std::fprintf(stderr, "  FAIL %s:%d: %s\n", file, line, msg.c_str());
}

template <typename T> std::string show(const T &v) {
  if constexpr (std::is_same_v<T, std::string>)
    return "\"" + v + "\"";
  else if constexpr (std::is_same_v<T, bool>)
    return v ? "true" : "false";
  else if constexpr (std::is_floating_point_v<T>) {
    char b[64];
    std::snprintf(b, sizeof(b), "%.17g", static_cast<double>(v));
    return b;
  } else if constexpr (std::is_enum_v<T>)
    return std::to_string(static_cast<long long>(v));
  else if constexpr (std::is_integral_v<T>)
    return std::to_string(v);
  else
    return "<value>";
}

inline std::string messageOf(const Error &e) { return e.message(); }
template <typename T> std::string messageOf(const Expected<T> &e) { return e.error().message(); }
inline bool failed(const Error &e) { return !e.ok(); }
template <typename T> bool failed(const Expected<T> &e) { return !e.ok(); }

inline std::string gTempDir;

#define TEST(group, name)                                                                      \
  static void test_##group##_##name();                                                         \
  static Registrar registrar_##group##_##name(#group, #name, test_##group##_##name);           \
  static void test_##group##_##name()

#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond))                                                                               \
      fail(__FILE__, __LINE__, "CHECK(" #cond ")");                                            \
  } while (0)

#define CHECK_EQ(a, b)                                                                         \
  do {                                                                                         \
    const auto va_ = (a);                                                                        \
    const auto vb_ = (b);                                                                        \
    if (!(va_ == vb_))                                                                         \
      fail(__FILE__, __LINE__,                                                                 \
           "CHECK_EQ(" #a ", " #b "): " + show(va_) + " != " + show(vb_));                     \
  } while (0)

/// `expr` (an Error or Expected) succeeds; else prints its message.
#define CHECK_OK(expr)                                                                         \
  do {                                                                                         \
    auto &&r_ = (expr);                                                                        \
    if (failed(r_))                                                                            \
      fail(__FILE__, __LINE__, "CHECK_OK(" #expr "): " + messageOf(r_));                       \
  } while (0)

/// `expr` fails with a message containing every one of the strings.
#define CHECK_ERR(expr, ...)                                                                   \
  do {                                                                                         \
    auto &&r_ = (expr);                                                                        \
    if (!failed(r_)) {                                                                         \
      fail(__FILE__, __LINE__, "CHECK_ERR(" #expr "): succeeded");                             \
    } else {                                                                                   \
      for (const char *want_ : {__VA_ARGS__})                                                  \
        if (messageOf(r_).find(want_) == std::string::npos)                                    \
          fail(__FILE__, __LINE__,                                                             \
               "CHECK_ERR(" #expr "): message \"" + messageOf(r_) + "\" lacks \"" + want_ +    \
                   "\"");                                                                      \
    }                                                                                          \
  } while (0)

#define SKIP(reason)                                                                           \
  do {                                                                                         \
    gSkipped = true;                                                                           \
    gSkipReason = (reason);                                                                    \
    return;                                                                                    \
  } while (0)

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

inline std::string tmp(const std::string &name) { return gTempDir + "/" + name; }

inline void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::abort();
  }
  if (!bytes.empty())
    std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}
inline void writeText(const std::string &path, const std::string &text) {
  writeBytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}
inline std::vector<uint8_t> readBytes(const std::string &path) {
  Expected<std::vector<uint8_t>> r = readFile(path);
  return r ? r.take() : std::vector<uint8_t>();
}

#ifdef LPC_RUNTIME_HAVE_ZLIB
inline std::vector<uint8_t> gzipBytes(const std::vector<uint8_t> &in) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::vector<uint8_t> out(deflateBound(&zs, in.size()) + 64);
  zs.next_in = const_cast<Bytef *>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}
#endif

/// Files in gTempDir whose name contains `part`.
inline std::vector<std::string> tempFilesContaining(const std::string &part) {
  std::vector<std::string> found;
  if (DIR *d = opendir(gTempDir.c_str())) {
    while (dirent *e = readdir(d))
      if (std::string(e->d_name).find(part) != std::string::npos)
        found.push_back(e->d_name);
    closedir(d);
  }
  return found;
}

/// Every dtype, with byte patterns that matter for each (NaNs, infinities,
/// max values, negative zero, subnormals).
inline std::map<std::string, Tensor> sampleTensors() {
  std::map<std::string, Tensor> t;
  t["a.f32"] = Tensor::fromF32({2, 3}, {0.0f, 1.0f, -2.5f, 3.4028235e38f, 1e-45f, NAN});
  t["b.f16"] = Tensor(DType::F16, {4},
                      {0x00, 0x3C, 0xFF, 0x7B, 0x00, 0x80, 0x00, 0x7C}); // 1, 65504, -0, inf
  t["c.bf16"] = Tensor(DType::BF16, {2, 2},
                       {0x80, 0x3F, 0x20, 0xC0, 0x80, 0x7F, 0xC0, 0x7F}); // 1, -2.5, inf, nan
  t["d.f8e4m3"] = Tensor(DType::F8_E4M3, {5}, {0x38, 0x7E, 0xFE, 0x7F, 0x01}); // 1 448 -448 nan min
  t["e.f8e5m2"] = Tensor(DType::F8_E5M2, {5}, {0x3C, 0x7B, 0x7C, 0xFC, 0x7F}); // 1 57344 inf -inf nan
  t["f.i32"] = Tensor::fromI32({3}, {-1, 0, 2147483647});
  t["g.i64"] = Tensor::fromI64({2}, {INT64_MIN, 1234567890123456789LL});
  t["h.bool"] = Tensor(DType::BOOL, {3}, {1, 0, 1});
  t["scalar"] = Tensor::fromF32({}, {42.0f});
  t["empty"] = Tensor(DType::F32, {0, 3});
  return t;
}

inline Metadata sampleMetadata() {
  return {{"model", "mlp"},
          {"policy", "fp8"},
          {"step", "1234"},
          {"data.position", "batches-v1;examples=60000;batch=256;partial=pad;shuffle=1;seed=0;"
                            "epoch=0;index=3"},
          {"note", "quote \" backslash \\ newline \n tab \t unicode \xC3\xA9\xE2\x82\xAC"}};
}

#endif // LPC_RUNTIME_TESTS_TESTHARNESS_H
