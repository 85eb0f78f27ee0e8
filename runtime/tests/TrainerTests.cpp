// TrainerTests.cpp - lpc::rt::Trainer with host stand-ins of compiled steps:
// a plain step (as the CPU JIT's) and a device-resident one (as the CUDA
// artifact's), whose loss is the first feature of the batch it was given,
// so that a run's losses name its batches.

#include "TestHarness.h"

#include "lpc/Runtime/Json.h"
#include "lpc/Runtime/Trainer.h"

#include <cstdio>
#include <cstring>
#include <fstream>

using namespace lpc::rt;

namespace {

ModelInfo toyModel() {
  ModelInfo m;
  m.name = "toy";
  m.batch = 8;
  m.featName = "image";
  m.labelName = "label";
  m.features = 4;
  m.classes = 3;
  InitSpec w;
  w.kind = InitKind::Constant;
  w.value = 1.0;
  m.params["w"] = w;
  return m;
}

Slot slot(DType t, std::vector<int64_t> shape, std::string state,
          std::string name, std::string input, std::string metric) {
  Slot s;
  s.dtype = t;
  s.shape = std::move(shape);
  s.state = std::move(state);
  s.name = std::move(name);
  s.input = std::move(input);
  s.metric = std::move(metric);
  return s;
}

/// step(w [2], image [8, 4], label [8]) -> (w + 0.5, loss = image[0, 0]);
/// eval(w, image, label) -> loss = w[0]. With `resident`, it keeps w
/// itself between calls, as a device would (and checks that the trainer
/// never hands it a state it did not ask for); `failAt` makes that call
/// fail.
class ToyStep : public StepFunction {
public:
  ToyStep(bool eval, bool resident, int failAt = -1)
      : eval_(eval), resident_(resident), failAt_(failAt) {
    args_ = {slot(DType::F32, {2}, "param", "w", "", ""),
             slot(DType::F32, {8, 4}, "", "", "image", ""),
             slot(DType::I32, {8}, "", "", "label", "")};
    if (!eval)
      results_.push_back(slot(DType::F32, {2}, "param", "w", "", ""));
    results_.push_back(slot(DType::F32, {}, "", "", "", "loss"));
  }
  const std::vector<Slot> &args() const override { return args_; }
  const std::vector<Slot> &results() const override { return results_; }
  Error run(const std::vector<const void *> &args,
            const std::vector<void *> &results) override {
    float w[2], x;
    std::memcpy(w, args[0], sizeof w);
    std::memcpy(&x, args[1], sizeof x);
    return compute(w, x, results);
  }
  bool keepsState() const override { return resident_; }
  Error startResident(const std::vector<const void *> &args) override {
    if (!uploaded_) {
      std::memcpy(device_, args[0], sizeof device_);
      uploaded_ = true;
    }
    std::memcpy(&x_, args[1], sizeof x_); // the inputs are copied here
    return Error::success();
  }
  Error finishResident(const std::vector<void *> &results,
                       const std::vector<bool> &download) override {
    if (++calls_ == failAt_)
      return Error::make("injected failure");
    float out[2];
    float loss;
    std::vector<void *> tmp = {out, &loss};
    if (Error e = compute(device_, x_, tmp))
      return e;
    std::memcpy(device_, out, sizeof out);
    if (download[0] || !download[1])
      return Error::make("the trainer asked for the state every step");
    std::memcpy(results[1], &loss, sizeof loss);
    return Error::success();
  }
  Error downloadState(const std::vector<void *> &args) override {
    if (uploaded_ && args[0])
      std::memcpy(args[0], device_, sizeof device_);
    return Error::success();
  }

private:
  Error compute(const float *w, float x, const std::vector<void *> &results) {
    if (eval_) {
      std::memcpy(results[0], &w[0], sizeof(float));
      return Error::success();
    }
    float next[2] = {w[0] + 0.5f, w[1] + 0.5f};
    std::memcpy(results[0], next, sizeof next);
    std::memcpy(results[1], &x, sizeof x);
    return Error::success();
  }

  bool eval_, resident_;
  int failAt_;
  int calls_ = 0;
  bool uploaded_ = false;
  float device_[2] = {0, 0};
  float x_ = 0;
  std::vector<Slot> args_, results_;
};

/// (step, loss) of a JSONL log.
std::vector<std::pair<int64_t, double>> losses(const std::string &path) {
  std::vector<std::pair<int64_t, double>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    Expected<JsonValue> v = parseJson(line);
    if (!v)
      continue;
    const JsonValue *step = v->find("step"), *loss = v->find("loss");
    if (step && loss)
      out.push_back({int64_t(*step->asUInt64()), loss->asDouble()});
  }
  return out;
}

int train(bool resident, TrainOptions o, int failAt = -1) {
  o.data = "synthetic";
  o.syntheticExamples = 64;
  Expected<std::unique_ptr<Trainer>> t = Trainer::create(toyModel(), o);
  if (!t)
    return -1;
  ToyStep step(false, resident, failAt), eval(true, false);
  return (*t)->run(step, eval, 0.0);
}

} // namespace

TEST(trainer, resident_equals_plain) {
  for (bool resident : {false, true}) {
    TrainOptions o;
    o.steps = 6;
    o.evalEvery = 2;
    o.logFile = gTempDir + (resident ? "/resident.jsonl" : "/plain.jsonl");
    CHECK_EQ(train(resident, o), 0);
  }
  auto plain = losses(gTempDir + "/plain.jsonl");
  auto resident = losses(gTempDir + "/resident.jsonl");
  CHECK_EQ(plain.size(), size_t(6));
  CHECK(plain == resident);
}

TEST(trainer, resume_from_a_mid_run_checkpoint) {
  // Straight: six steps.
  TrainOptions straight;
  straight.steps = 6;
  straight.logFile = gTempDir + "/straight.jsonl";
  CHECK_EQ(train(true, straight), 0);
  // Two steps, a checkpoint, then a failure at the third: the checkpoint
  // must record the data position after batch 2, although the resident
  // loop loads a batch ahead.
  TrainOptions crash = straight;
  crash.logFile = gTempDir + "/crash.jsonl";
  crash.checkpointDir = gTempDir + "/ckpt";
  crash.checkpointEvery = 2;
  CHECK_EQ(train(true, crash, /*failAt=*/3), 1);
  TrainOptions resume = crash;
  resume.resume = "latest";
  CHECK_EQ(train(true, resume), 0);
  auto a = losses(gTempDir + "/straight.jsonl");
  auto b = losses(gTempDir + "/crash.jsonl");
  CHECK_EQ(a.size(), size_t(6));
  CHECK_EQ(b.size(), size_t(6)); // steps 1-2, then 3-6 after the resume
  CHECK(a == b);
}
