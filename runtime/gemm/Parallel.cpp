//===- Parallel.cpp - lpc_rt_parallel_for on the GEMMs' OpenMP pool -------===//
//
// See include/lpc/Runtime/Parallel.h. Static, contiguous, equal splits: the
// loop bodies are uniform (one element or one row each), and contiguous
// ranges keep each thread on its own cache lines.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Parallel.h"
#include "lpc/Runtime/Gemm.h"

#include <omp.h>

#include <algorithm>

extern "C" void lpc_rt_parallel_for(lpc_rt_range_fn fn, void *ctx, int64_t lo,
                                    int64_t hi, int64_t grain) {
  const int64_t n = hi - lo;
  if (n <= 0)
    return;
  const int64_t threads =
      std::min<int64_t>(lpc::rt::gemmThreads(), n / std::max<int64_t>(grain, 1));
  if (threads <= 1 || omp_in_parallel()) {
    fn(ctx, lo, hi);
    return;
  }
#pragma omp parallel num_threads(static_cast<int>(threads))
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t b = lo + n * t / nt, e = lo + n * (t + 1) / nt;
    if (b < e)
      fn(ctx, b, e);
  }
}
