//===- GPUArtifact.cpp - lpc functions -> CUDA artifact -------------------===//
//
// Runs lpc-gpu-codegen on a copy of each function, then reads what the host
// function kept (see docs/cuda-artifact.md):
//   memref.alloc / dealloc  -> buffers, placed in one arena by liveness
//   views (cast, expand/collapse_shape, subview, reinterpret_cast, reshape)
//                           -> (space, offset, sizes, strides), from the
//                              static strided type of the view itself
//   gpu.launch_func         -> launch (constant grid, block and scalars;
//                              lpc-gpu-launch-info's access / serial_iters)
//   func.call @lpc_rt_gemm_* (lpc-gemm-to-calls) -> gemm
//   func.call @lpc_rt_attention_{fwd,bwd}_{bf16,f16} (lpc.attention's
//     bufferization, dialects/AttentionBufferization.cpp)
//                           -> attention, attention_backward (cuDNN)
//   func.call @lpc_rt_{all_reduce,reduce_scatter,all_gather,shard,
//     all_to_all}_{f32,bf16,f16,f8e4m3,f8e5m2}
//     (dialects/CollectiveBufferization.cpp; the narrow types from
//     lpc-native-wire-collectives)
//                           -> all_reduce, reduce_scatter, all_gather, shard
//                              (NCCL, runtime/cuda/Nccl.cpp)
//   memref.copy             -> copy
// Anything else with side effects is an error naming the op: the runtime
// must never meet an op it does not know.
//
//===----------------------------------------------------------------------===//

#include "lpc/Backend/GPUArtifact.h"

#include "lpc/Backend/CPUBackend.h"
#include "lpc/Conversion/Passes.h"
#include "lpc/Reference/ToRuntime.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
namespace json = llvm::json;
namespace ref = mlir::lpc::ref;

namespace {

/// Buffers start at multiples of this many bytes (cuBLASLt wants 16, the
/// driver's own allocations are 256-aligned).
constexpr int64_t kBufferAlign = 256;

json::Object slotObject(const mlir::lpc::cpu::Slot &s) {
  json::Array shape;
  for (int64_t d : s.shape)
    shape.push_back(d);
  json::Object o{{"dtype", ::lpc::rt::dtypeName(ref::toRuntimeDType(s.dtype))},
                 {"shape", std::move(shape)},
                 {"state", s.state},
                 {"name", s.name},
                 {"input", s.input},
                 {"metric", s.metric}};
  if (s.init)
    o["init"] = *s.init;
  if (s.idBound > 0)
    o["id_bound"] = s.idBound;
  return o;
}

std::string locString(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return s;
}

class FunctionWriter {
public:
  FunctionWriter(func::FuncOp fn, unsigned numArgs, bool tf32)
      : fn(fn), numArgs(numArgs), tf32(tf32) {}

  llvm::Expected<json::Object> write(json::Array args, json::Array results);

private:
  struct Buffer {
    int64_t bytes = 0;
    int64_t first = 0, last = 0; // op indices where it is live
    int64_t offset = 0;
  };

  llvm::Error fail(Operation *op, const llvm::Twine &msg) {
    return llvm::createStringError("@" + fn.getName() + ": '" +
                                   op->getName().getStringRef() + "' at " +
                                   locString(op->getLoc()) + ": " + msg);
  }
  llvm::Expected<json::Object> view(Value v, Operation *user);
  llvm::Expected<json::Value> scalar(Value v, Operation *user);
  llvm::Expected<json::Array> dims(gpu::KernelDim3 d, Operation *user);
  llvm::Expected<json::Object> launch(gpu::LaunchFuncOp op);
  llvm::Expected<json::Object> gemm(func::CallOp op);
  llvm::Expected<json::Object> attention(func::CallOp op);
  llvm::Expected<json::Object> collective(func::CallOp op);
  llvm::Expected<unsigned> moduleIndex(StringRef name, Operation *user);
  int64_t planArena();

  func::FuncOp fn;
  unsigned numArgs;
  bool tf32;
  int64_t opIndex = 0;
  llvm::DenseMap<Value, unsigned> bufferIds;
  std::vector<Buffer> buffers;
  llvm::StringMap<unsigned> moduleIds;
  json::Array modules;
};

llvm::Expected<json::Object> FunctionWriter::view(Value v, Operation *user) {
  // The layout is the first fully static strided type on the way to the
  // root: a view's own type, or, for the dynamic casts the GEMM calls take,
  // their source's.
  MemRefType layout;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  Value cur = v;
  while (true) {
    auto t = cast<MemRefType>(cur.getType());
    if (!layout && t.hasStaticShape()) {
      SmallVector<int64_t> st;
      int64_t off;
      if (succeeded(t.getStridesAndOffset(st, off)) &&
          !ShapedType::isDynamic(off) &&
          llvm::none_of(st, ShapedType::isDynamic)) {
        layout = t;
        strides = st;
        offset = off;
      }
    }
    if (isa<BlockArgument>(cur) || cur.getDefiningOp<memref::AllocOp>())
      break;
    Operation *def = cur.getDefiningOp();
    // memref.reshape's result claims offset 0: right for an identity
    // layout source only.
    auto reshape = dyn_cast<memref::ReshapeOp>(def);
    auto reshapeSource =
        reshape ? dyn_cast<MemRefType>(reshape.getSource().getType())
                : MemRefType();
    if (reshape && (!reshapeSource || !reshapeSource.getLayout().isIdentity()))
      return fail(user, "an operand is a memref.reshape of a strided view");
    // Kernels read constant tables from their PTX module
    // (lpc-sink-constant-globals); a GEMM or a copy has no view of them.
    if (isa<memref::GetGlobalOp>(def))
      return fail(user, "an operand is a constant tensor (not a splat), which "
                        "only kernels can read on the GPU: compute it from a "
                        "splat or an input instead");
    if (!isa<memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
             memref::SubViewOp, memref::ReinterpretCastOp, memref::ReshapeOp>(
            def))
      return fail(user, "an operand is a view made by '" +
                            def->getName().getStringRef() +
                            "', which the artifact cannot express");
    cur = def->getOperand(0);
  }
  if (!layout)
    return fail(user, "an operand has no static strided layout");
  json::Object o;
  if (auto ba = dyn_cast<BlockArgument>(cur)) {
    unsigned i = ba.getArgNumber();
    o["space"] = i < numArgs ? "arg" : "result";
    o["index"] = int64_t(i < numArgs ? i : i - numArgs);
  } else {
    auto it = bufferIds.find(cur);
    if (it == bufferIds.end())
      return fail(user, "an operand's buffer is allocated after its use");
    Buffer &b = buffers[it->second];
    b.last = std::max(b.last, opIndex);
    o["space"] = "buffer";
    o["index"] = int64_t(it->second);
  }
  json::Array sizes, st;
  for (int64_t d : layout.getShape())
    sizes.push_back(d);
  for (int64_t s : strides)
    st.push_back(s);
  o["offset"] = offset;
  o["sizes"] = std::move(sizes);
  o["strides"] = std::move(st);
  o["elem_bytes"] = mlir::lpc::gpu::elementBytes(layout.getElementType());
  return o;
}

llvm::Expected<json::Value> FunctionWriter::scalar(Value v, Operation *user) {
  Attribute a;
  if (!matchPattern(v, m_Constant(&a)))
    return fail(user, "a scalar operand is not a constant");
  if (auto i = dyn_cast<IntegerAttr>(a)) {
    unsigned width =
        i.getType().isIndex() ? 64 : i.getType().getIntOrFloatBitWidth();
    if (width == 64)
      return json::Object{{"i64", i.getValue().getSExtValue()}};
    if (width == 32)
      return json::Object{{"i32", i.getValue().getSExtValue()}};
  } else if (auto f = dyn_cast<FloatAttr>(a)) {
    if (f.getType().isF32())
      return json::Object{{"f32", f.getValueAsDouble()}};
    if (f.getType().isF64())
      return json::Object{{"f64", f.getValueAsDouble()}};
  }
  std::string type;
  llvm::raw_string_ostream os(type);
  v.getType().print(os);
  return fail(user, "a scalar operand of type " + type +
                        " is neither i32/i64/index nor f32/f64");
}

llvm::Expected<json::Array> FunctionWriter::dims(gpu::KernelDim3 d,
                                                 Operation *user) {
  json::Array a;
  for (Value v : {d.x, d.y, d.z}) {
    std::optional<int64_t> c = getConstantIntValue(v);
    if (!c || *c <= 0 || *c > std::numeric_limits<uint32_t>::max())
      return fail(user, "launch dimensions must be positive constants");
    a.push_back(*c);
  }
  return a;
}

llvm::Expected<unsigned> FunctionWriter::moduleIndex(StringRef name,
                                                     Operation *user) {
  auto it = moduleIds.find(name);
  if (it != moduleIds.end())
    return it->second;
  auto module = fn->getParentOfType<ModuleOp>();
  auto bin = module.lookupSymbol<gpu::BinaryOp>(name);
  if (!bin || bin.getObjects().size() != 1)
    return fail(user, "no gpu.binary @" + name + " with one object");
  auto obj = cast<gpu::ObjectAttr>(bin.getObjects()[0]);
  if (obj.getFormat() != gpu::CompilationTarget::Assembly)
    return fail(user, "gpu.binary @" + name + " does not hold PTX");
  unsigned id = modules.size();
  modules.push_back(
      json::Object{{"name", name}, {"ptx", obj.getObject().str()}});
  moduleIds[name] = id;
  return id;
}

llvm::Expected<json::Object> FunctionWriter::launch(gpu::LaunchFuncOp op) {
  if (op.getAsyncToken() || !op.getAsyncDependencies().empty() ||
      op.hasClusterSize())
    return fail(op, "async and cluster launches are not supported");
  auto module = moduleIndex(op.getKernelModuleName(), op);
  if (!module)
    return module.takeError();
  auto grid = dims(op.getGridSizeOperandValues(), op);
  if (!grid)
    return grid.takeError();
  auto block = dims(op.getBlockSizeOperandValues(), op);
  if (!block)
    return block.takeError();
  int64_t shared = 0;
  if (Value s = op.getDynamicSharedMemorySize()) {
    std::optional<int64_t> c = getConstantIntValue(s);
    if (!c)
      return fail(op, "dynamic shared memory size is not a constant");
    shared = *c;
  }
  json::Array params;
  for (Value v : op.getKernelOperands()) {
    if (isa<MemRefType>(v.getType())) {
      auto vw = view(v, op);
      if (!vw)
        return vw.takeError();
      params.push_back(json::Object{{"view", std::move(*vw)}});
    } else {
      auto s = scalar(v, op);
      if (!s)
        return s.takeError();
      params.push_back(std::move(*s));
    }
  }
  json::Object o{{"op", "launch"},
                 {"module", int64_t(*module)},
                 {"kernel", op.getKernelName().getValue()},
                 {"grid", std::move(*grid)},
                 {"block", std::move(*block)},
                 {"shared_bytes", shared},
                 {"params", std::move(params)}};
  // For the cost model (lpc-gpu-launch-info): what the kernel reads and
  // writes per parameter, and its serial loop length per thread.
  if (auto access = op->getAttrOfType<ArrayAttr>("lpc_access")) {
    if (access.size() != op.getNumKernelOperands())
      return fail(op, "lpc_access does not have one entry per kernel operand");
    json::Array a;
    for (Attribute s : access) {
      auto str = dyn_cast<StringAttr>(s);
      if (!str)
        return fail(op, "lpc_access holds something other than strings");
      a.push_back(str.getValue());
    }
    o["access"] = std::move(a);
  }
  if (auto iters = op->getAttrOfType<IntegerAttr>("lpc_serial_iters"))
    o["serial_iters"] = iters.getInt();
  return o;
}

llvm::Expected<json::Object> FunctionWriter::gemm(func::CallOp op) {
  struct Kind {
    StringRef callee;
    const char *a, *b, *c;
  };
  static const Kind kinds[] = {
      {"lpc_rt_gemm_f32", "F32", "F32", "F32"},
      {"lpc_rt_gemm_bf16", "BF16", "BF16", "F32"},
      {"lpc_rt_gemm_f16", "F16", "F16", "F32"},
      {"lpc_rt_gemm_bf16_bf16", "BF16", "BF16", "BF16"},
      {"lpc_rt_gemm_f8e4m3_f8e4m3", "F8_E4M3", "F8_E4M3", "F32"},
      {"lpc_rt_gemm_f8e4m3_f8e5m2", "F8_E4M3", "F8_E5M2", "F32"},
      {"lpc_rt_gemm_f8e5m2_f8e4m3", "F8_E5M2", "F8_E4M3", "F32"},
  };
  // FP8 GEMMs that dequantize (lpc-gemm-to-calls): "<kind>_scaled" takes
  // the A and B scale buffers after C, "<kind>_scaled_bf16" writes C in bf16.
  // "<kind>_bias" (f32 C) takes the bias after C (cuBLASLt's bias epilogue).
  StringRef callee = op.getCallee();
  bool bf16C = false;
  bool scaled = callee.starts_with("lpc_rt_gemm_f8") &&
                ((bf16C = callee.consume_back("_scaled_bf16")) ||
                 callee.consume_back("_scaled"));
  bool bias = !scaled && callee.consume_back("_bias");
  const Kind *kind = nullptr;
  for (const Kind &k : kinds)
    if (callee == k.callee)
      kind = &k;
  SmallVector<const char *, 5> viewKeys{"a", "b", "c"};
  if (scaled)
    viewKeys.append({"a_scale", "b_scale"});
  if (bias)
    viewKeys.push_back("bias");
  if (!kind || (bias && StringRef(kind->c) != "F32") ||
      op.getNumOperands() != viewKeys.size() + 3)
    return fail(op, "a call to @" + op.getCallee() +
                        ", which is not a GEMM of the artifact");
  json::Object o{{"op", "gemm"},
                 {"a_type", kind->a},
                 {"b_type", kind->b},
                 {"c_type", bf16C ? "BF16" : kind->c}};
  for (unsigned i = 0; i < viewKeys.size(); ++i) {
    auto v = view(op.getOperand(i), op);
    if (!v)
      return v.takeError();
    o[viewKeys[i]] = std::move(*v);
  }
  unsigned flags = viewKeys.size();
  if (tf32 && StringRef(kind->a) == "F32")
    o["tf32"] = true;
  if (op->hasAttr("lpc_fast_accum") && StringRef(kind->a).starts_with("F8"))
    o["fast_accum"] = true;
  const char *flagKeys[] = {"trans_a", "trans_b", "broadcast_b"};
  for (int i = 0; i < 3; ++i) {
    std::optional<int64_t> c = getConstantIntValue(op.getOperand(flags + i));
    if (!c)
      return fail(op, "GEMM flags must be constants");
    o[flagKeys[i]] = *c != 0;
  }
  return o;
}

llvm::Expected<json::Object> FunctionWriter::attention(func::CallOp op) {
  StringRef callee = op.getCallee();
  bool backward = callee.consume_front("lpc_rt_attention_bwd_");
  if (!backward && !callee.consume_front("lpc_rt_attention_fwd_"))
    return fail(op, "not an attention call");
  const char *dtype = callee == "bf16" ? "BF16" : callee == "f16" ? "F16" : "";
  if (!*dtype)
    // f32 attention and masks have no cuDNN step: lpc-decompose-attention
    // writes those as GEMMs and kernels before the GPU pipeline runs.
    return fail(op, "a call to @" + op.getCallee() +
                        ": the artifact's attention steps are bf16 or f16 "
                        "without a mask (decompose the others with "
                        "lpc-decompose-attention)");
  SmallVector<const char *, 9> keys{"q", "k", "v"};
  if (backward)
    keys.append({"o", "do", "lse", "dq", "dk", "dv"});
  else
    keys.append({"o", "lse"});
  if (op.getNumOperands() != keys.size() + 2)
    return fail(op, "a call to @" + op.getCallee() +
                        " with an unexpected number of operands");
  json::Object o{{"op", backward ? "attention_backward" : "attention"},
                 {"dtype", dtype}};
  for (unsigned i = 0; i < keys.size(); ++i) {
    auto v = view(op.getOperand(i), op);
    if (!v)
      return v.takeError();
    o[keys[i]] = std::move(*v);
  }
  std::optional<int64_t> causal =
      getConstantIntValue(op.getOperand(keys.size()));
  auto scale = op.getOperand(keys.size() + 1).getDefiningOp<arith::ConstantOp>();
  auto scaleAttr = scale ? dyn_cast<FloatAttr>(scale.getValue()) : nullptr;
  if (!causal || !scaleAttr)
    return fail(op, "attention's causal flag and scale must be constants");
  o["causal"] = *causal != 0;
  o["scale"] = scaleAttr.getValueAsDouble();
  return o;
}

llvm::Expected<json::Object> FunctionWriter::collective(func::CallOp op) {
  StringRef callee = op.getCallee();
  if (callee == "lpc_rt_all_reduce_any_nonfinite_f32")
    // (No pass builds it: the loss scaler reduces a float flag with max.)
    return fail(op, "lpc.all_reduce any_nonfinite has no GPU step (reduce "
                    "an f32 flag made with lpc.all_finite and lpc.where "
                    "with max instead)");
  // Operands (CollectiveBufferization.cpp): in, out, then the i64 constants
  // kind (all_reduce, reduce_scatter), wire (not shard's or all_to_all's),
  // ranks (not all_reduce's). The element type is the callee's suffix: f32,
  // or a narrow type (lpc-native-wire-collectives), whose wire is the type
  // itself (Precision's value: fp32 0, fp16 1, bf16 2, e4m3 3, e5m2 4).
  struct Element {
    StringRef suffix;
    const char *dtype;
    int64_t wire;
  };
  static const Element elements[] = {
      {"_f32", "F32", 0},          {"_bf16", "BF16", 2},
      {"_f16", "F16", 1},          {"_f8e4m3", "F8_E4M3", 3},
      {"_f8e5m2", "F8_E5M2", 4}};
  StringRef kind = callee;
  const Element *element = nullptr;
  for (const Element &e : elements)
    if (kind.consume_back(e.suffix)) {
      element = &e;
      break;
    }
  if (callee.starts_with("lpc_rt_grouped_gemm_"))
    return fail(op, "lpc.grouped_matmul (a mixture-of-experts GEMM) has no "
                    "CUDA lowering yet: train this model on the CPU "
                    "(--device=cpu), or import it with lpc-import "
                    "--experts=dense (every expert on every token)");
  if (!element || !kind.consume_front("lpc_rt_") ||
      !llvm::is_contained(
          {"all_reduce", "reduce_scatter", "all_gather", "shard", "all_to_all"},
          kind))
    return fail(op, "a call to @" + callee +
                        ": the artifact has no step for it");
  bool reduces = kind == "all_reduce" || kind == "reduce_scatter";
  bool hasWire = kind != "shard" && kind != "all_to_all",
       hasRanks = kind != "all_reduce";
  unsigned want = 2 + reduces + hasWire + hasRanks;
  if (op.getNumOperands() != want)
    return fail(op, "a call to @" + callee + " with " +
                        Twine(op.getNumOperands()) + " operands, not " +
                        Twine(want));
  SmallVector<int64_t, 3> ints;
  for (unsigned i = 2; i < want; ++i) {
    std::optional<int64_t> c = getConstantIntValue(op.getOperand(i));
    if (!c)
      return fail(op, "a collective's kind, wire format and rank count must "
                      "be constants");
    ints.push_back(*c);
  }
  json::Object o{{"op", kind}, {"dtype", element->dtype}};
  unsigned next = 0;
  if (reduces) {
    int64_t k = ints[next++];
    static const char *const kinds[] = {"sum", "mean", "max"};
    if (k < 0 || k > 2)
      return fail(op, "reduction kind " + Twine(k) + " is not sum, mean or max");
    o["reduce"] = kinds[k];
  }
  if (hasWire && ints[next++] != element->wire)
    // An f32 tensor with a narrow comm_precision has the CPU's semantics
    // (f32 sums in rank order, a shared FP8 scale): lpc-native-wire-
    // collectives rewrites bf16 and fp16 into collectives of that type.
    return fail(op, "an f32 collective with a narrow comm_precision: the "
                    "GPU moves narrow formats as tensors of their type "
                    "(lpc-native-wire-collectives; FP8 needs its ranks=N)");
  if (hasRanks)
    o["ranks"] = ints[next++];
  auto in = view(op.getOperand(0), op);
  if (!in)
    return in.takeError();
  auto out = view(op.getOperand(1), op);
  if (!out)
    return out.takeError();
  o["in"] = std::move(*in);
  o["out"] = std::move(*out);
  return o;
}

/// Offsets in one arena: largest buffers first, each at the lowest aligned
/// offset free of every placed buffer whose live range meets its own. Ops
/// run in order on one stream, so a buffer may reuse bytes freed earlier.
int64_t FunctionWriter::planArena() {
  std::vector<unsigned> order(buffers.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  std::vector<unsigned> placed;
  int64_t arena = 0;
  for (unsigned i : order) {
    Buffer &b = buffers[i];
    std::vector<const Buffer *> live;
    for (unsigned j : placed) {
      const Buffer &p = buffers[j];
      if (!(p.last < b.first || b.last < p.first))
        live.push_back(&p);
    }
    std::sort(live.begin(), live.end(), [](const Buffer *x, const Buffer *y) {
      return x->offset < y->offset;
    });
    int64_t off = 0;
    for (const Buffer *p : live) {
      if (off + b.bytes <= p->offset)
        break;
      off = std::max(
          off, int64_t(llvm::alignTo(p->offset + p->bytes, kBufferAlign)));
    }
    b.offset = off;
    arena = std::max(arena, off + b.bytes);
    placed.push_back(i);
  }
  return llvm::alignTo(arena, kBufferAlign);
}

llvm::Expected<json::Object> FunctionWriter::write(json::Array args,
                                                   json::Array results) {
  if (!fn.getBody().hasOneBlock())
    return llvm::createStringError("@" + fn.getName() +
                                   ": the host function has control flow");
  json::Array ops;
  for (Operation &op : fn.getBody().front()) {
    ++opIndex;
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      MemRefType t = alloc.getType();
      if (!t.hasStaticShape() || !t.getLayout().isIdentity())
        return fail(&op, "allocations must be static and row-major");
      bufferIds[alloc.getResult()] = buffers.size();
      Buffer b;
      b.bytes = std::max<int64_t>(
          1, t.getNumElements() *
                 mlir::lpc::gpu::elementBytes(t.getElementType()));
      b.first = b.last = opIndex;
      buffers.push_back(b);
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      // Liveness ends at the last launch, GEMM or copy that uses the
      // buffer (bufferization frees late, often at the end).
      if (!bufferIds.count(dealloc.getMemref()))
        return fail(&op, "frees something that is not an allocation");
    } else if (auto l = dyn_cast<gpu::LaunchFuncOp>(op)) {
      auto o = launch(l);
      if (!o)
        return o.takeError();
      ops.push_back(std::move(*o));
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      StringRef callee = call.getCallee();
      auto o = callee.starts_with("lpc_rt_attention_") ? attention(call)
               : callee.starts_with("lpc_rt_gemm_")    ? gemm(call)
                                                       : collective(call);
      if (!o)
        return o.takeError();
      ops.push_back(std::move(*o));
    } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      auto src = view(copy.getSource(), &op);
      if (!src)
        return src.takeError();
      auto dst = view(copy.getTarget(), &op);
      if (!dst)
        return dst.takeError();
      ops.push_back(json::Object{
          {"op", "copy"}, {"src", std::move(*src)}, {"dst", std::move(*dst)}});
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (ret.getNumOperands())
        return fail(&op, "results must be out-parameters");
    } else if (!isMemoryEffectFree(&op) && !isa<memref::ReshapeOp>(op)) {
      return fail(&op, "the artifact has no counterpart of this host op");
    }
    // Constants and views are read where they are used.
  }
  // A buffer is live from its allocation to its last use.
  int64_t arena = planArena();
  json::Array bufs;
  for (const Buffer &b : buffers)
    bufs.push_back(json::Object{{"offset", b.offset}, {"bytes", b.bytes}});
  return json::Object{
      {"name", fn.getName()},          {"args", std::move(args)},
      {"results", std::move(results)}, {"arena_bytes", arena},
      {"buffers", std::move(bufs)},    {"modules", std::move(modules)},
      {"ops", std::move(ops)}};
}

} // namespace

int64_t mlir::lpc::gpu::elementBytes(Type t) {
  if (t.isIndex())
    return 8;
  return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
}

llvm::Expected<json::Object> mlir::lpc::gpu::functionEntry(func::FuncOp lowered,
                                                           unsigned numArgs,
                                                           json::Array args,
                                                           json::Array results,
                                                           bool tf32) {
  return FunctionWriter(lowered, numArgs, tf32)
      .write(std::move(args), std::move(results));
}

llvm::Expected<std::string>
mlir::lpc::gpu::compileArtifact(ModuleOp module, ArrayRef<std::string> names,
                                const ArtifactOptions &options) {
  auto pipeline = gpuCodegenPipeline(options.chip, options.libdevice.empty()
                                                       ? defaultLibdevice()
                                                       : options.libdevice);
  if (!pipeline)
    return pipeline.takeError();
  json::Array functions;
  for (const std::string &name : names) {
    auto src = module.lookupSymbol<func::FuncOp>(name);
    if (!src)
      return llvm::createStringError("no function @" + name);
    json::Array args, results;
    for (unsigned i = 0; i < src.getNumArguments(); ++i) {
      auto s = cpu::slotFor(src.getArgumentTypes()[i], src.getArgAttrDict(i));
      if (!s)
        return s.takeError();
      args.push_back(slotObject(*s));
    }
    for (unsigned i = 0; i < src.getNumResults(); ++i) {
      auto s = cpu::slotFor(src.getResultTypes()[i], src.getResultAttrDict(i));
      if (!s)
        return s.takeError();
      results.push_back(slotObject(*s));
    }
    // Codegen on a copy that holds only this function.
    OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
    for (auto f : llvm::make_early_inc_range(copy->getOps<func::FuncOp>()))
      if (f.getSymName() != name)
        f.erase();
    // The first few distinct messages (one cause often repeats per op).
    std::string diags;
    llvm::StringSet<> seen;
    {
      ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
        std::string line = locString(d.getLocation()) + ": " + d.str();
        if (seen.size() < 5 && seen.insert(d.str()).second)
          diags += line + "\n";
        return success();
      });
      PassManager pm(module.getContext());
      if (failed(parsePassPipeline(*pipeline, pm, llvm::errs())))
        return llvm::createStringError("the GPU pipeline does not parse");
      if (failed(pm.run(*copy)))
        return llvm::createStringError("GPU codegen of @" + name +
                                       " failed:\n" + diags);
    }
    auto fn = copy->lookupSymbol<func::FuncOp>(name);
    auto entry = functionEntry(fn, src.getNumArguments(), std::move(args),
                               std::move(results), options.tf32);
    if (!entry)
      return entry.takeError();
    functions.push_back(std::move(*entry));
  }
  json::Object root{{"format", "lpc-cuda-artifact"},
                    {"version", 2},
                    {"chip", options.chip},
                    {"producer", "lpc (LLVM " LLVM_VERSION_STRING ")"},
                    {"functions", std::move(functions)}};
  if (!options.train.empty())
    root["train"] = json::Object(options.train);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(root)) << "\n";
  return text;
}
