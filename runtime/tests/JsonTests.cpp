// JsonTests.cpp - tests of JSON parsing, escaping and number round trips (group json).

#include "TestHarness.h"

//===----------------------------------------------------------------------===//
// json
//===----------------------------------------------------------------------===//

TEST(json, parse_values) {
  Expected<JsonValue> v = parseJson(
      " {\"a\": [1, -2.5e3, true, false, null], \"b\": {\"c\": \"x\\ty\\u00e9\\ud83d\\ude00\"},"
      " \"a\": 0} ");
  CHECK_OK(v);
  if (!v)
    return;
  CHECK(v->isObject());
  CHECK_EQ(v->members.size(), size_t(3)); // duplicates kept
  const JsonValue *a = v->find("a");
  CHECK(a && a->isArray() && a->elements.size() == 5);
  CHECK_EQ(a->elements[0].asUInt64().value_or(99), uint64_t(1));
  CHECK(!a->elements[1].asUInt64());
  CHECK_EQ(a->elements[1].asDouble(), -2500.0);
  CHECK(a->elements[2].isBool() && a->elements[2].boolean);
  CHECK(a->elements[4].isNull());
  CHECK_EQ(v->find("b")->find("c")->text, std::string("x\ty\xC3\xA9\xF0\x9F\x98\x80"));
  CHECK_EQ(parseJson("18446744073709551615")->asUInt64().value_or(0), UINT64_MAX);
  CHECK(!parseJson("18446744073709551616")->asUInt64());
  CHECK(!parseJson("1.0")->asUInt64());
  CHECK(!parseJson("1e3")->asUInt64());
  CHECK(!parseJson("-1")->asUInt64());
}

TEST(json, parse_errors) {
  CHECK_ERR(parseJson(""), "byte 0", "unexpected end");
  CHECK_ERR(parseJson("{\"a\":1,}"), "byte 7", "expected '\"'");
  CHECK_ERR(parseJson("[1,]"), "expected a JSON value");
  CHECK_ERR(parseJson("{\"a\" 1}"), "expected ':'");
  CHECK_ERR(parseJson("{\"a\":1"), "end of JSON inside an object");
  CHECK_ERR(parseJson("01"), "leading zero");
  CHECK_ERR(parseJson("1."), "no digits after '.'");
  CHECK_ERR(parseJson("NaN"), "expected a JSON value");
  CHECK_ERR(parseJson("tru"), "invalid literal");
  CHECK_ERR(parseJson("\"abc"), "unterminated string");
  CHECK_ERR(parseJson("\"a\nb\""), "control character");
  CHECK_ERR(parseJson("\"\\x\""), "invalid escape");
  CHECK_ERR(parseJson("\"\\ud800\""), "surrogate");
  CHECK_ERR(parseJson("\"\xff\""), "invalid UTF-8");
  CHECK_ERR(parseJson("{} {}"), "after the JSON value");
  CHECK_ERR(parseJson(std::string(100, '[') + std::string(100, ']')), "nested deeper");
  CHECK_OK(parseJson(std::string(60, '[') + std::string(60, ']')));
}

TEST(json, escape_and_utf8) {
  CHECK_EQ(jsonQuote("a\"b\\c\n\x01/"), std::string("\"a\\\"b\\\\c\\n\\u0001/\""));
  CHECK_EQ(jsonEscape("\xC3\xA9"), std::string("\xC3\xA9"));
  CHECK_EQ(jsonEscape("a\xFF" "b"), std::string("a\xEF\xBF\xBD" "b"));
  CHECK(isValidUtf8("plain \xC3\xA9 \xF0\x9F\x98\x80"));
  CHECK(!isValidUtf8("\xC0\xAF"));         // overlong
  CHECK(!isValidUtf8("\xED\xA0\x80"));     // surrogate
  CHECK(!isValidUtf8("\xF4\x90\x80\x80")); // > U+10FFFF
  CHECK(!isValidUtf8("\xE2\x82"));         // truncated
  // Every escaped string parses back to itself.
  std::string all;
  for (int c = 1; c < 128; ++c)
    all += static_cast<char>(c);
  all += "\xC3\xA9\xE2\x82\xAC";
  Expected<JsonValue> back = parseJson(jsonQuote(all));
  CHECK_OK(back);
  if (back)
    CHECK_EQ(back->text, all);
}

TEST(json, numbers_round_trip) {
  Rng rng(7);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng.next();
    double d;
    std::memcpy(&d, &bits, 8);
    float f;
    uint32_t fbits = static_cast<uint32_t>(bits >> 32);
    std::memcpy(&f, &fbits, 4);
    if (std::isfinite(d)) {
      std::optional<double> back = parseDouble(jsonNumber(d));
      CHECK(back && std::memcmp(&*back, &d, 8) == 0);
      CHECK_OK(parseJson(jsonNumber(d)));
    }
    if (std::isfinite(f)) {
      float back = static_cast<float>(std::strtod(jsonNumber(f).c_str(), nullptr));
      CHECK(std::memcmp(&back, &f, 4) == 0);
      CHECK_OK(parseJson(jsonNumber(f)));
    }
  }
  CHECK_EQ(jsonNumber(0.1f), std::string("0.100000001"));
  CHECK_EQ(jsonNumber(0.1), std::string("0.10000000000000001"));
  CHECK_EQ(jsonNumber(-0.0), std::string("-0.0"));
  CHECK_EQ(jsonNumber(3.0f), std::string("3.0"));
  CHECK_EQ(jsonNumber(1e20), std::string("1e+20"));
  CHECK_EQ(jsonNumber(static_cast<double>(NAN)), std::string("null"));
  CHECK_EQ(jsonNumber(INFINITY), std::string("null"));
  CHECK_EQ(jsonNumber(int64_t(-5)), std::string("-5"));
  CHECK_EQ(formatDouble(-INFINITY), std::string("-inf"));
  CHECK(std::isnan(*parseDouble(formatDouble(NAN))));
  CHECK_EQ(*parseDouble("inf"), static_cast<double>(INFINITY));
  CHECK_EQ(formatFloat(0.1f), std::string("0.100000001"));
  CHECK(!parseDouble("0x1p3"));
  CHECK(!parseDouble("1.5x"));
  CHECK(!parseDouble(""));
  CHECK_EQ(parseUInt64("0").value_or(1), uint64_t(0));
  CHECK(!parseUInt64("007"));
  CHECK(!parseUInt64("+7"));
  CHECK(!parseUInt64("18446744073709551616"));
  CHECK_EQ(parseInt64("-9223372036854775808").value_or(0), INT64_MIN);
  CHECK(!parseInt64("9223372036854775808"));
}
