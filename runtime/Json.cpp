//===- Json.cpp - minimal JSON parser and writers --------------------------===//

#include "lpc/Runtime/Json.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lpc {
namespace rt {

//===----------------------------------------------------------------------===//
// JsonValue
//===----------------------------------------------------------------------===//

const JsonValue *JsonValue::find(std::string_view key) const {
  for (const auto &m : members)
    if (m.first == key)
      return &m.second;
  return nullptr;
}

std::optional<uint64_t> JsonValue::asUInt64() const {
  if (kind != Kind::Number)
    return std::nullopt;
  return parseUInt64(text);
}

double JsonValue::asDouble() const { return std::strtod(text.c_str(), nullptr); }

const char *JsonValue::kindName() const {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "boolean";
  case Kind::Number:
    return "number";
  case Kind::String:
    return "string";
  case Kind::Array:
    return "array";
  case Kind::Object:
    return "object";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// UTF-8
//===----------------------------------------------------------------------===//

/// Length of the well-formed UTF-8 sequence at s[i], or 0 if there is none.
static size_t utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80)
    return 1;
  size_t n;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k) {
    unsigned char cc = byte(i + k);
    if ((cc & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

bool isValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8SequenceLength(s, i);
    if (n == 0)
      return false;
    i += n;
  }
  return true;
}

static void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {
constexpr int kMaxDepth = 64;

class Parser {
public:
  explicit Parser(std::string_view text) : s(text) {}

  Expected<JsonValue> parseDocument() {
    skipSpace();
    JsonValue v;
    if (!parseValue(v, 0))
      return fail();
    skipSpace();
    if (pos != s.size()) {
      error("unexpected '" + charName(s[pos]) + "' after the JSON value");
      return fail();
    }
    return v;
  }

private:
  std::string_view s;
  size_t pos = 0;
  size_t errPos = 0;
  std::string err;

  Error fail() const {
    return Error::make("byte " + std::to_string(errPos) + ": " + err);
  }
  bool error(const std::string &msg) {
    if (err.empty()) {
      err = msg;
      errPos = pos;
    }
    return false;
  }
  static std::string charName(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F)
      return std::string(1, c);
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\x%02x", u);
    return buf;
  }
  void skipSpace() {
    while (pos < s.size() &&
           (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r'))
      ++pos;
  }
  bool expectLiteral(const char *lit) {
    size_t n = std::strlen(lit);
    if (s.substr(pos, n) != lit)
      return error(std::string("invalid literal (expected '") + lit + "')");
    pos += n;
    return true;
  }

  bool parseValue(JsonValue &v, int depth) {
    if (pos >= s.size())
      return error("unexpected end of JSON");
    switch (s[pos]) {
    case '{':
      return parseObject(v, depth + 1);
    case '[':
      return parseArray(v, depth + 1);
    case '"':
      v.kind = JsonValue::Kind::String;
      return parseString(v.text);
    case 't':
      v.kind = JsonValue::Kind::Bool;
      v.boolean = true;
      return expectLiteral("true");
    case 'f':
      v.kind = JsonValue::Kind::Bool;
      v.boolean = false;
      return expectLiteral("false");
    case 'n':
      v.kind = JsonValue::Kind::Null;
      return expectLiteral("null");
    default:
      if (s[pos] == '-' || (s[pos] >= '0' && s[pos] <= '9'))
        return parseNumber(v);
      return error("unexpected '" + charName(s[pos]) + "' (expected a JSON value)");
    }
  }

  bool parseObject(JsonValue &v, int depth) {
    if (depth > kMaxDepth)
      return error("JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
    v.kind = JsonValue::Kind::Object;
    ++pos; // '{'
    skipSpace();
    if (pos < s.size() && s[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= s.size())
        return error("unexpected end of JSON inside an object");
      if (s[pos] != '"')
        return error("expected '\"' to start an object key, found '" + charName(s[pos]) +
                     "'");
      std::string key;
      if (!parseString(key))
        return false;
      skipSpace();
      if (pos >= s.size() || s[pos] != ':')
        return error("expected ':' after object key \"" + key + "\"");
      ++pos;
      skipSpace();
      JsonValue member;
      if (!parseValue(member, depth))
        return false;
      v.members.emplace_back(std::move(key), std::move(member));
      skipSpace();
      if (pos >= s.size())
        return error("unexpected end of JSON inside an object");
      if (s[pos] == ',') {
        ++pos;
        continue;
      }
      if (s[pos] == '}') {
        ++pos;
        return true;
      }
      return error("expected ',' or '}' in an object, found '" + charName(s[pos]) + "'");
    }
  }

  bool parseArray(JsonValue &v, int depth) {
    if (depth > kMaxDepth)
      return error("JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
    v.kind = JsonValue::Kind::Array;
    ++pos; // '['
    skipSpace();
    if (pos < s.size() && s[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      JsonValue element;
      if (!parseValue(element, depth))
        return false;
      v.elements.push_back(std::move(element));
      skipSpace();
      if (pos >= s.size())
        return error("unexpected end of JSON inside an array");
      if (s[pos] == ',') {
        ++pos;
        continue;
      }
      if (s[pos] == ']') {
        ++pos;
        return true;
      }
      return error("expected ',' or ']' in an array, found '" + charName(s[pos]) + "'");
    }
  }

  bool parseHex4(uint32_t &out) {
    if (pos + 4 > s.size())
      return error("truncated \\u escape");
    out = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s[pos + k];
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= c - '0';
      else if (c >= 'a' && c <= 'f')
        out |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        out |= c - 'A' + 10;
      else
        return error("invalid \\u escape");
    }
    pos += 4;
    return true;
  }

  bool parseString(std::string &out) {
    ++pos; // opening quote
    out.clear();
    while (true) {
      if (pos >= s.size())
        return error("unterminated string");
      unsigned char c = static_cast<unsigned char>(s[pos]);
      if (c == '"') {
        ++pos;
        return true;
      }
      if (c < 0x20)
        return error("control character " + charName(s[pos]) + " in a string (must be escaped)");
      if (c == '\\') {
        ++pos;
        if (pos >= s.size())
          return error("unterminated string");
        char e = s[pos++];
        switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp;
          if (!parseHex4(cp))
            return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (s.substr(pos, 2) != "\\u")
              return error("unpaired UTF-16 surrogate in \\u escape");
            pos += 2;
            if (!parseHex4(lo))
              return false;
            if (lo < 0xDC00 || lo > 0xDFFF)
              return error("unpaired UTF-16 surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return error("unpaired UTF-16 surrogate in \\u escape");
          }
          appendUtf8(out, cp);
          break;
        }
        default:
          --pos;
          return error("invalid escape '\\" + charName(e) + "'");
        }
        continue;
      }
      size_t n = utf8SequenceLength(s, pos);
      if (n == 0)
        return error("invalid UTF-8 in a string");
      out.append(s.data() + pos, n);
      pos += n;
    }
  }

  bool parseNumber(JsonValue &v) {
    size_t start = pos;
    auto digit = [&](size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
    if (s[pos] == '-')
      ++pos;
    if (!digit(pos))
      return error("invalid number");
    if (s[pos] == '0') {
      ++pos;
      if (digit(pos))
        return error("invalid number (leading zero)");
    } else {
      while (digit(pos))
        ++pos;
    }
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      if (!digit(pos))
        return error("invalid number (no digits after '.')");
      while (digit(pos))
        ++pos;
    }
    if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
      ++pos;
      if (pos < s.size() && (s[pos] == '+' || s[pos] == '-'))
        ++pos;
      if (!digit(pos))
        return error("invalid number (no digits in the exponent)");
      while (digit(pos))
        ++pos;
    }
    v.kind = JsonValue::Kind::Number;
    v.text = std::string(s.substr(start, pos - start));
    return true;
  }
};
} // namespace

Expected<JsonValue> parseJson(std::string_view text) { return Parser(text).parseDocument(); }

//===----------------------------------------------------------------------===//
// Writers
//===----------------------------------------------------------------------===//

std::string jsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t n = utf8SequenceLength(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD"; // U+FFFD
        ++i;
      } else {
        out.append(s.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
    ++i;
  }
  return out;
}

std::string jsonQuote(std::string_view s) { return "\"" + jsonEscape(s) + "\""; }

static std::string printfNumber(const char *fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

/// "%g" prints integral values without a point ("3", "-0"); JSON readers
/// such as Python's then make an integer of them and lose -0. A ".0" keeps
/// them floating-point.
static std::string floatText(std::string s) {
  if (s.find_first_not_of("-0123456789") == std::string::npos)
    s += ".0";
  return s;
}

std::string jsonNumber(float value) {
  if (!std::isfinite(value))
    return "null";
  return floatText(printfNumber("%.9g", static_cast<double>(value)));
}
std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  return floatText(printfNumber("%.17g", value));
}
std::string jsonNumber(int64_t value) { return std::to_string(value); }
std::string jsonNumber(uint64_t value) { return std::to_string(value); }
std::string jsonNumber(int value) { return std::to_string(value); }

static std::string nonFiniteName(double value) {
  if (std::isnan(value))
    return "nan";
  return value > 0 ? "inf" : "-inf";
}

std::string formatDouble(double value) {
  if (!std::isfinite(value))
    return nonFiniteName(value);
  return printfNumber("%.17g", value);
}
std::string formatFloat(float value) {
  if (!std::isfinite(value))
    return nonFiniteName(value);
  return printfNumber("%.9g", static_cast<double>(value));
}

std::optional<uint64_t> parseUInt64(std::string_view s) {
  if (s.empty() || s.size() > 20)
    return std::nullopt;
  if (s.size() > 1 && s[0] == '0')
    return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return std::nullopt;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10)
      return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

std::optional<int64_t> parseInt64(std::string_view s) {
  bool negative = !s.empty() && s[0] == '-';
  std::optional<uint64_t> magnitude = parseUInt64(negative ? s.substr(1) : s);
  if (!magnitude)
    return std::nullopt;
  if (negative) {
    if (*magnitude > static_cast<uint64_t>(INT64_MAX) + 1)
      return std::nullopt;
    if (*magnitude == 0)
      return std::nullopt; // "-0" is not a canonical integer
    return static_cast<int64_t>(0 - *magnitude);
  }
  if (*magnitude > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  return static_cast<int64_t>(*magnitude);
}

std::optional<double> parseDouble(std::string_view s) {
  if (s == "nan")
    return std::nan("");
  if (s == "inf")
    return HUGE_VAL;
  if (s == "-inf")
    return -HUGE_VAL;
  if (s.empty() || s.size() > 64)
    return std::nullopt;
  // Only the forms formatDouble writes (plus plain JSON numbers): no hex,
  // no leading '+', no spaces, no "infinity".
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' ||
          c == 'E'))
      return std::nullopt;
  std::string buf(s);
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || buf[0] == '+')
    return std::nullopt;
  return v;
}

} // namespace rt
} // namespace lpc
