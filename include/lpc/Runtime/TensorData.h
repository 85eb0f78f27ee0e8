//===- TensorData.h - examples as tensors; weights in and out -*- C++ -*-===//
//
// What a user who brings a model (lpc-import) brings with it:
//  - data as a safetensors file with one tensor per model input, named as
//    the input (`lpc.input "name"`), its first dimension the examples:
//    `--data=tensors:PATH`. Batches are taken in file order (example
//    [k*B, (k+1)*B) for the k-th batch of an epoch), so that another program
//    can feed the very same batches (the PyTorch parity tests do);
//  - initial parameters as a safetensors file of `state_dict` names
//    (`--init=PATH`), checked name by name and shape by shape;
//  - trained parameters written back under the same names
//    (`--save-weights=PATH`), loadable with `load_state_dict`.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_TENSORDATA_H
#define LPC_RUNTIME_TENSORDATA_H

#include "lpc/Runtime/Error.h"
#include "lpc/Runtime/Safetensors.h"
#include "lpc/Runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lpc {
namespace rt {

/// One model input: its name, element type and the shape of one batch.
struct InputSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape; // [batch, ...]
  /// Integer inputs used as embedding ids: the table's rows. Tensor data
  /// with a value outside [0, idBound) is refused (0: no bound).
  int64_t idBound = 0;
};

/// Examples held as one tensor per input, [numExamples, ...per example].
struct TensorDataset {
  std::string path;
  int64_t numExamples = 0;
  std::map<std::string, Tensor> columns; // by input name, in the input's dtype
  uint64_t fingerprint = 0;              // FNV-1a of the data (resume check)

  /// Copies examples [first, first + rows) of every input into `out` (the
  /// input buffers, [rows, ...] each); the caller keeps first + rows within
  /// numExamples.
  void gather(int64_t first, int64_t rows,
              std::map<std::string, std::vector<uint8_t>> &out) const;
};

/// Reads `path` and matches it against the model's inputs: every input must
/// have a tensor of its name whose dimensions after the first equal the
/// input's (after its batch dimension), all with the same number of examples,
/// at least one batch of them. Integer inputs accept I32 or I64 (values
/// checked to fit), float inputs F32, BF16 or F16 (widened exactly). Tensors
/// that are not inputs are an error (a misspelt name would otherwise be
/// silently ignored). Every problem is listed in one error naming the file.
Expected<TensorDataset> loadTensorDataset(const std::string &path,
                                          const std::vector<InputSpec> &inputs);

/// Sequential batches of a TensorDataset, epoch after epoch (a last partial
/// batch of an epoch is dropped, as PyTorch's DataLoader(drop_last=True)).
class TensorBatches {
public:
  TensorBatches(const TensorDataset &data, int64_t batch)
      : data_(&data), batch_(batch) {}
  int64_t batchesPerEpoch() const { return data_->numExamples / batch_; }
  /// Fills the input buffers with the next batch and advances.
  void next(std::map<std::string, std::vector<uint8_t>> &inputs);
  /// "tensors-v1;examples=N;fnv1a=HEX;batch=B;step=K".
  std::string position() const;
  /// Restores a position(); fails, saying what differs, when it was taken on
  /// other data or with another batch size.
  Error restore(const std::string &position);

private:
  const TensorDataset *data_;
  int64_t batch_;
  int64_t step_ = 0;
};

/// One f32 parameter of the model (the master copy lpc trains).
struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;
};

/// One buffer of the model (lpc.buffer: state that is not trained).
struct BufferSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

/// Initial parameters from a safetensors file: every parameter must be there
/// with its shape, as F32, BF16 or F16 (widened exactly to f32). A buffer
/// of the model may be absent (it starts from its declared value); present,
/// it must have its shape and a dtype that converts to the buffer's. Entries
/// the model has no parameter or buffer for are allowed (tied aliases,
/// buffers lpc does not keep) and kept in `extra` so that saveWeights can
/// write them back. Every mismatch (missing, wrong shape, unsupported dtype)
/// is listed in one error naming the file.
struct InitWeights {
  std::map<std::string, std::vector<float>> params; // by parameter name
  std::map<std::string, Tensor> buffers;            // by buffer name, its dtype
  std::map<std::string, DType> bufferFileDTypes;    // as the file had them
  std::map<std::string, Tensor> extra;              // everything else
  Metadata metadata;
  // An lpc-run checkpoint (parameters under "param/NAME"): its optimizer and
  // precision state are not weights and are left out of `extra`.
  bool fromCheckpoint = false;
};
Expected<InitWeights> loadInitWeights(const std::string &path,
                                      const std::vector<ParamSpec> &params,
                                      const std::vector<BufferSpec> &buffers = {});

/// The metadata key prefix lpc-import uses for tied parameters:
/// "lpc.alias.lm_head.weight" = "transformer.wte.weight" says that the
/// state_dict entry lm_head.weight is the parameter transformer.wte.weight.
inline constexpr const char *kAliasPrefix = "lpc.alias.";

/// Writes trained parameters as safetensors (atomically): every parameter
/// under its name as F32, every buffer the model keeps with its trained
/// value (an i32 buffer that the --init file had as I64, as PyTorch's batch
/// counters, back as I64), then (when `init` is given) the entries of the --init file the
/// model has neither for: an alias entry takes the trained value of its
/// parameter, others are written unchanged. The result loads with
/// `module.load_state_dict(load_file(path))`.
Error saveWeights(const std::string &path,
                  const std::map<std::string, std::pair<ParamSpec, const float *>> &params,
                  const InitWeights *init,
                  const std::vector<TensorView> &buffers = {});

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_TENSORDATA_H
