//===- Json.h - minimal JSON for headers, metadata and metrics --*- C++ -*-===//
//
// Just enough JSON for safetensors headers and metrics lines: a strict
// RFC 8259 parser (no comments, no trailing commas, no NaN literals; UTF-8
// only; nesting limited to 64 levels) that keeps numbers as their source text
// so 64-bit offsets are read exactly, and writers for strings and numbers.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_JSON_H
#define LPC_RUNTIME_JSON_H

#include "lpc/Runtime/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lpc {
namespace rt {

/// A parsed JSON value. Objects keep their members in source order,
/// duplicates included, so callers can report duplicate keys.
struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  std::string text; // String: the decoded string; Number: the source text
  std::vector<JsonValue> elements;                          // Array
  std::vector<std::pair<std::string, JsonValue>> members;   // Object

  bool isNull() const { return kind == Kind::Null; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }

  /// The first member named `key` of an object; nullptr if absent.
  const JsonValue *find(std::string_view key) const;
  /// A Number that is a non-negative integer without fraction or exponent
  /// ("0", "123") fitting in uint64_t; nullopt otherwise.
  std::optional<uint64_t> asUInt64() const;
  /// A Number as double (strtod of its text).
  double asDouble() const;
  /// "null", "boolean", "number", "string", "array", "object".
  const char *kindName() const;
};

/// Parses one JSON document (surrounding whitespace allowed). Errors say
/// "byte N: problem" (0-based offset in `text`).
Expected<JsonValue> parseJson(std::string_view text);

/// True if `s` is well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF).
bool isValidUtf8(std::string_view s);

/// `s` as a JSON string literal, quotes included: `"`, `\` and control
/// characters escaped (\n, \t, \r, \b, \f, else \u00XX); other bytes pass
/// through. Bytes that are not valid UTF-8 become U+FFFD so the output always
/// parses (writers that must not lose data check isValidUtf8 first).
std::string jsonQuote(std::string_view s);
/// jsonQuote without the quotes.
std::string jsonEscape(std::string_view s);

/// Round-trip number text: "%.9g" for float, "%.17g" for double (parsing the
/// text back gives the same value), with ".0" added to integral values ("3.0",
/// "-0.0") so that readers keep them floating-point and keep -0. Non-finite values have no
/// JSON form: these return "null" for them (see JsonlWriter for how metrics
/// record which non-finite value it was).
std::string jsonNumber(float value);
std::string jsonNumber(double value);
std::string jsonNumber(int64_t value);
std::string jsonNumber(uint64_t value);
std::string jsonNumber(int value);

/// Exact text forms for checkpoint metadata (safetensors metadata values are
/// strings): decimal for integers, "%.17g" / "%.9g" for floats (which read
/// back exactly with parseDouble), with "nan", "inf", "-inf" for non-finite.
std::string formatDouble(double value);
std::string formatFloat(float value);
/// Strict parses of the above: the whole string must be consumed.
std::optional<uint64_t> parseUInt64(std::string_view s);
std::optional<int64_t> parseInt64(std::string_view s);
std::optional<double> parseDouble(std::string_view s);

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_JSON_H
