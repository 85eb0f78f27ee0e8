//===- Parallel.h - the host runtime's parallel loops -----------*- C++ -*-===//
//
// JIT-compiled train steps run their large elementwise / row-wise loop nests
// on several threads through one entry point (emitted by
// lpc-lower-parallel-calls):
//
//   lpc_rt_parallel_for(fn, ctx, lo, hi, grain)
//
// calls fn(ctx, b, e) on disjoint ranges [b, e) covering [lo, hi), on up to
// gemmThreads() threads, each range at least `grain` iterations long, and
// returns when all are done. Too little work for two threads, or a call from
// inside a parallel region, runs fn(ctx, lo, hi) inline. The threads are the
// OpenMP pool the GEMMs run on (GNU libgomp under oneDNN), so loops and GEMMs
// never compete for the CPUs with two pools of spinning workers.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_PARALLEL_H
#define LPC_RUNTIME_PARALLEL_H

#include <cstdint>

extern "C" {
typedef void (*lpc_rt_range_fn)(void *ctx, int64_t begin, int64_t end);
void lpc_rt_parallel_for(lpc_rt_range_fn fn, void *ctx, int64_t lo, int64_t hi,
                         int64_t grain);
}

#endif // LPC_RUNTIME_PARALLEL_H
