//===- CudaTrain.cpp - train a CUDA artifact -----------------------------===//

#include "lpc/Runtime/CudaTrain.h"

#include "lpc/Runtime/Comm.h"
#include "lpc/Runtime/File.h"
#include "lpc/Runtime/Json.h"

#include "../Position.h" // detail::fnv1a

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>

namespace lpc {
namespace rt {
namespace cuda {

Error probeDriver(DriverFailure *failure) {
  Expected<const Driver *> driver = Driver::get();
  if (failure)
    *failure = Driver::failure();
  if (!driver)
    return driver.error();
  return Error::success();
}

namespace {

// What the steps' collectives have sent (cudaCommTraffic): counted per run
// of a step, so that graph replays count too.
std::atomic<uint64_t> gCommBytes{0}, gCommCollectives{0};

class CudaStep;

/// The device, its GEMM engine and the artifact, shared by the functions
/// that run on them (and outliving them).
struct Session {
  std::unique_ptr<Device> device;
  std::unique_ptr<GemmEngine> gemm;
  std::unique_ptr<AttentionEngine> attention;
  /// The data-parallel group (several ranks only; destroyed before the
  /// device, members go in reverse order).
  std::unique_ptr<NcclComm> nccl;
  Artifact artifact;
  /// The train step that keeps the state on the device, once it has it
  /// there: evaluation reads that state in place.
  CudaStep *resident = nullptr;
};

/// Device -> host copies of many blocks with one wait: each is queued into
/// page-locked memory (cuMemcpyDtoHAsync), the stream synchronized once,
/// and the bytes moved to their host buffers.
class Downloader {
public:
  struct Piece {
    void *dst;
    CUdeviceptr src;
    size_t bytes;
  };
  static size_t footprint(size_t bytes) { return (bytes + 255) & ~size_t(255); }
  /// `capacity`: the most any fetch() will need (allocated with the first,
  /// so that no later one waits to free a smaller block).
  explicit Downloader(size_t capacity = 0) : capacity_(capacity) {}
  Error fetch(Device &dev, const std::vector<Piece> &pieces) {
    if (pieces.empty())
      return Error::success();
    std::vector<size_t> at;
    size_t total = 0;
    for (const Piece &p : pieces) {
      at.push_back(total);
      total += footprint(p.bytes);
    }
    if (pinned_.size() < total) {
      pinned_.reset();
      Expected<PinnedMemory> m = PinnedMemory::allocate(dev, std::max(total, capacity_));
      if (!m)
        return m.takeError();
      pinned_ = m.take();
    }
    char *base = static_cast<char *>(pinned_.data());
    for (size_t i = 0; i < pieces.size(); ++i)
      if (Error e = dev.copyToHostAsync(base + at[i], pieces[i].src, pieces[i].bytes))
        return e;
    {
      // With several ranks the stream holds NCCL collectives that wait for
      // the others: a hung rank must trip --comm-timeout here (Comm.h).
      std::optional<CommWaitScope> watched;
      if (commSize() > 1)
        watched.emplace();
      if (Error e = dev.synchronize())
        return e;
    }
    for (size_t i = 0; i < pieces.size(); ++i)
      std::memcpy(pieces[i].dst, base + at[i], pieces[i].bytes);
    return Error::success();
  }

private:
  PinnedMemory pinned_;
  size_t capacity_ = 0;
};

/// A function of the artifact on the GPU. run() copies the arguments in
/// and the results out (what eval uses; the state in place when the train
/// step has it on the device); runResident() keeps the train state on the
/// device (Trainer.h).
class CudaStep : public StepFunction {
public:
  CudaStep(std::shared_ptr<Session> session, std::unique_ptr<CudaFunction> f)
      : session_(std::move(session)), f_(std::move(f)) {
    args_ = f_->function().args;
    results_ = f_->function().results;
    // The argument each state result feeds in the next step.
    for (size_t i = 0; i < args_.size(); ++i)
      if (!args_[i].state.empty())
        stateArg_[key(args_[i])] = i;
    for (const Slot &r : results_) {
      auto it = r.state.empty() ? stateArg_.end() : stateArg_.find(key(r));
      nextArg_.push_back(it == stateArg_.end() ? -1 : int64_t(it->second));
    }
    // What a fetch may take at most: every result, or the whole state.
    size_t results = 0, state = 0;
    for (const Slot &r : results_)
      results += Downloader::footprint(r.byteSize());
    // What one run sends through its collectives, as this run's ranks do.
    for (const ArtifactOp &op : f_->function().ops)
      if (const CollectiveOp *c = std::get_if<CollectiveOp>(&op))
        if (uint64_t b = collectiveWireBytes(c->desc(), commSize()))
          commBytes_ += b, ++commCollectives_;
    for (const Slot &a : args_)
      state += a.state.empty() ? 0 : Downloader::footprint(a.byteSize());
    downloader_ = Downloader(std::max(results, state));
  }
  ~CudaStep() override {
    if (session_->resident == this)
      session_->resident = nullptr;
  }
  const std::vector<Slot> &args() const override { return args_; }
  const std::vector<Slot> &results() const override { return results_; }
  Error run(const std::vector<const void *> &args,
            const std::vector<void *> &results) override {
    Device &dev = *session_->device;
    if (Error e = allocate(hostArgBlocks_, args_))
      return e;
    if (Error e = allocate(hostResultBlocks_, results_))
      return e;
    // State the train step holds on the device is read where it is (the
    // host copy may be behind); everything else goes up from the host.
    CudaStep *trainer = session_->resident != this ? session_->resident : nullptr;
    std::vector<CUdeviceptr> a, r;
    for (size_t i = 0; i < args_.size(); ++i) {
      CUdeviceptr p = trainer ? trainer->stateBlock(args_[i]) : 0;
      if (!p) {
        p = hostArgBlocks_[i].get();
        if (Error e = dev.copyToDevice(p, args[i], args_[i].byteSize()))
          return e;
      }
      a.push_back(p);
    }
    std::vector<Downloader::Piece> out;
    for (size_t i = 0; i < results_.size(); ++i) {
      r.push_back(hostResultBlocks_[i].get());
      out.push_back({results[i], r.back(), results_[i].byteSize()});
    }
    if (Error e = f_->run(a, r))
      return e;
    countTraffic();
    return downloader_.fetch(dev, out);
  }
  size_t temporaryBytes() const override { return f_->function().arenaBytes; }
  /// lpc-run --profile-ops: the ops are timed, and no step is captured.
  CudaFunction &function() { return *f_; }
  void disableGraphs() { graphs_ = false; }
  void countTraffic() const {
    gCommBytes += commBytes_;
    gCommCollectives += commCollectives_;
  }

  std::string runNote() const override {
    if (!calls_)
      return "";
    return "CUDA graphs replayed " + std::to_string(replayed_) + " of " +
           std::to_string(calls_) + " train steps" +
           (graphs_ ? "" : " (capture off or failed)") + "; inputs of " +
           std::to_string(stagedSteps_) +
           " steps copied in while the previous step ran";
  }

  bool keepsState() const override { return true; }
  Error startResident(const std::vector<const void *> &args) override {
    Device &dev = *session_->device;
    if (Error e = allocate(argBlocks_, args_))
      return e;
    if (Error e = allocate(resultBlocks_, results_))
      return e;
    for (StreamEvent *ev : {&stepDone_, &prevStepDone_})
      if (!ev->handle()) {
        Expected<StreamEvent> made = StreamEvent::create(dev);
        if (!made)
          return made.takeError();
        *ev = made.take();
      }
    // The state goes up once; the inputs every step, unless stageNext()
    // already queued their copies (then the step waits for those).
    for (size_t i = 0; i < args_.size(); ++i)
      if (args_[i].state.empty() ? !staged_ : !uploaded_)
        if (Error e = dev.copyToDevice(argBlocks_[i].get(), args[i],
                                       args_[i].byteSize()))
          return e;
    uploaded_ = true;
    session_->resident = this;
    if (staged_) {
      if (Error e = uploader_->fence())
        return e;
      staged_ = false;
      ++stagedSteps_;
    }
    std::vector<CUdeviceptr> a, r;
    for (DeviceBuffer &b : argBlocks_)
      a.push_back(b.get());
    for (DeviceBuffer &b : resultBlocks_)
      r.push_back(b.get());
    if (Error e = f_->run(a, r))
      return e;
    countTraffic();
    // Marks the end of this step: the copies stageNext() queues during the
    // next step refill the blocks this one reads, and wait for this mark.
    std::swap(stepDone_, prevStepDone_);
    if (Error e = stepDone_.record())
      return e;
    replayed_ += f_->lastRunHasGraph();
    // After a warm-up step (cuBLASLt's plans chosen, blocks allocated), the
    // step is captured in a CUDA graph for each of the two pointer sets the
    // swaps alternate between; later steps replay them. A capture that
    // fails only costs the graphs.
    ++calls_;
    if (graphs_ && (calls_ == 2 || calls_ == 3) && !f_->lastRunHasGraph())
      if (Error e = f_->captureGraph()) {
        graphs_ = false;
        std::fprintf(stderr,
                     "lpc-run: warning: the train step runs without CUDA "
                     "graphs: %s\n",
                     e.message().c_str());
      }
    return Error::success();
  }
  Error finishResident(const std::vector<void *> &results,
                       const std::vector<bool> &download) override {
    // One wait for the step and all its marked results (none: no wait).
    std::vector<Downloader::Piece> out;
    for (size_t i = 0; i < results_.size(); ++i)
      if (download[i])
        out.push_back({results[i], resultBlocks_[i].get(), results_[i].byteSize()});
    if (Error e = downloader_.fetch(*session_->device, out))
      return e;
    // The new state becomes the next step's argument by swapping blocks:
    // the step reads its arguments and writes its results, never both.
    for (size_t i = 0; i < results_.size(); ++i)
      if (nextArg_[i] >= 0)
        std::swap(argBlocks_[nextArg_[i]], resultBlocks_[i]);
    // The inputs alternate between two blocks in step with the state (two
    // pointer sets in all, as the two CUDA graphs expect): the next step
    // reads the block stageNext() filled.
    for (size_t i = 0; i < spareBlocks_.size(); ++i)
      if (spareBlocks_[i])
        std::swap(argBlocks_[i], spareBlocks_[i]);
    return Error::success();
  }
  Error stageNext(const std::vector<const void *> &args) override {
    // The next step's inputs go up on the uploader's stream while this step
    // computes, into the blocks this step does not read.
    if (!uploader_) {
      size_t bytes = 0;
      for (const Slot &s : args_)
        if (s.state.empty())
          bytes += s.byteSize() + 256;
      Expected<std::unique_ptr<Uploader>> u =
          Uploader::create(*session_->device, bytes);
      if (!u)
        return u.takeError();
      uploader_ = u.take();
      for (const Slot &s : args_) {
        spareBlocks_.emplace_back();
        if (!s.state.empty())
          continue;
        Expected<DeviceBuffer> b =
            session_->device->allocate(std::max<size_t>(s.byteSize(), 1));
        if (!b)
          return b.error();
        spareBlocks_.back() = b.take();
      }
    }
    // The spare blocks are the ones the previous step read: the copies wait
    // for it (not for this step, which they overlap).
    if (Error e = uploader_->waitFor(prevStepDone_))
      return e;
    for (size_t i = 0; i < args_.size(); ++i)
      if (spareBlocks_[i])
        if (Error e = uploader_->upload(spareBlocks_[i].get(), args[i],
                                        args_[i].byteSize()))
          return e;
    staged_ = true;
    return Error::success();
  }
  Error downloadState(const std::vector<void *> &args) override {
    if (!uploaded_)
      return Error::success(); // the host holds the only copy
    std::vector<Downloader::Piece> out;
    for (size_t i = 0; i < args_.size(); ++i)
      if (!args_[i].state.empty() && args[i])
        out.push_back({args[i], argBlocks_[i].get(), args_[i].byteSize()});
    return downloader_.fetch(*session_->device, out);
  }

  /// The device block holding the state `s` names (the train step's next
  /// argument), or 0 when this step does not hold it there.
  CUdeviceptr stateBlock(const Slot &s) const {
    if (s.state.empty() || !uploaded_)
      return 0;
    auto it = stateArg_.find(key(s));
    if (it == stateArg_.end() || args_[it->second].byteSize() != s.byteSize() ||
        args_[it->second].dtype != s.dtype)
      return 0;
    return argBlocks_[it->second].get();
  }

private:
  static std::string key(const Slot &s) { return s.state + "/" + s.name; }
  Error allocate(std::vector<DeviceBuffer> &blocks,
                 const std::vector<Slot> &slots) {
    if (!blocks.empty())
      return Error::success();
    for (const Slot &s : slots) {
      Expected<DeviceBuffer> b =
          session_->device->allocate(std::max<size_t>(s.byteSize(), 1));
      if (!b)
        return b.error();
      blocks.push_back(b.take());
    }
    return Error::success();
  }

  std::shared_ptr<Session> session_;
  std::unique_ptr<CudaFunction> f_;
  std::vector<Slot> args_, results_;
  std::map<std::string, size_t> stateArg_; // state key -> argument
  std::vector<int64_t> nextArg_;
  std::vector<DeviceBuffer> argBlocks_, resultBlocks_;
  std::vector<DeviceBuffer> hostArgBlocks_, hostResultBlocks_; // run()'s
  Downloader downloader_;
  // Recorded after each step on the device's stream (this one's and the
  // previous one's).
  StreamEvent stepDone_, prevStepDone_;
  // The inputs' second blocks (null for state arguments) and the copies
  // that fill them ahead of the step (stageNext).
  std::vector<DeviceBuffer> spareBlocks_;
  std::unique_ptr<Uploader> uploader_;
  bool staged_ = false;
  bool uploaded_ = false;
  int64_t calls_ = 0, replayed_ = 0, stagedSteps_ = 0;
  uint64_t commBytes_ = 0, commCollectives_ = 0; // per run (countTraffic)
  // LPC_CUDA_GRAPHS=0 runs every step eagerly (to compare, or to debug).
  bool graphs_ = !(std::getenv("LPC_CUDA_GRAPHS") &&
                   std::string(std::getenv("LPC_CUDA_GRAPHS")) == "0");
};

} // namespace

std::pair<uint64_t, uint64_t> cudaCommTraffic() {
  return {gCommBytes.load(), gCommCollectives.load()};
}

Expected<CudaSteps> openCudaSteps(Artifact artifact,
                                  const std::string &stepName,
                                  const std::string &evalName,
                                  std::unique_ptr<Device> device) {
  if (Error e = artifact.validate())
    return e;
  auto session = std::make_shared<Session>();
  session->artifact = std::move(artifact);
  const int ranks = commSize(), rank = commRank();
  if (!device) {
    Expected<const Driver *> driver = Driver::get();
    if (!driver)
      return driver.error();
    // One process per GPU: the ranks on one machine take its devices in
    // turn.
    int ordinal = 0;
    if (ranks > 1) {
      Expected<int> count = deviceCount(**driver);
      if (!count)
        return count.error();
      ordinal = *count > 0 ? commLocalRank() % *count : 0;
    }
    Expected<std::unique_ptr<Device>> opened = Device::open(**driver, ordinal);
    if (!opened)
      return opened.error();
    device = opened.take();
  }
  session->device = std::move(device);
  const DeviceInfo &info = session->device->info();
  // PTX for sm_XY runs on chips from XY on (the driver JITs it).
  int cc = info.ccMajor * 10 + info.ccMinor;
  const std::string &chip = session->artifact.chip;
  int want = chip.rfind("sm_", 0) == 0 ? std::atoi(chip.c_str() + 3) : 0;
  if (cc < want)
    return Error::make(session->artifact.source + " is for " + chip + " but " +
                       info.name + " is sm_" + std::to_string(cc) +
                       " (compile it with --gpu-arch=sm_" + std::to_string(cc) +
                       ")");
  // cuBLASLt only when there is a GEMM to run.
  bool anyGemm = false;
  for (const ArtifactFunction &f : session->artifact.functions)
    for (const ArtifactOp &op : f.ops)
      anyGemm = anyGemm || std::holds_alternative<GemmOp>(op);
  if (anyGemm) {
    Expected<std::unique_ptr<GemmEngine>> gemm =
        GemmEngine::create(*session->device);
    if (!gemm)
      return gemm.error();
    session->gemm = gemm.take();
  }
  // cuDNN only when there is an attention step; its plans are built and
  // its workspace allocated now, before any step runs or is captured.
  std::vector<AttentionDesc> attentionDescs;
  std::set<std::string> attentionKeys;
  for (const ArtifactFunction &f : session->artifact.functions)
    for (const ArtifactOp &op : f.ops)
      if (const AttentionOp *a = std::get_if<AttentionOp>(&op))
        if (attentionKeys.insert(a->desc().key()).second)
          attentionDescs.push_back(a->desc());
  if (!attentionDescs.empty()) {
    Expected<std::unique_ptr<AttentionEngine>> attn =
        AttentionEngine::create(*session->device);
    if (!attn)
      return attn.error().withContext(session->artifact.source + " has attention steps");
    session->attention = attn.take();
    for (const AttentionDesc &d : attentionDescs)
      if (Error e = session->attention->prepare(d))
        return e.withContext(session->artifact.source);
  }
  // A step built for another rank count stops here, before anything runs.
  for (const ArtifactFunction &f : session->artifact.functions)
    for (size_t i = 0; i < f.ops.size(); ++i)
      if (const CollectiveOp *c = std::get_if<CollectiveOp>(&f.ops[i])) {
        std::string wrong = checkCollectiveRanks(c->desc(), ranks);
        if (!wrong.empty())
          return Error::make(session->artifact.source + ": function '" + f.name + "', op " +
                             std::to_string(i) + " (" + opLabel(f.ops[i]) + "): " + wrong);
      }
  // NCCL when several ranks run the step (one rank: its collectives are
  // copies, as on the CPU).
  if (ranks > 1) {
    Expected<std::unique_ptr<NcclComm>> comm =
        NcclComm::create(*session->device, rank, ranks);
    if (!comm)
      return comm.error().withContext("rank " + std::to_string(rank));
    session->nccl = comm.take();
  }
  AttentionEngine *attention = session->attention.get();
  GemmEngine *engine = session->gemm.get();
  Device *dev = session->device.get();
  NcclComm *nccl = session->nccl.get();
  CudaSteps out;
  out.device = info.name + " (sm_" + std::to_string(cc) + ")";
  const std::string *names[] = {&stepName, &evalName};
  for (int i = 0; i < 2; ++i) {
    const ArtifactFunction *fn = session->artifact.find(*names[i]);
    if (!fn)
      return Error::make(session->artifact.source + ": no function '" +
                         *names[i] + "'");
    StepCallbacks callbacks;
    callbacks.gemm = [engine](const GemmDesc &d, const GemmOperands &o) {
      return engine->run(d, o);
    };
    callbacks.attention = [attention](const AttentionDesc &d,
                                      const AttentionOperands &o) {
      return attention->run(d, o);
    };
    callbacks.collective = [dev, nccl](const CollectiveDesc &d,
                                       const CollectiveOperands &o) {
      return runCollective(*dev, nccl, d, o);
    };
    Expected<std::unique_ptr<CudaFunction>> f = CudaFunction::create(
        *session->device, *fn, std::move(callbacks), session->artifact.source);
    if (!f)
      return f.error();
    (i == 0 ? out.step : out.eval) =
        std::make_unique<CudaStep>(session, f.take());
  }
  return out;
}

/// Writes what CudaFunction::enableOpTiming measured (--profile-ops),
/// atomically.
static Error writeOpProfile(const std::string &out, const std::string &artifact,
                            const std::string &device, CudaFunction &f, int64_t skipped) {
  if (f.timedRuns() == 0)
    return Error::make(out + ": no step was timed (--profile-ops skips the first " +
                       std::to_string(skipped) + " steps as warm-up: train more steps)");
  const ArtifactFunction &fn = f.function();
  char buf[64];
  double step = 0;
  std::string ops;
  for (size_t i = 0; i < fn.ops.size(); ++i) {
    double ms = f.opMilliseconds()[i] / double(f.timedRuns());
    step += ms;
    std::snprintf(buf, sizeof(buf), "%.6g", ms);
    ops += std::string(i ? ",\n  " : "  ") + "{\"op\": " + std::to_string(i) +
           ", \"what\": " + jsonQuote(opLabel(fn.ops[i])) + ", \"ms\": " + buf + "}";
  }
  std::snprintf(buf, sizeof(buf), "%.6g", step);
  std::string json = "{\"lpc_op_profile\": 1, \"artifact\": " + jsonQuote(artifact) +
                     ", \"function\": " + jsonQuote(fn.name) +
                     ", \"device\": " + jsonQuote(device) +
                     ", \"timed_steps\": " + std::to_string(f.timedRuns()) +
                     ", \"skipped_steps\": " + std::to_string(skipped) +
                     ", \"step_ms\": " + buf + ",\n \"ops\": [\n" + ops + "]}\n";
  return writeFileAtomic(out, json.data(), json.size());
}

int trainArtifact(const std::string &path, TrainOptions options,
                  const std::string &profileOps) {
  auto fail = [](const std::string &msg, int status = 1) {
    std::fprintf(stderr, "lpc-run: error: %s\n", msg.c_str());
    return status;
  };
  DriverFailure why = DriverFailure::None;
  if (Error e = probeDriver(&why))
    return fail("--device=cuda: " + e.message(),
                why == DriverFailure::Failed ? 1 : 2);
  Expected<std::vector<uint8_t>> bytes = readFile(path);
  if (!bytes)
    return fail(bytes.error().message());
  Expected<Artifact> art = parseArtifact(
      std::string_view(reinterpret_cast<const char *>(bytes->data()),
                       bytes->size()),
      path);
  if (!art)
    return fail(art.error().message());
  if (!art->train)
    return fail(path + ": no \"train\" section (an artifact written by "
                       "lpc-run --emit-artifact has one)");
  // Every rank must train the same artifact on the same stream of batches,
  // or the averaged gradients mean nothing (and a rank whose step has other
  // collectives would hang the others): compare a hash of the artifact's
  // bytes and of the settings that choose the batches with rank 0's, as the
  // compiling lpc-run compares its built step.
  if (commSize() > 1) {
    uint64_t own = detail::fnv1a(detail::kFnv1aOffset, bytes->data(), bytes->size());
    char settings[512];
    std::snprintf(settings, sizeof(settings), "%s|%s|%lld|%.17g|%lld|%lld|%llu|%lld|%d|%d",
                  options.data.substr(0, options.data.find(':')).c_str(),
                  options.evalData.substr(0, options.evalData.find(':')).c_str(),
                  (long long)options.steps, options.epochs, (long long)options.evalEvery,
                  (long long)options.evalBatches, (unsigned long long)options.seed,
                  (long long)options.syntheticExamples, !options.resume.empty(),
                  !options.init.empty());
    own = detail::fnv1a(own, reinterpret_cast<const uint8_t *>(settings), std::strlen(settings));
    uint64_t root = commBroadcastFromRoot(own);
    if (own != root) {
      char msg[320];
      std::snprintf(msg, sizeof(msg),
                    "rank %d: its artifact or settings differ from rank 0's (hash %llx "
                    "against %llx): every rank must train the same artifact with the "
                    "same options (steps, epochs, seed, data kind, evaluation)",
                    commRank(), (unsigned long long)own, (unsigned long long)root);
      fail(msg);
    }
    if (commAny(own != root)) {
      int rc = commRank() == 0 ? fail("the ranks were given different artifacts or settings "
                                      "(see above); stopping before training")
                               : 1;
      // The ranks leave together: a rank that exits (non-zero) first can
      // have mpirun end the others before rank 0 has said why.
      commAny(false);
      return rc;
    }
  }
  // (A copy: the artifact moves to the device session below.)
  const ArtifactTraining t = *art->train;
  // The compiled settings win; the run's own come from `options`.
  const TrainOptions &c = t.options;
  options.mixedPrecision = c.mixedPrecision;
  options.pipeline = c.pipeline;
  options.lr = c.lr;
  options.lrSchedule = c.lrSchedule;
  options.warmupSteps = c.warmupSteps;
  options.minLr = c.minLr;
  if (options.steps <= 0 && options.epochs <= 0)
    options.steps = t.totalSteps;
  // The step's collectives go through NCCL, not MPI.
  options.commSent = cudaCommTraffic;
  auto trainer = Trainer::create(t.model, options);
  if (!trainer)
    return fail(trainer.error().message());
  int64_t total = (*trainer)->totalSteps();
  if (total != t.totalSteps &&
      (c.lrSchedule != "constant" || c.warmupSteps > 0))
    return fail(path + " was compiled for " + std::to_string(t.totalSteps) +
                " steps (its learning rate follows a " + c.lrSchedule +
                " schedule" + (c.warmupSteps > 0 ? " with warmup" : "") +
                "), not " + std::to_string(total) +
                "; recompile it for this run or train for that many steps");
  auto t0 = std::chrono::steady_clock::now();
  const std::string stepName = t.model.name + "_train_step",
                    evalName = t.model.name + "_eval";
  Expected<CudaSteps> steps = openCudaSteps(art.take(), stepName, evalName);
  if (!steps)
    return fail("--device=cuda: " + steps.error().message());
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (commRank() == 0) // rank 0 reports (Trainer.h)
    std::fprintf(stderr,
               "lpc-run: loaded @%s and @%s (%s precision) from %s in %.2f s; "
               "%s\n",
               stepName.c_str(), evalName.c_str(), c.mixedPrecision.c_str(),
               path.c_str(), secs, steps->device.c_str());
  // Warm-up steps before the timing starts: modules, cuBLASLt's plans.
  constexpr int64_t kProfileSkip = 2;
  CudaStep *step = static_cast<CudaStep *>(steps->step.get());
  if (!profileOps.empty()) {
    step->disableGraphs();
    if (Error e = step->function().enableOpTiming(kProfileSkip))
      return fail("--profile-ops: " + e.message());
  }
  int rc = (*trainer)->run(*steps->step, *steps->eval, secs);
  // (A failed run has said why; no profile then.)
  if (rc == 0 && !profileOps.empty() && commRank() == 0) {
    if (Error e = writeOpProfile(profileOps, path, steps->device, step->function(), kProfileSkip))
      return fail("--profile-ops: " + e.message());
    std::fprintf(stderr, "lpc-run: op times of %lld steps (events around each op, no CUDA "
                         "graphs) written to %s\n",
                 (long long)step->function().timedRuns(), profileOps.c_str());
  }
  return rc;
}

} // namespace cuda
} // namespace rt
} // namespace lpc
