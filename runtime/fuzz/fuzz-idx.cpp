//===- fuzz-idx.cpp - libFuzzer target: IDX image / label files (gzip too) -===//
//
// Data files are untrusted: any bytes (plain or gzipped) read as IDX images
// and labels or are refused; what reads has consistent sizes.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lpc/Runtime/Data.h"

using namespace lpc::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = lpc::fuzz::inputPath(".idx");
  lpc::fuzz::writeInput(path, data, size);
  if (Expected<IdxImages> im = readIdxImages(path)) {
    LPC_FUZZ_CHECK(im->count > 0 && im->rows > 0 && im->cols > 0);
    LPC_FUZZ_CHECK(im->pixels.size() == size_t(im->count * im->rows * im->cols));
  }
  if (Expected<std::vector<uint8_t>> labels = readIdxLabels(path))
    LPC_FUZZ_CHECK(!labels->empty());
  return 0;
}
