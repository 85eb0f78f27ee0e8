//===- Parallel.cpp - lpc_rt_parallel_for ---------------------------------===//
//
// See include/lpc/Runtime/Parallel.h. A small pool of its own rather than
// OpenMP: the GEMMs want OMP_WAIT_POLICY=passive (spinning OpenMP workers
// make GEMMs several times slower when another process holds a core;
// runtime/gemm/README.md), and under it every OpenMP region pays a futex
// wake-up (~40 us measured on this machine's VM) while a train step runs
// ~80 loop nests. These workers instead poll for the next job for a short
// while after each one, yielding the CPU on every poll so that a GEMM's
// OpenMP thread or another process that needs the core gets it, and sleep
// after that. The range is cut into a few contiguous chunks per thread,
// claimed by whichever thread is free (see lpc_rt_parallel_for).
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Parallel.h"
#include "lpc/Runtime/Gemm.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <sched.h>
#include <unistd.h>

namespace {

/// How long an idle worker polls for the next job before it sleeps.
constexpr std::chrono::microseconds kPollWindow{200};

/// Chunks per thread (at most): balance against per-chunk overhead.
constexpr int64_t kChunksPerThread = 4;

thread_local bool inWorker = false;

class Pool {
public:
  /// Runs fn over [lo, lo + n) in `chunks` equal parts with the caller and
  /// up to threads - 1 workers; false when the pool is busy (another
  /// caller) or unusable here (a forked child).
  bool run(lpc_rt_range_fn fn, void *ctx, int64_t lo, int64_t n, int threads,
           int64_t chunks) {
    if (getpid() != owner_)
      return false;
    std::unique_lock<std::mutex> busy(runMutex_, std::try_to_lock);
    if (!busy.owns_lock())
      return false;
    while (static_cast<int>(slots_.size()) < threads - 1) {
      slots_.push_back(std::make_unique<Slot>());
      Slot *slot = slots_.back().get();
      std::thread([this, slot] { work(slot); }).detach();
    }
    fn_ = fn;
    ctx_ = ctx;
    lo_ = lo;
    n_ = n;
    remaining_.store(chunks, std::memory_order_relaxed);
    const uint64_t job = ++job_ & 0xffffffffu;
    cursor_.store(job << 32 | uint64_t(chunks) << 16, std::memory_order_release);
    {
      // Under the lock: a worker about to sleep sees its ticket or gets the
      // notification.
      std::lock_guard<std::mutex> lock(sleepMutex_);
      for (int i = 0; i < threads - 1; ++i)
        slots_[i]->ticket.store(job, std::memory_order_release);
    }
    wake_.notify_all();
    drain(job);
    while (remaining_.load(std::memory_order_acquire) != 0)
      sched_yield();
    return true;
  }

  static Pool &get() {
    // Never destroyed: detached workers may still sleep in it at exit.
    static Pool *pool = new Pool();
    return *pool;
  }

private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> ticket{0};
  };

  Pool() : owner_(getpid()) {}

  /// Runs chunks of `job` until none is left. A chunk is claimed by
  /// advancing the cursor, which holds the job, its number of chunks and
  /// the next chunk in one word: a late worker cannot claim a chunk of
  /// another job, nor take the next job's chunk count for this one's (with
  /// a separate count, a worker still draining a finished job could read
  /// the next job's larger count before run() had published its cursor,
  /// claim a chunk past the end, and decrement the next job's `remaining_`
  /// once too often: run() then waited forever). The job's fields stay
  /// valid while any of its chunks is unfinished (run() waits for them).
  void drain(uint64_t job) {
    uint64_t c = cursor_.load(std::memory_order_acquire);
    for (;;) {
      if ((c >> 32) != job)
        return;
      const int64_t next = static_cast<int64_t>(c & 0xffffu);
      const int64_t chunks = static_cast<int64_t>((c >> 16) & 0xffffu);
      if (next >= chunks)
        return;
      if (!cursor_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel))
        continue;
      const int64_t b = lo_ + n_ * next / chunks;
      const int64_t e = lo_ + n_ * (next + 1) / chunks;
      if (b < e)
        fn_(ctx_, b, e);
      remaining_.fetch_sub(1, std::memory_order_release);
      c = cursor_.load(std::memory_order_acquire);
    }
  }

  void work(Slot *slot) {
    inWorker = true;
    uint64_t done = 0;
    for (;;) {
      auto until = std::chrono::steady_clock::now() + kPollWindow;
      while (slot->ticket.load(std::memory_order_acquire) == done &&
             std::chrono::steady_clock::now() < until)
        sched_yield();
      if (slot->ticket.load(std::memory_order_acquire) == done) {
        std::unique_lock<std::mutex> lock(sleepMutex_);
        wake_.wait(lock, [&] {
          return slot->ticket.load(std::memory_order_acquire) != done;
        });
      }
      done = slot->ticket.load(std::memory_order_acquire);
      drain(done);
    }
  }

  const pid_t owner_;
  std::mutex runMutex_;
  std::mutex sleepMutex_;
  std::condition_variable wake_;
  std::vector<std::unique_ptr<Slot>> slots_; // grown under runMutex_
  uint64_t job_ = 0;
  std::atomic<uint64_t> cursor_{0}; // job << 32 | chunks << 16 | next chunk
  std::atomic<int64_t> remaining_{0}; // chunks not finished yet
  // The current job, written by run() before the cursor is published.
  lpc_rt_range_fn fn_ = nullptr;
  void *ctx_ = nullptr;
  int64_t lo_ = 0, n_ = 0;
};

} // namespace

extern "C" void lpc_rt_parallel_for(lpc_rt_range_fn fn, void *ctx, int64_t lo,
                                    int64_t hi, int64_t grain) {
  const int64_t n = hi - lo;
  if (n <= 0)
    return;
  // Chunks of at least `grain` iterations, a few per thread: when a thread
  // is late (its CPU is busy with another process), the others take its
  // share instead of waiting for it. Which thread runs a chunk does not
  // change its results.
  const int64_t most = n / std::max<int64_t>(grain, 1);
  const int64_t threads = std::min<int64_t>(lpc::rt::gemmThreads(), most);
  if (threads <= 1 || inWorker)
    return fn(ctx, lo, hi);
  const int64_t chunks =
      std::min<int64_t>({most, threads * kChunksPerThread, 0xffff});
  if (!Pool::get().run(fn, ctx, lo, n, static_cast<int>(threads), chunks))
    fn(ctx, lo, hi);
}
