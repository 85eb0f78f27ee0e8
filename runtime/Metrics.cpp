//===- Metrics.cpp - JSON-lines metrics writer -----------------------------===//

#include "lpc/Runtime/Metrics.h"

#include "lpc/Runtime/Json.h"

#include <cerrno>
#include <cmath>
#include <cstring>

namespace lpc {
namespace rt {

void JsonObject::addNonFinite(const std::string &key, double value) {
  members_.emplace_back(key, "null");
  nonFinite_.emplace_back(key, formatDouble(value)); // "nan", "inf", "-inf"
}

JsonObject &JsonObject::add(const std::string &key, float value) {
  if (!std::isfinite(value))
    addNonFinite(key, static_cast<double>(value));
  else
    members_.emplace_back(key, jsonNumber(value));
  return *this;
}
JsonObject &JsonObject::add(const std::string &key, double value) {
  if (!std::isfinite(value))
    addNonFinite(key, value);
  else
    members_.emplace_back(key, jsonNumber(value));
  return *this;
}
JsonObject &JsonObject::add(const std::string &key, int64_t value) {
  members_.emplace_back(key, jsonNumber(value));
  return *this;
}
JsonObject &JsonObject::add(const std::string &key, uint64_t value) {
  members_.emplace_back(key, jsonNumber(value));
  return *this;
}
JsonObject &JsonObject::add(const std::string &key, int value) {
  members_.emplace_back(key, jsonNumber(value));
  return *this;
}
JsonObject &JsonObject::add(const std::string &key, bool value) {
  members_.emplace_back(key, value ? "true" : "false");
  return *this;
}
JsonObject &JsonObject::add(const std::string &key, const std::string &value) {
  members_.emplace_back(key, jsonQuote(value));
  return *this;
}
JsonObject &JsonObject::add(const std::string &key, const char *value) {
  return add(key, std::string(value ? value : ""));
}
JsonObject &JsonObject::addRaw(const std::string &key, const std::string &json) {
  members_.emplace_back(key, json);
  return *this;
}

std::string JsonObject::str() const {
  std::string s = "{";
  bool first = true;
  for (const auto &m : members_) {
    if (!first)
      s += ", ";
    first = false;
    s += jsonQuote(m.first) + ": " + m.second;
  }
  if (!nonFinite_.empty()) {
    if (!first)
      s += ", ";
    s += "\"nonfinite\": {";
    for (size_t i = 0; i < nonFinite_.size(); ++i)
      s += (i ? ", " : "") + jsonQuote(nonFinite_[i].first) + ": " +
           jsonQuote(nonFinite_[i].second);
    s += "}";
  }
  return s + "}";
}

JsonlWriter::JsonlWriter(JsonlWriter &&o) noexcept
    : file_(o.file_), ownsFile_(o.ownsFile_), path_(std::move(o.path_)) {
  o.file_ = nullptr;
  o.ownsFile_ = false;
}

JsonlWriter &JsonlWriter::operator=(JsonlWriter &&o) noexcept {
  if (this != &o) {
    (void)close();
    file_ = o.file_;
    ownsFile_ = o.ownsFile_;
    path_ = std::move(o.path_);
    o.file_ = nullptr;
    o.ownsFile_ = false;
  }
  return *this;
}

JsonlWriter::~JsonlWriter() { (void)close(); }

Error JsonlWriter::open(const std::string &path, bool append) {
  if (Error e = close())
    return e;
  path_ = path;
  if (path == "-") {
    file_ = stdout;
    ownsFile_ = false;
    return Error::success();
  }
  file_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!file_)
    return makeError(path, std::string("cannot open for writing: ") + std::strerror(errno));
  ownsFile_ = true;
  return Error::success();
}

Error JsonlWriter::writeLine(const std::string &json) {
  if (!file_)
    return makeError(path_, "metrics file is not open");
  if (json.find('\n') != std::string::npos)
    return makeError(path_, "a JSON line must not contain a newline");
  if (std::fwrite(json.data(), 1, json.size(), file_) != json.size() ||
      std::fputc('\n', file_) == EOF || std::fflush(file_) != 0)
    return makeError(path_, std::string("write failed: ") + std::strerror(errno));
  return Error::success();
}

Error JsonlWriter::write(const JsonObject &object) { return writeLine(object.str()); }

Error JsonlWriter::close() {
  if (!file_)
    return Error::success();
  std::FILE *f = file_;
  bool owns = ownsFile_;
  file_ = nullptr;
  ownsFile_ = false;
  if (owns && std::fclose(f) != 0)
    return makeError(path_, std::string("close failed: ") + std::strerror(errno));
  if (!owns)
    std::fflush(f);
  return Error::success();
}

} // namespace rt
} // namespace lpc
