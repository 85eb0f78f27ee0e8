//===- CudaAllocator.h - caching device memory allocator --------*- C++ -*-===//
//
// cuMemAlloc / cuMemFree synchronize the device and cost tens of microseconds
// to milliseconds, far too much for a train step that allocates the same
// buffers every step. The caching allocator keeps freed blocks in free lists,
// one per (rounded) size, and hands them out again:
//
//   sizes < 1 MiB round up to a multiple of 512 bytes; larger sizes round up
//   to one of 8 steps per power of two (1 MiB, 1.125 MiB, ... 2 MiB, 2.25
//   MiB, ...), so a block wastes less than 12.5% and near sizes share lists.
//
// A block goes back to the list of exactly its rounded size; no splitting or
// merging. When the backend runs out of memory the allocator returns every
// cached block to it and tries once more.
//
// Stream order: every block is used on the one stream of its Device, so a
// block freed after the work that uses it is queued may be handed out again
// at once (the next user's work queues behind it). Work on other streams
// must synchronize before freeing.
//
// The backend is an interface so the bookkeeping is tested without a GPU.
// Thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDAALLOCATOR_H
#define LPC_RUNTIME_CUDAALLOCATOR_H

#include "lpc/Runtime/Error.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {

/// Where the allocator gets memory from (cuMemAlloc / cuMemFree on a GPU).
class DeviceMemoryBackend {
public:
  virtual ~DeviceMemoryBackend();
  /// A block of exactly `bytes` bytes (never 0 on success).
  virtual Expected<uint64_t> allocate(size_t bytes) = 0;
  virtual Error release(uint64_t ptr, size_t bytes) = 0;
};

struct AllocatorStats {
  size_t inUse = 0;     // rounded bytes handed out and not freed
  size_t held = 0;      // bytes held from the backend (in use + cached)
  size_t peakInUse = 0; // maxima since creation (or resetPeaks)
  size_t peakHeld = 0;
  uint64_t allocations = 0;  // allocate() calls that succeeded
  uint64_t cacheHits = 0;    // ... served from a free list
  uint64_t backendAllocations = 0;
  uint64_t backendReleases = 0;
};

class CachingAllocator {
public:
  explicit CachingAllocator(std::unique_ptr<DeviceMemoryBackend> backend);
  /// Returns every block, cached or still in use, to the backend.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator &) = delete;
  CachingAllocator &operator=(const CachingAllocator &) = delete;

  /// The size a request of `bytes` is rounded to (0 counts as 1).
  static size_t roundSize(size_t bytes);

  /// A block of at least `bytes` bytes, aligned as the backend aligns
  /// (cuMemAlloc: 256 bytes or more).
  Expected<uint64_t> allocate(size_t bytes);
  /// Gives a block back for reuse; an unknown pointer (never allocated here,
  /// or freed twice) is an error and changes nothing.
  Error free(uint64_t ptr);
  /// Returns every cached (free) block to the backend.
  Error releaseCached();

  AllocatorStats stats() const;
  void resetPeaks();
  /// Rounded size of a live block (0 if `ptr` is not one).
  size_t blockSize(uint64_t ptr) const;

private:
  Error releaseCachedLocked();

  std::unique_ptr<DeviceMemoryBackend> backend_;
  mutable std::mutex mutex_;
  std::map<size_t, std::vector<uint64_t>> freeLists_; // rounded size -> blocks
  std::unordered_map<uint64_t, size_t> live_;         // ptr -> rounded size
  AllocatorStats stats_;
};

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDAALLOCATOR_H
