// TestMain.cpp - main() of lpc-runtime-tests: runs the registered test groups and the lit helper modes.
//
// Usage:
//
//   lpc-runtime-tests [group...]          run the groups (all by default);
//                                         exit 0 ok, 1 failures, 77 all skipped
//   lpc-runtime-tests --list              list groups and tests
//
// Helpers for the lit tests in test/Runtime (cross-checks with Python):
//
//   --dump-safetensors FILE               metadata and tensors (hex bytes)
//   --write-sample-safetensors FILE       every dtype with known values
//   --write-sample-jsonl FILE             metrics lines with edge-case values
//
//===----------------------------------------------------------------------===//

#include "TestHarness.h"

//===----------------------------------------------------------------------===//
// Helper modes for lit tests
//===----------------------------------------------------------------------===//

static int dumpSafetensors(const std::string &path) {
  Expected<SafetensorsFile> f = readSafetensors(path);
  if (!f) {
    std::fprintf(stderr, "error: %s\n", f.error().message().c_str());
    return 1;
  }
  for (const auto &kv : f->metadata)
    std::printf("metadata %s = %s\n", jsonQuote(kv.first).c_str(), jsonQuote(kv.second).c_str());
  for (const auto &kv : f->tensors) {
    std::string shape;
    for (size_t i = 0; i < kv.second.shape.size(); ++i)
      shape += (i ? "," : "") + std::to_string(kv.second.shape[i]);
    std::printf("tensor %s %s [%s] ", kv.first.c_str(), dtypeName(kv.second.dtype), shape.c_str());
    for (uint8_t b : kv.second.bytes)
      std::printf("%02x", b);
    std::printf("\n");
  }
  return 0;
}

static int writeSampleSafetensors(const std::string &path) {
  if (Error e = writeSafetensors(path, sampleTensors(), sampleMetadata())) {
    std::fprintf(stderr, "error: %s\n", e.message().c_str());
    return 1;
  }
  return 0;
}

static int writeSampleJsonl(const std::string &path) {
  JsonlWriter w;
  if (Error e = w.open(path)) {
    std::fprintf(stderr, "error: %s\n", e.message().c_str());
    return 1;
  }
  // Each line: a value and its exact bits as hex, for the Python check.
  const float floats[] = {0.1f, 1.0f / 3.0f, 3.4028235e38f, 1e-45f, -0.0f, 16777217.0f, 1e-8f};
  const double doubles[] = {0.1, 1.0 / 3.0, 1.7976931348623157e308, 5e-324, -0.0, 1e300, 2.5};
  Error e;
  for (float f : floats) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    char hex[16];
    std::snprintf(hex, sizeof(hex), "%08x", bits);
    if (!e)
      e = w.write(JsonObject().add("kind", "f32").add("value", f).add("bits", std::string(hex)));
  }
  for (double d : doubles) {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    char hex[24];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(bits));
    if (!e)
      e = w.write(JsonObject().add("kind", "f64").add("value", d).add("bits", std::string(hex)));
  }
  if (!e)
    e = w.write(JsonObject()
                    .add("kind", "nonfinite")
                    .add("loss", NAN)
                    .add("grad_norm", static_cast<double>(INFINITY))
                    .add("amax", -INFINITY)
                    .add("step", int64_t(7)));
  if (!e)
    e = w.write(JsonObject()
                    .add("kind", "strings")
                    .add("text", "quote \" backslash \\ newline \n tab \t bell \x07 "
                                 "unicode \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 bad \xFF end")
                    .add("big", uint64_t(18446744073709551615ULL))
                    .add("neg", int64_t(INT64_MIN))
                    .add("flag", false));
  if (!e)
    e = w.close();
  if (e) {
    std::fprintf(stderr, "error: %s\n", e.message().c_str());
    return 1;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// main
//===----------------------------------------------------------------------===//

static std::string makeTempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/lpc-runtime-tests.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  return buf.data();
}

static void removeTree(const std::string &path) {
  if (DIR *d = opendir(path.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..")
        continue;
      std::string child = path + "/" + name;
      struct stat st;
      if (::lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        ::chmod(child.c_str(), 0755);
        removeTree(child);
      } else {
        ::unlink(child.c_str());
      }
    }
    closedir(d);
  }
  ::rmdir(path.c_str());
}

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "--dump-safetensors")
    return dumpSafetensors(args[1]);
  if (args.size() == 2 && args[0] == "--write-sample-safetensors")
    return writeSampleSafetensors(args[1]);
  if (args.size() == 2 && args[0] == "--write-sample-jsonl")
    return writeSampleJsonl(args[1]);
  if (args.size() == 1 && args[0] == "--list") {
    for (const TestCase &t : registry())
      std::printf("%s/%s\n", t.group.c_str(), t.name.c_str());
    return 0;
  }
  std::set<std::string> groups(args.begin(), args.end());
  for (const std::string &g : groups) {
    bool known = std::any_of(registry().begin(), registry().end(),
                             [&](const TestCase &t) { return t.group == g; });
    if (!known) {
      std::fprintf(stderr, "error: unknown test group '%s' (see --list)\n", g.c_str());
      return 2;
    }
  }
  gTempDir = makeTempDir();
  int passed = 0, failedTests = 0, skipped = 0;
  for (const TestCase &t : registry()) {
    if (!groups.empty() && !groups.count(t.group))
      continue;
    gFailures = 0;
    gSkipped = false;
    std::printf("[ RUN  ] %s/%s\n", t.group.c_str(), t.name.c_str());
    std::fflush(stdout);
    t.fn();
    testing::injectWriteFault(testing::WriteFault::None);
    if (gFailures) {
      ++failedTests;
      std::printf("[ FAIL ] %s/%s (%d failed checks)\n", t.group.c_str(), t.name.c_str(),
                  gFailures);
    } else if (gSkipped) {
      ++skipped;
      std::printf("[ SKIP ] %s/%s: %s\n", t.group.c_str(), t.name.c_str(), gSkipReason.c_str());
    } else {
      ++passed;
      std::printf("[  OK  ] %s/%s\n", t.group.c_str(), t.name.c_str());
    }
    std::fflush(stdout);
  }
  removeTree(gTempDir);
  std::printf("%d passed, %d failed, %d skipped\n", passed, failedTests, skipped);
  if (failedTests)
    return 1;
  if (skipped && !passed)
    return 77;
  return 0;
}
