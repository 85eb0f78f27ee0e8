//===- Trainer.h - the training loop of lpc-run ------------------*- C++
//-*-===//
//
// What lpc-run does once a train step and its eval function are compiled,
// whatever runs them (the host JIT, or a CUDA artifact on a GPU): data,
// state initialization, the loop with its progress line and JSONL metrics,
// evaluation, checkpoints and resume, the summary. No LLVM/MLIR, so that
// the runtime-only lpc-run (runtime/tools) trains artifacts on a machine
// that has just CMake, a compiler and the CUDA toolkit.
//
// Messages go to stderr as "lpc-run: error: ..."; run() returns the exit
// status.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_TRAINER_H
#define LPC_RUNTIME_TRAINER_H

#include "lpc/Runtime/BatchIterator.h"
#include "lpc/Runtime/Data.h"
#include "lpc/Runtime/Error.h"
#include "lpc/Runtime/Init.h"
#include "lpc/Runtime/Slot.h"
#include "lpc/Runtime/TensorData.h"
#include "lpc/Runtime/Tensor.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lpc {
namespace rt {

/// A compiled function as the loop calls it: one host buffer per argument
/// and per result (results are written, never read).
class StepFunction {
public:
  virtual ~StepFunction() = default;
  virtual const std::vector<Slot> &args() const = 0;
  virtual const std::vector<Slot> &results() const = 0;
  virtual Error run(const std::vector<const void *> &args,
                    const std::vector<void *> &results) = 0;
  /// Bytes of step temporaries (for the summary), 0 if unknown.
  virtual size_t temporaryBytes() const { return 0; }
  /// How the calls ran, for the summary ("" if nothing to say).
  virtual std::string runNote() const { return ""; }

  /// Functions that keep the train state on their device (CUDA) between
  /// calls, so that a step moves only the batch in and a few results out:
  /// a resident step uploads the state arguments on its first call only, makes
  /// each state result the matching state argument of the next call without
  /// leaving the device, and copies to the host only the results `download`
  /// marks. downloadState() copies the state the next call would read into the
  /// host buffers of the state arguments (the others are null). runResident()
  /// comes in two halves so that the host can load the next batch while the
  /// device computes: startResident() queues the step (its inputs are copied
  /// before it returns: their host buffers may be refilled), finishResident()
  /// waits and copies the marked results out.
  virtual bool keepsState() const { return false; }
  virtual Error startResident(const std::vector<const void *> &args) {
    pending_ = args;
    return Error::success();
  }
  virtual Error finishResident(const std::vector<void *> &results,
                               const std::vector<bool> &download) {
    (void)download;
    return run(pending_, results);
  }
  Error runResident(const std::vector<const void *> &args,
                    const std::vector<void *> &results,
                    const std::vector<bool> &download) {
    if (Error e = startResident(args))
      return e;
    return finishResident(results, download);
  }
  virtual Error downloadState(const std::vector<void *> &args) {
    (void)args;
    return Error::success();
  }
  /// Called between startResident() and finishResident() once the next
  /// call's inputs (the non-state arguments) are in their host buffers,
  /// which stay untouched until that call's startResident(): a device step
  /// may start copying them while it computes. The next startResident()
  /// gets the same buffers.
  virtual Error stageNext(const std::vector<const void *> &args) {
    (void)args;
    return Error::success();
  }

private:
  std::vector<const void *> pending_; // the default startResident's args
};

/// What the loop needs to know about the model.
struct ModelInfo {
  std::string name;  // "mlp": checkpoints record it
  int64_t batch = 0; // rows per step
  /// Feature models: inputs featName [batch, features] (f32) and labelName
  /// [batch] (i32). Token models: tokenName and labelName, [batch, seqLen].
  bool textModel = false;
  std::string featName, labelName, tokenName;
  int64_t features = 0, seqLen = 0;
  // Synthetic data's classes; a token model's vocabulary (0: unknown).
  int64_t classes = 10;
  std::map<std::string, InitSpec> params; // initializer by parameter name
  /// Every data input (name, dtype, batch shape): what --data=tensors:PATH
  /// must hold. Empty: taken from the step's arguments.
  std::vector<InputSpec> inputs;
};

struct TrainOptions {
  std::string data;    // fashion-mnist | synthetic | text:PATH | tensors:PATH | ""
  std::string evalData; // tensors:PATH: held-out examples for --data=tensors:
  std::string init;        // initial parameters (safetensors, state_dict names)
  std::string saveWeights; // write the trained parameters here at the end
  std::string dataDir; // Fashion-MNIST directory
  int64_t steps = 0;   // > 0 overrides epochs
  double epochs = 1;
  int64_t evalEvery = 0, evalBatches = 0;
  std::string checkpointDir;
  int64_t checkpointEvery = 0;
  // Checkpoints kept in checkpointDir: latest.safetensors and the N-1
  // before it as step-S.safetensors.
  int64_t keepCheckpoints = 1;
  // A checkpoint path, or "latest": the newest intact checkpoint of
  // checkpointDir (latest.safetensors, else step-S.safetensors newest first).
  std::string resume;
  uint64_t seed = 0;
  std::string logFile;
  int64_t printEvery = 50;
  int64_t syntheticExamples = 8192;
  // Recorded in checkpoints and checked on resume.
  std::string mixedPrecision = "no", pipeline;
  // The run's summary record names them (lpc-plot labels its curves so).
  std::string recipe, device = "cpu";
  // For the logged learning rate (what lpc-autodiff was told).
  double lr = 1e-3;
  std::string lrSchedule = "constant";
  int64_t warmupSteps = 0;
  double minLr = 0;
  // Data parallelism (lpc/Runtime/Comm.h): this process is rank `rank` of
  // `ranks`. Every rank starts from the same seed, so from the same
  // parameters and the same order of global batches of `ranks` x the
  // model's batch; rank r trains on rows [r B, (r + 1) B) of each (B: the
  // model's batch). Rank 0 alone prints, evaluates, logs and writes
  // checkpoints and weights.
  int rank = 0, ranks = 1;
  // What this rank's collectives have sent so far (bytes, collective
  // count; lpc::rt::commTraffic). The summary reports it per step with
  // several ranks. Empty: not reported.
  std::function<std::pair<uint64_t, uint64_t>()> commSent;
  // Every `verifyRanksEvery` steps (0: never), each rank hashes its whole
  // training state (parameters, optimizer state, FP8 scales and histories,
  // loss scale, step) and `sameOnAllRanks` (a collective: true when every
  // rank passed the same value) compares it with the others'; a difference
  // ends the run naming the step and the first tensor that differs.
  int64_t verifyRanksEvery = 0;
  std::function<bool(uint64_t)> sameOnAllRanks;
  // A collective (lpc::rt::commAllGatherBytes): every rank's `bytes` bytes
  // into `all`, in rank order. Checkpoints of a ZeRO-1 step (optimizer
  // state sharded between the ranks) gather the blocks with it, so that a
  // checkpoint holds whole tensors and resumes on any rank count. Needed
  // only when the step has sharded state and several ranks.
  std::function<void(const void *, size_t, void *)> allGatherBytes;
};

class Trainer {
public:
  /// Reads the data (so that totalSteps() is known before compiling).
  static Expected<std::unique_ptr<Trainer>> create(ModelInfo model,
                                                   TrainOptions options);
  ~Trainer();
  /// The steps this run trains for (the LR schedule's horizon).
  int64_t totalSteps() const;
  /// The pipeline that built the step (checkpoint metadata; it depends on
  /// totalSteps(), so it comes after create()).
  void setPipeline(std::string pipeline);
  /// Trains from step 0 or the resumed checkpoint, evaluates, writes the
  /// last checkpoint and the summary. Returns the exit status.
  int run(StepFunction &step, StepFunction &eval, double compileSeconds);

  struct Impl;

private:
  explicit Trainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_TRAINER_H
