//===- Gemm.cpp - GEMMs through cuBLASLt, opened with dlopen ----------------===//

#include "lpc/Runtime/CudaGemm.h"
#include "lpc/Runtime/CudaAllocator.h"
#include "OpenLibrary.h"

#include <cublasLt.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
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

const char *gemmEpilogueName(GemmEpilogue epilogue) {
  switch (epilogue) {
  case GemmEpilogue::None:
    return "none";
  case GemmEpilogue::Bias:
    return "bias";
  case GemmEpilogue::GeluTanh:
    return "gelu";
  case GemmEpilogue::BiasGeluTanh:
    return "bias+gelu";
  }
  return "?";
}

static bool isFP8Type(DType t) {
  return t == DType::F8_E4M3 || t == DType::F8_E5M2;
}

bool GemmDesc::isFP8() const { return isFP8Type(a) || isFP8Type(b); }

static std::string lower(const char *s) {
  std::string r(s);
  for (char &c : r)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string GemmDesc::str() const {
  std::string s = lower(dtypeName(a)) + " x " + lower(dtypeName(b)) + " -> " +
                  lower(dtypeName(c)) + ", ";
  if (batch != 1)
    s += std::to_string(batch) + " x ";
  s += std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
       " (MxNxK), " + (transA ? "A^T" : "A") + ", " + (transB ? "B^T" : "B");
  if (broadcastB)
    s += " (broadcast)";
  if (epilogue != GemmEpilogue::None)
    s += std::string(", ") + gemmEpilogueName(epilogue);
  if (tf32)
    s += ", tf32";
  if (fastAccum)
    s += ", fast accumulation";
  return s;
}

DType gemmBiasType(const GemmDesc &desc) {
  // cuBLASLt's FP8 table: bias is BF16 when D is F32 or FP8, else D's type.
  if (desc.isFP8() && (desc.c == DType::F32 || isFP8Type(desc.c)))
    return DType::BF16;
  return desc.c;
}

size_t gemmBytesA(const GemmDesc &d) {
  return size_t(d.batch) * size_t(d.m) * size_t(d.k) * dtypeSize(d.a);
}
size_t gemmBytesB(const GemmDesc &d) {
  return size_t(d.broadcastB ? 1 : d.batch) * size_t(d.k) * size_t(d.n) *
         dtypeSize(d.b);
}
size_t gemmBytesC(const GemmDesc &d) {
  return size_t(d.batch) * size_t(d.m) * size_t(d.n) * dtypeSize(d.c);
}

static Error gemmError(const GemmDesc &desc, const std::string &problem) {
  return Error::make("GEMM " + desc.str() + ": " + problem);
}

Error validateGemm(const GemmDesc &d) {
  if (d.m < 1 || d.n < 1 || d.k < 1 || d.batch < 1)
    return gemmError(d, "M, N, K and batch must be at least 1");
  // cuBLASLt takes rows/columns as uint64 but leading dimensions and batch
  // strides as int64 and the batch count as int32.
  const int64_t kMaxDim = int64_t(1) << 31;
  if (d.m >= kMaxDim || d.n >= kMaxDim || d.k >= kMaxDim || d.batch >= kMaxDim)
    return gemmError(d, "a dimension is 2^31 or more");
  if (double(d.m) * double(d.n) * double(d.batch) > 9.0e18 ||
      double(d.m) * double(d.k) * double(d.batch) > 9.0e18 ||
      double(d.n) * double(d.k) * double(d.batch) > 9.0e18)
    return gemmError(d, "operand element count overflows int64");

  auto name = [](DType t) { return lower(dtypeName(t)); };
  if (d.isFP8()) {
    if (!isFP8Type(d.a) || !isFP8Type(d.b))
      return gemmError(d, "FP8 GEMMs need both A and B in FP8 (got " +
                              name(d.a) + " x " + name(d.b) + ")");
    if (d.a == DType::F8_E5M2 && d.b == DType::F8_E5M2)
      return gemmError(d, "E5M2 x E5M2 is not supported by cuBLASLt (use "
                          "E4M3 for at least one operand)");
    if (d.transA || !d.transB)
      return gemmError(d, "FP8 GEMMs need cuBLASLt's TN layout: A [M, K] "
                          "untransposed and B transposed, [N, K]");
    // cuBLASLt wants every dimension 16-byte aligned for FP8 (its heuristic
    // rejects M % 16 != 0 even though M is not a leading dimension).
    if (d.m % 16 || d.n % 16 || d.k % 16)
      return gemmError(d, "FP8 GEMMs need M, N and K multiples of 16 (got M = " +
                              std::to_string(d.m) + ", N = " +
                              std::to_string(d.n) + ", K = " +
                              std::to_string(d.k) + ")");
    bool anyE5M2 = d.a == DType::F8_E5M2 || d.b == DType::F8_E5M2;
    if (d.c == DType::F8_E5M2 && !anyE5M2)
      return gemmError(d, "an E5M2 output needs an E5M2 operand "
                          "(E4M3 x E4M3 gives f32, bf16, f16 or e4m3)");
    if (d.c != DType::F32 && d.c != DType::BF16 && d.c != DType::F16 &&
        !isFP8Type(d.c))
      return gemmError(d, "FP8 GEMMs write f32, bf16, f16, f8_e4m3 or f8_e5m2");
    if (d.tf32)
      return gemmError(d, "tf32 applies to f32 GEMMs only");
    return Error::success();
  }

  if (d.fastAccum)
    return gemmError(d, "fast accumulation applies to FP8 GEMMs only");
  if (d.a != d.b)
    return gemmError(d, "A and B must have the same type (" + name(d.a) +
                            " x " + name(d.b) + ")");
  switch (d.a) {
  case DType::F32:
    if (d.c != DType::F32)
      return gemmError(d, "f32 GEMMs write f32");
    break;
  case DType::BF16:
  case DType::F16:
    if (d.c != d.a && d.c != DType::F32)
      return gemmError(d, name(d.a) + " GEMMs write " + name(d.a) + " or f32");
    break;
  default:
    return gemmError(d, "unsupported operand type " + name(d.a) +
                            " (f32, bf16, f16, f8_e4m3, f8_e5m2)");
  }
  if (d.tf32 && d.a != DType::F32)
    return gemmError(d, "tf32 applies to f32 GEMMs only");
  return Error::success();
}

static std::string hexPtr(CUdeviceptr p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(p));
  return buf;
}

Error validateGemm(const GemmDesc &d, const GemmOperands &ops) {
  if (Error e = validateGemm(d))
    return e;
  struct Ptr {
    const char *name;
    CUdeviceptr p;
    size_t align;
  };
  size_t fp8Align = 16;
  Ptr required[] = {
      {"A", ops.a, d.isFP8() ? fp8Align : dtypeSize(d.a)},
      {"B", ops.b, d.isFP8() ? fp8Align : dtypeSize(d.b)},
      {"C", ops.c, d.isFP8() ? fp8Align : dtypeSize(d.c)},
  };
  for (const Ptr &p : required) {
    if (!p.p)
      return gemmError(d, std::string(p.name) + " is a null pointer");
    if (p.p % p.align)
      return gemmError(d, std::string(p.name) + " (" + hexPtr(p.p) +
                              ") is not " + std::to_string(p.align) +
                              "-byte aligned");
  }
  if (d.hasBias() != (ops.bias != 0))
    return gemmError(d, d.hasBias() ? "the epilogue needs a bias pointer"
                                    : "a bias pointer without a bias epilogue");
  if (ops.bias && ops.bias % (d.isFP8() ? fp8Align : dtypeSize(gemmBiasType(d))))
    return gemmError(d, "bias (" + hexPtr(ops.bias) + ") is misaligned");
  if (!d.isFP8()) {
    if (ops.aScale || ops.bScale || ops.cScale || ops.amax)
      return gemmError(d, "scale and amax pointers apply to FP8 GEMMs only");
  } else {
    if (isFP8Type(d.c) && !ops.cScale)
      return gemmError(d, "an FP8 output needs cScale (its quantization scale)");
    if (!isFP8Type(d.c) && ops.cScale)
      return gemmError(d, "cScale applies to FP8 outputs only");
    if (ops.amax && !isFP8Type(d.c))
      return gemmError(d, "amax is computed for FP8 outputs only");
    for (CUdeviceptr p : {ops.aScale, ops.bScale, ops.cScale, ops.amax})
      if (p % kScaleAlign)
        return gemmError(d, "scale/amax pointer " + hexPtr(p) + " is not " +
                                std::to_string(kScaleAlign) +
                                "-byte aligned (cuBLASLt refuses it)");
  }
  return Error::success();
}

//===----------------------------------------------------------------------===//
// cuBLASLt, through dlopen
//===----------------------------------------------------------------------===//

#define LPC_CUBLASLT_FUNCTIONS(X)                                              \
  X(cublasLtGetVersion)                                                        \
  X(cublasLtGetStatusName)                                                     \
  X(cublasLtGetStatusString)                                                   \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmulAlgoConfigGetAttribute)                                      \
  X(cublasLtMatmul)

/// The library's entry points; types from cublasLt.h (decltype does not
/// reference the functions, so nothing links against libcublasLt).
class CublasLt {
public:
#define LPC_CUBLASLT_DECLARE(fn) decltype(&::fn) fn = nullptr;
  LPC_CUBLASLT_FUNCTIONS(LPC_CUBLASLT_DECLARE)
#undef LPC_CUBLASLT_DECLARE
  void *handle = nullptr;
  std::string path;
  size_t version = 0;

  std::string describe(cublasStatus_t s) const {
    std::string text = cublasLtGetStatusName(s);
    const char *desc = cublasLtGetStatusString(s);
    if (desc && *desc)
      text += std::string(" (") + desc + ")";
    return text;
  }
  Error check(cublasStatus_t s, const char *call) const {
    if (s == CUBLAS_STATUS_SUCCESS)
      return Error::success();
    return Error::make(std::string(call) + " failed: " + describe(s));
  }
};

static Expected<std::unique_ptr<CublasLt>> openCublasLt() {
  Expected<OpenedLibrary> opened = openCudaLibrary(
      "LPC_CUBLASLT_LIBRARY", {"libcublasLt.so.13", "libcublasLt.so"},
      LPC_CUDA_TOOLKIT_LIBDIR, "cuBLASLt",
      "install the CUDA toolkit's cuBLAS or set LPC_CUBLASLT_LIBRARY");
  if (!opened)
    return opened.takeError();
  void *handle = opened->handle;
  std::string path = opened->path;
  auto lib = std::make_unique<CublasLt>();
  lib->handle = handle;
  lib->path = path;
#define LPC_CUBLASLT_RESOLVE(fn)                                               \
  lib->fn = reinterpret_cast<decltype(&::fn)>(::dlsym(handle, #fn));           \
  if (!lib->fn)                                                                \
    return Error::make(path + ": no symbol " #fn " (cuBLASLt too old?)");
  LPC_CUBLASLT_FUNCTIONS(LPC_CUBLASLT_RESOLVE)
#undef LPC_CUBLASLT_RESOLVE
  lib->version = lib->cublasLtGetVersion();
  // FP8 matmuls, FAST_ACCUM and the scale pointers need cuBLASLt 12.
  if (lib->version < 120000)
    return Error::make(path + ": cuBLASLt " + std::to_string(lib->version) +
                       " is too old (lpc needs 12.0 or newer)");
  return lib;
}

Expected<const CublasLt *> loadCublasLt() {
  struct State {
    std::unique_ptr<CublasLt> lib;
    Error error;
  };
  // Leaked on purpose, as the driver: used until the process ends.
  static State *state = [] {
    auto *s = new State();
    Expected<std::unique_ptr<CublasLt>> lib = openCublasLt();
    if (lib)
      s->lib = lib.take();
    else
      s->error = lib.takeError();
    return s;
  }();
  if (!state->lib)
    return Error::make(state->error.message());
  return static_cast<const CublasLt *>(state->lib.get());
}

size_t cublasLtVersion(const CublasLt &lib) { return lib.version; }
const std::string &cublasLtPath(const CublasLt &lib) { return lib.path; }

//===----------------------------------------------------------------------===//
// Descriptors
//===----------------------------------------------------------------------===//

static cudaDataType_t cudaType(DType t) {
  switch (t) {
  case DType::F32:
    return CUDA_R_32F;
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  case DType::F8_E4M3:
    return CUDA_R_8F_E4M3;
  case DType::F8_E5M2:
    return CUDA_R_8F_E5M2;
  default:
    return CUDA_R_32F; // rejected by validateGemm before we get here
  }
}

/// cuBLASLt's C type: D's, except BF16 for an FP8 D (C is not read: beta 0).
static DType cTypeOf(const GemmDesc &d) {
  return isFP8Type(d.c) ? DType::BF16 : d.c;
}

/// Everything cublasLtMatmul needs for one description.
struct GemmEngine::Plan {
  const CublasLt *lib = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulAlgo_t algo;
  size_t workspaceBytes = 0;
  std::string info;

  ~Plan() {
    if (!lib)
      return;
    if (pref)
      lib->cublasLtMatmulPreferenceDestroy(pref);
    for (cublasLtMatrixLayout_t l : {a, b, c, d})
      if (l)
        lib->cublasLtMatrixLayoutDestroy(l);
    if (op)
      lib->cublasLtMatmulDescDestroy(op);
  }
};

/// One attribute of a cuBLASLt descriptor through its Set*Attribute entry
/// point; `api` and `what` name the call and the attribute in the error.
template <typename Obj, typename Attr, typename T>
static Error setAttribute(const CublasLt &lib,
                          cublasStatus_t (*set)(Obj, Attr, const void *, size_t),
                          const char *api, Obj obj, Attr attr, const T &value,
                          const char *what) {
  cublasStatus_t s = set(obj, attr, &value, sizeof(T));
  if (s != CUBLAS_STATUS_SUCCESS)
    return Error::make(std::string(api) + "(" + what +
                       ") failed: " + lib.describe(s));
  return Error::success();
}

template <typename T>
static Error setDesc(const CublasLt &lib, cublasLtMatmulDesc_t op,
                     cublasLtMatmulDescAttributes_t attr, const T &value,
                     const char *what) {
  return setAttribute(lib, lib.cublasLtMatmulDescSetAttribute,
                      "cublasLtMatmulDescSetAttribute", op, attr, value, what);
}

template <typename T>
static Error setLayout(const CublasLt &lib, cublasLtMatrixLayout_t l,
                       cublasLtMatrixLayoutAttribute_t attr, const T &value,
                       const char *what) {
  return setAttribute(lib, lib.cublasLtMatrixLayoutSetAttribute,
                      "cublasLtMatrixLayoutSetAttribute", l, attr, value, what);
}

template <typename T>
static Error setPref(const CublasLt &lib, cublasLtMatmulPreference_t p,
                     cublasLtMatmulPreferenceAttributes_t attr, const T &value,
                     const char *what) {
  return setAttribute(lib, lib.cublasLtMatmulPreferenceSetAttribute,
                      "cublasLtMatmulPreferenceSetAttribute", p, attr, value,
                      what);
}

static const void *asPtr(CUdeviceptr p) {
  return reinterpret_cast<const void *>(static_cast<uintptr_t>(p));
}

/// The pointer attributes of one call (they change from call to call; the
/// heuristic also looks at them, so they are set before it runs too).
static Error setPointers(const CublasLt &lib, cublasLtMatmulDesc_t op,
                         const GemmDesc &d, const GemmOperands &ops) {
  if (d.hasBias())
    if (Error e = setDesc(lib, op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                          asPtr(ops.bias), "BIAS_POINTER"))
      return e;
  if (!d.isFP8())
    return Error::success();
  // Operands are swapped for cuBLASLt (see the header): its A is our B.
  if (Error e = setDesc(lib, op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                        asPtr(ops.bScale), "A_SCALE_POINTER"))
    return e;
  if (Error e = setDesc(lib, op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                        asPtr(ops.aScale), "B_SCALE_POINTER"))
    return e;
  if (isFP8Type(d.c)) {
    if (Error e = setDesc(lib, op, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                          asPtr(ops.cScale), "D_SCALE_POINTER"))
      return e;
    if (Error e = setDesc(lib, op, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER,
                          asPtr(ops.amax), "AMAX_D_POINTER"))
      return e;
  }
  return Error::success();
}

/// Largest power of two (up to 256, cuBLASLt's default assumption) dividing p.
static uint32_t alignmentOf(CUdeviceptr p) {
  uint32_t a = 256;
  while (a > 1 && p % a)
    a /= 2;
  return a;
}

static Error buildPlan(const CublasLt &lib, const GemmDesc &d,
                       const GemmOperands &ops, size_t workspaceBytes,
                       GemmEngine::Plan &plan) {
  plan.lib = &lib;
  cublasComputeType_t compute =
      d.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (Error e = lib.check(lib.cublasLtMatmulDescCreate(&plan.op, compute, CUDA_R_32F),
                          "cublasLtMatmulDescCreate"))
    return e;

  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: our B
  // is cuBLASLt's A. A row-major [r, c] buffer is a column-major c x r
  // matrix with leading dimension c.
  int32_t opA = d.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int32_t opB = d.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (Error e = setDesc(lib, plan.op, CUBLASLT_MATMUL_DESC_TRANSA, opA, "TRANSA"))
    return e;
  if (Error e = setDesc(lib, plan.op, CUBLASLT_MATMUL_DESC_TRANSB, opB, "TRANSB"))
    return e;

  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  switch (d.epilogue) {
  case GemmEpilogue::None:
    break;
  case GemmEpilogue::Bias:
    epilogue = CUBLASLT_EPILOGUE_BIAS;
    break;
  case GemmEpilogue::GeluTanh:
    epilogue = CUBLASLT_EPILOGUE_GELU;
    break;
  case GemmEpilogue::BiasGeluTanh:
    epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
    break;
  }
  if (Error e = setDesc(lib, plan.op, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue,
                        "EPILOGUE"))
    return e;
  if (d.hasBias()) {
    int32_t biasType = cudaType(gemmBiasType(d));
    if (Error e = setDesc(lib, plan.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                          biasType, "BIAS_DATA_TYPE"))
      return e;
  }
  if (d.isFP8()) {
    int8_t fast = d.fastAccum ? 1 : 0;
    if (Error e = setDesc(lib, plan.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast,
                          "FAST_ACCUM"))
      return e;
  }
  if (Error e = setPointers(lib, plan.op, d, ops))
    return e;

  // Layouts (column-major view).
  uint64_t aRows = d.transB ? d.k : d.n, aCols = d.transB ? d.n : d.k;
  uint64_t bRows = d.transA ? d.m : d.k, bCols = d.transA ? d.k : d.m;
  struct LayoutSpec {
    cublasLtMatrixLayout_t *out;
    DType type;
    uint64_t rows, cols;
    int64_t batchStride;
    const char *name;
  } specs[] = {
      {&plan.a, d.b, aRows, aCols, d.broadcastB ? 0 : d.n * d.k, "A"},
      {&plan.b, d.a, bRows, bCols, d.m * d.k, "B"},
      {&plan.c, cTypeOf(d), uint64_t(d.n), uint64_t(d.m), d.m * d.n, "C"},
      {&plan.d, d.c, uint64_t(d.n), uint64_t(d.m), d.m * d.n, "D"},
  };
  for (const LayoutSpec &s : specs) {
    if (Error e = lib.check(lib.cublasLtMatrixLayoutCreate(
                                s.out, cudaType(s.type), s.rows, s.cols,
                                static_cast<int64_t>(s.rows)),
                            "cublasLtMatrixLayoutCreate"))
      return e.withContext(s.name);
    if (d.batch > 1) {
      int32_t count = static_cast<int32_t>(d.batch);
      if (Error e = setLayout(lib, *s.out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                              count, "BATCH_COUNT"))
        return e;
      if (Error e = setLayout(lib, *s.out,
                              CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                              s.batchStride, "STRIDED_BATCH_OFFSET"))
        return e;
    }
  }

  if (Error e = lib.check(lib.cublasLtMatmulPreferenceCreate(&plan.pref),
                          "cublasLtMatmulPreferenceCreate"))
    return e;
  uint64_t ws = workspaceBytes;
  if (Error e = setPref(lib, plan.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                        ws, "MAX_WORKSPACE_BYTES"))
    return e;
  // The heuristic assumes 256-byte aligned buffers unless told otherwise.
  CUdeviceptr cPtr = d.isFP8() ? 0 : ops.c;
  struct {
    cublasLtMatmulPreferenceAttributes_t attr;
    CUdeviceptr p;
    const char *name;
  } aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, ops.b, "MIN_ALIGNMENT_A"},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, ops.a, "MIN_ALIGNMENT_B"},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, cPtr, "MIN_ALIGNMENT_C"},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, ops.c, "MIN_ALIGNMENT_D"},
  };
  for (const auto &a : aligns) {
    uint32_t bytes = alignmentOf(a.p);
    if (Error e = setPref(lib, plan.pref, a.attr, bytes, a.name))
      return e;
  }
  return Error::success();
}

/// A fake, well-aligned device address for descriptor checks.
static constexpr CUdeviceptr kPlaceholder = CUdeviceptr(1) << 40;

Error checkGemmDescriptors(const CublasLt &lib, const GemmDesc &desc) {
  GemmOperands ops;
  ops.a = ops.b = ops.c = kPlaceholder;
  if (desc.hasBias())
    ops.bias = kPlaceholder;
  if (desc.isFP8()) {
    ops.aScale = ops.bScale = kPlaceholder;
    if (isFP8Type(desc.c))
      ops.cScale = ops.amax = kPlaceholder;
  }
  if (Error e = validateGemm(desc, ops))
    return e;
  GemmEngine::Plan plan;
  if (Error e = buildPlan(lib, desc, ops, GemmEngine::kDefaultWorkspaceBytes, plan))
    return e.withContext("GEMM " + desc.str());
  return Error::success();
}

//===----------------------------------------------------------------------===//
// GemmEngine
//===----------------------------------------------------------------------===//

Error checkCublasLtDriver(size_t cublasVersion, int driverVersion) {
  size_t major = cublasVersion / 10000;
  int needed = int(major) * 1000;
  if (driverVersion >= needed)
    return Error::success();
  // The first driver branch of each CUDA major version.
  const char *branch = major == 12 ? " (R525 or later)" : major == 13 ? " (R580 or later)" : "";
  return Error::make("cuBLASLt " + std::to_string(major) + "." +
                     std::to_string(cublasVersion / 100 % 100) + "." +
                     std::to_string(cublasVersion % 100) + " needs an NVIDIA driver for " +
                     formatCudaVersion(needed) + " or newer" + branch +
                     "; this driver is for " + formatCudaVersion(driverVersion) +
                     " (cuDriverGetVersion " + std::to_string(driverVersion) +
                     "): update the driver, or set LPC_CUBLASLT_LIBRARY to a cuBLASLt " +
                     std::to_string(driverVersion / 1000));
}

Expected<std::unique_ptr<GemmEngine>> GemmEngine::create(Device &device,
                                                         size_t workspaceBytes) {
  Expected<const CublasLt *> lib = loadCublasLt();
  if (!lib)
    return lib.takeError();
  // Before cublasLtCreate, which on too old a driver says only
  // CUBLAS_STATUS_NOT_INITIALIZED.
  if (Error e = checkCublasLtDriver((*lib)->version, device.driver().version()))
    return e.withContext(cublasLtPath(**lib));
  if (Error e = device.makeCurrent())
    return e;
  std::unique_ptr<GemmEngine> engine(new GemmEngine());
  engine->device_ = &device;
  engine->lib_ = *lib;
  cublasLtHandle_t handle = nullptr;
  if (Error e = (*lib)->check((*lib)->cublasLtCreate(&handle), "cublasLtCreate"))
    return e;
  engine->handle_ = handle;
  if (workspaceBytes) {
    Expected<DeviceBuffer> ws = device.allocate(workspaceBytes);
    if (!ws)
      return ws.takeError().withContext("cuBLASLt workspace");
    engine->workspace_ = ws.take();
  }
  return engine;
}

GemmEngine::~GemmEngine() {
  std::lock_guard<std::mutex> lock(mutex_);
  plans_.clear();
  if (handle_) {
    (void)device_->makeCurrent();
    lib_->cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
  }
}

/// The cache key: the description, plus what the heuristic depends on
/// beyond it (pointer alignment, which optional pointers are set).
static std::string planKey(const GemmDesc &d, const GemmOperands &ops) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%lld %lld %lld %lld %d%d%d %d %d %d %d %d%d | %u %u %u %u %d%d%d%d",
                (long long)d.m, (long long)d.n, (long long)d.k,
                (long long)d.batch, d.transA, d.transB, d.broadcastB, int(d.a),
                int(d.b), int(d.c), int(d.epilogue), d.tf32, d.fastAccum,
                alignmentOf(ops.a), alignmentOf(ops.b), alignmentOf(ops.c),
                alignmentOf(ops.bias), ops.aScale != 0, ops.bScale != 0,
                ops.cScale != 0, ops.amax != 0);
  return buf;
}

static std::string describeAlgo(const CublasLt &lib, const cublasLtMatmulAlgo_t &algo,
                                size_t workspace) {
  int32_t id = -1, splitK = 1;
  uint32_t tile = 0, stages = 0;
  size_t written = 0;
  lib.cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id,
                                           sizeof(id), &written);
  lib.cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID,
                                           &tile, sizeof(tile), &written);
  lib.cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                           &stages, sizeof(stages), &written);
  lib.cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                                           &splitK, sizeof(splitK), &written);
  return "algo " + std::to_string(id) + " tile " + std::to_string(tile) +
         " stages " + std::to_string(stages) + " splitK " +
         std::to_string(splitK) + " workspace " + std::to_string(workspace);
}

Error GemmEngine::run(const GemmDesc &desc, const GemmOperands &ops) {
  if (Error e = validateGemm(desc, ops))
    return e;
  std::lock_guard<std::mutex> lock(mutex_);
  const CublasLt &lib = *lib_;
  if (Error e = device_->makeCurrent())
    return e;
  std::string key = planKey(desc, ops);
  auto it = plans_.find(key);
  Plan *plan = nullptr;
  if (it != plans_.end()) {
    plan = it->second.get();
    if (Error e = setPointers(lib, plan->op, desc, ops))
      return e.withContext("GEMM " + desc.str());
  } else {
    auto fresh = std::make_unique<Plan>();
    if (Error e = buildPlan(lib, desc, ops, workspace_.size(), *fresh))
      return e.withContext("GEMM " + desc.str());
    cublasLtMatmulHeuristicResult_t result;
    std::memset(&result, 0, sizeof(result));
    int found = 0;
    cublasStatus_t s = lib.cublasLtMatmulAlgoGetHeuristic(
        static_cast<cublasLtHandle_t>(handle_), fresh->op, fresh->a, fresh->b,
        fresh->c, fresh->d, fresh->pref, 1, &result, &found);
    if (s != CUBLAS_STATUS_SUCCESS)
      return gemmError(desc, "cublasLtMatmulAlgoGetHeuristic failed: " +
                                 lib.describe(s));
    if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS)
      return gemmError(desc, "cuBLASLt has no algorithm for it on this GPU" +
                                 (found >= 1 ? " (" + lib.describe(result.state) + ")"
                                             : std::string()));
    fresh->algo = result.algo;
    fresh->workspaceBytes = result.workspaceSize;
    fresh->info = describeAlgo(lib, result.algo, result.workspaceSize);
    plan = fresh.get();
    plans_.emplace(key, std::move(fresh));
  }
  lastPlanInfo_ = plan->info;
  float alpha = ops.alpha, beta = 0.0f;
  // beta is 0, so C is not read and is passed as null: with C == D,
  // cuBLASLt (13) would require C's layout to equal D's, which for FP8
  // outputs it does not (cTypeOf).
  const void *cPtr = nullptr;
  cublasStatus_t s = lib.cublasLtMatmul(
      static_cast<cublasLtHandle_t>(handle_), plan->op, &alpha, asPtr(ops.b),
      plan->a, asPtr(ops.a), plan->b, &beta, cPtr, plan->c,
      const_cast<void *>(asPtr(ops.c)), plan->d, &plan->algo,
      const_cast<void *>(asPtr(workspace_.get())), workspace_.size(),
      device_->stream());
  if (s != CUBLAS_STATUS_SUCCESS)
    return gemmError(desc, "cublasLtMatmul failed: " + lib.describe(s));
  return Error::success();
}

size_t GemmEngine::cachedPlans() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return plans_.size();
}

std::string GemmEngine::lastPlanInfo() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lastPlanInfo_;
}

} // namespace cuda
} // namespace rt
} // namespace lpc
