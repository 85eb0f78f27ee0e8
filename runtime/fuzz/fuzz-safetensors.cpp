//===- fuzz-safetensors.cpp - libFuzzer target: the safetensors reader ----===//
//
// Checkpoints, --init weights and --data=tensors files are untrusted. Any
// input is decoded; what decodes must re-encode (with checksums) into a file
// that decodes to the same tensors and metadata, every checksum verified.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lpc/Runtime/Safetensors.h"

using namespace lpc::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // test/fuzz/runtime-fuzzers.test plants a false property this way to
  // check that scripts/lpc-fuzz.sh reports a failure.
  static const bool planted = std::getenv("LPC_FUZZ_PLANTED_BUG") != nullptr;
  Expected<SafetensorsFile> file = decodeSafetensors(data, size, "fuzz");
  if (!file)
    return 0;
  LPC_FUZZ_CHECK(!planted || !file->tensors.empty());
  std::vector<TensorView> views;
  for (const auto &[name, t] : file->tensors) {
    LPC_FUZZ_CHECK(t.isConsistent());
    views.push_back({name, t.dtype, t.shape, t.bytes.data(), t.bytes.size()});
  }
  Metadata md = withChecksums(views, file->metadata);
  Expected<std::vector<uint8_t>> bytes = encodeSafetensors(views, md, "fuzz");
  LPC_FUZZ_CHECK(bool(bytes));
  Expected<SafetensorsFile> back = decodeSafetensors(bytes->data(), bytes->size(), "fuzz");
  LPC_FUZZ_CHECK(bool(back));
  LPC_FUZZ_CHECK(back->metadata == file->metadata);
  LPC_FUZZ_CHECK(back->verifiedTensors == file->tensors.size());
  LPC_FUZZ_CHECK(back->tensors.size() == file->tensors.size());
  for (const auto &[name, t] : file->tensors) {
    const Tensor &u = back->tensors.at(name);
    LPC_FUZZ_CHECK(u.dtype == t.dtype && u.shape == t.shape && u.bytes == t.bytes);
  }
  return 0;
}
