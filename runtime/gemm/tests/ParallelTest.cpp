//===- ParallelTest.cpp - lpc_rt_parallel_for
//------------------------------===//
//
// The ranges handed out cover [lo, hi) exactly once, each at least `grain`
// long, a few per thread, on no more threads than setGemmThreads allows;
// small or empty ranges and calls from inside a parallel region run inline.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Parallel.h"
#include "lpc/Runtime/Gemm.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

static int failures = 0, checks = 0;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    ++checks;                                                                  \
    if (!(cond)) {                                                             \
      ++failures;                                                              \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fputc('\n', stderr);                                                \
    }                                                                          \
  } while (0)

namespace {
struct Record {
  std::vector<std::atomic<int>> hits; // per index of [lo, hi)
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::set<std::thread::id> threads;
  int64_t lo;
  explicit Record(int64_t lo, int64_t hi)
      : hits(hi > lo ? hi - lo : 0), lo(lo) {}
};

void recordRange(void *ctx, int64_t b, int64_t e) {
  auto *r = static_cast<Record *>(ctx);
  for (int64_t i = b; i < e; ++i)
    r->hits[i - r->lo].fetch_add(1);
  std::lock_guard<std::mutex> lock(r->mu);
  r->ranges.push_back({b, e});
  r->threads.insert(std::this_thread::get_id());
}

void run(int64_t lo, int64_t hi, int64_t grain, int threads) {
  lpc::rt::setGemmThreads(threads);
  Record r(lo, hi);
  lpc_rt_parallel_for(recordRange, &r, lo, hi, grain);
  for (size_t i = 0; i < r.hits.size(); ++i)
    CHECK(r.hits[i] == 1,
          "[%lld, %lld) grain %lld on %d: index %lld run %d times",
          (long long)lo, (long long)hi, (long long)grain, threads,
          (long long)(lo + i), r.hits[i].load());
  int64_t n = hi - lo;
  // A few chunks per thread (4), each at least `grain` long; one call
  // when there is work for one thread only.
  int64_t most = n <= 0 ? 0 : n / grain;
  int64_t used = std::min<int64_t>(threads, most);
  size_t want = n <= 0 ? 0 : used <= 1 ? 1 : std::min<int64_t>(most, used * 4);
  CHECK(r.ranges.size() == want,
        "[%lld, %lld) grain %lld on %d threads: %zu ranges, expected %zu",
        (long long)lo, (long long)hi, (long long)grain, threads,
        r.ranges.size(), want);
  CHECK(r.threads.size() <= static_cast<size_t>(threads),
        "%zu threads used, %d allowed", r.threads.size(), threads);
  if (r.ranges.size() > 1)
    for (auto [b, e] : r.ranges)
      CHECK(e - b >= grain, "range [%lld, %lld) shorter than grain %lld",
            (long long)b, (long long)e, (long long)grain);
}

std::atomic<int> innerCalls{0};
void inner(void *, int64_t, int64_t) { innerCalls.fetch_add(1); }
void outer(void *, int64_t b, int64_t e) {
  // From inside a parallel region: inline, one call for the whole range.
  lpc_rt_parallel_for(inner, nullptr, b * 100, e * 100, 1);
}
/// Many back-to-back jobs whose chunk counts alternate between 2 and 12:
/// every index of every job runs exactly once, and the pool never waits
/// forever (once, a worker still draining a finished job took the next
/// job's larger chunk count, claimed a chunk past the end and left run()
/// waiting for a count that had gone below zero).
void alternatingJobs() {
  lpc::rt::setGemmThreads(3);
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 1200 && !finished; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!finished) {
      std::fprintf(stderr, "FAIL: alternating jobs still running after 120 s "
                           "(lpc_rt_parallel_for waits forever)\n");
      std::_Exit(1);
    }
  });
  int bad = 0;
  for (int job = 0; job < 1000000 && bad < 5; ++job) {
    int64_t n = job % 2 ? 48 : 2;
    Record r(0, n);
    lpc_rt_parallel_for(recordRange, &r, 0, n, 1);
    for (int64_t i = 0; i < n; ++i)
      if (r.hits[i] != 1)
        ++bad;
  }
  finished = true;
  watchdog.join();
  CHECK(bad == 0, "alternating jobs: %d indices not run exactly once", bad);
  lpc::rt::setGemmThreads(0);
}
} // namespace

int main() {
  alternatingJobs();
  for (int threads : {1, 2, 3, 5})
    for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, 1000},
                          {7, 8},
                          {-50, 77},
                          {3, 3},
                          {10, 4},
                          {0, 1 << 20}})
      for (int64_t grain :
           {int64_t(1), int64_t(16), int64_t(1000), int64_t(1) << 40})
        run(lo, hi, grain, threads);

  lpc::rt::setGemmThreads(4);
  innerCalls = 0;
  lpc_rt_parallel_for(outer, nullptr, 0, 4, 1);
  CHECK(innerCalls == 4,
        "nested: %d inner calls, expected 4 (one per outer range)",
        innerCalls.load());
  lpc::rt::setGemmThreads(0);

  std::printf("lpc-parallel-test: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
