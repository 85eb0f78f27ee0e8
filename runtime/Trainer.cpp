//===- Trainer.cpp - the training loop of lpc-run ------------------------===//

#include "lpc/Runtime/Trainer.h"

#include "lpc/Runtime/HostFloat.h"
#include "lpc/Runtime/Json.h"
#include "lpc/Runtime/Metrics.h"
#include "lpc/Runtime/Safetensors.h"

#include "Position.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <optional>
#include <set>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lpc {
namespace rt {

namespace {

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string s(n > 0 ? n : 0, '\0');
  std::vsnprintf(s.data(), s.size() + 1, fmt, ap2);
  va_end(ap2);
  return s;
}

int fail(const std::string &msg) {
  std::fprintf(stderr, "lpc-run: error: %s\n", msg.c_str());
  return 1;
}

std::string stateKey(const Slot &s) {
  return s.name.empty() ? s.state : s.state + "/" + s.name;
}

std::string humanTime(double s) {
  if (s < 60)
    return format("%.1fs", s);
  int m = int(s / 60);
  return format("%dm%.0fs", m, s - 60 * m);
}

/// mkdir -p.
Error makeDirectories(const std::string &path) {
  std::string cur;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos)
      next = path.size();
    cur = path.substr(0, next);
    pos = next + 1;
    if (cur.empty())
      continue;
    if (::mkdir(cur.c_str(), 0777) != 0 && errno != EEXIST)
      return Error::make(path + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Error::make(path + ": not a directory");
  return Error::success();
}

} // namespace

struct Trainer::Impl {
  ModelInfo model;
  TrainOptions opt;
  std::optional<ClassificationDataset> train, test;
  std::optional<CharCorpus> corpus, corpusVal;
  std::optional<BatchIterator> iter;
  std::optional<CorpusSampler> sampler;
  // --data=tensors:PATH (and --eval-data), loaded once the inputs are known.
  std::optional<TensorDataset> tensors, tensorsEval;
  std::optional<TensorBatches> tensorBatches;
  std::optional<InitWeights> initWeights; // --init
  int64_t totalSteps = 0;

  std::map<std::string, std::vector<uint8_t>> state;
  std::map<std::string, Slot> stateSlot;
  std::map<std::string, std::vector<uint8_t>> inputs;
  // With several ranks (text and tensor data): the global batch, of which
  // this rank copies its rows into `inputs`; the bytes of one rank's part.
  std::map<std::string, std::vector<uint8_t>> globalInputs;
  std::map<std::string, size_t> rankBytes;
  /// Rows of a global batch (the model's batch times the ranks).
  int64_t globalBatch() const { return model.batch * opt.ranks; }
  /// This rank's rows of globalInputs into inputs.
  void takeRankRows() {
    for (auto &[name, bytes] : rankBytes)
      std::memcpy(inputs[name].data(),
                  globalInputs[name].data() + size_t(opt.rank) * bytes, bytes);
  }

  Error load();
  Error loadTensors(const std::vector<InputSpec> &inputs);
  std::string dataPosition() const {
    return iter ? iter->position()
                : tensorBatches ? tensorBatches->position() : sampler->position();
  }
  double lrAt(int64_t step) const;
  std::string checkpointPath(const std::string &name) const {
    return opt.checkpointDir + "/" + name;
  }
  Error initState(const std::vector<Slot> &args);
  Error resume(int64_t &startStep);
  /// ZeRO-1: every sharded state tensor whole (its blocks from every rank,
  /// the padding dropped), by key. A collective: every rank calls it at the
  /// same step. Empty when nothing is sharded.
  std::map<std::string, std::vector<uint8_t>> gatherShards();
  /// This rank's block of a sharded slot's whole tensor (padded with 0).
  void takeShard(const Slot &s, const uint8_t *whole, uint8_t *block) const;
  Error writeCheckpoint(int64_t stepDone,
                        const std::map<std::string, std::vector<uint8_t>> &whole);
  void loadBatch(const ClassificationDataset &ds,
                 const std::vector<int64_t> &idx) {
    ds.gather(idx, reinterpret_cast<float *>(inputs[model.featName].data()),
              reinterpret_cast<int32_t *>(inputs[model.labelName].data()));
  }
  std::vector<const void *> argPointers(const std::vector<Slot> &args) {
    std::vector<const void *> ap;
    for (const Slot &s : args)
      ap.push_back(s.input.empty() ? state[stateKey(s)].data()
                                   : inputs[s.input].data());
    return ap;
  }
  Error evaluate(StepFunction &eval, double &lossOut, double &accOut);

  /// The host copy of the state is behind a device-resident step.
  bool hostStale = false;
  /// Compares the state with the other ranks' (--verify-ranks): "" when
  /// every rank holds the same bytes, else the first tensor that differs
  /// (the same answer on every rank: each comparison is a collective, in
  /// the same order everywhere).
  std::string rankDifference() {
    // ZeRO-1's optimizer state blocks differ between the ranks by design,
    // and so do buffers (BatchNorm's running statistics: each rank's from
    // its own batches; rank 0's are evaluated and saved, as PyTorch DDP's
    // broadcast_buffers gives).
    auto sharded = [&](const std::string &key) {
      return !stateSlot[key].shardOf.empty() || stateSlot[key].state == "buffer";
    };
    uint64_t all = detail::kFnv1aOffset;
    for (auto &[key, bytes] : state)
      if (!sharded(key))
        all = detail::fnv1a(all, bytes.data(), bytes.size());
    if (opt.sameOnAllRanks(all))
      return "";
    for (auto &[key, bytes] : state)
      if (!sharded(key) && !opt.sameOnAllRanks(
              detail::fnv1a(detail::kFnv1aOffset, bytes.data(), bytes.size())))
        return key;
    return "the set of state tensors";
  }

  Error syncState(StepFunction &step) {
    if (!hostStale)
      return Error::success();
    std::vector<void *> ptrs;
    for (const Slot &s : step.args())
      ptrs.push_back(s.state.empty() ? nullptr : state[stateKey(s)].data());
    hostStale = false;
    return step.downloadState(ptrs);
  }
};

Error Trainer::Impl::load() {
  std::string spec = opt.data;
  if (spec.empty())
    spec = model.textModel ? "" : "fashion-mnist";
  if (!opt.evalData.empty() && spec.rfind("tensors:", 0) != 0)
    return Error::make("--eval-data goes with --data=tensors:PATH");
  if (spec.rfind("tensors:", 0) == 0) {
    // The examples are counted from the header now (the step count decides
    // the LR schedule); they are read and checked against the inputs in
    // loadTensors, here when the model's inputs are known, else from the
    // step's arguments.
    std::string path = spec.substr(8);
    auto header = readSafetensorsHeader(path);
    if (!header)
      return header.error();
    if (header->entries.empty())
      return Error::make(path + ": no tensors");
    int64_t n = header->entries.front().shape.empty()
                    ? 0
                    : header->entries.front().shape.front();
    if (!model.inputs.empty())
      if (Error e = loadTensors(model.inputs))
        return e;
    totalSteps = opt.steps > 0 ? opt.steps
                               : std::max<int64_t>(1, int64_t(std::ceil(
                                                          opt.epochs * (n / globalBatch()))));
    return Error::success();
  }
  if (model.textModel) {
    if (spec.rfind("text:", 0) != 0)
      return Error::make(
          "a token model needs --data=text:PATH (any text file)");
    auto c = loadCharCorpus(spec.substr(5));
    if (!c)
      return c.error();
    // Every byte is a token id: one the model has no row for would make
    // the loss NaN at the first step, which would look like a diverging
    // run.
    for (size_t i = 0; i < c->bytes.size(); ++i)
      if (model.classes > 0 && c->bytes[i] >= model.classes)
        return Error::make(
            spec.substr(5) + ": byte " + std::to_string(c->bytes[i]) +
            " at offset " + std::to_string(i) + " is not a token of the model (its " +
            "vocabulary has " + std::to_string(model.classes) +
            " tokens, ids 0.." + std::to_string(model.classes - 1) +
            "); build it with a vocabulary of 256 (lpc-model gpt --vocab=256) "
            "to train on any file");
    auto [tr, va] = splitCharCorpus(*c, 0.1);
    corpus = std::move(tr);
    corpusVal = std::move(va);
  } else if (spec == "fashion-mnist") {
    auto tr = loadFashionMnist(Split::Train, opt.dataDir);
    if (!tr)
      return tr.error();
    auto te = loadFashionMnist(Split::Test, opt.dataDir);
    if (!te)
      return te.error();
    train = std::move(*tr);
    test = std::move(*te);
  } else if (spec == "synthetic") {
    SyntheticOptions so;
    so.numExamples = opt.syntheticExamples;
    so.features = model.features;
    so.classes = model.classes;
    so.seed = opt.seed;
    auto tr = makeSyntheticClassification(so, Split::Train);
    auto te = makeSyntheticClassification(so, Split::Test);
    if (!tr)
      return tr.error();
    if (!te)
      return te.error();
    train = std::move(*tr);
    test = std::move(*te);
  } else {
    return Error::make("unknown --data '" + spec +
                       "' (fashion-mnist, synthetic, text:PATH or tensors:PATH)");
  }
  if (train && train->featureSize != model.features)
    return Error::make(
        format("%s has %lld features per example but the model's "
               "input '%s' expects %lld",
               train->name.c_str(), (long long)train->featureSize,
               model.featName.c_str(), (long long)model.features));
  int64_t perEpoch = 0;
  if (train) {
    BatchIteratorOptions bo;
    bo.batchSize = globalBatch();
    bo.seed = opt.seed;
    auto it = BatchIterator::create(train->numExamples, bo);
    if (!it)
      return it.error();
    iter = std::move(*it);
    perEpoch = iter->batchesPerEpoch();
  } else {
    auto s =
        CorpusSampler::create(*corpus, globalBatch(), model.seqLen, opt.seed);
    if (!s)
      return s.error();
    sampler = std::move(*s);
    perEpoch = std::max<int64_t>(1, int64_t(corpus->bytes.size()) /
                                        (globalBatch() * model.seqLen));
  }
  totalSteps =
      opt.steps > 0
          ? opt.steps
          : std::max<int64_t>(1, int64_t(std::ceil(opt.epochs * perEpoch)));
  return Error::success();
}

Error Trainer::Impl::loadTensors(const std::vector<InputSpec> &inputs) {
  auto ds = loadTensorDataset(opt.data.substr(8), inputs);
  if (!ds)
    return ds.error();
  tensors = std::move(*ds);
  tensorBatches.emplace(*tensors, globalBatch());
  if (!opt.evalData.empty()) {
    if (opt.evalData.rfind("tensors:", 0) != 0)
      return Error::make("--eval-data must be tensors:PATH");
    auto ev = loadTensorDataset(opt.evalData.substr(8), inputs);
    if (!ev)
      return ev.error();
    tensorsEval = std::move(*ev);
  }
  return Error::success();
}

double Trainer::Impl::lrAt(int64_t step) const {
  double base = opt.lr;
  const std::string &sched = opt.lrSchedule;
  int64_t warmup = opt.warmupSteps;
  if (step < warmup)
    return base * double(step) / double(std::max<int64_t>(1, warmup));
  if (sched == "linear" || sched == "cosine") {
    double p = double(step - warmup) /
               double(std::max<int64_t>(1, totalSteps - warmup));
    p = std::min(1.0, std::max(0.0, p));
    double f = sched == "linear" ? 1 - p : 0.5 * (1 + std::cos(M_PI * p));
    return opt.minLr + (base - opt.minLr) * f;
  }
  return base;
}

Error Trainer::Impl::initState(const std::vector<Slot> &args) {
  if (opt.data.rfind("tensors:", 0) == 0 && !tensors) {
    std::vector<InputSpec> specs;
    for (const Slot &s : args)
      if (!s.input.empty()) {
        InputSpec spec{s.input, s.dtype, s.shape};
        spec.idBound = s.idBound;
        specs.push_back(spec);
      }
    if (Error e = loadTensors(specs))
      return e;
  }
  if (!opt.init.empty()) {
    std::vector<ParamSpec> specs;
    std::vector<BufferSpec> buffers;
    for (const Slot &s : args)
      if (s.state == "param")
        specs.push_back({s.name, s.shape});
      else if (s.state == "buffer")
        buffers.push_back({s.name, s.dtype, s.shape});
    auto w = loadInitWeights(opt.init, specs, buffers);
    if (!w)
      return Error::make("--init: " + w.error().message());
    initWeights = std::move(*w);
    if (initWeights->fromCheckpoint)
      std::fprintf(stderr,
                   "lpc-run: --init: the parameters of %s (a checkpoint of "
                   "'%s' precision at step %s); optimizer and precision "
                   "state start fresh\n",
                   opt.init.c_str(), initWeights->metadata["mixed_precision"].c_str(),
                   initWeights->metadata["step"].c_str());
  }
  for (const Slot &s : args) {
    if (!s.input.empty()) {
      inputs[s.input].assign(s.byteSize() + 1, 0);
      if (opt.ranks > 1) {
        globalInputs[s.input].assign(s.byteSize() * opt.ranks + 1, 0);
        rankBytes[s.input] = s.byteSize();
      }
    }
    if (s.state.empty())
      continue;
    std::vector<uint8_t> buf(s.byteSize() + 1, 0);
    if (s.state == "param") {
      auto it = model.params.find(s.name);
      if (it == model.params.end())
        return Error::make("no initializer for parameter '" + s.name + "'");
      if (s.dtype != DType::F32)
        return Error::make("parameter '" + s.name + "' is not f32");
      std::vector<float> v =
          initWeights ? initWeights->params.at(s.name)
                      : initializeParam(it->second, s.name, s.shape, opt.seed);
      std::memcpy(buf.data(), v.data(), v.size() * sizeof(float));
    } else if (s.state == "buffer" && initWeights &&
               initWeights->buffers.count(s.name)) {
      const Tensor &t = initWeights->buffers.at(s.name);
      std::memcpy(buf.data(), t.bytes.data(), t.bytes.size());
    } else if (s.init) {
      // One element of the constant (floats through encodeAs), repeated.
      std::vector<uint8_t> one(dtypeSize(s.dtype));
      double x = *s.init;
      if (s.dtype == DType::I32) {
        int32_t v = int32_t(x);
        std::memcpy(one.data(), &v, 4);
      } else if (s.dtype == DType::I64) {
        int64_t v = int64_t(x);
        std::memcpy(one.data(), &v, 8);
      } else if (s.dtype == DType::BOOL) {
        one[0] = x != 0;
      } else {
        one = encodeAs(s.dtype, {x});
      }
      for (size_t off = 0; off < s.byteSize(); off += one.size())
        std::memcpy(buf.data() + off, one.data(), one.size());
    }
    state[stateKey(s)] = std::move(buf);
    stateSlot[stateKey(s)] = s;
  }
  return Error::success();
}

/// State that belongs to a precision policy rather than to the model and its
/// optimizer: FP8 scales and amax histories, the loss scaler's state. A
/// checkpoint moved to another policy starts these fresh.
static bool isPolicyState(const std::string &kind) {
  return kind.rfind("fp8_", 0) == 0 || kind.rfind("loss_scale", 0) == 0;
}

static std::string kindOfKey(const std::string &key) {
  return key.substr(0, key.find('/'));
}

/// step-S.safetensors files of `dir`, newest (highest S) first.
static std::vector<std::pair<int64_t, std::string>>
olderCheckpoints(const std::string &dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d)) {
      std::string n = e->d_name;
      const std::string pre = "step-", suf = ".safetensors";
      if (n.size() <= pre.size() + suf.size() || n.rfind(pre, 0) != 0 ||
          n.compare(n.size() - suf.size(), suf.size(), suf) != 0)
        continue;
      std::string digits = n.substr(pre.size(), n.size() - pre.size() - suf.size());
      if (digits.empty() || digits.size() > 18 ||
          digits.find_first_not_of("0123456789") != std::string::npos)
        continue;
      found.push_back({std::stoll(digits), dir + "/" + n});
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end(),
            [](const auto &a, const auto &b) { return a.first > b.first; });
  return found;
}

Error Trainer::Impl::resume(int64_t &startStep) {
  // --resume=latest: the newest checkpoint that reads back intact (every
  // recorded crc32 matches); a damaged one is skipped with a warning.
  std::vector<std::string> candidates;
  if (opt.resume == "latest") {
    candidates.push_back(checkpointPath("latest.safetensors"));
    for (auto &[step, path] : olderCheckpoints(opt.checkpointDir))
      candidates.push_back(path);
  } else {
    candidates.push_back(opt.resume);
  }
  std::optional<SafetensorsFile> file;
  std::string path, failures;
  for (const std::string &c : candidates) {
    auto f = readSafetensors(c);
    if (f) {
      file = std::move(*f);
      path = c;
      break;
    }
    if (opt.resume != "latest")
      return f.error();
    if (::access(c.c_str(), F_OK) != 0 && c == candidates.front()) {
      failures += "\n  " + c + ": missing";
      continue;
    }
    std::fprintf(stderr, "lpc-run: warning: %s; trying an older checkpoint\n",
                 f.error().message().c_str());
    failures += "\n  " + f.error().message();
  }
  if (!file)
    return Error::make("--resume=latest: no intact checkpoint in " +
                       opt.checkpointDir + ":" + failures);
  if (!failures.empty() && path != candidates.front())
    std::fprintf(stderr, "lpc-run: warning: resuming from the older %s\n",
                 path.c_str());
  auto meta = [&](const char *k) {
    auto it = file->metadata.find(k);
    return it == file->metadata.end() ? std::string() : it->second;
  };
  if (meta("model") != model.name)
    return Error::make(path + ": checkpoint of model '" + meta("model") +
                       "', not '" + model.name + "'");
  // Another policy (bf16 warm-up then fp8, an fp8 run moved to bf16): the
  // parameters and the optimizer state carry over, the new policy's own
  // state starts from its initial values.
  std::string from = meta("mixed_precision");
  bool crossPolicy = from != opt.mixedPrecision;
  SafetensorsHeader header;
  for (auto &[k, t] : file->tensors) {
    if (crossPolicy && isPolicyState(kindOfKey(k)))
      continue;
    header.entries.push_back({k, t.dtype, t.shape, 0, 0});
  }
  std::vector<TensorSpec> specs;
  for (auto &[k, s] : stateSlot)
    if (!crossPolicy || !isPolicyState(s.state))
      specs.push_back({k, s.dtype, s.shardOf.empty() ? s.shape : s.shardOf});
  if (Error e = checkTensors(header, specs, path))
    return Error::make(e.message() + (crossPolicy ? " (from '" + from +
                                                        "' to '" + opt.mixedPrecision +
                                                        "' precision)"
                                                  : std::string(" (another model?)")));
  for (const SafetensorsEntry &e : header.entries) {
    const Tensor &t = file->tensors.at(e.name);
    const Slot &s = stateSlot[e.name];
    if (!s.shardOf.empty()) // ZeRO-1: this rank's block of the whole tensor
      takeShard(s, t.bytes.data(), state[e.name].data());
    else
      std::memcpy(state[e.name].data(), t.bytes.data(), t.bytes.size());
  }
  std::optional<int64_t> step = parseInt64(meta("step"));
  if (!step || *step < 0)
    return Error::make(path + ": metadata 'step' is '" + meta("step") +
                       "', not a step count");
  startStep = *step;
  Error e = iter ? iter->restore(meta("data_position"))
            : tensorBatches ? tensorBatches->restore(meta("data_position"))
                            : sampler->restore(meta("data_position"));
  if (e) {
    // The global batch is the model's batch times the ranks: say what
    // would match.
    std::optional<int64_t> batchThen = parseInt64(meta("global_batch"));
    std::string hint;
    if (batchThen && *batchThen != globalBatch() && *batchThen % opt.ranks == 0)
      hint = format(" (global batch %lld then, %d x %lld now: on %d rank%s, "
                    "a model built for batch %lld continues it)",
                    (long long)*batchThen, opt.ranks, (long long)model.batch,
                    opt.ranks, opt.ranks == 1 ? "" : "s",
                    (long long)(*batchThen / opt.ranks));
    return Error::make(path + ": " + e.message() + hint);
  }
  if (opt.rank == 0) // every rank resumes; rank 0 reports
    std::fprintf(stderr, "lpc-run: resumed from %s at step %lld\n",
                 path.c_str(), (long long)startStep);
  // Another rank count: the state is the same on every rank, so it moves,
  // and the data goes on from where the checkpoint's global batches
  // stopped (the data sources refuse another global batch, above).
  std::string ranksThen = meta("ranks").empty() ? "1" : meta("ranks");
  if (opt.rank == 0 && ranksThen != std::to_string(opt.ranks))
    std::fprintf(stderr,
                 "lpc-run: the checkpoint was written by %s rank%s, this run "
                 "has %d (global batch %lld in both)\n",
                 ranksThen.c_str(), ranksThen == "1" ? "" : "s", opt.ranks,
                 (long long)globalBatch());
  if (file->verifiedTensors == 0 && opt.rank == 0)
    std::fprintf(stderr, "lpc-run: note: %s records no checksums (an older "
                         "lpc wrote it); its tensors were not verified\n",
                 path.c_str());
  if (crossPolicy) {
    std::set<std::string> fresh;
    for (auto &[k, s] : stateSlot)
      if (isPolicyState(s.state))
        fresh.insert(s.state);
    std::string freshList;
    for (const std::string &f : fresh)
      freshList += (freshList.empty() ? "" : ", ") + f;
    std::fprintf(stderr,
                 "lpc-run: the checkpoint is '%s' precision, this run '%s': "
                 "parameters and optimizer state carried over%s%s\n",
                 from.c_str(), opt.mixedPrecision.c_str(),
                 fresh.empty() ? "" : "; fresh: ", freshList.c_str());
  }
  return Error::success();
}

std::map<std::string, std::vector<uint8_t>> Trainer::Impl::gatherShards() {
  std::map<std::string, std::vector<uint8_t>> whole;
  for (auto &[k, s] : stateSlot) {
    if (s.shardOf.empty())
      continue;
    const size_t block = s.byteSize();
    std::vector<uint8_t> all(block * size_t(s.shardRanks));
    if (s.shardRanks > 1)
      opt.allGatherBytes(state[k].data(), block, all.data());
    else
      std::memcpy(all.data(), state[k].data(), block);
    Slot w = s;
    w.shape = s.shardOf;
    all.resize(w.byteSize());
    whole[k] = std::move(all);
  }
  return whole;
}

void Trainer::Impl::takeShard(const Slot &s, const uint8_t *whole,
                              uint8_t *block) const {
  Slot w = s;
  w.shape = s.shardOf;
  const size_t bytes = s.byteSize(), total = w.byteSize(),
               at = std::min(total, bytes * size_t(opt.rank)),
               n = std::min(bytes, total - at);
  std::memcpy(block, whole + at, n);
  std::memset(block + n, 0, bytes - n);
}

Error Trainer::Impl::writeCheckpoint(
    int64_t stepDone, const std::map<std::string, std::vector<uint8_t>> &whole) {
  if (opt.checkpointDir.empty())
    return Error::success();
  if (Error e = makeDirectories(opt.checkpointDir))
    return e;
  // Sharded state is written whole (gathered), so that the file is the same
  // as an unsharded run's and resumes on any rank count.
  std::vector<TensorView> views;
  for (auto &[k, buf] : state) {
    const Slot &s = stateSlot[k];
    if (auto it = whole.find(k); it != whole.end())
      views.push_back({k, s.dtype, s.shardOf, it->second.data(), it->second.size()});
    else
      views.push_back({k, s.dtype, s.shape, buf.data(), s.byteSize()});
  }
  Metadata md{{"model", model.name},
              {"mixed_precision", opt.mixedPrecision},
              {"step", std::to_string(stepDone)},
              {"seed", std::to_string(opt.seed)},
              {"data_position", dataPosition()},
              {"pipeline", opt.pipeline}};
  if (opt.ranks > 1)
    md["ranks"] = std::to_string(opt.ranks);
  md["global_batch"] = std::to_string(globalBatch());
  std::string latest = checkpointPath("latest.safetensors");
  if (opt.keepCheckpoints > 1) {
    // The checkpoint about to be replaced stays as step-S.safetensors: a
    // hard link to it, so the atomic rename below leaves it intact and
    // nothing is copied.
    if (auto h = readSafetensorsHeader(latest)) {
      auto it = h->metadata.find("step");
      std::optional<int64_t> s =
          it == h->metadata.end() ? std::nullopt : parseInt64(it->second);
      if (s && *s != stepDone) {
        std::string keep = checkpointPath("step-" + std::to_string(*s) + ".safetensors");
        ::unlink(keep.c_str());
        if (::link(latest.c_str(), keep.c_str()) != 0)
          std::fprintf(stderr, "lpc-run: warning: cannot keep %s as %s: %s\n",
                       latest.c_str(), keep.c_str(), std::strerror(errno));
      }
    }
  }
  if (Error e = writeSafetensors(latest, views, withChecksums(views, md)))
    return e;
  // Prune: the newest keep-1 step-S files stay (none with keep=1).
  // A step-S at or past this step is from a run this one resumed before.
  int64_t kept = 1;
  for (auto &[s, path] : olderCheckpoints(opt.checkpointDir)) {
    if (s < stepDone && kept < opt.keepCheckpoints) {
      ++kept;
      continue;
    }
    ::unlink(path.c_str());
  }
  return Error::success();
}

/// Mean loss and accuracy over the held-out data.
Error Trainer::Impl::evaluate(StepFunction &eval, double &lossOut,
                              double &accOut) {
  const std::vector<Slot> &eres = eval.results();
  std::vector<std::vector<uint8_t>> out(eres.size());
  for (size_t r = 0; r < eres.size(); ++r)
    out[r].assign(eres[r].byteSize() + 1, 0);
  std::vector<const void *> ap = argPointers(eval.args());
  std::vector<void *> rp;
  for (auto &o : out)
    rp.push_back(o.data());
  double lossSum = 0, correct = 0, count = 0, lossRows = 0;
  auto runOne = [&](int64_t real) -> Error {
    if (Error e = eval.run(ap, rp))
      return Error::make("eval: " + e.message());
    for (size_t r = 0; r < eres.size(); ++r) {
      if (eres[r].metric == "loss") {
        lossSum += slotValue(eres[r], out[r].data(), 0) * real;
        lossRows += real;
      } else if (eres[r].metric == "logits" && !model.textModel) {
        int64_t c = eres[r].shape.back();
        auto *labels =
            reinterpret_cast<int32_t *>(inputs[model.labelName].data());
        for (int64_t i = 0; i < real; ++i) {
          int64_t best = 0;
          double bestV = slotValue(eres[r], out[r].data(), i * c);
          for (int64_t j = 1; j < c; ++j) {
            double v = slotValue(eres[r], out[r].data(), i * c + j);
            if (v > bestV) {
              best = j;
              bestV = v;
            }
          }
          correct += best == labels[i];
          count += 1;
        }
      }
    }
    return Error::success();
  };
  if (tensors) {
    // Whole batches of --eval-data in file order; none: no evaluation.
    if (tensorsEval) {
      TensorBatches eb(*tensorsEval, model.batch);
      int64_t n = eb.batchesPerEpoch();
      if (opt.evalBatches > 0)
        n = std::min(n, opt.evalBatches);
      for (int64_t i = 0; i < n; ++i) {
        eb.next(inputs);
        if (Error e = runOne(model.batch))
          return e;
      }
    }
  } else if (test) {
    int64_t b = model.batch, nb = 0;
    for (int64_t start = 0; start < test->numExamples; start += b, ++nb) {
      if (opt.evalBatches > 0 && nb >= opt.evalBatches)
        break;
      std::vector<int64_t> idx;
      int64_t real = std::min(b, test->numExamples - start);
      for (int64_t i = 0; i < b; ++i)
        idx.push_back(start + (i < real ? i : 0));
      loadBatch(*test, idx);
      if (Error e = runOne(real))
        return e;
    }
  } else {
    auto s = CorpusSampler::create(*corpusVal, model.batch, model.seqLen,
                                   opt.seed + 1);
    if (!s)
      return s.error();
    int64_t n = opt.evalBatches > 0 ? opt.evalBatches : 20;
    for (int64_t i = 0; i < n; ++i) {
      s->next(reinterpret_cast<int32_t *>(inputs[model.tokenName].data()),
              reinterpret_cast<int32_t *>(inputs[model.labelName].data()));
      if (Error e = runOne(1))
        return e;
    }
  }
  lossOut = lossRows > 0 ? lossSum / lossRows : NAN;
  accOut = count > 0 ? correct / count : NAN;
  return Error::success();
}

Trainer::Trainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Trainer::~Trainer() = default;

Expected<std::unique_ptr<Trainer>> Trainer::create(ModelInfo model,
                                                   TrainOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->model = std::move(model);
  impl->opt = std::move(options);
  if (Error e = impl->load())
    return e;
  return std::unique_ptr<Trainer>(new Trainer(std::move(impl)));
}

int64_t Trainer::totalSteps() const { return impl_->totalSteps; }

void Trainer::setPipeline(std::string pipeline) {
  impl_->opt.pipeline = std::move(pipeline);
}

int Trainer::run(StepFunction &step, StepFunction &eval,
                 double compileSeconds) {
  Impl &I = *impl_;
  const TrainOptions &opt = I.opt;
  const std::vector<Slot> &args = step.args(), &results = step.results();
  if (Error e = I.initState(args))
    return fail(e.message());
  int64_t startStep = 0;
  if (!opt.resume.empty())
    if (Error e = I.resume(startStep))
      return fail(e.message());

  // Rank 0 reports: progress, the log, evaluations, checkpoints, weights.
  const bool lead = opt.rank == 0;
  // ZeRO-1: optimizer state in blocks, one per rank; a checkpoint gathers
  // them (every rank takes part).
  bool sharded = false;
  for (auto &[key, slot] : I.stateSlot)
    if (!slot.shardOf.empty()) {
      sharded = true;
      if (slot.shardRanks != opt.ranks)
        return fail(format("the train step shards its optimizer state between "
                           "%lld ranks, but this run has %d",
                           (long long)slot.shardRanks, opt.ranks));
    }
  if (sharded && opt.ranks > 1 && !opt.allGatherBytes)
    return fail("internal error: a sharded train step without allGatherBytes");
  JsonlWriter log;
  if (lead && !opt.logFile.empty())
    if (Error e = log.open(opt.logFile, /*append=*/!opt.resume.empty()))
      return fail(e.message());

  // A device-resident step returns the metrics and the (small) FP8 scales
  // and amax histories the log shows; the rest of the state stays there
  // until an evaluation or a checkpoint needs it.
  bool resident = step.keepsState();
  std::vector<bool> download(results.size());
  for (size_t r = 0; r < results.size(); ++r)
    download[r] = results[r].state.empty() || results[r].state == "fp8_scale" ||
                  results[r].state == "fp8_amax_history";
  bool tty = lead && ::isatty(2);
  std::vector<std::vector<uint8_t>> out(results.size());
  for (size_t r = 0; r < results.size(); ++r)
    out[r].assign(results[r].byteSize() + 1, 0);
  auto t0 = std::chrono::steady_clock::now();
  const std::pair<uint64_t, uint64_t> commAtStart =
      opt.commSent ? opt.commSent() : std::pair<uint64_t, uint64_t>{0, 0};
  double lastLoss = NAN, skippedTotal = 0;
  int64_t samples = 0, total = I.totalSteps;
  // The next batch into the input buffers; returns its real rows.
  // With several ranks: the next global batch, of which this rank loads
  // its rows; returns the global batch's real rows.
  auto nextBatch = [&]() -> int64_t {
    if (I.iter) {
      Batch b = I.iter->next();
      if (opt.ranks > 1) {
        auto first = b.indices.begin() + size_t(opt.rank) * I.model.batch;
        b.indices = std::vector<int64_t>(first, first + I.model.batch);
      }
      I.loadBatch(*I.train, b.indices);
      return b.realRows;
    }
    auto &buffers = opt.ranks > 1 ? I.globalInputs : I.inputs;
    if (I.tensorBatches)
      I.tensorBatches->next(buffers);
    else
      I.sampler->next(
          reinterpret_cast<int32_t *>(buffers[I.model.tokenName].data()),
          reinterpret_cast<int32_t *>(buffers[I.model.labelName].data()));
    if (opt.ranks > 1)
      I.takeRankRows();
    return I.globalBatch();
  };
  int64_t prefetched = -1; // real rows of a batch already loaded, or -1
  // The steady state, for the summary: the first kWarmSteps steps load
  // kernels, choose GEMM plans and capture CUDA graphs. Timed from the end
  // of the last warm-up step (only when at least as many steps follow).
  constexpr int64_t kWarmSteps = 3;
  const bool timeSteady = total - startStep >= 2 * kWarmSteps + 1;
  std::chrono::steady_clock::time_point steadyT0;
  int64_t steadySamples = 0;
  for (int64_t s = startStep; s < total; ++s) {
    int64_t real = prefetched >= 0 ? prefetched : nextBatch();
    prefetched = -1;
    std::vector<const void *> ap = I.argPointers(args);
    std::vector<void *> rp;
    for (auto &o : out)
      rp.push_back(o.data());
    Error stepError;
    if (resident) {
      // While the device runs step s, the host loads batch s + 1 (the
      // step's inputs are copied in before startResident returns). Not
      // before an evaluation (it uses the same buffers) or a checkpoint
      // (it records the data position after step s).
      bool evalNext = opt.evalEvery > 0 && (s + 1) % opt.evalEvery == 0;
      bool ckptNext =
          opt.checkpointEvery > 0 && (s + 1) % opt.checkpointEvery == 0;
      stepError = step.startResident(ap);
      if (!stepError && s + 1 < total && !evalNext && !ckptNext) {
        prefetched = nextBatch();
        stepError = step.stageNext(ap);
      }
      if (!stepError)
        stepError = step.finishResident(rp, download);
    } else {
      stepError = step.run(ap, rp);
    }
    if (stepError)
      return fail("step " + std::to_string(s) + ": " + stepError.message());
    I.hostStale = resident;
    JsonObject rec;
    rec.add("step", s + 1);
    double loss = NAN;
    for (size_t r = 0; r < results.size(); ++r) {
      const Slot &sl = results[r];
      if (!sl.state.empty()) {
        if (resident && !download[r])
          continue; // still on the device
        // The host step wrote the new state into its own buffer: take that
        // buffer, and give the old one to the next step to write into (the
        // copy of every parameter and moment cost 7-16% of a CPU step).
        std::vector<uint8_t> &held = I.state[stateKey(sl)];
        if (!resident && held.size() == out[r].size())
          std::swap(held, out[r]);
        else
          std::memcpy(held.data(), out[r].data(), sl.byteSize());
      } else if (!sl.metric.empty()) {
        if (sl.numElements() != 1)
          continue;
        double v = slotValue(sl, out[r].data(), 0);
        if (sl.metric == "loss")
          loss = v;
        if (sl.metric == "skipped")
          skippedTotal += v;
        // Per-tensor metrics (fp8_saturated, fp8_underflow) by tensor name.
        rec.add(sl.name.empty() ? sl.metric : sl.metric + "/" + sl.name, v);
      }
    }
    rec.add("lr", I.lrAt(s));
    // Per FP8 tensor: this step's amax (the newest history entry) and the
    // scale the next step will quantize with.
    for (auto &[key, slot] : I.stateSlot) {
      if (slot.state != "fp8_scale" && slot.state != "fp8_amax_history")
        continue;
      float v;
      std::memcpy(&v, I.state[key].data(), sizeof(float));
      rec.add((slot.state == "fp8_scale" ? "fp8_scale/" : "fp8_amax/") +
                  slot.name,
              v);
    }
    if (real != I.globalBatch())
      rec.add("real_rows", real);
    samples += real;
    if (timeSteady && s - startStep == kWarmSteps - 1)
      steadyT0 = std::chrono::steady_clock::now();
    else if (timeSteady && s - startStep >= kWarmSteps)
      steadySamples += real;
    if (!std::isfinite(loss))
      return fail(format("the loss is %g at step %lld (%s precision); lower "
                         "--lr, or use loss scaling for fp16",
                         loss, (long long)(s + 1), opt.mixedPrecision.c_str()));
    lastLoss = loss;
    double el =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    double rate = samples / std::max(el, 1e-9);
    int64_t done = s + 1 - startStep, left = total - s - 1;
    double eta = done > 0 ? el / done * left : 0;
    if (!lead) {
      // Other ranks report nothing.
    } else if (tty) {
      int width = 30, fill = int(width * double(s + 1) / total);
      std::fprintf(stderr,
                   "\r[%s%s] step %lld/%lld loss %.4f %.0f samples/s ETA %s   ",
                   std::string(fill, '#').c_str(),
                   std::string(width - fill, '.').c_str(), (long long)(s + 1),
                   (long long)total, loss, rate, humanTime(eta).c_str());
    } else if ((s + 1) % opt.printEvery == 0 || s + 1 == total) {
      std::fprintf(stderr, "step %lld/%lld loss %.4f %.0f samples/s ETA %s\n",
                   (long long)(s + 1), (long long)total, loss, rate,
                   humanTime(eta).c_str());
    }
    if (lead && opt.evalEvery > 0 && (s + 1) % opt.evalEvery == 0 &&
        s + 1 != total && (!I.tensors || I.tensorsEval)) {
      double el2, acc;
      if (Error e = I.syncState(step))
        return fail(e.message());
      if (Error e = I.evaluate(eval, el2, acc))
        return fail(e.message());
      rec.add("eval_loss", el2);
      if (!std::isnan(acc))
        rec.add("eval_accuracy", acc);
      std::fprintf(stderr, "%seval at step %lld: loss %.4f%s\n",
                   tty ? "\n" : "", (long long)(s + 1), el2,
                   std::isnan(acc) ? ""
                                   : format(", accuracy %.4f", acc).c_str());
    }
    if (opt.verifyRanksEvery > 0 && opt.ranks > 1 && opt.sameOnAllRanks &&
        (s + 1) % opt.verifyRanksEvery == 0) {
      if (Error e = I.syncState(step))
        return fail(e.message());
      if (std::string which = I.rankDifference(); !which.empty())
        return fail(format("rank %d: after step %lld the training state "
                           "differs between the ranks (first: %s)",
                           opt.rank, (long long)(s + 1), which.c_str()));
    }
    if (log.isOpen())
      if (Error e = log.write(rec))
        return fail(e.message());
    if (opt.checkpointEvery > 0 && (s + 1) % opt.checkpointEvery == 0 &&
        (lead || sharded)) {
      if (Error e = I.syncState(step))
        return fail(e.message());
      // Every rank sends its blocks of sharded state; rank 0 writes.
      auto whole = sharded && !opt.checkpointDir.empty()
                       ? I.gatherShards()
                       : std::map<std::string, std::vector<uint8_t>>{};
      if (lead)
        if (Error e = I.writeCheckpoint(s + 1, whole))
          return fail(e.message());
    }
  }
  if (tty)
    std::fprintf(stderr, "\n");
  auto t1 = std::chrono::steady_clock::now();
  double secs = std::chrono::duration<double>(t1 - t0).count();
  double steadySecs =
      timeSteady ? std::chrono::duration<double>(t1 - steadyT0).count() : 0;
  double evalLoss = NAN, evalAcc = NAN;
  std::map<std::string, std::vector<uint8_t>> whole;
  if (sharded && !opt.checkpointDir.empty()) {
    if (Error e = I.syncState(step))
      return fail(e.message());
    whole = I.gatherShards(); // every rank's blocks, for rank 0's checkpoint
  }
  if (!lead)
    return 0; // rank 0 evaluates, checkpoints and reports
  if (Error e = I.syncState(step))
    return fail(e.message());
  if (Error e = I.evaluate(eval, evalLoss, evalAcc))
    return fail(e.message());
  if (Error e = I.writeCheckpoint(total, whole))
    return fail(e.message());
  if (!opt.saveWeights.empty()) {
    std::map<std::string, std::pair<ParamSpec, const float *>> params;
    std::vector<TensorView> buffers;
    for (auto &[key, slot] : I.stateSlot)
      if (slot.state == "param")
        params[slot.name] = {ParamSpec{slot.name, slot.shape},
                             reinterpret_cast<const float *>(I.state[key].data())};
      else if (slot.state == "buffer")
        buffers.push_back({slot.name, slot.dtype, slot.shape, I.state[key].data(),
                           slot.byteSize()});
    if (Error e = saveWeights(opt.saveWeights, params,
                              I.initWeights ? &*I.initWeights : nullptr, buffers))
      return fail("--save-weights: " + e.message());
  }
  bool evaluated = !I.tensors || I.tensorsEval;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  int64_t trained = total - startStep;
  std::printf("lpc-run: %lld steps in %.1f s (%.1f ms/step, %.0f samples/s), "
              "compile %.2f s, peak memory %ld MiB (step temporaries %zu "
              "MiB)\n",
              (long long)trained, secs, trained ? 1000 * secs / trained : 0.0,
              samples / std::max(secs, 1e-9), compileSeconds,
              ru.ru_maxrss / 1024, (step.temporaryBytes() + (1 << 19)) >> 20);
  if (timeSteady) {
    int64_t n = total - startStep - kWarmSteps;
    std::printf("lpc-run: steps %lld-%lld, after %lld warm-up steps: %.2f ms/step, %.0f "
                "samples/s\n",
                (long long)(startStep + kWarmSteps + 1), (long long)total,
                (long long)kWarmSteps, 1000 * steadySecs / double(n),
                steadySamples / std::max(steadySecs, 1e-9));
  }
  if (std::string note = step.runNote(); !note.empty())
    std::printf("lpc-run: %s\n", note.c_str());
  // ZeRO-1: what each rank holds of the sharded optimizer state.
  uint64_t shardBytes = 0, shardWholeBytes = 0;
  int64_t shardRanks = 1;
  for (auto &[key, slot] : I.stateSlot)
    if (!slot.shardOf.empty()) {
      Slot w = slot;
      w.shape = slot.shardOf;
      shardBytes += slot.byteSize();
      shardWholeBytes += w.byteSize();
      shardRanks = slot.shardRanks;
    }
  if (shardWholeBytes) {
    auto size = [](uint64_t b) {
      return b >= (1u << 20) ? format("%.2f MiB", double(b) / 1048576.0)
                             : format("%.2f KiB", double(b) / 1024.0);
    };
    std::printf("lpc-run: optimizer state %s on each of %lld rank%s (ZeRO-1; "
                "%s unsharded)\n",
                size(shardBytes).c_str(), (long long)shardRanks,
                shardRanks == 1 ? "" : "s", size(shardWholeBytes).c_str());
  }
  // What the step's collectives sent from this rank (the others send as
  // much), per trained step.
  double commBytesPerStep = -1, collectivesPerStep = 0;
  if (opt.commSent && opt.ranks > 1 && trained > 0) {
    auto [bytes, calls] = opt.commSent();
    commBytesPerStep = double(bytes - commAtStart.first) / double(trained);
    collectivesPerStep = double(calls - commAtStart.second) / double(trained);
    std::printf("lpc-run: communication %.2f MiB per step from each of %d "
                "ranks, %.0f collectives per step\n",
                commBytesPerStep / 1048576.0, opt.ranks, collectivesPerStep);
  }
  std::printf("final train loss %.4f", lastLoss);
  if (skippedTotal > 0)
    std::printf(", %g steps skipped (loss scaling)", skippedTotal);
  if (evaluated)
    std::printf(", eval loss %.4f", evalLoss);
  if (!std::isnan(evalAcc))
    std::printf(", eval accuracy %.4f", evalAcc);
  std::printf("\n");
  std::fflush(stdout);
  if (log.isOpen()) {
    JsonObject fin;
    fin.add("final", true);
    if (evaluated)
      fin.add("eval_loss", evalLoss);
    if (!std::isnan(evalAcc))
      fin.add("eval_accuracy", evalAcc);
    fin.add("seconds", secs).add("compile_seconds", compileSeconds);
    // What a reader needs to label and compare runs without the command
    // line: the model, the precision policy and recipe, the cost.
    int64_t params = 0;
    uint64_t stateBytes = 0;
    for (auto &[key, slot] : I.stateSlot) {
      stateBytes += I.state[key].size();
      if (slot.state == "param")
        params += slot.numElements();
    }
    fin.add("model", I.model.name)
        .add("policy", opt.mixedPrecision)
        .add("recipe", opt.recipe)
        .add("device", opt.device)
        .add("seed", opt.seed)
        .add("steps", total)
        .add("train_loss", lastLoss)
        .add("skipped_steps", int64_t(skippedTotal))
        .add("ms_per_step", trained ? 1000 * secs / trained : 0.0)
        .add("peak_memory_mib", int64_t(ru.ru_maxrss / 1024))
        .add("step_temporaries_mib",
             int64_t((step.temporaryBytes() + (1 << 19)) >> 20))
        .add("parameters", params)
        .add("state_bytes", stateBytes)
        .add("state_bytes_per_parameter",
             params ? double(stateBytes) / double(params) : 0.0);
    if (shardWholeBytes)
      fin.add("sharded_state_bytes", int64_t(shardBytes))
          .add("sharded_state_bytes_unsharded", int64_t(shardWholeBytes));
    if (opt.ranks > 1)
      fin.add("ranks", int64_t(opt.ranks));
    if (commBytesPerStep >= 0)
      fin.add("comm_bytes_per_step", commBytesPerStep)
          .add("collectives_per_step", collectivesPerStep);
    if (Error e = log.write(fin))
      return fail(e.message());
    if (Error e = log.close())
      return fail(e.message());
  }
  return 0;
}

} // namespace rt
} // namespace lpc
