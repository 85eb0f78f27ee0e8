//===- Slot.h - an argument or result of a compiled function ----*- C++ -*-===//
//
// A contiguous row-major tensor that a compiled train step or eval function
// takes or returns, with the lpc.* attributes that say what it holds. The
// trainer (Trainer.h) and the CUDA artifact (CudaArtifact.h) share it.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_SLOT_H
#define LPC_RUNTIME_SLOT_H

#include "lpc/Runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lpc {
namespace rt {

struct Slot {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string state;  // lpc.state (param, exp_avg, step, fp8_scale, ...)
  std::string name;   // lpc.name (parameter name), may be empty
  std::string input;  // lpc.input (data input name)
  std::string metric; // lpc.metric (loss, logits, grad_norm, ...)
  std::optional<double> init; // lpc.init: initial value of non-param state
  // lpc.id_bound: ids of this integer input index an embedding of this many
  // rows; data outside [0, idBound) is refused (0: no bound).
  int64_t idBound = 0;
  // ZeRO-1 (lpc.shard_of, lpc.shard_ranks): this rank's block of a tensor
  // of shape `shardOf` (f32) whose elements, padded with zeros to
  // shardRanks x shape[0], are split between the ranks; empty otherwise.
  std::vector<int64_t> shardOf;
  int64_t shardRanks = 0;
  int64_t numElements() const;
  /// Elements times element size (BOOL: one byte); SIZE_MAX when that
  /// overflows (the artifact's validation rejects such shapes).
  size_t byteSize() const;
};

/// Element `i` of a buffer of `slot` as a double (any lpc element type).
double slotValue(const Slot &slot, const void *data, int64_t i);

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_SLOT_H
