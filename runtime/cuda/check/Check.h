//===- Check.h - what lpc-cuda-check's modes share --------------*- C++ -*-===//
//
// lpc-cuda-check (../lpc-cuda-check.cpp: usage, options, main) runs one or
// more modes, each in its own file here: DriverSelftest.cpp, GemmSelftest.cpp,
// AttentionSelftest.cpp, NcclSelftest.cpp, GemmBench.cpp, CheckArtifact.cpp,
// EstimateMain.cpp. This header has what they share: the exit codes, the
// options, the report of the self-tests, a few helpers (Common.cpp) and each
// mode's entry. Internal to the tool.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDA_CHECK_CHECK_H
#define LPC_RUNTIME_CUDA_CHECK_CHECK_H

#include "lpc/Runtime/CudaDriver.h"
#include "lpc/Runtime/CudaGemm.h"
#include "lpc/Runtime/Error.h"
#include "lpc/Runtime/Random.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {
namespace check {

inline constexpr int kExitOk = 0, kExitFailed = 1, kExitNoGpu = 2, kExitUsage = 64;

/// The usage text (lpc-cuda-check.cpp).
extern const char kUsage[];

struct Options {
  bool driverSelftest = false, gemmSelftest = false, bench = false;
  bool attentionSelftest = false, attentionHost = false, ncclSelftest = false;
  bool deviceGiven = false;
  std::string benchShapes = "4096x4096x4096,8192x2048x8192";
  std::string benchPrecisions = "bf16,fp8-fast,fp8";
  int benchIters = 20;
  int device = 0;
};

/// "1.5 GiB", "12.5 MiB".
std::string gib(size_t bytes);
std::string mib(size_t bytes);

/// The non-empty items of a comma-separated list.
std::vector<std::string> splitList(const std::string &s);

/// Collects "ok"/"FAIL" lines and remembers whether anything failed.
struct Report {
  bool ok = true;
  void line(bool pass, const std::string &what, const std::string &detail = "") {
    std::printf("  %-4s %s%s%s\n", pass ? "ok" : "FAIL", what.c_str(),
                detail.empty() ? "" : ": ", detail.c_str());
    std::fflush(stdout);
    ok = ok && pass;
  }
  /// A step that must succeed for the rest to make sense.
  bool step(const std::string &what, const Error &e) {
    if (e)
      line(false, what, e.message());
    return !e;
  }
};

/// A device buffer holding a copy of `bytes` host bytes at `data`.
Expected<DeviceBuffer> upload(Device &dev, const void *data, size_t bytes);

template <typename T> Expected<std::vector<T>> download(Device &dev, CUdeviceptr p, size_t n) {
  std::vector<T> out(n);
  if (Error e = dev.copyToHost(out.data(), p, n * sizeof(T)))
    return e;
  return out;
}

/// A GemmDesc in one call.
GemmDesc makeDesc(int64_t m, int64_t n, int64_t k, int64_t batch, bool ta, bool tb,
                  DType a, DType b, DType c, GemmEpilogue ep = GemmEpilogue::None);

/// Random values, never zero: magnitudes in [0.25, 2) with random signs,
/// rounded to `t`.
std::vector<double> randomValues(Rng &rng, size_t n, DType t);

// The modes (main runs the self-tests on one device, in this order, with
// one Report).

/// --driver-selftest (DriverSelftest.cpp).
void driverSelftest(Device &dev, Report &r);
/// --gemm-selftest (GemmSelftest.cpp).
void gemmSelftest(Device &dev, Report &r);
/// --attention-selftest[=host] (AttentionSelftest.cpp); `host`: the host
/// stand-in instead of cuDNN.
void attentionSelftest(Device &dev, Report &r, bool host);
/// --nccl-selftest (NcclSelftest.cpp).
void ncclSelftest(Device &dev, Report &r);
/// --gemm-bench (GemmBench.cpp); returns the exit code.
int gemmBench(Device &dev, const Options &opt);
/// --artifact=FILE (CheckArtifact.cpp; no driver needed); returns the exit
/// code.
int checkArtifact(const std::string &path);
/// lpc-cuda-check --estimate ... (EstimateMain.cpp; no driver needed): every
/// argument is the estimate's; returns the exit code.
int estimateMain(int argc, char **argv);

} // namespace check
} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDA_CHECK_CHECK_H
