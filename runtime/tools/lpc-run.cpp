//===- lpc-run.cpp - train a CUDA artifact (runtime-only build) -----------===//
//
// The lpc-run of a machine that has the runtime but not the compiler (no
// LLVM/MLIR): it trains an artifact that lpc-run --device=cuda
// --emit-artifact wrote elsewhere. Same data, loop, metrics and checkpoints
// as the full lpc-run (lpc::rt::Trainer); the model and what it was
// compiled with (precision, learning rate and schedule) come from the
// artifact. Options are --name=value; --config=FILE.json holds the same
// names (the command line wins). Under mpirun each rank trains on one GPU
// and its share of every batch (docs/training.md, data parallelism on GPUs).
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/CommTrainer.h"
#include "lpc/Runtime/CudaTrain.h"
#include "lpc/Runtime/Data.h"
#include "lpc/Runtime/File.h"
#include "lpc/Runtime/Json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

using namespace lpc::rt;

namespace {

const char kUsage[] =
    "usage: lpc-run ARTIFACT.json --device=cuda [options]\n"
    "\n"
    "Trains a CUDA artifact (written by lpc-run MODEL.mlir --device=cuda\n"
    "--emit-artifact=ARTIFACT.json on a machine with the compiler).\n"
    "\n"
    "  --device=cuda            the only device of a runtime-only build\n"
    "  --data=SPEC              fashion-mnist | synthetic | text:PATH |\n"
    "                           tensors:PATH (safetensors, one tensor per input)\n"
    "  --eval-data=tensors:PATH held-out examples for --data=tensors:\n"
    "  --data-dir=DIR           Fashion-MNIST directory\n"
    "  --init=PATH              initial parameters (safetensors)\n"
    "  --save-weights=PATH      write the trained parameters (safetensors)\n"
    "  --steps=N                train steps (default: what it was compiled "
    "for)\n"
    "  --epochs=X               epochs (instead of --steps)\n"
    "  --eval-every=N           evaluate every N steps (0: at the end)\n"
    "  --eval-batches=N         batches per evaluation (0: all)\n"
    "  --checkpoint-dir=DIR     write checkpoints here\n"
    "  --checkpoint-every=N     checkpoint every N steps (and at the end)\n"
    "  --keep-checkpoints=N     keep latest.safetensors and N-1 older ones\n"
    "                           (step-S.safetensors)\n"
    "  --resume=PATH|latest     continue from a checkpoint (latest: the\n"
    "                           newest intact one in --checkpoint-dir)\n"
    "  --seed=N                 seed of parameters and data\n"
    "  --log=FILE               per-step metrics (JSONL)\n"
    "  --print-every=N          progress lines when not a terminal\n"
    "  --synthetic-examples=N   examples of synthetic data\n"
    "  --verify-ranks=N         under mpirun: check every N steps that the\n"
    "                           ranks hold the same state (0: never)\n"
    "  --comm-timeout=SECONDS   under mpirun: end a rank that waits longer\n"
    "                           for the others (default 600, 0: no limit)\n"
    "  --profile-ops=FILE.json  time every op of the train step (CUDA events,\n"
    "                           no CUDA graphs; after 2 warm-up steps) and\n"
    "                           write the means there (lpc-cuda-check\n"
    "                           --estimate ARTIFACT --measured=FILE.json)\n"
    "  --config=FILE.json       any of these options\n";

int usageError(const std::string &msg) {
  std::fprintf(stderr,
               "lpc-run: error: %s (lpc-run --help lists the options)\n",
               msg.c_str());
  return 1;
}

bool parseInt(const std::string &s, int64_t &out) {
  std::optional<int64_t> v = parseInt64(s);
  if (!v)
    return false;
  out = *v;
  return true;
}

int runMain(int argc, char **argv);

} // namespace

int main(int argc, char **argv) {
  // Under mpirun: one rank of a data-parallel run (MPI_Init_thread here,
  // MPI_Finalize at the end); a plain run never touches MPI.
  if (Error e = commInit(&argc, &argv)) {
    std::fprintf(stderr, "lpc-run: error: %s\n", e.message().c_str());
    return 1;
  }
  int rc = runMain(argc, argv);
  if (rc != 0)
    commAbortAll(rc); // the other ranks must not wait for this one
  commFinalize();
  return rc;
}

namespace {

int runMain(int argc, char **argv) {
  std::string artifact;
  std::map<std::string, std::string> opts; // command line, then config
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a.rfind("--", 0) != 0) {
      if (!artifact.empty())
        return usageError("more than one artifact given ('" + artifact +
                          "', '" + a + "')");
      artifact = a;
      continue;
    }
    size_t eq = a.find('=');
    if (eq == std::string::npos)
      return usageError("option '" + a + "' needs a value (--name=value)");
    opts.emplace(a.substr(2, eq - 2), a.substr(eq + 1));
  }
  if (auto it = opts.find("config"); it != opts.end()) {
    Expected<std::vector<uint8_t>> bytes = readFile(it->second);
    if (!bytes)
      return usageError(bytes.error().message());
    Expected<JsonValue> cfg = parseJson(std::string_view(
        reinterpret_cast<const char *>(bytes->data()), bytes->size()));
    if (!cfg || !cfg->isObject())
      return usageError(it->second + ": " +
                        (cfg ? std::string("expected a JSON object")
                             : cfg.error().message()));
    for (const auto &[k, v] : cfg->members) {
      if (v.isObject() || v.isArray() || v.isNull())
        return usageError(it->second + ": option '" + k +
                          "' must be a string, number or boolean");
      std::string s = v.isBool() ? (v.boolean ? "true" : "false") : v.text;
      opts.emplace(k, s); // the command line wins
    }
  }
  if (artifact.empty())
    return usageError("no artifact given");

  TrainOptions o;
  o.dataDir = kFashionMnistDir;
  o.epochs = 0;
  int64_t verifyRanks = 0;
  double commTimeout = 600;
  std::string profileOps;
  for (const auto &[k, v] : opts) {
    bool ok = true;
    if (k == "device") {
      if (v != "cuda")
        return usageError("this lpc-run (a runtime-only build) runs CUDA "
                          "artifacts: --device must be cuda, got '" +
                          v + "'");
    } else if (k == "config") {
    } else if (k == "data") {
      o.data = v;
    } else if (k == "eval-data") {
      o.evalData = v;
    } else if (k == "init") {
      o.init = v;
    } else if (k == "save-weights") {
      o.saveWeights = v;
    } else if (k == "data-dir") {
      o.dataDir = v;
    } else if (k == "steps") {
      ok = parseInt(v, o.steps) && o.steps > 0;
    } else if (k == "epochs") {
      std::optional<double> d = parseDouble(v);
      ok = d && *d > 0;
      o.epochs = d ? *d : 0;
    } else if (k == "eval-every") {
      ok = parseInt(v, o.evalEvery) && o.evalEvery >= 0;
    } else if (k == "eval-batches") {
      ok = parseInt(v, o.evalBatches) && o.evalBatches >= 0;
    } else if (k == "checkpoint-dir") {
      o.checkpointDir = v;
    } else if (k == "checkpoint-every") {
      ok = parseInt(v, o.checkpointEvery) && o.checkpointEvery >= 0;
    } else if (k == "keep-checkpoints") {
      ok = parseInt(v, o.keepCheckpoints) && o.keepCheckpoints >= 1;
    } else if (k == "resume") {
      o.resume = v;
    } else if (k == "seed") {
      std::optional<uint64_t> s = parseUInt64(v);
      ok = bool(s);
      o.seed = s ? *s : 0;
    } else if (k == "profile-ops") {
      profileOps = v;
      ok = !v.empty();
    } else if (k == "log") {
      o.logFile = v;
    } else if (k == "print-every") {
      ok = parseInt(v, o.printEvery) && o.printEvery > 0;
    } else if (k == "synthetic-examples") {
      ok = parseInt(v, o.syntheticExamples) && o.syntheticExamples > 0;
    } else if (k == "verify-ranks") {
      ok = parseInt(v, verifyRanks) && verifyRanks >= 0;
    } else if (k == "comm-timeout") {
      char *end = nullptr;
      commTimeout = std::strtod(v.c_str(), &end);
      ok = !v.empty() && *end == 0 && commTimeout >= 0 && std::isfinite(commTimeout);
    } else {
      return usageError("unknown option '--" + k + "'");
    }
    if (!ok)
      return usageError("bad value '" + v + "' for --" + k);
  }
  if (opts.find("device") == opts.end())
    return usageError("pass --device=cuda (a runtime-only build trains CUDA "
                      "artifacts only)");
  if (o.resume == "latest" && o.checkpointDir.empty())
    return usageError("--resume=latest needs --checkpoint-dir");
  setCommTrainOptions(o, verifyRanks);
  commSetTimeout(commTimeout);
  return lpc::rt::cuda::trainArtifact(artifact, o, profileOps);
}

} // namespace
