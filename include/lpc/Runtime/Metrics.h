//===- Metrics.h - per-step metrics as JSON lines ---------------*- C++ -*-===//
//
// One JSON object per line, flushed after each line, so a crashed or killed
// run leaves every completed step readable (`json.loads` per line, pandas'
// read_json(lines=True)). Numbers round-trip: float values are printed with
// %.9g, doubles with %.17g, integers exactly.
//
// Non-finite values (JSON has none) are written as null, and the line gets a
// member "nonfinite": {"<key>": "nan" | "inf" | "-inf", ...} saying what each
// null was; so numeric columns stay numbers-or-null, and a NaN loss is still
// visible. "nonfinite" is therefore a reserved key.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_METRICS_H
#define LPC_RUNTIME_METRICS_H

#include "lpc/Runtime/Error.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace lpc {
namespace rt {

/// Builds one JSON object, members in insertion order.
class JsonObject {
public:
  JsonObject &add(const std::string &key, float value);
  JsonObject &add(const std::string &key, double value);
  JsonObject &add(const std::string &key, int64_t value);
  JsonObject &add(const std::string &key, uint64_t value);
  JsonObject &add(const std::string &key, int value);
  JsonObject &add(const std::string &key, bool value);
  JsonObject &add(const std::string &key, const std::string &value);
  JsonObject &add(const std::string &key, const char *value);
  /// `json` must be a valid JSON value (e.g. another JsonObject's str()).
  JsonObject &addRaw(const std::string &key, const std::string &json);

  /// The object on one line, without a newline.
  std::string str() const;

private:
  void addNonFinite(const std::string &key, double value);
  std::vector<std::pair<std::string, std::string>> members_; // key, JSON value
  std::vector<std::pair<std::string, std::string>> nonFinite_;
};

class JsonlWriter {
public:
  JsonlWriter() = default;
  JsonlWriter(JsonlWriter &&other) noexcept;
  JsonlWriter &operator=(JsonlWriter &&other) noexcept;
  JsonlWriter(const JsonlWriter &) = delete;
  JsonlWriter &operator=(const JsonlWriter &) = delete;
  ~JsonlWriter();

  /// Opens (truncating, or appending when resuming a run) `path`; "-" is
  /// stdout.
  Error open(const std::string &path, bool append = false);
  /// Writes `object` and a newline, then flushes.
  Error write(const JsonObject &object);
  /// Writes a line that is already JSON (no newline inside), then flushes.
  Error writeLine(const std::string &json);
  Error close();
  bool isOpen() const { return file_ != nullptr; }

private:
  std::FILE *file_ = nullptr;
  bool ownsFile_ = false;
  std::string path_;
};

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_METRICS_H
