//===- Allocator.cpp - caching device memory allocator ----------------------===//

#include "lpc/Runtime/CudaAllocator.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace lpc {
namespace rt {
namespace cuda {

DeviceMemoryBackend::~DeviceMemoryBackend() = default;

static constexpr size_t kSmallRound = 512;
static constexpr size_t kLargeThreshold = size_t(1) << 20;
static constexpr size_t kStepsPerPowerOfTwo = 8;

size_t CachingAllocator::roundSize(size_t bytes) {
  if (bytes == 0)
    bytes = 1;
  if (bytes < kLargeThreshold)
    return (bytes + kSmallRound - 1) / kSmallRound * kSmallRound;
  // Largest power of two <= bytes, split into 8 steps.
  size_t pow2 = kLargeThreshold;
  while (pow2 <= bytes / 2)
    pow2 *= 2;
  size_t step = pow2 / kStepsPerPowerOfTwo;
  return (bytes + step - 1) / step * step;
}

CachingAllocator::CachingAllocator(std::unique_ptr<DeviceMemoryBackend> backend)
    : backend_(std::move(backend)) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  Error e = releaseCachedLocked();
  (void)e;
  for (const auto &kv : live_) {
    Error r = backend_->release(kv.first, kv.second);
    (void)r;
  }
  live_.clear();
}

static std::string mib(size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  return buf;
}

Expected<uint64_t> CachingAllocator::allocate(size_t bytes) {
  size_t size = roundSize(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t ptr = 0;
  auto it = freeLists_.find(size);
  if (it != freeLists_.end() && !it->second.empty()) {
    ptr = it->second.back();
    it->second.pop_back();
    ++stats_.cacheHits;
  } else {
    Expected<uint64_t> p = backend_->allocate(size);
    if (!p && !freeLists_.empty()) {
      // Out of memory (most likely): give the cache back and try again.
      if (Error e = releaseCachedLocked())
        return e;
      p = backend_->allocate(size);
    }
    if (!p)
      return Error::make("device allocation of " + std::to_string(bytes) +
                         " bytes failed (in use " + mib(stats_.inUse) +
                         ", held " + mib(stats_.held) +
                         "): " + p.error().message());
    ptr = *p;
    ++stats_.backendAllocations;
    stats_.held += size;
    stats_.peakHeld = std::max(stats_.peakHeld, stats_.held);
  }
  live_[ptr] = size;
  stats_.inUse += size;
  stats_.peakInUse = std::max(stats_.peakInUse, stats_.inUse);
  ++stats_.allocations;
  return ptr;
}

Error CachingAllocator::free(uint64_t ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(ptr));
    return Error::make(std::string("device free of ") + buf +
                       ": not a live block of this allocator (double free?)");
  }
  size_t size = it->second;
  live_.erase(it);
  stats_.inUse -= size;
  freeLists_[size].push_back(ptr);
  return Error::success();
}

Error CachingAllocator::releaseCachedLocked() {
  Error first;
  for (auto &kv : freeLists_) {
    for (uint64_t p : kv.second) {
      Error e = backend_->release(p, kv.first);
      ++stats_.backendReleases;
      stats_.held -= kv.first;
      if (e && !first)
        first = std::move(e);
    }
  }
  freeLists_.clear();
  return first;
}

Error CachingAllocator::releaseCached() {
  std::lock_guard<std::mutex> lock(mutex_);
  return releaseCachedLocked();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::resetPeaks() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peakInUse = stats_.inUse;
  stats_.peakHeld = stats_.held;
}

size_t CachingAllocator::blockSize(uint64_t ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  return it == live_.end() ? 0 : it->second;
}

} // namespace cuda
} // namespace rt
} // namespace lpc
