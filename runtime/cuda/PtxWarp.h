//===- PtxWarp.h - what a warp's global stores touch, from PTX -*- C++ -*-===//
//
// For the cost model (Estimate.cpp): whether the lanes of a warp write
// whole 32-byte sectors with a global store, or each lane a piece of its
// own sector. A scan of one thread's instructions cannot tell: a transposed
// copy's 4-byte stores a row apart cost a sector each when neighbouring
// lanes write neighbouring rows, and nothing extra when they write
// neighbouring 4-byte pieces of one row. So the kernel's integer
// instructions are run, lane by lane, for the 32 lanes of sample warps,
// with the launch's parameter values (views at made-up, distinct, aligned
// bases): thread indices, index arithmetic, branches on it and loops over
// it. Loaded data and floating-point values are unknown; a store whose
// address depends on them, or that no sample reaches, stays unresolved.
// Internal to runtime/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDA_PTXWARP_H
#define LPC_RUNTIME_CUDA_PTXWARP_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {
namespace ptx {

/// One global store instruction as one warp runs it (its first execution
/// by each lane of a sample warp that reaches it). The sectors are those
/// of the stores of its basic block together, counted at the block's first
/// store (0 at the others): a lane that fills a sector with two 16-byte
/// stores one after the other leaves nothing partial, while pieces of a
/// sector written by other blocks, other runs of the block (loop steps)
/// or other warps count as partial.
struct WarpStore {
  unsigned lanes = 0;   // lanes that ran it, all with known addresses
  unsigned sectors = 0; // 32-byte sectors the block's stores touch
  unsigned partial = 0; // of those, sectors they do not fill
  // Times a lane runs it, on average over those lanes; 0 when a lane ran
  // out of steps before it finished (a long loop): not known then.
  double runs = 0;
  // Threads of the launch that run it: a merged kernel's parts each run on
  // a range of the thread indices (estimated from probes spread over the
  // launch, to 1/64 of it).
  double threads = 0;
};

/// The global stores of kernel body `body` (the text between the braces of
/// its `.entry`), by line number within `body` (lines split at '\n', from
/// 0), for a launch of `threads` threads in blocks of `blockX` (1-D) with
/// kernel parameter values `params` (cuLaunchKernel's, in order). Stores
/// missing from the map are unresolved.
std::map<size_t, WarpStore> warpStores(std::string_view body, const std::vector<uint64_t> &params,
                                       uint64_t blockX, uint64_t threads);

} // namespace ptx
} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDA_PTXWARP_H
