// FakeDriverCounters.h - what the fake libcuda (FakeDriver.cpp) counts, for
// tests that assert how many copies and waits a step costs. The fake
// exports lpc_fake_cuda_counters(); tests find it with dlsym on the fake's
// handle. Tests only.

#ifndef LPC_RUNTIME_CUDA_TESTS_FAKEDRIVERCOUNTERS_H
#define LPC_RUNTIME_CUDA_TESTS_FAKEDRIVERCOUNTERS_H

#include <cstdint>

struct LpcFakeCudaCounters {
  uint64_t streamSyncs = 0;  // cuStreamSynchronize
  uint64_t eventSyncs = 0;   // cuEventSynchronize
  uint64_t streamWaits = 0;  // cuStreamWaitEvent (of a recorded event)
  uint64_t copiesToDevice = 0;
  uint64_t copiesToPinnedHost = 0;   // async: done when the stream gets there
  uint64_t copiesToPageableHost = 0; // wait for the stream, as the driver does
  uint64_t launches = 0;
};

/// The fake's counters since it was loaded (or last reset).
using LpcFakeCudaCountersFn = LpcFakeCudaCounters *(*)();
inline constexpr const char kLpcFakeCudaCountersSymbol[] = "lpc_fake_cuda_counters";

#endif // LPC_RUNTIME_CUDA_TESTS_FAKEDRIVERCOUNTERS_H
