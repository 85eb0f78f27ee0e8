//===- Parallel.h - the host runtime's parallel loops -----------*- C++ -*-===//
//
// JIT-compiled train steps run their large elementwise / row-wise loop nests
// on several threads through one entry point (emitted by
// lpc-lower-parallel-calls):
//
//   lpc_rt_parallel_for(fn, ctx, lo, hi, grain)
//
// calls fn(ctx, b, e) on disjoint ranges [b, e) covering [lo, hi) (a few per
// thread, each at least `grain` iterations long) on up to gemmThreads()
// threads, the caller's included, and returns when all are done. Too little
// work for two threads, a call from inside another lpc_rt_parallel_for, or
// a call while another thread is using the pool runs fn(ctx, lo, hi)
// inline. The loops are meant to be free of reductions across iterations,
// so which thread runs a range changes no result. The workers are the
// runtime's own (runtime/gemm/Parallel.cpp says why not OpenMP's).
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
