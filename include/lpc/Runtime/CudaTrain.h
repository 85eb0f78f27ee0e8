//===- CudaTrain.h - train a CUDA artifact ----------------------*- C++ -*-===//
//
// The glue between a CUDA artifact and the trainer (Trainer.h), shared by
// lpc-run --device=cuda (which compiles first) and the runtime-only
// lpc-run (runtime/tools/lpc-run.cpp, which is given an artifact):
//
//   - probeDriver(): is there a driver, before anything is compiled or read;
//   - openCudaSteps(): the train step and eval function on device 0, GEMMs
//     through cuBLASLt and attention steps through cuDNN (only when the
//     artifact has them; plans built when it opens), as StepFunctions;
//   - trainArtifact(): the artifact's "train" section (Artifact::train: the
//     model as the trainer sees it, the settings it was compiled with) and
//     the run's options, through the trainer.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDATRAIN_H
#define LPC_RUNTIME_CUDATRAIN_H

#include "lpc/Runtime/CudaArtifact.h"
#include "lpc/Runtime/Trainer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace lpc {
namespace rt {
namespace cuda {

/// Success when the CUDA driver loads and sees a device; otherwise the
/// one-line reason (with failure() telling whether this machine simply has
/// no GPU).
Error probeDriver(DriverFailure *failure = nullptr);

struct CudaSteps {
  std::unique_ptr<StepFunction> step, eval;
  std::string device; // "NVIDIA H200 (sm_90)"
};

/// Opens device 0 (or takes `device`, whose driver must outlive the
/// steps) and loads `stepName` and `evalName` of `artifact` (which must
/// validate). Fails if the device is older than the artifact's chip.
Expected<CudaSteps> openCudaSteps(Artifact artifact,
                                  const std::string &stepName,
                                  const std::string &evalName,
                                  std::unique_ptr<Device> device = nullptr);

/// What the collectives of this process's steps have sent (bytes, as
/// collectiveWireBytes counts them for the run's rank count, and
/// collectives), every run counted, graph replays too: TrainOptions::commSent
/// of a GPU run.
std::pair<uint64_t, uint64_t> cudaCommTraffic();

/// lpc-run ARTIFACT --device=cuda: trains the artifact at `path` on this
/// machine's GPU. The model and what it was compiled with come from the
/// artifact; data, steps, evaluation, checkpoints, log and seed from
/// `options` (`steps` 0 and `epochs` 0: the steps it was compiled for).
/// Returns the exit status: 2 when this machine has no GPU or driver.
/// `profileOps` non-empty: the train step's ops are timed (CUDA events
/// around each, no CUDA graphs; the first 2 steps are warm-up) and their
/// mean times written there as JSON (lpc-cuda-check --estimate
/// --measured=FILE sets them beside the cost model's).
int trainArtifact(const std::string &path, TrainOptions options,
                  const std::string &profileOps = "");

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDATRAIN_H
