//===- fuzz-corpus.cpp - libFuzzer target: text corpora and data positions ===//
//
// --data=text:PATH reads any file (gzipped or not) as a byte corpus, and a
// checkpoint's "data_position" metadata is parsed on resume. The input is
// both: the corpus file, and (its first line) a position to restore.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lpc/Runtime/Data.h"

#include <vector>

using namespace lpc::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = lpc::fuzz::inputPath(".txt");
  lpc::fuzz::writeInput(path, data, size);
  Expected<CharCorpus> c = loadCharCorpus(path);
  if (!c)
    return 0;
  LPC_FUZZ_CHECK(!c->bytes.empty());
  auto [train, val] = splitCharCorpus(*c, 0.1);
  LPC_FUZZ_CHECK(train.bytes.size() + val.bytes.size() == c->bytes.size());
  Expected<CorpusSampler> s = CorpusSampler::create(*c, 2, 4, 7);
  if (!s)
    return 0;
  std::vector<int32_t> tokens(8), targets(8);
  s->next(tokens.data(), targets.data());
  for (int i = 0; i < 8; ++i)
    LPC_FUZZ_CHECK(tokens[i] >= 0 && tokens[i] < kCharVocabSize);
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string position = text.substr(0, text.find('\n'));
  if (!s->restore(position)) // accepted: the position must round-trip
    LPC_FUZZ_CHECK(s->position() == position);
  return 0;
}
