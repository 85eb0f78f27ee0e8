// MetricsTests.cpp - tests of JSONL metrics lines and JsonlWriter (group metrics).

#include "TestHarness.h"

//===----------------------------------------------------------------------===//
// metrics
//===----------------------------------------------------------------------===//

TEST(metrics, lines) {
  JsonObject o;
  o.add("step", int64_t(3)).add("loss", 0.25f).add("lr", 1e-3).add("ok", true).add("name", "a\"b");
  CHECK_EQ(o.str(), std::string("{\"step\": 3, \"loss\": 0.25, \"lr\": 0.001, \"ok\": true, "
                                "\"name\": \"a\\\"b\"}"));
  JsonObject bad;
  bad.add("loss", NAN).add("scale", static_cast<double>(INFINITY)).add("x", -INFINITY);
  CHECK_EQ(bad.str(), std::string("{\"loss\": null, \"scale\": null, \"x\": null, \"nonfinite\": "
                                  "{\"loss\": \"nan\", \"scale\": \"inf\", \"x\": \"-inf\"}}"));
  CHECK_OK(parseJson(bad.str()));
  std::string path = tmp("metrics.jsonl");
  JsonlWriter w;
  CHECK_OK(w.open(path));
  CHECK_OK(w.write(o));
  // Flushed: readable before the writer is closed.
  std::vector<uint8_t> now = readBytes(path);
  CHECK_EQ(std::string(now.begin(), now.end()), o.str() + "\n");
  CHECK_OK(w.write(bad));
  CHECK_ERR(w.writeLine("{\n}"), "must not contain a newline");
  CHECK_OK(w.close());
  JsonlWriter app;
  CHECK_OK(app.open(path, /*append=*/true));
  CHECK_OK(app.writeLine("{}"));
  CHECK_OK(app.close());
  now = readBytes(path);
  CHECK_EQ(std::string(now.begin(), now.end()), o.str() + "\n" + bad.str() + "\n{}\n");
  JsonlWriter closed;
  CHECK_ERR(closed.writeLine("{}"), "not open");
  CHECK_ERR(closed.open(gTempDir), "cannot open for writing");
  JsonlWriter moved = std::move(w);
  CHECK(!moved.isOpen());
}
