//===- fuzz-json.cpp - libFuzzer target: the runtime's JSON reader --------===//
//
// Artifacts, the runtime-only lpc-run's config files and safetensors headers
// go through parseJson. Any input parses or is refused; strings of a parsed
// document are valid UTF-8 and survive jsonQuote + parseJson unchanged.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lpc/Runtime/Json.h"

using namespace lpc::rt;

namespace {
void checkStrings(const JsonValue &v, int depth) {
  LPC_FUZZ_CHECK(depth < 100000);
  if (v.isString()) {
    LPC_FUZZ_CHECK(isValidUtf8(v.text));
    Expected<JsonValue> again = parseJson(jsonQuote(v.text));
    LPC_FUZZ_CHECK(again && again->isString() && again->text == v.text);
  }
  for (const JsonValue &e : v.elements)
    checkStrings(e, depth + 1);
  for (const auto &m : v.members) {
    LPC_FUZZ_CHECK(isValidUtf8(m.first));
    checkStrings(m.second, depth + 1);
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Expected<JsonValue> v = parseJson(text);
  if (v)
    checkStrings(*v, 0);
  // The number readers of options and metadata.
  (void)parseInt64(text);
  (void)parseUInt64(text);
  (void)parseDouble(text);
  return 0;
}
