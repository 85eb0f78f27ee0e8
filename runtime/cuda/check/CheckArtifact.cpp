//===- CheckArtifact.cpp - lpc-cuda-check --artifact=FILE -----------------===//
//
// Loads and validates a CUDA artifact (docs/cuda-artifact.md) and summarizes
// it; where cuDNN and cuBLASLt load, checks that they accept its attention
// graphs and GEMM descriptors. Needs no GPU.
//
//===----------------------------------------------------------------------===//

#include "Check.h"

#include "lpc/Runtime/CudaArtifact.h"
#include "lpc/Runtime/CudaAttention.h"

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <variant>

namespace lpc {
namespace rt {
namespace cuda {
namespace check {
namespace {

/// "640 bytes" below a MiB, else "12.5 MiB".
std::string bytesText(size_t bytes) {
  return bytes < (size_t(1) << 20) ? std::to_string(bytes) + " bytes" : mib(bytes);
}

/// "3 x a, 1 x b" of counted names, in name order.
std::string counts(const std::map<std::string, int> &m) {
  std::string out;
  for (const auto &kv : m)
    out += (out.empty() ? "" : ", ") + std::to_string(kv.second) + " x " + kv.first;
  return out.empty() ? "none" : out;
}

} // namespace

/// Loads, validates and summarizes an artifact in one paragraph.
int checkArtifact(const std::string &path) {
  Expected<Artifact> art = loadArtifact(path);
  if (!art) {
    std::fprintf(stderr, "lpc-cuda-check: %s\n", art.error().message().c_str());
    return kExitFailed;
  }
  std::printf("%s: valid lpc CUDA artifact v%d for %s%s%s, %zu function(s).\n", path.c_str(),
              kArtifactVersion, art->chip.c_str(), art->producer.empty() ? "" : " by ",
              art->producer.c_str(), art->functions.size());
  for (const ArtifactFunction &f : art->functions) {
    size_t launches = 0, gemms = 0, copies = 0;
    std::set<std::string> kernels;
    std::map<std::string, int> gemmTypes, attentionTypes, collectiveTypes;
    for (const ArtifactOp &op : f.ops) {
      if (const LaunchOp *l = std::get_if<LaunchOp>(&op)) {
        ++launches;
        // Kernels of different modules may share a name.
        kernels.insert(std::to_string(l->module) + "/" + l->kernel);
      } else if (const GemmOp *g = std::get_if<GemmOp>(&op)) {
        ++gemms;
        std::string t = std::string(dtypeName(g->aType)) + "x" + dtypeName(g->bType) + "->" +
                        dtypeName(g->cType) + (g->aScale ? " scaled" : "") +
                        (g->bias ? " +bias" : "");
        ++gemmTypes[t];
      } else if (const AttentionOp *a = std::get_if<AttentionOp>(&op)) {
        ++attentionTypes[std::string(a->backward ? "backward " : "forward ") +
                         dtypeName(a->dtype) + (a->causal ? " causal" : "")];
      } else if (const CollectiveOp *c = std::get_if<CollectiveOp>(&op)) {
        ++collectiveTypes[opLabel(op) + " " + dtypeName(c->dtype)];
      } else {
        ++copies;
      }
    }
    size_t argBytes = 0, resultBytes = 0;
    for (const ArtifactSlot &s : f.args)
      argBytes += s.byteSize();
    for (const ArtifactSlot &s : f.results)
      resultBytes += s.byteSize();
    std::printf("  %s: %zu args (%s), %zu results (%s); %zu ops: %zu launches of %zu kernels "
                "in %zu modules, %zu GEMMs (%s), %zu copies; arena %s in %zu buffers.\n",
                f.name.c_str(), f.args.size(), bytesText(argBytes).c_str(), f.results.size(),
                bytesText(resultBytes).c_str(), f.ops.size(), launches, kernels.size(),
                f.modules.size(), gemms, counts(gemmTypes).c_str(), copies,
                bytesText(size_t(f.arenaBytes)).c_str(), f.buffers.size());
    if (!attentionTypes.empty())
      std::printf("    attention steps (cuDNN): %s.\n", counts(attentionTypes).c_str());
    if (!collectiveTypes.empty())
      std::printf("    collective steps (NCCL): %s.\n", counts(collectiveTypes).c_str());
  }
  // cuDNN builds the attention graphs' descriptors without a GPU too.
  std::set<std::string> attnSeen;
  for (const ArtifactFunction &f : art->functions)
    for (const ArtifactOp &op : f.ops)
      if (const AttentionOp *a = std::get_if<AttentionOp>(&op))
        attnSeen.insert(a->desc().key());
  if (!attnSeen.empty()) {
    Expected<const Cudnn *> dnn = loadCudnn();
    if (!dnn) {
      std::printf("cuDNN not loaded (%s): attention graphs not checked.\n",
                  dnn.error().message().c_str());
    } else {
      std::set<std::string> done;
      size_t heuristic = 0, configs = 0;
      std::string stopped;
      for (const ArtifactFunction &f : art->functions)
        for (size_t i = 0; i < f.ops.size(); ++i)
          if (const AttentionOp *a = std::get_if<AttentionOp>(&f.ops[i])) {
            AttentionDesc d = a->desc();
            if (!done.insert(d.key()).second)
              continue;
            AttentionGraphCheck c;
            if (Error e = checkAttentionGraph(**dnn, d, &c)) {
              std::fprintf(stderr, "lpc-cuda-check: %s: function '%s', op %zu: %s\n",
                           path.c_str(), f.name.c_str(), i, e.message().c_str());
              return kExitFailed;
            }
            heuristic += c.planFinalized;
            configs += c.engineConfigs;
            if (stopped.empty())
              stopped = c.stoppedAt;
          }
      std::string how = heuristic == done.size()
                            ? "and an execution plan of each"
                            : "without a GPU it stops at " + stopped + "; " +
                                  std::to_string(configs) + " engine configurations offered";
      std::printf("cuDNN %zu builds the operation graphs of all %zu distinct attention steps "
                  "(%s).\n",
                  cudnnVersion(**dnn), done.size(), how.c_str());
    }
  }
  // cuBLASLt's descriptor calls need no GPU: where the library is here, it
  // must accept every GEMM as the runtime will describe it (types, layout,
  // scale pointers, epilogue).
  Expected<const CublasLt *> lt = loadCublasLt();
  if (!lt) {
    std::printf("cuBLASLt not loaded (%s): GEMM descriptors not checked.\n",
                lt.error().message().c_str());
    return kExitOk;
  }
  std::set<std::string> seen;
  for (const ArtifactFunction &f : art->functions)
    for (size_t i = 0; i < f.ops.size(); ++i)
      if (const GemmOp *g = std::get_if<GemmOp>(&f.ops[i])) {
        GemmDesc d = g->desc();
        if (!seen.insert(d.str()).second)
          continue;
        if (Error e = checkGemmDescriptors(**lt, d)) {
          std::fprintf(stderr, "lpc-cuda-check: %s: function '%s', op %zu: %s\n", path.c_str(),
                       f.name.c_str(), i, e.message().c_str());
          return kExitFailed;
        }
      }
  std::printf("cuBLASLt %zu accepts the descriptors of all %zu distinct GEMMs.\n",
              cublasLtVersion(**lt), seen.size());
  return kExitOk;
}

} // namespace check
} // namespace cuda
} // namespace rt
} // namespace lpc
