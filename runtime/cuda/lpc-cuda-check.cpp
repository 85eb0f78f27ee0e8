//===- lpc-cuda-check.cpp - is there a usable GPU, and does it compute right? ===//
//
//   lpc-cuda-check                     driver version and devices
//   lpc-cuda-check --driver-selftest   + allocator, PTX load / launch / JIT
//                                        error log, graph capture, events
//   lpc-cuda-check --gemm-selftest     + every GEMM precision against a
//                                        double-precision host reference
//   lpc-cuda-check --attention-selftest + cuDNN attention forward and
//                                        backward (small shapes and a
//                                        d4096-GPT one) against a double
//                                        reference, in a CUDA graph, timed
//   lpc-cuda-check --nccl-selftest     + NCCL collectives (all_reduce sum /
//                                        mean / max, reduce_scatter,
//                                        all_gather, shard; FP8 all_to_all
//                                        and all_gather) of an artifact
//                                        function, direct and in a CUDA
//                                        graph, against a host reference;
//                                        one rank, or every rank of mpirun
//   lpc-cuda-check --gemm-bench[=MxNxK,...] [--bench-precisions=P,...]
//                  [--bench-iters=N]   cuBLASLt GEMM timings in TFLOP/s
//   lpc-cuda-check --print-test-ptx    the PTX test kernel (no GPU needed)
//   lpc-cuda-check --artifact=FILE     loads and validates a CUDA artifact
//                                        (docs/cuda-artifact.md) and
//                                        summarizes it (no GPU needed)
//   lpc-cuda-check --print-test-artifact  the fake-driver test artifact
//   lpc-cuda-check --estimate FILE [--against FILE2] [--scenario=S]
//                  [--format=table|json] [--top=N] [--function=NAME]
//                  [--measured=PROFILE.json]
//                                      the modelled H200 cost of an artifact's
//                                        step (CudaEstimate.h; no GPU needed)
//   --device=N                         the device to test (default 0)
//
// Exit codes: 0 all good; 1 a check failed, an artifact is invalid, or
// something broke; 2 no NVIDIA
// driver or no GPU (one line saying which; ctest's SKIP_RETURN_CODE for GPU
// tests); 64 bad usage. Needs only the runtime, never LLVM/MLIR.
//
// The modes live in check/, one file each (check/Check.h: what they share);
// this file has the usage text, the options and main.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Comm.h"
#include "lpc/Runtime/CudaAllocator.h"
#include "lpc/Runtime/CudaAttention.h"
#include "lpc/Runtime/CudaDriver.h"
#include "lpc/Runtime/CudaGemm.h"

#include "TestKernels.h"
#include "check/Check.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

using namespace lpc::rt;
using namespace lpc::rt::cuda;
using namespace lpc::rt::cuda::check;

namespace lpc {
namespace rt {
namespace cuda {
namespace check {

const char kUsage[] =
    "usage: lpc-cuda-check [--driver-selftest] [--gemm-selftest] [--attention-selftest]\n"
    "                      [--nccl-selftest] (under mpirun: every rank, one GPU each)\n"
    "                      [--gemm-bench[=MxNxK,...]] [--bench-precisions=P,...]\n"
    "                      [--bench-iters=N] [--device=N] [--print-test-ptx]\n"
    "       lpc-cuda-check --artifact=FILE | --print-test-artifact\n"
    "       lpc-cuda-check --estimate FILE [--against FILE2] [--scenario=low|mid|high|all]\n"
    "                      [--format=table|json] [--top=N] [--function=NAME]\n"
    "                      [--measured=PROFILE.json]\n"
    "--estimate: the modelled cost of FILE's train step on an H200 (a model, not a\n"
    "  measurement; no GPU needed): step time, per-class totals, GEMMs by shape and\n"
    "  precision, the N most expensive ops (default 10), FP8 machinery; --against:\n"
    "  the ratio of the two steps per scenario (FILE / FILE2). Default scenario all;\n"
    "  the model: docs/cost-model.md; --measured: per-op times from a GPU (lpc-run\n"
    "  ARTIFACT --device=cuda --profile-ops=PROFILE.json) beside the model's, per\n"
    "  class and for the ops furthest from it\n"
    "bench precisions: bf16 f16 tf32 f32 fp8 fp8-fast fp8-e5m2 "
    "(default bf16,fp8-fast,fp8)\n"
    "exit: 0 ok, 1 failed, 2 no NVIDIA driver or GPU, 64 usage\n";

} // namespace check
} // namespace cuda
} // namespace rt
} // namespace lpc

int main(int argc, char **argv) {
  // Needs no driver: a machine without a GPU can judge what it will run.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--estimate") == 0 || std::strncmp(argv[i], "--estimate=", 11) == 0)
      return estimateMain(argc, argv);
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *prefix) -> const char * {
      size_t n = std::strlen(prefix);
      return arg.compare(0, n, prefix) == 0 ? argv[i] + n : nullptr;
    };
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      return kExitOk;
    } else if (arg == "--print-test-ptx") {
      std::printf("%s", kTestPtx);
      return kExitOk;
    } else if (arg == "--print-test-artifact") {
      std::printf("%s", testArtifactJson().c_str());
      return kExitOk;
    } else if (const char *v = value("--artifact=")) {
      // Needs no driver: a machine without a GPU can check what it will run.
      return checkArtifact(v);

    } else if (arg == "--driver-selftest") {
      opt.driverSelftest = true;
    } else if (arg == "--gemm-selftest") {
      opt.gemmSelftest = true;
    } else if (arg == "--nccl-selftest") {
      opt.ncclSelftest = true;
    } else if (arg == "--attention-selftest") {
      opt.attentionSelftest = true;
    } else if (arg == "--attention-selftest=host") {
      // The self-test's own checks with the host stand-in instead of cuDNN
      // (small shapes; the fake driver's tests run it).
      opt.attentionSelftest = opt.attentionHost = true;
    } else if (arg == "--gemm-bench") {
      opt.bench = true;
    } else if (const char *v = value("--gemm-bench=")) {
      opt.bench = true;
      opt.benchShapes = v;
    } else if (const char *v = value("--bench-precisions=")) {
      opt.benchPrecisions = v;
    } else if (const char *v = value("--bench-iters=")) {
      opt.benchIters = std::atoi(v);
      if (opt.benchIters < 1) {
        std::fprintf(stderr, "lpc-cuda-check: bad --bench-iters '%s'\n", v);
        return kExitUsage;
      }
    } else if (const char *v = value("--device=")) {
      char *end = nullptr;
      opt.device = int(std::strtol(v, &end, 10));
      opt.deviceGiven = true;
      if (!*v || *end || opt.device < 0) {
        std::fprintf(stderr, "lpc-cuda-check: bad --device '%s'\n", v);
        return kExitUsage;
      }
    } else {
      std::fprintf(stderr, "lpc-cuda-check: unknown argument '%s'\n%s", arg.c_str(), kUsage);
      return kExitUsage;
    }
  }

  // Under mpirun (the NCCL self-test on several ranks): MPI first.
  if (Error e = commInit(&argc, &argv)) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n", e.message().c_str());
    return kExitFailed;
  }
  struct Finalize {
    ~Finalize() { commFinalize(); }
  } finalize;
  if (commSize() > 1 && commRank() != 0)
    // Rank 0 says what the machine has; the others only their failures.
    if (!std::freopen("/dev/null", "w", stdout))
      return kExitFailed;
  Expected<const Driver *> driver = Driver::get();
  if (!driver) {
    DriverFailure f = Driver::failure();
    std::fprintf(stderr, "lpc-cuda-check: %s\n", driver.error().message().c_str());
    return f == DriverFailure::NoDriver || f == DriverFailure::NoDevice ? kExitNoGpu
                                                                        : kExitFailed;
  }
  const Driver &drv = **driver;
  Expected<int> count = deviceCount(drv);
  if (!count) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n", count.error().message().c_str());
    return kExitFailed;
  }
  std::printf("NVIDIA driver: %s (%s), %d device(s)\n", formatCudaVersion(drv.version()).c_str(),
              drv.library().c_str(), *count);
  if (*count == 0) {
    std::fprintf(stderr, "lpc-cuda-check: no CUDA device\n");
    return kExitNoGpu;
  }
  for (int i = 0; i < *count; ++i) {
    Expected<DeviceInfo> info = deviceInfo(drv, i);
    if (!info) {
      std::fprintf(stderr, "lpc-cuda-check: %s\n", info.error().message().c_str());
      return kExitFailed;
    }
    std::printf("device %d: %s, compute capability %d.%d, %s, %d SMs, %d MHz\n", i,
                info->name.c_str(), info->ccMajor, info->ccMinor,
                gib(info->totalMemory).c_str(), info->multiprocessors, info->clockKHz / 1000);
  }
  Expected<const CublasLt *> lt = loadCublasLt();
  if (lt) {
    std::printf("cuBLASLt: %zu (%s)\n", cublasLtVersion(**lt), cublasLtPath(**lt).c_str());
    if (Error e = checkCublasLtDriver(cublasLtVersion(**lt), drv.version()))
      std::printf("cuBLASLt: unusable with this driver: %s\n", e.message().c_str());
  } else
    std::printf("cuBLASLt: unavailable: %s\n", lt.error().message().c_str());
  Expected<const Cudnn *> dnn = loadCudnn();
  if (dnn)
    std::printf("cuDNN: %zu (%s)\n", cudnnVersion(**dnn), cudnnPath(**dnn).c_str());
  else
    std::printf("cuDNN: unavailable: %s\n", dnn.error().message().c_str());
  // Settings that change how the work runs (gpu-check.sh's diagnostic
  // reruns), so that a log says which run it is.
  std::string settings;
  for (const char *name :
       {"CUDA_LAUNCH_BLOCKING", "CUBLASLT_LOG_LEVEL", "LPC_CUDA_GRAPHS", "LPC_CUDA_SYNC_OPS",
       "CUDNN_LOGLEVEL_DBG", "LPC_CUDNN_LIBRARY", "NCCL_DEBUG", "LPC_NCCL_LIBRARY"})
    if (const char *v = std::getenv(name))
      settings += std::string(" ") + name + "=" + v;
  if (!settings.empty())
    std::printf("settings:%s\n", settings.c_str());
  std::fflush(stdout);

  if (!opt.driverSelftest && !opt.gemmSelftest && !opt.attentionSelftest && !opt.bench &&
      !opt.ncclSelftest)
    return kExitOk;
  // One GPU per rank: the ranks on a machine take its devices in turn.
  if (commSize() > 1 && !opt.deviceGiven)
    opt.device = commLocalRank() % *count;
  if (opt.device >= *count) {
    std::fprintf(stderr, "lpc-cuda-check: no device %d\n", opt.device);
    return kExitUsage;
  }
  Expected<std::unique_ptr<Device>> dev = Device::open(drv, opt.device);
  if (!dev) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n", dev.error().message().c_str());
    return kExitFailed;
  }
  Report report;
  if (opt.driverSelftest)
    driverSelftest(**dev, report);
  if (opt.gemmSelftest)
    gemmSelftest(**dev, report);
  if (opt.attentionSelftest)
    attentionSelftest(**dev, report, opt.attentionHost);
  if (opt.ncclSelftest)
    ncclSelftest(**dev, report);
  if (opt.driverSelftest || opt.gemmSelftest || opt.attentionSelftest || opt.ncclSelftest)
    std::printf("%s\n", report.ok ? "all checks passed" : "SOME CHECKS FAILED");
  int status = report.ok ? kExitOk : kExitFailed;
  if (opt.bench) {
    int b = gemmBench(**dev, opt);
    if (b != kExitOk)
      status = b;
  }
  AllocatorStats s = (*dev)->allocator().stats();
  std::printf("device memory: peak in use %s, peak held %s, %llu allocations (%llu from the "
              "cache)\n",
              mib(s.peakInUse).c_str(), mib(s.peakHeld).c_str(),
              static_cast<unsigned long long>(s.allocations),
              static_cast<unsigned long long>(s.cacheHits));
  if (status != kExitOk)
    commAbortAll(status); // under mpirun: no rank waits for this one
  return status;
}
