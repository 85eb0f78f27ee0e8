//===- fuzz-artifact.cpp - libFuzzer target: CUDA artifact JSON -----------===//
//
// A compiled artifact is a file the runtime-only lpc-run trusts with kernel
// launches and buffer offsets: any text is parsed and validated or refused,
// never crashes the reader.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lpc/Runtime/CudaArtifact.h"

using namespace lpc::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = lpc::fuzz::inputPath(".json");
  lpc::fuzz::writeInput(path, data, size);
  // loadArtifact = read + parseArtifact + the validator.
  (void)cuda::loadArtifact(path);
  return 0;
}
