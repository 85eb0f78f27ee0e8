//===- Executor.cpp - running an artifact function on a Device -------------===//

#include "lpc/Runtime/CudaArtifact.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>

namespace lpc {
namespace rt {
namespace cuda {

CudaFunction::CudaFunction(Device &device, const ArtifactFunction &function,
                           StepCallbacks steps, const std::string &source)
    : device_(device), function_(function), steps_(std::move(steps)),
      source_(source) {}

CudaFunction::~CudaFunction() {
  // Queued kernels may still use the modules and the arena.
  (void)device_.synchronize();
}

Error CudaFunction::opError(size_t op, const Error &e) const {
  return e.withContext(source_ + ": function '" + function_.name + "', op " +
                       std::to_string(op) + " (" + opLabel(function_.ops[op]) + ")");
}

/// The 8-byte slot a kernel parameter is copied from: scalars narrower than
/// 8 bytes sit in its first bytes (little-endian host, see Tensor.h).
template <typename T> static uint64_t slotOf(T value) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "a parameter wider than a slot");
  uint64_t slot = 0;
  std::memcpy(&slot, &value, sizeof(T));
  return slot;
}

Expected<std::unique_ptr<CudaFunction>>
CudaFunction::create(Device &device, const ArtifactFunction &function,
                     GemmCallback gemm, const std::string &source) {
  return create(device, function, std::move(gemm), nullptr, source);
}

Expected<std::unique_ptr<CudaFunction>>
CudaFunction::create(Device &device, const ArtifactFunction &function,
                     GemmCallback gemm, AttentionCallback attention,
                     const std::string &source) {
  return create(device, function,
                StepCallbacks{std::move(gemm), std::move(attention), nullptr},
                source);
}

Expected<std::unique_ptr<CudaFunction>>
CudaFunction::create(Device &device, const ArtifactFunction &function,
                     StepCallbacks steps, const std::string &source) {
  if (Error e = function.validate(source))
    return e;
  std::unique_ptr<CudaFunction> fn(
      new CudaFunction(device, function, std::move(steps), source));
  const char *syncOps = std::getenv("LPC_CUDA_SYNC_OPS");
  fn->syncOps_ = syncOps && std::string(syncOps) == "1";
  const ArtifactFunction &f = fn->function_; // the copy the launches point into
  std::string where = source + ": function '" + f.name + "'";
  for (const ArtifactOp &op : f.ops) {
    if (std::holds_alternative<GemmOp>(op) && !fn->steps_.gemm)
      return Error::make(where + ": has GEMMs but no GEMM callback was given");
    if (std::holds_alternative<AttentionOp>(op) && !fn->steps_.attention)
      return Error::make(where + ": has attention steps but no attention callback was given");
    if (std::holds_alternative<CollectiveOp>(op) && !fn->steps_.collective)
      return Error::make(where + ": has collective steps but no collective callback was given");
  }

  for (size_t i = 0; i < f.modules.size(); ++i) {
    Expected<Module> m = Module::load(device, f.modules[i].ptx.c_str());
    if (!m)
      return m.error().withContext(where + ", module " + std::to_string(i) + " ('" +
                                   f.modules[i].name + "')");
    fn->modules_.push_back(m.take());
  }

  fn->launches_.resize(f.ops.size());
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const LaunchOp *l = std::get_if<LaunchOp>(&f.ops[i]);
    if (!l)
      continue;
    PackedLaunch &p = fn->launches_[i];
    Expected<CUfunction> kernel = fn->modules_[l->module].function(l->kernel.c_str());
    if (!kernel)
      return fn->opError(i, kernel.error());
    p.function = *kernel;
    // MLIR's expanded memref descriptor: allocated and aligned pointer (both
    // the space's base, filled in per run), offset, sizes, strides.
    for (const LaunchParam &param : l->params) {
      switch (param.kind) {
      case LaunchParam::Kind::View: {
        const View &v = param.view;
        p.bases.emplace_back(p.values.size(), &v);
        p.values.insert(p.values.end(), {0, 0, slotOf(v.offset)});
        for (int64_t s : v.sizes)
          p.values.push_back(slotOf(s));
        for (int64_t s : v.strides)
          p.values.push_back(slotOf(s));
        break;
      }
      case LaunchParam::Kind::I64:
        p.values.push_back(slotOf(param.i));
        break;
      case LaunchParam::Kind::I32:
        p.values.push_back(slotOf(uint32_t(param.i)));
        break;
      case LaunchParam::Kind::F32:
        p.values.push_back(slotOf(float(param.f)));
        break;
      case LaunchParam::Kind::F64:
        p.values.push_back(slotOf(param.f));
        break;
      }
    }
    for (uint64_t &v : p.values)
      p.pointers.push_back(&v);
    // The driver reads exactly the kernel's declared parameters; the null
    // lets the fake driver check the count.
    p.pointers.push_back(nullptr);
  }

  // The device's limits: parameter bytes, and shared memory with the static
  // part from the loaded kernel. Dynamic shared memory beyond the default
  // per-block amount must be opted in to, per kernel.
  const Driver &drv = device.driver();
  std::vector<size_t> staticShared(f.ops.size(), 0);
  std::map<CUfunction, size_t> dynamicNeeded;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const LaunchOp *l = std::get_if<LaunchOp>(&f.ops[i]);
    if (!l)
      continue;
    CUfunction k = fn->launches_[i].function;
    int bytes = 0;
    if (Error e = drv.check(drv.api().funcGetAttribute(&bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k),
                            "cuFuncGetAttribute"))
      return fn->opError(i, e);
    staticShared[i] = size_t(std::max(bytes, 0));
    size_t &need = dynamicNeeded[k];
    need = std::max(need, size_t(l->sharedBytes));
  }
  LaunchLimits limits = launchLimits(device.info(), drv.version());
  if (Error e = checkLaunchLimits(
          f, limits, [&](size_t op) { return staticShared[op]; }, source))
    return e;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const LaunchOp *l = std::get_if<LaunchOp>(&f.ops[i]);
    if (!l)
      continue;
    CUfunction k = fn->launches_[i].function;
    auto it = dynamicNeeded.find(k);
    if (it == dynamicNeeded.end())
      continue; // done for an earlier launch of the kernel
    if (staticShared[i] + it->second > limits.sharedPerBlock)
      if (Error e = drv.check(drv.api().funcSetAttribute(
                                  k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  int(it->second)),
                              "cuFuncSetAttribute"))
        return fn->opError(i, e.withContext(std::to_string(it->second) +
                                            " bytes of dynamic shared memory"));
    dynamicNeeded.erase(it);
  }

  if (f.arenaBytes) {
    Expected<DeviceBuffer> arena = device.allocate(size_t(f.arenaBytes));
    if (!arena)
      return arena.error().withContext(where + ": arena of " +
                                       std::to_string(f.arenaBytes) + " bytes");
    fn->arena_ = arena.take();
  }
  return fn;
}

CUdeviceptr CudaFunction::base(const View &view, const std::vector<CUdeviceptr> &args,
                               const std::vector<CUdeviceptr> &results) const {
  switch (view.space) {
  case ViewSpace::Arg:
    return args[view.index];
  case ViewSpace::Result:
    return results[view.index];
  case ViewSpace::Buffer:
    break;
  }
  return arena_.get() + function_.buffers[view.index].offset;
}

Error CudaFunction::queueOps(const std::vector<CUdeviceptr> &args,
                             const std::vector<CUdeviceptr> &results) {
  // Where a view's first element is (its offset is in elements).
  auto address = [&](const View &v) {
    return base(v, args, results) + CUdeviceptr(v.offset * int64_t(v.elemBytes));
  };
  const bool timing = opTiming() && !capturing_;
  auto mark = [&](size_t i) { return opEvents_[i].record(); };
  for (size_t i = 0; i < function_.ops.size(); ++i) {
    const ArtifactOp &op = function_.ops[i];
    Error e;
    if (timing)
      if (Error m = mark(i))
        return opError(i, m);
    if (const LaunchOp *l = std::get_if<LaunchOp>(&op)) {
      PackedLaunch &p = launches_[i];
      for (auto [slot, view] : p.bases)
        p.values[slot] = p.values[slot + 1] = base(*view, args, results);
      // cuLaunchKernel copies the values, so the slots can change next op.
      e = device_.launch(p.function, l->grid, l->block, l->sharedBytes,
                         p.pointers.data());
    } else if (const GemmOp *g = std::get_if<GemmOp>(&op)) {
      GemmOperands o;
      o.a = address(g->a);
      o.b = address(g->b);
      o.c = address(g->c);
      if (g->aScale)
        o.aScale = address(*g->aScale), o.bScale = address(*g->bScale);
      if (g->bias)
        o.bias = address(*g->bias);
      e = steps_.gemm(g->desc(), o);
    } else if (const AttentionOp *a = std::get_if<AttentionOp>(&op)) {
      AttentionOperands o;
      o.q = address(a->q);
      o.k = address(a->k);
      o.v = address(a->v);
      o.o = address(a->o);
      o.lse = address(a->lse);
      if (a->backward) {
        o.dO = address(a->dO);
        o.dq = address(a->dq);
        o.dk = address(a->dk);
        o.dV = address(a->dv);
      }
      e = steps_.attention(a->desc(), o);
    } else if (const CollectiveOp *co = std::get_if<CollectiveOp>(&op)) {
      e = steps_.collective(co->desc(), CollectiveOperands{address(co->in), address(co->out)});
    } else {
      const CopyOp &c = *std::get_if<CopyOp>(&op);
      e = device_.copyDeviceToDevice(address(c.dst), address(c.src),
                                     size_t(c.src.numElements()) * c.src.elemBytes);
    }
    if (!e && syncOps_ && !capturing_)
      e = device_.synchronize().withContext("waiting after the op (LPC_CUDA_SYNC_OPS=1)");
    if (e)
      return opError(i, e);
  }
  if (timing)
    if (Error m = mark(function_.ops.size()))
      return m;
  return Error::success();
}

Error CudaFunction::enableOpTiming(int64_t skipRuns) {
  if (opTiming())
    return Error::success();
  std::vector<StreamEvent> events;
  for (size_t i = 0; i <= function_.ops.size(); ++i) {
    Expected<StreamEvent> ev = StreamEvent::create(device_, /*timing=*/true);
    if (!ev)
      return ev.error().withContext("op timing");
    events.push_back(ev.take());
  }
  opEvents_ = std::move(events);
  opMs_.assign(function_.ops.size(), 0.0);
  timingSkip_ = std::max<int64_t>(skipRuns, 0);
  timedRuns_ = 0;
  graphs_.clear(); // later runs time their ops instead of replaying
  return Error::success();
}

Error CudaFunction::addOpTimes() {
  const Driver &drv = device_.driver();
  if (Error e = drv.check(drv.api().eventSynchronize(opEvents_.back().handle()),
                          "cuEventSynchronize"))
    return e.withContext("op timing");
  if (timingSkip_ > 0) {
    --timingSkip_;
    return Error::success();
  }
  for (size_t i = 0; i + 1 < opEvents_.size(); ++i) {
    float ms = 0;
    if (Error e = drv.check(drv.api().eventElapsedTime(&ms, opEvents_[i].handle(),
                                                       opEvents_[i + 1].handle()),
                            "cuEventElapsedTime"))
      return opError(i, e.withContext("op timing"));
    opMs_[i] += ms;
  }
  ++timedRuns_;
  return Error::success();
}

Error CudaFunction::checkArity(const std::string &where, size_t args,
                               size_t results) const {
  if (args == function_.args.size() && results == function_.results.size())
    return Error::success();
  return Error::make(where + ": called with " + std::to_string(args) + " args and " +
                     std::to_string(results) + " results; it takes " +
                     std::to_string(function_.args.size()) + " and " +
                     std::to_string(function_.results.size()));
}

Error CudaFunction::run(const std::vector<CUdeviceptr> &args,
                        const std::vector<CUdeviceptr> &results) {
  std::string where = source_ + ": function '" + function_.name + "'";
  if (Error e = checkArity(where, args.size(), results.size()))
    return e;
  for (auto [kind, ptrs, slots] :
       {std::tuple<const char *, const std::vector<CUdeviceptr> *,
                   const std::vector<ArtifactSlot> *>{"arg", &args, &function_.args},
        {"result", &results, &function_.results}})
    for (size_t i = 0; i < ptrs->size(); ++i) {
      if (!(*ptrs)[i] && (*slots)[i].byteSize())
        return Error::make(where + ": " + kind + " " + std::to_string(i) +
                           " is a null pointer");
      // The kernels are compiled for 16-byte aligned bases (vector loads).
      if ((*ptrs)[i] % kArtifactPointerAlign)
        return Error::make(where + ": " + kind + " " + std::to_string(i) +
                           " is not " + std::to_string(kArtifactPointerAlign) +
                           "-byte aligned");
    }
  lastArgs_ = args;
  lastResults_ = results;
  ran_ = true;
  // (const_cast: Graph::launch queues work, it does not change the graph.)
  if (const CapturedGraph *g = graphFor(args, results))
    return const_cast<Graph &>(g->graph).launch().withContext(where + ": graph");
  if (Error e = queueOps(args, results))
    return e;
  return opTiming() ? addOpTimes() : Error::success();
}

const CudaFunction::CapturedGraph *
CudaFunction::graphFor(const std::vector<CUdeviceptr> &args,
                       const std::vector<CUdeviceptr> &results) const {
  for (const CapturedGraph &g : graphs_)
    if (g.args == args && g.results == results)
      return &g;
  return nullptr;
}

bool CudaFunction::lastRunHasGraph() const {
  return ran_ && graphFor(lastArgs_, lastResults_);
}

Error CudaFunction::runHost(const std::vector<const void *> &args,
                            const std::vector<void *> &results) {
  std::string where = source_ + ": function '" + function_.name + "'";
  if (Error e = checkArity(where, args.size(), results.size()))
    return e;
  // One device block per slot, allocated on the first call and kept: the
  // pointers stay the same, so a captured graph keeps replaying.
  auto blocks = [&](std::vector<DeviceBuffer> &cache,
                    const std::vector<ArtifactSlot> &slots) -> Expected<std::vector<CUdeviceptr>> {
    cache.resize(slots.size());
    std::vector<CUdeviceptr> ptrs;
    for (size_t i = 0; i < slots.size(); ++i) {
      if (!cache[i]) {
        Expected<DeviceBuffer> b = device_.allocate(std::max<size_t>(slots[i].byteSize(), 1));
        if (!b)
          return b.error().withContext(where);
        cache[i] = b.take();
      }
      ptrs.push_back(cache[i].get());
    }
    return ptrs;
  };
  Expected<std::vector<CUdeviceptr>> argPtrs = blocks(hostArgBlocks_, function_.args);
  if (!argPtrs)
    return argPtrs.takeError();
  Expected<std::vector<CUdeviceptr>> resultPtrs = blocks(hostResultBlocks_, function_.results);
  if (!resultPtrs)
    return resultPtrs.takeError();
  for (size_t i = 0; i < args.size(); ++i)
    if (Error e = device_.copyToDevice((*argPtrs)[i], args[i], function_.args[i].byteSize()))
      return e.withContext(where + ": arg " + std::to_string(i));
  if (Error e = run(*argPtrs, *resultPtrs))
    return e;
  for (size_t i = 0; i < results.size(); ++i)
    if (Error e = device_.copyToHost(results[i], (*resultPtrs)[i],
                                     function_.results[i].byteSize()))
      return e.withContext(where + ": result " + std::to_string(i));
  return Error::success();
}

Error CudaFunction::captureGraph() {
  std::string where = source_ + ": function '" + function_.name + "'";
  if (!ran_)
    return Error::make(where + ": captureGraph needs a run() first (it captures that "
                               "run's pointers)");
  if (opTiming())
    return Error::make(where + ": no CUDA graph while ops are timed (--profile-ops)");
  if (graphFor(lastArgs_, lastResults_))
    return Error::success();
  capturing_ = true;
  Expected<Graph> g =
      Graph::capture(device_, [&] { return queueOps(lastArgs_, lastResults_); });
  capturing_ = false;
  if (!g)
    return g.error().withContext(where);
  if (graphs_.size() == kMaxGraphs)
    graphs_.erase(graphs_.begin());
  graphs_.push_back({lastArgs_, lastResults_, g.take()});
  return Error::success();
}

} // namespace cuda
} // namespace rt
} // namespace lpc
