// CudaTrainTests.cpp - the CUDA train step (CudaTrain.cpp) and launch limits
// on the fake driver (tests/FakeDriver.cpp), whose streams run as late as
// the API allows: group cuda-train.
//
// The step of the test artifact is a shift register: hist' = [image[0, 0],
// hist[0..6]], loss = image[0, 0]. After n steps the state lists the first
// feature of the last 8 batches the steps read, newest first, so any batch
// read from the wrong block (a copy not waited for, a block refilled while
// a step may still read it) shows in one download at the end.

#include "TestHarness.h"

#include "lpc/Runtime/CudaArtifact.h"
#include "lpc/Runtime/CudaGemm.h"
#include "lpc/Runtime/CudaTrain.h"
#include "lpc/Runtime/Json.h"

#include "FakeDriverCounters.h"
#include "TestKernels.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace lpc::rt;
using namespace lpc::rt::cuda;

namespace {

std::string view(const char *space, int index, const char *sizes, const char *strides,
                 int offset = 0) {
  return std::string("{\"view\": {\"space\": \"") + space + "\", \"index\": " +
         std::to_string(index) + ", \"offset\": " + std::to_string(offset) +
         ", \"sizes\": " + sizes + ", \"strides\": " + strides + ", \"elem_bytes\": 4}}";
}

std::string affine(const std::string &x, const std::string &y, unsigned shared = 0) {
  return "{\"op\": \"launch\", \"module\": 0, \"kernel\": \"lpc_fake_affine_2d\", \"grid\": "
         "[1, 1, 1], \"block\": [32, 1, 1], \"shared_bytes\": " +
         std::to_string(shared) + ", \"params\": [" + x + ", " + y +
         ", {\"f32\": 1.0}, {\"f32\": 0.0}]}";
}

/// The shift-register artifact (see the top); `shared`: the dynamic shared
/// memory its first launch asks for.
std::string shiftArtifactJson(unsigned shared = 0) {
  const char *slots = R"("args": [
      {"dtype": "F32", "shape": [1, 8], "state": "param", "name": "hist"},
      {"dtype": "F32", "shape": [8, 4], "input": "image"},
      {"dtype": "I32", "shape": [8], "input": "label"}],)";
  std::string module = "\"modules\": [{\"name\": \"affine\", \"ptx\": " +
                       jsonQuote(kFakeAffinePtx) + "}],";
  std::string step =
      std::string("{\"name\": \"shift_train_step\", ") + slots +
      R"( "results": [{"dtype": "F32", "shape": [1, 8], "state": "param", "name": "hist"},
                      {"dtype": "F32", "shape": [], "metric": "loss"}],
      "arena_bytes": 0, "buffers": [], )" +
      module + " \"ops\": [" +
      affine(view("arg", 0, "[1, 7]", "[8, 1]"), view("result", 0, "[1, 7]", "[8, 1]", 1),
             shared) +
      ", " + affine(view("arg", 1, "[1, 1]", "[4, 1]"), view("result", 0, "[1, 1]", "[8, 1]")) +
      ", " + affine(view("arg", 1, "[1, 1]", "[4, 1]"), view("result", 1, "[1, 1]", "[1, 1]")) +
      "]}";
  std::string eval = std::string("{\"name\": \"shift_eval\", ") + slots +
                     R"( "results": [{"dtype": "F32", "shape": [], "metric": "loss"}],
      "arena_bytes": 0, "buffers": [], "modules": [], "ops": [{"op": "copy",
        "src": {"space": "arg", "index": 0, "offset": 0, "sizes": [1], "strides": [1],
                "elem_bytes": 4},
        "dst": {"space": "result", "index": 0, "offset": 0, "sizes": [], "strides": [],
                "elem_bytes": 4}}]})";
  return R"({"format": "lpc-cuda-artifact", "version": 2, "chip": "sm_80",
    "producer": "runtime/cuda/tests/CudaTrainTests.cpp", "functions": [)" +
         step + ", " + eval + "]}";
}

Artifact shiftArtifact(unsigned shared = 0) {
  Expected<Artifact> a = parseArtifact(shiftArtifactJson(shared), "shift.json");
  CHECK_OK(a);
  return a ? a.take() : Artifact();
}

/// The fake driver, its counters, and the train step and eval of the
/// shift artifact on its device.
struct FakeSteps {
  std::unique_ptr<Driver> driver; // outlives the steps
  CudaSteps steps;
  LpcFakeCudaCounters *counters = nullptr;
};

/// The counters of the fake driver, once Driver::load has loaded it.
LpcFakeCudaCounters *fakeCounters() {
  void *handle = ::dlopen(LPC_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
  CHECK(handle != nullptr);
  if (!handle)
    return nullptr;
  auto counters =
      reinterpret_cast<LpcFakeCudaCountersFn>(::dlsym(handle, kLpcFakeCudaCountersSymbol));
  ::dlclose(handle);
  CHECK(counters != nullptr);
  return counters ? counters() : nullptr;
}

FakeSteps openFakeSteps() {
  FakeSteps f;
  Expected<std::unique_ptr<Driver>> d = Driver::load(LPC_FAKE_CUDA_DRIVER);
  CHECK_OK(d);
  if (!d)
    return f;
  f.driver = d.take();
  f.counters = fakeCounters();
  if (!f.counters)
    return f;
  Expected<std::unique_ptr<Device>> dev = Device::open(*f.driver, 0);
  CHECK_OK(dev);
  if (!dev)
    return f;
  Expected<CudaSteps> steps =
      openCudaSteps(shiftArtifact(), "shift_train_step", "shift_eval", dev.take());
  CHECK_OK(steps);
  if (steps)
    f.steps = steps.take();
  return f;
}

/// The host side of the steps, as the trainer keeps it: one buffer per
/// argument and result.
struct HostIO {
  std::vector<float> hist = std::vector<float>(8, 0.0f), image = std::vector<float>(32, 0.5f);
  std::vector<int32_t> label = std::vector<int32_t>(8, 1);
  std::vector<float> histOut = std::vector<float>(8, -1.0f);
  float loss = -1.0f;
  std::vector<const void *> args() const { return {hist.data(), image.data(), label.data()}; }
  std::vector<void *> results() { return {histOut.data(), &loss}; }
};

/// Device blocks for every argument and result of `f` (results at least one
/// byte): their pointers in `args` and `results`, owned by `blocks`.
void allocateSlots(Device &device, const ArtifactFunction &f, std::vector<DeviceBuffer> &blocks,
                   std::vector<CUdeviceptr> &args, std::vector<CUdeviceptr> &results) {
  for (const ArtifactSlot &s : f.args) {
    blocks.push_back(device.allocate(s.byteSize()).take());
    args.push_back(blocks.back().get());
  }
  for (const ArtifactSlot &s : f.results) {
    blocks.push_back(device.allocate(std::max<size_t>(s.byteSize(), 1)).take());
    results.push_back(blocks.back().get());
  }
}

} // namespace

// Steps that download nothing never wait for the device, so only the
// stream order keeps a batch copied ahead from landing in blocks an earlier
// step still reads.
TEST(cuda_train, staged_batches_without_downloads) {
  FakeSteps f = openFakeSteps();
  if (!f.steps.step)
    return;
  StepFunction &step = *f.steps.step;
  HostIO io;
  const int n = 7;
  LpcFakeCudaCounters before = *f.counters;
  io.image[0] = 10;
  for (int s = 0; s < n; ++s) {
    CHECK_OK(step.startResident(io.args()));
    if (s + 1 < n) {
      io.image[0] = float(10 + s + 1); // the next batch, as the trainer loads it
      CHECK_OK(step.stageNext(io.args()));
    }
    CHECK_OK(step.finishResident(io.results(), {false, false}));
  }
  // Nothing waited for the device's stream itself.
  CHECK_EQ(f.counters->streamSyncs - before.streamSyncs, uint64_t(0));
  CHECK_EQ(f.counters->copiesToPinnedHost - before.copiesToPinnedHost, uint64_t(0));
  CHECK_EQ(step.runNote(), std::string("CUDA graphs replayed 4 of 7 train steps; inputs of 6 "
                                       "steps copied in while the previous step ran"));
  CHECK_OK(step.downloadState({io.hist.data(), nullptr, nullptr}));
  std::vector<float> want = {16, 15, 14, 13, 12, 11, 10, 0};
  CHECK(io.hist == want);
  if (io.hist != want)
    for (float v : io.hist)
      std::fprintf(stderr, "  hist %g\n", double(v));
}

// A step's results come back with one wait however many there are; an
// evaluation reads the state where the train step keeps it and copies up
// only its inputs.
TEST(cuda_train, one_wait_per_step_and_state_in_place) {
  FakeSteps f = openFakeSteps();
  if (!f.steps.step)
    return;
  StepFunction &step = *f.steps.step;
  HostIO io;
  for (int s = 0; s < 4; ++s) {
    io.image[0] = float(20 + s);
    LpcFakeCudaCounters before = *f.counters;
    // The state (an FP8 scale, say) and the loss, or the loss only.
    bool both = s % 2 == 1;
    CHECK_OK(step.startResident(io.args()));
    CHECK_OK(step.finishResident(io.results(), {both, true}));
    CHECK_EQ(f.counters->streamSyncs - before.streamSyncs, uint64_t(1));
    CHECK_EQ(f.counters->eventSyncs - before.eventSyncs, uint64_t(0));
    CHECK_EQ(f.counters->copiesToPinnedHost - before.copiesToPinnedHost, uint64_t(both ? 2 : 1));
    CHECK_EQ(f.counters->copiesToPageableHost - before.copiesToPageableHost, uint64_t(0));
    // The state goes up with the first step only; the inputs every step.
    CHECK_EQ(f.counters->copiesToDevice - before.copiesToDevice, uint64_t(s == 0 ? 3 : 2));
    CHECK_EQ(io.loss, float(20 + s));
    if (both)
      CHECK_EQ(io.histOut[0], float(20 + s));
  }
  // The host's state is stale (never downloaded): evaluation must not
  // upload it, but read the device's.
  std::fill(io.hist.begin(), io.hist.end(), -5.0f);
  StepFunction &eval = *f.steps.eval;
  float evalLoss = -1;
  for (int batch = 0; batch < 2; ++batch) {
    LpcFakeCudaCounters before = *f.counters;
    CHECK_OK(eval.run(io.args(), {&evalLoss}));
    CHECK_EQ(evalLoss, 23.0f);
    CHECK_EQ(f.counters->copiesToDevice - before.copiesToDevice, uint64_t(2));
    CHECK_EQ(f.counters->streamSyncs - before.streamSyncs, uint64_t(1));
    CHECK_EQ(f.counters->copiesToPinnedHost - before.copiesToPinnedHost, uint64_t(1));
  }
  // All the state in one wait too (before an evaluation or a checkpoint).
  LpcFakeCudaCounters before = *f.counters;
  CHECK_OK(step.downloadState({io.hist.data(), nullptr, nullptr}));
  CHECK_EQ(f.counters->streamSyncs - before.streamSyncs, uint64_t(1));
  CHECK_EQ(io.hist[0], 23.0f);
  CHECK_EQ(io.hist[3], 20.0f);
}

// Before any train step the host holds the only state: evaluation uploads it.
TEST(cuda_train, eval_before_any_step_uploads_the_state) {
  FakeSteps f = openFakeSteps();
  if (!f.steps.eval)
    return;
  HostIO io;
  io.hist[0] = 7.5f;
  float loss = -1;
  CHECK_OK(f.steps.eval->run(io.args(), {&loss}));
  CHECK_EQ(loss, 7.5f);
}

TEST(cuda_train, launch_limits) {
  DeviceInfo info;
  info.ccMajor = 9;
  info.sharedPerBlock = 48 << 10;
  info.sharedPerBlockOptin = 227 << 10;
  CHECK_EQ(launchLimits(info, 12080).paramBytes, size_t(32764));
  CHECK_EQ(launchLimits(info, 12000).paramBytes, size_t(4096));
  CHECK_EQ(launchLimits(info, 12080).sharedPerBlockOptin, size_t(232448));
  info.ccMajor = 6;
  CHECK_EQ(launchLimits(info, 12080).paramBytes, size_t(4096));

  Artifact art = shiftArtifact(200000);
  if (art.functions.empty())
    return;
  const ArtifactFunction &f = art.functions[0];
  auto none = [](size_t) { return size_t(0); };
  // Two rank-2 views (7 slots of 8 bytes each) and two f32 scalars.
  CHECK_EQ(std::get<LaunchOp>(f.ops[0]).kernelParamBytes(), size_t(120));
  LaunchLimits small;
  small.paramBytes = 100;
  CHECK_ERR(checkLaunchLimits(f, small, none, "shift.json"),
            "shift.json: function 'shift_train_step', op 0 (launch lpc_fake_affine_2d): kernel "
            "parameters take 120 bytes; this device and driver allow 100 (32764 need a CUDA "
            "12.1 driver and a Volta or newer GPU)");
  info.ccMajor = 9;
  LaunchLimits hopper = launchLimits(info, 12080);
  CHECK_OK(checkLaunchLimits(f, hopper, none, "shift.json"));
  CHECK_ERR(checkLaunchLimits(f, hopper, [](size_t) { return size_t(50000); }, "shift.json"),
            "op 0 (launch lpc_fake_affine_2d): the kernel's static shared memory is 50000 "
            "bytes; a block may have 49152");
  CHECK_ERR(checkLaunchLimits(f, hopper, [](size_t) { return size_t(232000); }, "shift.json"),
            "the kernel's static shared memory is 232000");
  CHECK_OK(checkLaunchLimits(f, hopper, [](size_t op) { return op == 0 ? size_t(32000) : 0; },
                             "shift.json"));
  CHECK_ERR(checkLaunchLimits(f, hopper, [](size_t op) { return op == 0 ? size_t(40000) : 0; },
                              "shift.json"),
            "op 0 (launch lpc_fake_affine_2d): 40000 bytes of static and 200000 of dynamic shared "
            "memory exceed the device's 232448 per block");
  // Above what any CUDA launch takes: validate() refuses it with no device
  // (4096 more i64 after the 120 bytes).
  Artifact many = art;
  LaunchOp &l = *std::get_if<LaunchOp>(&many.functions[0].ops[1]);
  l.params.resize(4100, LaunchParam{});
  CHECK_ERR(many.validate(), "op 1 (launch lpc_fake_affine_2d): kernel parameters take 32888 "
                             "bytes; CUDA allows at most 32764");
}

// On the fake (Hopper's limits): dynamic shared memory above the default
// 48 KiB is opted in to per kernel, or the launch fails; above the opt-in
// limit the function is refused before anything runs.
TEST(cuda_train, dynamic_shared_memory_on_the_device) {
  Expected<std::unique_ptr<Driver>> d = Driver::load(LPC_FAKE_CUDA_DRIVER);
  CHECK_OK(d);
  if (!d)
    return;
  Expected<std::unique_ptr<Device>> dev = Device::open(**d, 0);
  CHECK_OK(dev);
  if (!dev)
    return;
  Device &device = **dev;
  CHECK_EQ(device.info().sharedPerBlock, 48 << 10);
  CHECK_EQ(device.info().sharedPerBlockOptin, 227 << 10);
  Artifact big = shiftArtifact(100 << 10);
  if (big.functions.empty())
    return;
  {
    Expected<std::unique_ptr<CudaFunction>> fn =
        CudaFunction::create(device, big.functions[0], nullptr, "shift.json");
    CHECK_OK(fn);
    if (fn) {
      std::vector<DeviceBuffer> blocks;
      std::vector<CUdeviceptr> a, r;
      allocateSlots(device, big.functions[0], blocks, a, r);
      CHECK_OK((*fn)->run(a, r));
      CHECK_OK(device.synchronize());
    }
  }
  Artifact huge = shiftArtifact(240 << 10);
  CHECK_ERR(CudaFunction::create(device, huge.functions[0], nullptr, "shift.json"),
            "shift.json: function 'shift_train_step', op 0 (launch lpc_fake_affine_2d): 0 bytes "
            "of static and 245760 of dynamic shared memory exceed the device's 232448 per block");
}

// LPC_CUDA_SYNC_OPS=1 (gpu-check.sh's reruns): a wait after every op, so
// that a fault is reported by the op that caused it.
TEST(cuda_train, sync_ops_waits_after_each_op) {
  Expected<std::unique_ptr<Driver>> d = Driver::load(LPC_FAKE_CUDA_DRIVER);
  CHECK_OK(d);
  LpcFakeCudaCounters *counters = d ? fakeCounters() : nullptr;
  if (!counters)
    return;
  Expected<std::unique_ptr<Device>> dev = Device::open(**d, 0);
  CHECK_OK(dev);
  Artifact art = shiftArtifact();
  if (!dev || art.functions.empty())
    return;
  Device &device = **dev;
  std::vector<DeviceBuffer> blocks;
  std::vector<CUdeviceptr> a, r;
  allocateSlots(device, art.functions[0], blocks, a, r);
  for (bool sync : {false, true}) {
    ::setenv("LPC_CUDA_SYNC_OPS", sync ? "1" : "0", 1);
    Expected<std::unique_ptr<CudaFunction>> fn =
        CudaFunction::create(device, art.functions[0], nullptr, "shift.json");
    ::unsetenv("LPC_CUDA_SYNC_OPS");
    CHECK_OK(fn);
    if (!fn)
      return;
    LpcFakeCudaCounters before = *counters;
    CHECK_OK((*fn)->run(a, r));
    CHECK_EQ(counters->streamSyncs - before.streamSyncs, uint64_t(sync ? 3 : 0));
    // Captured work never waits (it does not run when queued).
    CHECK_OK((*fn)->captureGraph());
    CHECK_EQ(counters->streamSyncs - before.streamSyncs, uint64_t(sync ? 3 : 0));
  }
}

TEST(cuda_train, cublaslt_needs_a_new_enough_driver) {
  CHECK_OK(checkCublasLtDriver(130100, 13000));
  CHECK_OK(checkCublasLtDriver(130100, 13020));
  CHECK_OK(checkCublasLtDriver(120800, 12040));
  CHECK_ERR(checkCublasLtDriver(130100, 12080),
            "cuBLASLt 13.1.0 needs an NVIDIA driver for CUDA 13.0 or newer (R580 or later); this "
            "driver is for CUDA 12.8 (cuDriverGetVersion 12080): update the driver, or set "
            "LPC_CUBLASLT_LIBRARY to a cuBLASLt 12");
  CHECK_ERR(checkCublasLtDriver(120300, 11080), "needs an NVIDIA driver for CUDA 12.0 or newer "
                                                "(R525 or later); this driver is for CUDA 11.8");
  // The GEMM engine checks before cuBLASLt can fail without saying why (the
  // fake driver is CUDA 12.8).
  Expected<const CublasLt *> lt = loadCublasLt();
  if (!lt || cublasLtVersion(**lt) < 130000)
    return;
  Expected<std::unique_ptr<Driver>> d = Driver::load(LPC_FAKE_CUDA_DRIVER);
  CHECK_OK(d);
  if (!d)
    return;
  Expected<std::unique_ptr<Device>> dev = Device::open(**d, 0);
  CHECK_OK(dev);
  if (!dev)
    return;
  CHECK_ERR(GemmEngine::create(**dev), cublasLtPath(**lt).c_str(),
            "needs an NVIDIA driver for CUDA 13.0 or newer (R580 or later); this driver is for "
            "CUDA 12.8 (cuDriverGetVersion 12080)");
}

// A step whose collectives were built for another rank count stops when it
// is opened, before anything runs, naming the op (an all_to_all as the
// reductions and gathers); built for this run's one rank, it opens.
TEST(cuda_train, all_to_all_for_another_rank_count_is_refused) {
  auto withAllToAll = [](int64_t ranks) {
    Artifact a = shiftArtifact();
    CollectiveOp op;
    op.kind = CollectiveKind::AllToAll;
    op.dtype = DType::F32;
    op.ranks = ranks;
    op.in = View{ViewSpace::Arg, 1, 0, {8}, {1}, 4};
    op.out = View{ViewSpace::Result, 0, 0, {8}, {1}, 4};
    a.functions[0].ops.push_back(op);
    return a;
  };
  Expected<std::unique_ptr<Driver>> d = Driver::load(LPC_FAKE_CUDA_DRIVER);
  CHECK_OK(d);
  if (!d)
    return;
  for (int64_t ranks : {2, 1}) {
    Expected<std::unique_ptr<Device>> dev = Device::open(**d, 0);
    CHECK_OK(dev);
    if (!dev)
      return;
    Expected<CudaSteps> steps =
        openCudaSteps(withAllToAll(ranks), "shift_train_step", "shift_eval", dev.take());
    if (ranks == 2)
      CHECK_ERR(steps, "shift.json: function 'shift_train_step', op 3 (all_to_all): all_to_all "
                       "was built for 2 ranks but the run has 1");
    else
      CHECK_OK(steps);
  }
}
