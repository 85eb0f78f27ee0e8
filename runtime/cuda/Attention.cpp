//===- Attention.cpp - fused attention through cuDNN, opened with dlopen --===//
//
// The graphs are those cudnn-frontend's composite SDPA nodes lower to for
// cuDNN 9 (include/cudnn_frontend/node/scaled_dot_product_flash_attention.h,
// softmax.h, diagonal_band_mask.h): built here directly on the backend API
// so that nothing links against cuDNN and no C++ frontend is needed.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/CudaAttention.h"
#include "lpc/Runtime/CudaAllocator.h"
#include "OpenLibrary.h"

#if LPC_HAVE_CUDNN
#include <cudnn_graph.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <utility>
#include <vector>

#ifndef LPC_CUDA_TOOLKIT_LIBDIR
#define LPC_CUDA_TOOLKIT_LIBDIR ""
#endif

namespace lpc {
namespace rt {
namespace cuda {

//===----------------------------------------------------------------------===//
// Descriptions and validation (no GPU, no library)
//===----------------------------------------------------------------------===//

static std::string fmt(const char *f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

std::string AttentionDesc::str() const {
  std::string s = std::string(backward ? "attention_backward " : "attention ") +
                  (dtype == DType::F16 ? "f16" : dtype == DType::BF16 ? "bf16" : dtypeName(dtype)) +
                  (causal ? " causal" : "") + ", B " + std::to_string(b) + " H " +
                  std::to_string(h) + " Sq " + std::to_string(sq) + " Skv " + std::to_string(skv) +
                  " D " + std::to_string(d) + " Dv " + std::to_string(dv) + ", scale " +
                  fmt("%.6g", scale);
  return s;
}

std::string AttentionDesc::key() const {
  std::string k = std::to_string(backward) + " " + std::to_string(int(dtype)) + " " +
                  std::to_string(causal) + " " + fmt("%.9g", scale);
  for (int64_t n : {b, h, sq, skv, d, dv})
    k += " " + std::to_string(n);
  auto add = [&](const Strides &s) {
    k += " |";
    for (int64_t x : s)
      k += " " + std::to_string(x);
  };
  add(q), add(this->k), add(v), add(o);
  if (backward)
    add(dO), add(dq), add(dk), add(dV);
  return k;
}

double AttentionDesc::scoreElements() const {
  if (!causal)
    return double(sq) * double(skv);
  // Row i keeps j <= i + (skv - sq): min(skv, max(0, i + skv - sq + 1)).
  double total = 0;
  int64_t shift = skv - sq;
  for (int64_t i = 0; i < sq; ++i)
    total += double(std::min<int64_t>(skv, std::max<int64_t>(0, i + shift + 1)));
  return total;
}

double AttentionDesc::flops() const {
  double base = 2.0 * double(b) * double(h) * scoreElements();
  return base * (backward ? 3.0 * double(d) + 2.0 * double(dv) : double(d) + double(dv));
}

static Error attnError(const AttentionDesc &d, const std::string &problem) {
  return Error::make(d.str() + ": " + problem);
}

int64_t attentionMaxHeadDim(int ccMajor) {
  return ccMajor >= 9 ? kAttentionMaxHeadDimSm90 : kAttentionMaxHeadDimSm80;
}

Error validateAttention(const AttentionDesc &d) {
  if (d.dtype != DType::BF16 && d.dtype != DType::F16)
    return attnError(d, std::string("dtype ") + dtypeName(d.dtype) + " (cuDNN's fused attention takes BF16 or F16)");
  if (d.b < 1 || d.h < 1 || d.sq < 1 || d.skv < 1 || d.d < 1 || d.dv < 1)
    return attnError(d, "B, H, Sq, Skv, D and Dv must be at least 1");
  if (d.b >= (int64_t(1) << 31) || d.h >= (int64_t(1) << 31) || d.sq >= (int64_t(1) << 31) ||
      d.skv >= (int64_t(1) << 31))
    return attnError(d, "a dimension is 2^31 or more (cuDNN's indices are int32)");
  for (int64_t hd : {d.d, d.dv})
    if (hd % kAttentionHeadDimMultiple || hd > kAttentionMaxHeadDimSm90)
      return attnError(d, "head dims D and Dv must be multiples of 8 and at most 256 "
                          "(cuDNN 9's fused attention)");
  if (d.causal && d.sq > d.skv)
    return attnError(d, "causal attention with Sq > Skv: the bottom-right aligned mask leaves "
                        "the first Sq - Skv query rows without a key");
  if (!std::isfinite(d.scale) || d.scale == 0.0f)
    return attnError(d, "scale must be finite and non-zero");
  auto strides = [&](const char *name, const AttentionDesc::Strides &s) -> Error {
    if (s[3] != 1)
      return attnError(d, std::string(name) + "'s last stride must be 1");
    for (int i = 0; i < 3; ++i)
      if (s[size_t(i)] % kAttentionHeadDimMultiple)
        return attnError(d, std::string(name) + "'s strides must be multiples of 8 elements "
                                                 "(16-byte aligned rows)");
    return Error::success();
  };
  if (Error e = strides("q", d.q))
    return e;
  if (Error e = strides("k", d.k))
    return e;
  if (Error e = strides("v", d.v))
    return e;
  if (Error e = strides("o", d.o))
    return e;
  if (d.backward) {
    if (Error e = strides("do", d.dO))
      return e;
    if (Error e = strides("dq", d.dq))
      return e;
    if (Error e = strides("dk", d.dk))
      return e;
    if (Error e = strides("dv", d.dV))
      return e;
  }
  return Error::success();
}

Error validateAttention(const AttentionDesc &d, const AttentionOperands &ops) {
  if (Error e = validateAttention(d))
    return e;
  struct Ptr {
    const char *name;
    CUdeviceptr p;
  };
  std::vector<Ptr> ptrs = {{"q", ops.q}, {"k", ops.k}, {"v", ops.v}, {"o", ops.o}, {"lse", ops.lse}};
  if (d.backward)
    ptrs.insert(ptrs.end(), {{"do", ops.dO}, {"dq", ops.dq}, {"dk", ops.dk}, {"dv", ops.dV}});
  for (const Ptr &p : ptrs) {
    if (!p.p)
      return attnError(d, std::string(p.name) + " is a null pointer");
    if (p.p % 16)
      return attnError(d, std::string(p.name) + " is not 16-byte aligned");
  }
  if (!d.backward && (ops.dO || ops.dq || ops.dk || ops.dV))
    return attnError(d, "gradient pointers given to a forward step");
  return Error::success();
}

Error checkAttentionSupport(const AttentionDesc &d, size_t version, int ccMajor, int ccMinor) {
  std::string ver = std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) +
                    "." + std::to_string(version % 100);
  std::string arch = "sm_" + std::to_string(ccMajor) + std::to_string(ccMinor);
  if (version < 90000)
    return attnError(d, "cuDNN " + ver + " is too old (lpc's attention needs cuDNN 9)");
  if (ccMajor < 8)
    return attnError(d, "cuDNN's fused attention needs sm_80 or newer; this GPU is " + arch);
  int64_t maxHd = attentionMaxHeadDim(ccMajor);
  // cuDNN 9.9+ takes up to 256 on every architecture it runs attention on.
  if (version >= 90900 && ccMajor != 10)
    maxHd = kAttentionMaxHeadDimSm90;
  if (d.d > maxHd || d.dv > maxHd)
    return attnError(d, "head dims above " + std::to_string(maxHd) + " need a newer GPU or cuDNN (" +
                            arch + ", cuDNN " + ver + ")");
  if (version == 91000 || version == 91001)
    return attnError(d, "cuDNN 9.10.0 and 9.10.1 have known bugs in BF16/F16 attention "
                        "(cudnn-frontend refuses them): use 9.10.2 or newer");
  if (d.causal && d.sq != d.skv && version < 90600)
    return attnError(d, "bottom-right causal masking with Sq != Skv needs cuDNN 9.6 (this is " + ver +
                            ")");
  if (d.backward && d.skv % 128 && version <= 91500)
    return attnError(d, "cuDNN " + ver + "'s attention backward needs Skv a multiple of 128 "
                        "without a padding mask (cudnn-frontend works around it up to 9.15): "
                        "use cuDNN 9.16 or newer");
  return Error::success();
}

#if LPC_HAVE_CUDNN

//===----------------------------------------------------------------------===//
// cuDNN, through dlopen
//===----------------------------------------------------------------------===//

#define LPC_CUDNN_FUNCTIONS(X)                                                 \
  X(cudnnGetVersion)                                                           \
  X(cudnnGetErrorString)                                                       \
  X(cudnnCreate)                                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnSetStream)                                                            \
  X(cudnnBackendCreateDescriptor)                                              \
  X(cudnnBackendDestroyDescriptor)                                             \
  X(cudnnBackendSetAttribute)                                                  \
  X(cudnnBackendGetAttribute)                                                  \
  X(cudnnBackendFinalize)                                                      \
  X(cudnnBackendExecute)

/// The library's entry points; types from cudnn_graph.h (decltype does not
/// reference the functions, so nothing links against libcudnn).
class Cudnn {
public:
#define LPC_CUDNN_DECLARE(fn) decltype(&::fn) fn = nullptr;
  LPC_CUDNN_FUNCTIONS(LPC_CUDNN_DECLARE)
#undef LPC_CUDNN_DECLARE
  /// cuDNN 9's last-error text (optional: resolved when present).
  decltype(&::cudnnGetLastErrorString) cudnnGetLastErrorString = nullptr;
  void *handle = nullptr;
  std::string path;
  size_t version = 0;

  std::string describe(cudnnStatus_t s) const {
    std::string text = cudnnGetErrorString(s);
    if (cudnnGetLastErrorString) {
      char buf[512] = {0};
      cudnnGetLastErrorString(buf, sizeof(buf));
      if (buf[0])
        text += std::string(" (") + buf + ")";
    }
    return text;
  }
  Error check(cudnnStatus_t s, const std::string &call) const {
    if (s == CUDNN_STATUS_SUCCESS)
      return Error::success();
    return Error::make(call + " failed: " + describe(s));
  }
};

static Expected<std::unique_ptr<Cudnn>> openCudnn() {
  Expected<OpenedLibrary> opened = openCudaLibrary(
      "LPC_CUDNN_LIBRARY", {"libcudnn.so.9", "libcudnn.so"}, LPC_CUDA_TOOLKIT_LIBDIR,
      "cuDNN",
      "the artifact's attention steps need cuDNN 9 (libcudnn.so.9): install it or set "
      "LPC_CUDNN_LIBRARY to its path");
  if (!opened)
    return opened.takeError();
  void *handle = opened->handle;
  std::string path = opened->path;
  auto lib = std::make_unique<Cudnn>();
  lib->handle = handle;
  lib->path = path;
#define LPC_CUDNN_RESOLVE(fn)                                                  \
  lib->fn = reinterpret_cast<decltype(&::fn)>(::dlsym(handle, #fn));           \
  if (!lib->fn)                                                                \
    return Error::make(path + ": no symbol " #fn " (not cuDNN 9?)");
  LPC_CUDNN_FUNCTIONS(LPC_CUDNN_RESOLVE)
#undef LPC_CUDNN_RESOLVE
  lib->cudnnGetLastErrorString = reinterpret_cast<decltype(&::cudnnGetLastErrorString)>(
      ::dlsym(handle, "cudnnGetLastErrorString"));
  lib->version = lib->cudnnGetVersion();
  if (lib->version < 90000)
    return Error::make(path + ": cuDNN " + std::to_string(lib->version) +
                       " is too old (lpc's attention needs cuDNN 9; set LPC_CUDNN_LIBRARY to a "
                       "libcudnn.so.9)");
  return lib;
}

Expected<const Cudnn *> loadCudnn() {
  struct State {
    std::unique_ptr<Cudnn> lib;
    Error error;
  };
  // Leaked on purpose, as the driver and cuBLASLt: used until the process ends.
  static State *state = [] {
    auto *s = new State();
    Expected<std::unique_ptr<Cudnn>> lib = openCudnn();
    if (lib)
      s->lib = lib.take();
    else
      s->error = lib.takeError();
    return s;
  }();
  if (!state->lib)
    return Error::make(state->error.message());
  return static_cast<const Cudnn *>(state->lib.get());
}

size_t cudnnVersion(const Cudnn &lib) { return lib.version; }
const std::string &cudnnPath(const Cudnn &lib) { return lib.path; }

//===----------------------------------------------------------------------===//
// The operation graphs
//===----------------------------------------------------------------------===//

namespace {

// The deprecated handle attributes (cuDNN 9.0-9.7 need them; later ones
// also take a device-property descriptor instead), by value to keep the
// build free of deprecation warnings.
constexpr auto kOpGraphHandle = cudnnBackendAttributeName_t(800);  // CUDNN_ATTR_OPERATIONGRAPH_HANDLE
constexpr auto kPlanHandle = cudnnBackendAttributeName_t(400);     // CUDNN_ATTR_EXECUTION_PLAN_HANDLE

/// Unique ids of the graph's non-virtual tensors (the variant pack's).
enum Uid : int64_t {
  kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV,
  kScale,      // by value, f32
  kSoftmaxSum, // backward: delta_i = do_i . o_i, f32 [B, H, Sq, 1] (workspace)
  kDQAccum,    // backward: dq accumulated in f32 [B, H, Sq, D] (workspace)
  kSkv, kSq,   // by value, i32 (bottom-right causal mask)
  kNegInf,     // by value, f32
  kOne,        // by value, f32
  kFirstVirtual = 100,
};

using Desc = cudnnBackendDescriptor_t;
using Dims = std::array<int64_t, 4>;

Dims contiguous(const Dims &d) { return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}; }

cudnnDataType_t ioType(DType t) { return t == DType::F16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16; }

/// Builds descriptors, destroys them all at the end; the first error sticks
/// and makes every later call a no-op returning null.
class GraphBuilder {
public:
  explicit GraphBuilder(const Cudnn &lib) : lib_(lib) {}
  ~GraphBuilder() {
    for (auto it = owned_.rbegin(); it != owned_.rend(); ++it)
      lib_.cudnnBackendDestroyDescriptor(*it);
  }
  GraphBuilder(const GraphBuilder &) = delete;
  GraphBuilder &operator=(const GraphBuilder &) = delete;

  const Error &error() const { return error_; }
  size_t tensors() const { return tensors_; }
  size_t operations() const { return ops_.size(); }
  const std::vector<Desc> &ops() const { return ops_; }

  Desc create(cudnnBackendDescriptorType_t type, const char *what) {
    if (error_)
      return nullptr;
    Desc d = nullptr;
    if (fail(lib_.cudnnBackendCreateDescriptor(type, &d), std::string("create ") + what))
      return nullptr;
    owned_.push_back(d);
    return d;
  }
  bool set(Desc d, cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type,
           int64_t count, const void *value, const char *what) {
    if (error_ || !d)
      return false;
    return !fail(lib_.cudnnBackendSetAttribute(d, attr, type, count, value),
                 std::string("set ") + what);
  }
  bool finalize(Desc d, const std::string &what) {
    if (error_ || !d)
      return false;
    return !fail(lib_.cudnnBackendFinalize(d), "finalize " + what);
  }

  /// A tensor: 4-D, 16-byte aligned; by-value scalars are [1, 1, 1, 1].
  Desc tensor(int64_t uid, const Dims &dims, const Dims &strides, cudnnDataType_t type,
              bool isVirtual, bool byValue = false) {
    Desc t = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor");
    int64_t align = 16;
    std::string what = "tensor " + std::to_string(uid);
    set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, "TENSOR_DATA_TYPE");
    set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data(), "TENSOR_DIMENSIONS");
    set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data(), "TENSOR_STRIDES");
    set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "TENSOR_UNIQUE_ID");
    set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, "TENSOR_BYTE_ALIGNMENT");
    set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &isVirtual, "TENSOR_IS_VIRTUAL");
    if (byValue)
      set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &byValue, "TENSOR_IS_BY_VALUE");
    if (!finalize(t, what))
      return nullptr;
    ++tensors_;
    return t;
  }
  Desc scalar(int64_t uid, cudnnDataType_t type) {
    Dims one{1, 1, 1, 1};
    return tensor(uid, one, one, type, false, true);
  }
  Desc virt(const Dims &dims, cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    return tensor(nextVirtual_++, dims, contiguous(dims), type, true);
  }
  Desc virt(const Dims &dims, const Dims &strides, cudnnDataType_t type) {
    return tensor(nextVirtual_++, dims, strides, type, true);
  }

  /// y = mode(x[, b[, t]]); `axis` for GEN_INDEX.
  void pointwise(cudnnPointwiseMode_t mode, Desc x, Desc b, Desc t, Desc y, const char *name,
                 cudnnDataType_t math = CUDNN_DATA_FLOAT, int64_t axis = -1) {
    if (error_)
      return;
    Desc pw = create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "pointwise");
    set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "POINTWISE_MODE");
    set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math, "POINTWISE_MATH_PREC");
    if (mode == CUDNN_POINTWISE_GEN_INDEX)
      set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, "POINTWISE_AXIS");
    finalize(pw, std::string("pointwise ") + name);
    Desc op = create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "pointwise operation");
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw,
        "OPERATION_POINTWISE_PW_DESCRIPTOR");
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
        "OPERATION_POINTWISE_XDESC");
    if (b)
      set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b,
          "OPERATION_POINTWISE_BDESC");
    if (t)
      set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t,
          "OPERATION_POINTWISE_TDESC");
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
        "OPERATION_POINTWISE_YDESC");
    float one = 1.0f;
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one, "POINTWISE_ALPHA1");
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one, "POINTWISE_ALPHA2");
    addOp(op, std::string("pointwise ") + name);
  }
  void matmul(Desc a, Desc b, Desc c, const char *name) {
    if (error_)
      return;
    Desc mm = create(CUDNN_BACKEND_MATMUL_DESCRIPTOR, "matmul");
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32, "MATMUL_COMP_TYPE");
    finalize(mm, std::string("matmul ") + name);
    Desc op = create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "matmul operation");
    set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, "MATMUL_ADESC");
    set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, "MATMUL_BDESC");
    set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, "MATMUL_CDESC");
    set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, "MATMUL_DESC");
    addOp(op, std::string("matmul ") + name);
  }
  void reduction(cudnnReduceTensorOp_t mode, Desc x, Desc y, const char *name) {
    if (error_)
      return;
    Desc red = create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, "reduction");
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    set(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32, "REDUCTION_COMP_TYPE");
    set(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode,
        "REDUCTION_OPERATOR");
    finalize(red, std::string("reduction ") + name);
    Desc op = create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, "reduction operation");
    set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &red,
        "OPERATION_REDUCTION_DESC");
    set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
        "OPERATION_REDUCTION_XDESC");
    set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
        "OPERATION_REDUCTION_YDESC");
    addOp(op, std::string("reduction ") + name);
  }
  /// y = x seen through y's dims and strides (a transpose).
  void reshape(Desc x, Desc y, const char *name) {
    if (error_)
      return;
    Desc op = create(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, "reshape operation");
    set(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
        "OPERATION_RESHAPE_XDESC");
    set(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
        "OPERATION_RESHAPE_YDESC");
    addOp(op, std::string("reshape ") + name);
  }

  /// The operation graph of every operation so far (`handle` may be null).
  Desc graph(void *handle) {
    Desc g = create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
    if (handle) {
      cudnnHandle_t h = static_cast<cudnnHandle_t>(handle);
      set(g, kOpGraphHandle, CUDNN_TYPE_HANDLE, 1, &h, "OPERATIONGRAPH_HANDLE");
    }
    set(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(ops_.size()),
        ops_.data(), "OPERATIONGRAPH_OPS");
    if (!finalize(g, "operation graph of " + std::to_string(ops_.size()) + " operations"))
      return nullptr;
    return g;
  }

  /// Takes ownership away (the plan keeps what it executes with).
  std::vector<Desc> release() { return std::exchange(owned_, {}); }

private:
  bool fail(cudnnStatus_t s, const std::string &what) {
    if (s == CUDNN_STATUS_SUCCESS)
      return false;
    if (!error_)
      error_ = Error::make("cuDNN: " + what + " failed: " + lib_.describe(s));
    return true;
  }
  void addOp(Desc op, const std::string &what) {
    if (finalize(op, what))
      ops_.push_back(op);
  }

  const Cudnn &lib_;
  std::vector<Desc> owned_, ops_;
  Error error_;
  size_t tensors_ = 0;
  int64_t nextVirtual_ = kFirstVirtual;
};

Dims dims4(int64_t a, int64_t b, int64_t c, int64_t d) { return {a, b, c, d}; }
Dims swapLast(const AttentionDesc::Strides &s) { return {s[0], s[1], s[3], s[2]}; }
Dims asDims(const AttentionDesc::Strides &s) { return {s[0], s[1], s[2], s[3]}; }

/// The causal mask of cudnn-frontend's diagonal band (right bound 0):
/// keep s_ij where i (+ Skv - Sq) >= j, else -inf.
Desc causalMask(GraphBuilder &g, const AttentionDesc &d, Desc s) {
  Dims sd = dims4(d.b, d.h, d.sq, d.skv);
  Desc row = g.virt(sd, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, row, "row index",
              CUDNN_DATA_FLOAT, 2);
  Desc col = g.virt(sd, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, col, "column index",
              CUDNN_DATA_FLOAT, 3);
  if (d.sq != d.skv) {
    // Bottom-right alignment: row + Skv - Sq.
    Desc plus = g.virt(sd, CUDNN_DATA_INT32);
    g.pointwise(CUDNN_POINTWISE_ADD, row, g.scalar(kSkv, CUDNN_DATA_INT32), nullptr, plus,
                "row + Skv", CUDNN_DATA_INT32);
    Desc shifted = g.virt(sd, CUDNN_DATA_INT32);
    g.pointwise(CUDNN_POINTWISE_SUB, plus, g.scalar(kSq, CUDNN_DATA_INT32), nullptr, shifted,
                "row + Skv - Sq", CUDNN_DATA_INT32);
    row = shifted;
  }
  Desc keep = g.virt(sd, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, col, nullptr, keep, "row >= column",
              CUDNN_DATA_BOOLEAN);
  Desc masked = g.virt(sd);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, s, g.scalar(kNegInf, CUDNN_DATA_FLOAT), keep, masked,
              "select -inf");
  return masked;
}

/// SDPA forward training: O = softmax(scale Q K^T (masked)) V, Stats.
void buildForward(GraphBuilder &g, const AttentionDesc &d) {
  cudnnDataType_t io = ioType(d.dtype);
  Desc q = g.tensor(kQ, dims4(d.b, d.h, d.sq, d.d), asDims(d.q), io, false);
  // K^T: [B, H, D, Skv] over k's memory.
  Desc kt = g.tensor(kK, dims4(d.b, d.h, d.d, d.skv), swapLast(d.k), io, false);
  Desc v = g.tensor(kV, dims4(d.b, d.h, d.skv, d.dv), asDims(d.v), io, false);
  Desc o = g.tensor(kO, dims4(d.b, d.h, d.sq, d.dv), asDims(d.o), io, false);
  Dims rowDims = dims4(d.b, d.h, d.sq, 1);
  Desc stats = g.tensor(kStats, rowDims, contiguous(rowDims), CUDNN_DATA_FLOAT, false);
  Dims sd = dims4(d.b, d.h, d.sq, d.skv);

  Desc s = g.virt(sd);
  g.matmul(q, kt, s, "Q K^T");
  Desc scaled = g.virt(sd);
  g.pointwise(CUDNN_POINTWISE_MUL, s, g.scalar(kScale, CUDNN_DATA_FLOAT), nullptr, scaled,
              "scale");
  Desc logits = d.causal ? causalMask(g, d, scaled) : scaled;
  // Softmax with its stats (max + log of the sum of exponentials).
  Desc max = g.virt(rowDims);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, logits, max, "row max");
  Desc centered = g.virt(sd);
  g.pointwise(CUDNN_POINTWISE_SUB, logits, max, nullptr, centered, "minus max");
  Desc e = g.virt(sd);
  g.pointwise(CUDNN_POINTWISE_EXP, centered, nullptr, nullptr, e, "exp");
  Desc sum = g.virt(rowDims);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum, "row sum");
  Desc logSum = g.virt(rowDims);
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, nullptr, logSum, "log");
  g.pointwise(CUDNN_POINTWISE_ADD, max, logSum, nullptr, stats, "stats");
  // P in the I/O type for the second GEMM (cuDNN's requirement).
  Desc p = g.virt(sd, io);
  g.pointwise(CUDNN_POINTWISE_DIV, e, sum, nullptr, p, "softmax");
  g.matmul(p, v, o, "P V");
}

/// SDPA backward: P recomputed from the stats; dV = P^T dO, dP = dO V^T,
/// dS = P (dP - rowsum(dO O)) scale, dK = dS^T Q, dQ = dS K (accumulated in
/// f32 workspace, then converted).
void buildBackward(GraphBuilder &g, const AttentionDesc &d) {
  cudnnDataType_t io = ioType(d.dtype);
  Desc q = g.tensor(kQ, dims4(d.b, d.h, d.sq, d.d), asDims(d.q), io, false);
  Desc kt = g.tensor(kK, dims4(d.b, d.h, d.d, d.skv), swapLast(d.k), io, false);
  // V^T: [B, H, Dv, Skv] over v's memory.
  Desc vt = g.tensor(kV, dims4(d.b, d.h, d.dv, d.skv), swapLast(d.v), io, false);
  Desc o = g.tensor(kO, dims4(d.b, d.h, d.sq, d.dv), asDims(d.o), io, false);
  Dims rowDims = dims4(d.b, d.h, d.sq, 1);
  Desc stats = g.tensor(kStats, rowDims, contiguous(rowDims), CUDNN_DATA_FLOAT, false);
  Desc dO = g.tensor(kDO, dims4(d.b, d.h, d.sq, d.dv), asDims(d.dO), io, false);
  Desc dq = g.tensor(kDQ, dims4(d.b, d.h, d.sq, d.d), asDims(d.dq), io, false);
  Desc dk = g.tensor(kDK, dims4(d.b, d.h, d.skv, d.d), asDims(d.dk), io, false);
  Desc dv = g.tensor(kDV, dims4(d.b, d.h, d.skv, d.dv), asDims(d.dV), io, false);
  Desc scale = g.scalar(kScale, CUDNN_DATA_FLOAT);
  Dims sd = dims4(d.b, d.h, d.sq, d.skv);
  // Transposed [B, H, Skv, Sq] views of the score matrices.
  Dims tDims = dims4(d.b, d.h, d.skv, d.sq);
  Dims tStrides = {d.h * d.sq * d.skv, d.sq * d.skv, 1, d.skv};

  // delta = rowsum(dO * O), kept in workspace for the whole backward.
  Desc prod = g.virt(dims4(d.b, d.h, d.sq, d.dv));
  g.pointwise(CUDNN_POINTWISE_MUL, dO, o, nullptr, prod, "dO * O");
  Desc rowsum = g.virt(rowDims);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, prod, rowsum, "row sum of dO * O");
  Desc delta = g.tensor(kSoftmaxSum, rowDims, contiguous(rowDims), CUDNN_DATA_FLOAT, false);
  g.pointwise(CUDNN_POINTWISE_MUL, rowsum, g.scalar(kOne, CUDNN_DATA_FLOAT), nullptr, delta,
              "delta (x 1: no dropout)");

  Desc s = g.virt(sd);
  g.matmul(q, kt, s, "Q K^T");
  Desc scaled = g.virt(sd);
  g.pointwise(CUDNN_POINTWISE_MUL, s, scale, nullptr, scaled, "scale");
  Desc centered = g.virt(sd);
  g.pointwise(CUDNN_POINTWISE_SUB, scaled, stats, nullptr, centered, "minus stats");
  Desc logits = d.causal ? causalMask(g, d, centered) : centered;
  Desc p = g.virt(sd);
  g.pointwise(CUDNN_POINTWISE_EXP, logits, nullptr, nullptr, p, "P = exp");

  Desc pt = g.virt(tDims, tStrides, io);
  g.reshape(p, pt, "P^T");
  g.matmul(pt, dO, dv, "dV = P^T dO");

  Desc dp = g.virt(sd);
  g.matmul(dO, vt, dp, "dP = dO V^T");
  Desc dpc = g.virt(sd);
  g.pointwise(CUDNN_POINTWISE_SUB, dp, delta, nullptr, dpc, "dP - delta");
  Desc ds = g.virt(sd);
  g.pointwise(CUDNN_POINTWISE_MUL, dpc, p, nullptr, ds, "dS = P (dP - delta)");
  Desc dss = g.virt(sd);
  g.pointwise(CUDNN_POINTWISE_MUL, ds, scale, nullptr, dss, "dS x scale");

  Desc dst = g.virt(tDims, tStrides, io);
  g.reshape(dss, dst, "dS^T");
  g.matmul(dst, q, dk, "dK = dS^T Q");

  // K itself, [B, H, Skv, D], as a reshape of K^T.
  Desc k = g.virt(dims4(d.b, d.h, d.skv, d.d), asDims(d.k), io);
  g.reshape(kt, k, "K");
  Dims dqDims = dims4(d.b, d.h, d.sq, d.d);
  Desc accum = g.tensor(kDQAccum, dqDims, contiguous(dqDims), CUDNN_DATA_FLOAT, false);
  g.matmul(dss, k, accum, "dQ = dS K (f32)");
  g.pointwise(CUDNN_POINTWISE_IDENTITY, accum, nullptr, nullptr, dq, "dQ");
}

void buildGraph(GraphBuilder &g, const AttentionDesc &d) {
  if (d.backward)
    buildBackward(g, d);
  else
    buildForward(g, d);
}

/// Bytes of the backward's f32 workspace tensors (delta, dQ accumulator),
/// each rounded up to 256.
size_t softmaxSumBytes(const AttentionDesc &d) {
  return (size_t(d.b * d.h * d.sq) * 4 + 255) / 256 * 256;
}
size_t dqAccumBytes(const AttentionDesc &d) {
  return (size_t(d.b * d.h * d.sq * d.d) * 4 + 255) / 256 * 256;
}

} // namespace

Error checkAttentionGraph(const Cudnn &lib, const AttentionDesc &desc, AttentionGraphCheck *out) {
  if (Error e = validateAttention(desc))
    return e;
  AttentionGraphCheck check;
  Error result;
  {
    GraphBuilder g(lib);
    buildGraph(g, desc);
    check.tensors = g.tensors();
    check.operations = g.operations();
    Desc graph = g.error() ? nullptr : g.graph(nullptr);
    if (g.error()) {
      result = g.error().withContext(desc.str());
    } else {
      check.graphFinalized = true;
      // The heuristic, without a device: newer cuDNN may answer, older ones
      // (and any without a GPU to query) refuse; that is how far it goes.
      Desc heur = g.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "engine heuristic");
      cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
      g.set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph,
            "ENGINEHEUR_OPERATION_GRAPH");
      g.set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "ENGINEHEUR_MODE");
      g.finalize(heur, "engine heuristic (mode A)");
      int64_t count = 0;
      if (!g.error()) {
        cudnnStatus_t s = lib.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                                       nullptr);
        if (s != CUDNN_STATUS_SUCCESS)
          check.stoppedAt = "the heuristic's results: " + lib.describe(s);
        else
          check.engineConfigs = size_t(std::max<int64_t>(count, 0));
      } else {
        check.stoppedAt = g.error().message();
      }
      // An execution plan of the first configuration, without a handle:
      // the step that compiles the engine for a GPU.
      if (check.stoppedAt.empty() && check.engineConfigs == 0)
        check.stoppedAt = "the heuristic, which offers no engine configuration without a GPU";
      if (check.stoppedAt.empty()) {
        std::vector<Desc> cfgs;
        for (size_t i = 0; i < check.engineConfigs; ++i)
          cfgs.push_back(g.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config"));
        int64_t got = 0;
        cudnnStatus_t s = g.error() ? CUDNN_STATUS_BAD_PARAM
                                    : lib.cudnnBackendGetAttribute(
                                          heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(cfgs.size()), &got,
                                          cfgs.data());
        if (s != CUDNN_STATUS_SUCCESS || got < 1) {
          check.stoppedAt = "fetching the engine configurations: " + lib.describe(s);
        } else {
          Desc plan = g.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
          g.set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                &cfgs[0], "EXECUTION_PLAN_ENGINE_CONFIG");
          if (!g.error()) {
            s = lib.cudnnBackendFinalize(plan);
            if (s == CUDNN_STATUS_SUCCESS)
              check.planFinalized = true;
            else
              check.stoppedAt = "the execution plan (no handle): " + lib.describe(s);
          } else {
            check.stoppedAt = g.error().message();
          }
        }
      }
    }
  }
  if (out)
    *out = check;
  return result;
}

//===----------------------------------------------------------------------===//
// AttentionEngine
//===----------------------------------------------------------------------===//

/// Everything cudnnBackendExecute needs for one description.
struct AttentionEngine::Plan {
  const Cudnn *lib = nullptr;
  std::vector<Desc> owned; // tensors, operations, graph, heuristic, configs, plan
  Desc plan = nullptr;
  AttentionDesc desc;
  size_t cudnnWorkspace = 0; // what the execution plan asks for
  size_t extraBytes = 0;     // backward: delta and the dQ accumulator
  // The by-value operands (the variant pack points at them).
  float scale = 1.0f, negInf = -std::numeric_limits<float>::infinity(), one = 1.0f;
  int32_t skv = 0, sq = 0;
  std::string info;

  size_t workspaceNeeded() const { return (cudnnWorkspace + 255) / 256 * 256 + extraBytes; }
  ~Plan() {
    if (!lib)
      return;
    for (auto it = owned.rbegin(); it != owned.rend(); ++it)
      lib->cudnnBackendDestroyDescriptor(*it);
  }
};

Expected<std::unique_ptr<AttentionEngine>> AttentionEngine::create(Device &device) {
  Expected<const Cudnn *> lib = loadCudnn();
  if (!lib)
    return lib.takeError();
  if (Error e = device.makeCurrent())
    return e;
  std::unique_ptr<AttentionEngine> engine(new AttentionEngine());
  engine->device_ = &device;
  engine->lib_ = *lib;
  cudnnHandle_t handle = nullptr;
  if (Error e = (*lib)->check((*lib)->cudnnCreate(&handle), "cudnnCreate"))
    return e.withContext(cudnnPath(**lib));
  engine->handle_ = handle;
  if (Error e = (*lib)->check((*lib)->cudnnSetStream(handle, reinterpret_cast<cudaStream_t>(device.stream())),
                              "cudnnSetStream"))
    return e;
  return engine;
}

AttentionEngine::~AttentionEngine() {
  std::lock_guard<std::mutex> lock(mutex_);
  plans_.clear();
  if (handle_) {
    (void)device_->makeCurrent();
    lib_->cudnnDestroy(static_cast<cudnnHandle_t>(handle_));
  }
}

Expected<AttentionEngine::Plan *> AttentionEngine::planFor(const AttentionDesc &desc) {
  std::string key = desc.key();
  auto it = plans_.find(key);
  if (it != plans_.end())
    return it->second.get();
  const Cudnn &lib = *lib_;
  const DeviceInfo &info = device_->info();
  if (Error e = checkAttentionSupport(desc, lib.version, info.ccMajor, info.ccMinor))
    return e;
  auto plan = std::make_unique<Plan>();
  plan->lib = &lib;
  plan->desc = desc;
  plan->scale = desc.scale;
  plan->skv = int32_t(desc.skv);
  plan->sq = int32_t(desc.sq);
  GraphBuilder g(lib);
  buildGraph(g, desc);
  Desc graph = g.graph(handle_);
  if (g.error())
    return g.error().withContext(desc.str());
  auto configs = [&](cudnnBackendHeurMode_t mode, std::vector<Desc> &out) -> Error {
    Desc heur = g.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "engine heuristic");
    g.set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph,
          "ENGINEHEUR_OPERATION_GRAPH");
    g.set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "ENGINEHEUR_MODE");
    g.finalize(heur, "engine heuristic");
    if (g.error())
      return g.error();
    int64_t count = 0;
    if (Error e = lib.check(lib.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                                         nullptr),
                            "cuDNN: the heuristic's result count"))
      return e;
    std::vector<Desc> cfgs;
    for (int64_t i = 0; i < count; ++i)
      cfgs.push_back(g.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config"));
    if (g.error())
      return g.error();
    int64_t got = 0;
    if (count > 0)
      if (Error e = lib.check(lib.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                                           &got, cfgs.data()),
                              "cuDNN: the heuristic's results"))
        return e;
    cfgs.resize(size_t(std::max<int64_t>(0, std::min(got, count))));
    out.insert(out.end(), cfgs.begin(), cfgs.end());
    return Error::success();
  };
  std::vector<Desc> cfgs;
  if (Error e = configs(CUDNN_HEUR_MODE_A, cfgs))
    return e.withContext(desc.str());
  if (Error e = configs(CUDNN_HEUR_MODE_FALLBACK, cfgs))
    return e.withContext(desc.str());
  // The first configuration cuDNN can build an execution plan for.
  std::string refusals;
  cudnnHandle_t handle = static_cast<cudnnHandle_t>(handle_);
  for (size_t i = 0; i < cfgs.size() && !plan->plan; ++i) {
    Desc p = nullptr;
    if (lib.cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &p) !=
        CUDNN_STATUS_SUCCESS)
      continue;
    cudnnStatus_t s = lib.cudnnBackendSetAttribute(p, kPlanHandle, CUDNN_TYPE_HANDLE, 1, &handle);
    if (s == CUDNN_STATUS_SUCCESS)
      s = lib.cudnnBackendSetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]);
    if (s == CUDNN_STATUS_SUCCESS)
      s = lib.cudnnBackendFinalize(p);
    if (s != CUDNN_STATUS_SUCCESS) {
      if (refusals.size() < 400)
        refusals += (refusals.empty() ? "" : "; ") + std::string("config ") + std::to_string(i) +
                    ": " + lib.describe(s);
      lib.cudnnBackendDestroyDescriptor(p);
      continue;
    }
    int64_t ws = 0, n = 0;
    if (lib.cudnnBackendGetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                     1, &n, &ws) != CUDNN_STATUS_SUCCESS ||
        ws < 0) {
      lib.cudnnBackendDestroyDescriptor(p);
      continue;
    }
    plan->plan = p;
    plan->cudnnWorkspace = size_t(ws);
    // Which engine (for logs): the config's engine and its global index.
    int64_t engineIndex = -1;
    Desc engine = nullptr;
    if (lib.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) ==
        CUDNN_STATUS_SUCCESS) {
      int64_t got = 0;
      if (lib.cudnnBackendGetAttribute(cfgs[i], CUDNN_ATTR_ENGINECFG_ENGINE,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &engine) ==
          CUDNN_STATUS_SUCCESS)
        lib.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
                                     &got, &engineIndex);
      lib.cudnnBackendDestroyDescriptor(engine);
    }
    plan->info = "engine " + std::to_string(engineIndex) + " (config " + std::to_string(i) +
                 " of " + std::to_string(cfgs.size()) + "), workspace " + std::to_string(ws) +
                 " bytes";
  }
  if (!plan->plan)
    return Error::make(desc.str() + ": cuDNN " + std::to_string(lib.version) + " has no engine for it on " +
                       info.name + " (" + std::to_string(cfgs.size()) + " configurations offered" +
                       (refusals.empty() ? "" : ": " + refusals) + ")");
  if (desc.backward)
    plan->extraBytes = softmaxSumBytes(desc) + dqAccumBytes(desc);
  plan->owned = g.release();
  plan->owned.push_back(plan->plan);
  Plan *raw = plan.get();
  plans_.emplace(key, std::move(plan));
  return raw;
}

Error AttentionEngine::prepare(const AttentionDesc &desc) {
  if (Error e = validateAttention(desc))
    return e;
  std::lock_guard<std::mutex> lock(mutex_);
  if (Error e = device_->makeCurrent())
    return e;
  Expected<Plan *> plan = planFor(desc);
  if (!plan)
    return plan.takeError();
  lastPlanInfo_ = (*plan)->info;
  size_t need = (*plan)->workspaceNeeded();
  if (need > workspace_.size()) {
    // Work queued with the old workspace may still run.
    if (Error e = device_->synchronize())
      return e;
    workspace_.reset();
    Expected<DeviceBuffer> ws = device_->allocate(need);
    if (!ws)
      return ws.takeError().withContext("cuDNN attention workspace of " + std::to_string(need) +
                                        " bytes");
    workspace_ = ws.take();
  }
  return Error::success();
}

Error AttentionEngine::run(const AttentionDesc &desc, const AttentionOperands &ops) {
  if (Error e = validateAttention(desc, ops))
    return e;
  if (Error e = prepare(desc))
    return e;
  std::lock_guard<std::mutex> lock(mutex_);
  const Cudnn &lib = *lib_;
  Plan &plan = *plans_.at(desc.key());
  lastPlanInfo_ = plan.info;
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void *>(static_cast<uintptr_t>(p)); };
  std::vector<int64_t> uids = {kQ, kK, kV, kO, kStats, kScale};
  std::vector<void *> data = {ptr(ops.q), ptr(ops.k), ptr(ops.v), ptr(ops.o), ptr(ops.lse),
                              &plan.scale};
  if (desc.causal) {
    uids.push_back(kNegInf), data.push_back(&plan.negInf);
    if (desc.sq != desc.skv) {
      uids.insert(uids.end(), {kSkv, kSq});
      data.insert(data.end(), {&plan.skv, &plan.sq});
    }
  }
  CUdeviceptr ws = workspace_.get();
  size_t cudnnBytes = (plan.cudnnWorkspace + 255) / 256 * 256;
  if (desc.backward) {
    CUdeviceptr delta = ws + cudnnBytes, accum = delta + softmaxSumBytes(desc);
    uids.insert(uids.end(), {kDO, kDQ, kDK, kDV, kSoftmaxSum, kDQAccum, kOne});
    data.insert(data.end(), {ptr(ops.dO), ptr(ops.dq), ptr(ops.dk), ptr(ops.dV), ptr(delta),
                             ptr(accum), &plan.one});
    // Before cuDNN 9.6 the accumulator had to start at zero
    // (cudnn-frontend memsets it); ordered on the stream, capturable.
    if (lib.version < 90600)
      if (Error e = device_->memset(accum, 0, dqAccumBytes(desc)))
        return e.withContext(desc.str());
  }
  GraphBuilder g(lib); // owns the variant pack
  Desc pack = g.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
  void *wsPtr = ptr(ws);
  g.set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, int64_t(uids.size()), uids.data(),
        "VARIANT_PACK_UNIQUE_IDS");
  g.set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, int64_t(data.size()),
        data.data(), "VARIANT_PACK_DATA_POINTERS");
  g.set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &wsPtr,
        "VARIANT_PACK_WORKSPACE");
  g.finalize(pack, "variant pack");
  if (g.error())
    return g.error().withContext(desc.str());
  if (Error e = device_->makeCurrent())
    return e;
  if (Error e = lib.check(lib.cudnnBackendExecute(static_cast<cudnnHandle_t>(handle_), plan.plan, pack),
                          "cudnnBackendExecute"))
    return e.withContext(desc.str());
  return Error::success();
}

#else // !LPC_HAVE_CUDNN

// Built without cuDNN's headers (cudnn_graph.h): everything above that
// needs no library works; loading cuDNN says why it cannot.
class Cudnn {
public:
  std::string path;
  size_t version = 0;
};

static const char kNoCudnnHeaders[] =
    "this runtime was built without cuDNN's headers (cudnn_graph.h was not found when it "
    "was configured), so it cannot run the artifact's attention steps: install cuDNN 9's "
    "development files and reconfigure (or pass -DLPC_CUDNN_INCLUDE_DIR=DIR)";

Expected<const Cudnn *> loadCudnn() { return Error::make(kNoCudnnHeaders); }
size_t cudnnVersion(const Cudnn &lib) { return lib.version; }
const std::string &cudnnPath(const Cudnn &lib) { return lib.path; }
Error checkAttentionGraph(const Cudnn &, const AttentionDesc &, AttentionGraphCheck *) {
  return Error::make(kNoCudnnHeaders);
}

struct AttentionEngine::Plan {};
Expected<std::unique_ptr<AttentionEngine>> AttentionEngine::create(Device &) {
  return Error::make(kNoCudnnHeaders);
}
AttentionEngine::~AttentionEngine() = default;
Expected<AttentionEngine::Plan *> AttentionEngine::planFor(const AttentionDesc &) {
  return Error::make(kNoCudnnHeaders);
}
Error AttentionEngine::prepare(const AttentionDesc &) { return Error::make(kNoCudnnHeaders); }
Error AttentionEngine::run(const AttentionDesc &, const AttentionOperands &) {
  return Error::make(kNoCudnnHeaders);
}

#endif // LPC_HAVE_CUDNN

size_t AttentionEngine::cachedPlans() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return plans_.size();
}

size_t AttentionEngine::workspaceBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return workspace_.size();
}

std::string AttentionEngine::lastPlanInfo() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lastPlanInfo_;
}

} // namespace cuda
} // namespace rt
} // namespace lpc
