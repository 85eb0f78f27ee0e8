//===- Gemm.cpp - CPU GEMM entry points on oneDNN's matmul ----------------===//
//
// Each call checks the descriptors, maps them to oneDNN memory descriptors
// (the transposes and the padding become strides, the batch broadcast a
// weights batch of 1) and runs a matmul primitive created once per distinct
// (type, shape, strides) and kept for the life of the process. oneDNN's C
// API is used on purpose: the runtime is built without exceptions, and
// dnnl.hpp reports errors by throwing.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Gemm.h"
#include "lpc/Runtime/Attention.h"
#include "lpc/Runtime/GroupedGemm.h"
#include "lpc/Runtime/HostFloat.h"

#include <oneapi/dnnl/dnnl.h>

#if DNNL_VERSION_MAJOR != 2
#error "LpcGemm is written against the oneDNN 2.x C API (Debian 12: libdnnl-dev 2.6); 3.x replaced the op descriptors and memory descriptors it uses"
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// The OpenMP runtime oneDNN runs on (Debian's libdnnl: GNU libgomp, linked
// explicitly, see CMakeLists.txt); declared here to need no omp.h.
extern "C" int omp_get_max_threads(void);
extern "C" void omp_set_num_threads(int);

using lpc::rt::MemRef;
using lpc::rt::MemRef3F32;
using lpc::rt::MemRef3U16;
using lpc::rt::MemRef0F32;
using lpc::rt::MemRef1F32;
using lpc::rt::MemRef3U8;

namespace {

//===----------------------------------------------------------------------===//
// Checking the caller's descriptors
//===----------------------------------------------------------------------===//

template <typename T>
void printMemRef(const char *name, const MemRef<T, 3> *m) {
  if (!m) {
    std::fprintf(stderr, "  %s: null descriptor\n", name);
    return;
  }
  std::fprintf(stderr,
               "  %s: aligned=%p offset=%" PRId64 " sizes=[%" PRId64
               ", %" PRId64 ", %" PRId64 "] strides=[%" PRId64 ", %" PRId64
               ", %" PRId64 "]\n",
               name, static_cast<const void *>(m->aligned), m->offset,
               m->sizes[0], m->sizes[1], m->sizes[2], m->strides[0],
               m->strides[1], m->strides[2]);
}

/// Everything one call was given, for the abort message. In: the element
/// type of A and B; Out: of C (f32, or bf16 bits).
template <typename In, typename Out = float> struct CallInfo {
  const char *entry;
  const MemRef<In, 3> *A;
  const MemRef<In, 3> *B;
  const MemRef<Out, 3> *C;
  int64_t transA, transB, broadcastB;
};

template <typename In, typename Out>
[[noreturn]] void fail(const CallInfo<In, Out> &call, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

template <typename In, typename Out>
[[noreturn]] void fail(const CallInfo<In, Out> &call, const char *fmt, ...) {
  std::fprintf(stderr, "lpc runtime: %s: invalid call (a bug in the caller): ",
               call.entry);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fprintf(stderr,
               "\n  transA=%" PRId64 " transB=%" PRId64 " broadcastB=%" PRId64
               "\n",
               call.transA, call.transB, call.broadcastB);
  printMemRef("A", call.A);
  printMemRef("B", call.B);
  printMemRef("C", call.C);
  std::fflush(stderr);
  std::abort();
}

[[noreturn]] void failDnnl(const char *entry, const char *what,
                           dnnl_status_t status) {
  std::fprintf(stderr, "lpc runtime: %s: oneDNN %s failed (dnnl_status %d)\n",
               entry, what, static_cast<int>(status));
  std::fflush(stderr);
  std::abort();
}

/// One operand as a matrix stack: the physical [batch, rows, cols] of its
/// descriptor with the strides of size-1 dimensions made canonical (they
/// address nothing, so the caller may have left anything there).
struct Operand {
  const void *data; // aligned + offset
  int64_t sizes[3];
  int64_t strides[3];
  int64_t extentElems; // elements spanned, from data
};

/// Checks the layout assumptions: non-negative offset and strides, unit
/// stride in the last dimension, rows that do not overlap each other and
/// matrices that do not overlap each other.
template <typename T, typename In, typename Out>
Operand checkOperand(const CallInfo<In, Out> &call, const char *name,
                     const MemRef<T, 3> *m) {
  if (!m)
    fail(call, "%s is a null descriptor", name);
  Operand op;
  for (int d = 0; d < 3; ++d) {
    if (m->sizes[d] < 0)
      fail(call, "%s: negative size in dimension %d", name, d);
    if (m->strides[d] < 0)
      fail(call, "%s: negative stride in dimension %d", name, d);
    op.sizes[d] = m->sizes[d];
  }
  if (m->offset < 0)
    fail(call, "%s: negative offset", name);
  const int64_t batch = m->sizes[0], rows = m->sizes[1], cols = m->sizes[2];
  if (cols > 1 && m->strides[2] != 1)
    fail(call,
         "%s: the last dimension must be contiguous (stride 1), got stride "
         "%" PRId64,
         name, m->strides[2]);
  op.strides[2] = 1;
  if (rows > 1 && m->strides[1] < cols)
    fail(call,
         "%s: rows overlap: the stride of dimension 1 (%" PRId64
         ") is less than the row length (%" PRId64 ")",
         name, m->strides[1], cols);
  op.strides[1] = rows > 1 ? m->strides[1] : std::max<int64_t>(cols, 1);
  const int64_t matExtent =
      rows > 0 && cols > 0 ? (rows - 1) * op.strides[1] + cols : 0;
  if (batch > 1 && m->strides[0] < matExtent)
    fail(call,
         "%s: matrices overlap: the stride of dimension 0 (%" PRId64
         ") is less than the %" PRId64 " elements one matrix spans",
         name, m->strides[0], matExtent);
  op.strides[0] =
      batch > 1 ? m->strides[0] : std::max<int64_t>(rows * op.strides[1], 1);
  op.extentElems =
      batch > 0 && matExtent > 0 ? (batch - 1) * op.strides[0] + matExtent : 0;
  if (op.extentElems > 0 && !m->aligned)
    fail(call, "%s: null data pointer", name);
  op.data = m->aligned + m->offset;
  return op;
}

/// The rows of an operand in address order (the checks above guarantee
/// that rows, and matrices, follow each other without overlapping).
class RowCursor {
public:
  RowCursor(const Operand &op, size_t elem)
      : base_(reinterpret_cast<uintptr_t>(op.data)), elem_(elem), op_(op) {}
  bool done() const { return op_.extentElems == 0 || b_ >= op_.sizes[0]; }
  uintptr_t begin() const {
    return base_ + (b_ * op_.strides[0] + i_ * op_.strides[1]) * elem_;
  }
  uintptr_t end() const { return begin() + op_.sizes[2] * elem_; }
  void next() {
    if (++i_ == op_.sizes[1])
      i_ = 0, ++b_;
  }

private:
  uintptr_t base_;
  size_t elem_;
  const Operand &op_;
  int64_t b_ = 0, i_ = 0;
};

/// Whether two operands share a byte. Exact: column slices of one buffer
/// that interleave without touching are not an overlap.
bool overlaps(const Operand &x, size_t xElem, const Operand &y, size_t yElem) {
  if (x.extentElems == 0 || y.extentElems == 0)
    return false;
  const auto xb = reinterpret_cast<uintptr_t>(x.data);
  const auto yb = reinterpret_cast<uintptr_t>(y.data);
  if (!(xb < yb + y.extentElems * yElem && yb < xb + x.extentElems * xElem))
    return false; // disjoint spans: the usual case, O(1)
  RowCursor cx(x, xElem), cy(y, yElem);
  while (!cx.done() && !cy.done()) {
    if (cx.begin() < cy.end() && cy.begin() < cx.end())
      return true;
    if (cx.end() <= cy.end())
      cx.next();
    else
      cy.next();
  }
  return false;
}

/// The checked problem: C[b] (M x N) = op(A[b]) (M x K) x op(B[b|0]) (K x N).
struct Problem {
  Operand a, b, c;
  int64_t batch, M, N, K;
  bool transA, transB, broadcastB;
  size_t cElem; // bytes per element of C
};

template <typename In, typename Out>
Problem checkCall(const CallInfo<In, Out> &call) {
  for (int64_t flag : {call.transA, call.transB, call.broadcastB})
    if (flag != 0 && flag != 1)
      fail(call, "transA, transB and broadcastB must be 0 or 1");
  Problem p;
  p.transA = call.transA, p.transB = call.transB,
  p.broadcastB = call.broadcastB;
  p.a = checkOperand(call, "A", call.A);
  p.b = checkOperand(call, "B", call.B);
  p.c = checkOperand(call, "C", call.C);
  p.cElem = sizeof(Out);
  p.batch = p.c.sizes[0], p.M = p.c.sizes[1], p.N = p.c.sizes[2];
  const int64_t aM = p.transA ? p.a.sizes[2] : p.a.sizes[1];
  const int64_t aK = p.transA ? p.a.sizes[1] : p.a.sizes[2];
  const int64_t bK = p.transB ? p.b.sizes[2] : p.b.sizes[1];
  const int64_t bN = p.transB ? p.b.sizes[1] : p.b.sizes[2];
  p.K = aK;
  if (p.a.sizes[0] != p.batch)
    fail(call, "A has %" PRId64 " matrices, C has %" PRId64, p.a.sizes[0],
         p.batch);
  const int64_t bBatch = p.broadcastB ? 1 : p.batch;
  if (p.b.sizes[0] != bBatch)
    fail(call, "B has %" PRId64 " matrices, expected %" PRId64 " (%s)",
         p.b.sizes[0], bBatch,
         p.broadcastB ? "broadcastB" : "one per matrix of C");
  if (aM != p.M)
    fail(call, "op(A) has %" PRId64 " rows, C has %" PRId64, aM, p.M);
  if (bN != p.N)
    fail(call, "op(B) has %" PRId64 " columns, C has %" PRId64, bN, p.N);
  if (bK != p.K)
    fail(call, "inner dimensions differ: op(A) has %" PRId64
               " columns, op(B) has %" PRId64 " rows",
         aK, bK);
  if (overlaps(p.c, sizeof(Out), p.a, sizeof(In)) ||
      overlaps(p.c, sizeof(Out), p.b, sizeof(In)))
    fail(call, "C overlaps an operand");
  return p;
}

//===----------------------------------------------------------------------===//
// oneDNN
//===----------------------------------------------------------------------===//

dnnl_engine_t engine(const char *entry) {
  static dnnl_engine_t eng = [entry] {
    dnnl_engine_t e = nullptr;
    if (dnnl_status_t s = dnnl_engine_create(&e, dnnl_cpu, 0))
      failDnnl(entry, "engine creation", s);
    return e;
  }();
  return eng;
}

/// One stream per calling thread (oneDNN streams are not thread-safe).
struct StreamHolder {
  dnnl_stream_t stream = nullptr;
  ~StreamHolder() {
    if (stream)
      dnnl_stream_destroy(stream);
  }
};

dnnl_stream_t stream(const char *entry) {
  thread_local StreamHolder holder;
  if (!holder.stream)
    if (dnnl_status_t s = dnnl_stream_create(&holder.stream, engine(entry),
                                             dnnl_stream_default_flags))
      failDnnl(entry, "stream creation", s);
  return holder.stream;
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

std::atomic<int> requestedThreads{0};

/// OMP_NUM_THREADS or the CPUs of the affinity mask: libgomp's default, read
/// before this file ever changes it.
int defaultThreads() {
  static const int n = std::max(1, omp_get_max_threads());
  return n;
}

int wantedThreads() {
  const int n = requestedThreads.load(std::memory_order_relaxed);
  return n > 0 ? n : defaultThreads();
}

/// GEMMs of fewer FLOPs run on the calling thread alone. Waking oneDNN's
/// OpenMP threads (asleep under lpc-run's OMP_WAIT_POLICY=passive) costs
/// ~75 us a call on a 2-core host, more than a second thread saves below
/// ~20 MFLOP (a 32-64-4 MLP's GEMMs: 0.44 ms per step on 2 threads, 0.01 on
/// one).
constexpr double kSerialGemmFlops = 1 << 24;

int threadsFor(const Problem &p) {
  double flops = 2.0 * double(p.batch) * double(p.M) * double(p.N) * double(p.K);
  return flops < kSerialGemmFlops ? 1 : wantedThreads();
}

/// Sets the calling thread's OpenMP thread count for one call and restores
/// the caller's afterwards.
class ThreadScope {
public:
  explicit ThreadScope(int want) : prev_(omp_get_max_threads()) {
    if (prev_ != want)
      omp_set_num_threads(want);
  }
  ~ThreadScope() {
    if (omp_get_max_threads() != prev_)
      omp_set_num_threads(prev_);
  }
  ThreadScope(const ThreadScope &) = delete;
  ThreadScope &operator=(const ThreadScope &) = delete;

private:
  int prev_;
};

/// Logical (matmul) dims and strides of the three operands, the element type
/// of A and B and the thread count (oneDNN plans its work split for the
/// thread count at creation): what determines a primitive.
struct Key {
  std::array<int64_t, 20> v;
  bool operator==(const Key &o) const { return v == o.v; }
};
struct KeyHash {
  size_t operator()(const Key &k) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t x : k.v)
      h = (h ^ static_cast<uint64_t>(x)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

struct Primitive {
  dnnl_primitive_t prim = nullptr;
  dnnl_memory_desc_t a, b, c;
  dnnl_memory_desc_t scratch; // user-managed scratchpad (see runMatmul)
  size_t scratchBytes = 0;
};

/// The calling thread's scratchpad buffer, grown on demand, page aligned.
struct ScratchHolder {
  void *data = nullptr;
  size_t size = 0;
  ~ScratchHolder() { std::free(data); }
  void *get(const char *entry, size_t bytes) {
    if (bytes > size) {
      std::free(data);
      size = (bytes + 4095) / 4096 * 4096;
      data = std::aligned_alloc(4096, size);
      if (!data) {
        std::fprintf(stderr,
                     "lpc runtime: %s: out of memory (%zu-byte scratchpad)\n",
                     entry, size);
        std::abort();
      }
    }
    return data;
  }
};

/// Logical dims/strides of the matmul operands (src [batch, M, K], weights
/// [batch|1, K, N], dst [batch, M, N]): a transpose swaps the strides.
void logicalDesc(const Operand &op, bool trans, dnnl_dims_t dims,
                 dnnl_dims_t strides) {
  dims[0] = op.sizes[0];
  strides[0] = op.strides[0];
  const int r = trans ? 2 : 1, c = trans ? 1 : 2;
  dims[1] = op.sizes[r], strides[1] = op.strides[r];
  dims[2] = op.sizes[c], strides[2] = op.strides[c];
}

/// Whether oneDNN 2.6's AMX bf16 matmul (brg:avx512_core_amx_bf16, what
/// Debian 12's libdnnl 2.6.3 picks on a host with AMX) computes a GEMM of
/// this reduction length K and width N correctly. Outside these shapes it
/// does not (found by op-check-sweep.test on a Sapphire Rapids host, then
/// mapped with a stand-alone sweep of random shapes against an f64
/// reference):
///  - N in 49..63 and no multiple of 16, with more than one thread: (64 - N)
///    columns of every row wrong (2.6.3's low-parallelism heuristic can
///    pick an N block of N - 16 there, no multiple of 16);
///  - K with a tail (K % 32 != 0; seen with K = 63, even on one thread):
///    wrong elements or SIGILL (the AMX unit refuses mismatched tiles;
///    likely a kernel run under another shape's tile configuration).
/// With K a multiple of 32 and N of 16, 18,400 random shapes (M up to 2100,
/// K up to 2624, batches, broadcast B, every transpose, f32 and bf16
/// results, 1 to 56 threads) were all exact. Other shapes take the next
/// implementation oneDNN offers (AVX-512 BF16), exact in every sweep.
bool amxSafe(int64_t K, int64_t N) { return K % 32 == 0 && N % 16 == 0; }

/// The first implementation oneDNN offers for `desc`, passing over AMX ones
/// where `allowAmx` is false (dnnl_primitive_desc_create would take the
/// first whatever it is).
dnnl_status_t createMatmulDesc(dnnl_primitive_desc_t *pd,
                               const dnnl_matmul_desc_t &desc,
                               const_dnnl_primitive_attr_t attr,
                               dnnl_engine_t eng, bool allowAmx) {
  dnnl_primitive_desc_iterator_t it = nullptr;
  if (dnnl_status_t s =
          dnnl_primitive_desc_iterator_create(&it, &desc, attr, eng, nullptr))
    return s;
  dnnl_status_t s = dnnl_success;
  for (;;) {
    *pd = dnnl_primitive_desc_iterator_fetch(it);
    if (!*pd) {
      s = dnnl_runtime_error;
      break;
    }
    const char *impl = nullptr;
    if (allowAmx ||
        dnnl_primitive_desc_query(*pd, dnnl_query_impl_info_str, 0, &impl) ||
        !impl || !std::strstr(impl, "amx"))
      break;
    dnnl_primitive_desc_destroy(*pd);
    *pd = nullptr;
    if (dnnl_primitive_desc_iterator_next(it) != dnnl_success) {
      s = dnnl_unimplemented;
      break;
    }
  }
  dnnl_primitive_desc_iterator_destroy(it);
  return s;
}

const Primitive &getPrimitive(const char *entry, const Problem &p,
                              dnnl_data_type_t inType,
                              dnnl_data_type_t outType, int threads) {
  dnnl_dims_t aDims, aStr, bDims, bStr, cDims, cStr;
  logicalDesc(p.a, p.transA, aDims, aStr);
  logicalDesc(p.b, p.transB, bDims, bStr);
  logicalDesc(p.c, false, cDims, cStr);
  Key key;
  int n = 0;
  key.v[n++] = inType * 64 + outType;
  key.v[n++] = threads;
  for (int d = 0; d < 3; ++d) {
    key.v[n++] = aDims[d], key.v[n++] = aStr[d];
    key.v[n++] = bDims[d], key.v[n++] = bStr[d];
    key.v[n++] = cDims[d], key.v[n++] = cStr[d];
  }

  static std::mutex mutex;
  static std::unordered_map<Key, Primitive, KeyHash> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;

  Primitive prim;
  if (dnnl_status_t s =
          dnnl_memory_desc_init_by_strides(&prim.a, 3, aDims, inType, aStr))
    failDnnl(entry, "memory descriptor of A", s);
  if (dnnl_status_t s =
          dnnl_memory_desc_init_by_strides(&prim.b, 3, bDims, inType, bStr))
    failDnnl(entry, "memory descriptor of B", s);
  if (dnnl_status_t s =
          dnnl_memory_desc_init_by_strides(&prim.c, 3, cDims, outType, cStr))
    failDnnl(entry, "memory descriptor of C", s);
  dnnl_matmul_desc_t desc;
  if (dnnl_status_t s =
          dnnl_matmul_desc_init(&desc, &prim.a, &prim.b, nullptr, &prim.c))
    failDnnl(entry, "matmul descriptor", s);
  dnnl_primitive_attr_t attr = nullptr;
  if (dnnl_status_t s = dnnl_primitive_attr_create(&attr))
    failDnnl(entry, "attribute creation", s);
  // f32 stays f32: never let DNNL_DEFAULT_FPMATH_MODE down-convert it.
  if (dnnl_status_t s =
          dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_strict))
    failDnnl(entry, "fpmath mode", s);
  // The scratchpad comes from the calling thread (runMatmul), so concurrent
  // calls from several threads never share one.
  if (dnnl_status_t s = dnnl_primitive_attr_set_scratchpad_mode(
          attr, dnnl_scratchpad_mode_user))
    failDnnl(entry, "scratchpad mode", s);
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_status_t s = createMatmulDesc(&pd, desc, attr, engine(entry),
                                     amxSafe(aDims[2], bDims[2]));
  dnnl_primitive_attr_destroy(attr);
  if (s) {
    // Name the problem: which shapes and strides oneDNN refused.
    auto str = [](const dnnl_dims_t d, const dnnl_dims_t st) {
      return "[" + std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" +
             std::to_string(d[2]) + " strides " + std::to_string(st[0]) + "," +
             std::to_string(st[1]) + "," + std::to_string(st[2]) + "]";
    };
    std::string what = "matmul primitive descriptor of A " + str(aDims, aStr) +
                       " B " + str(bDims, bStr) + " C " + str(cDims, cStr);
    failDnnl(entry, what.c_str(), s);
  }
  if (const dnnl_memory_desc_t *md =
          dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0)) {
    prim.scratch = *md;
    prim.scratchBytes = dnnl_memory_desc_get_size(md);
  }
  s = dnnl_primitive_create(&prim.prim, pd);
  dnnl_primitive_desc_destroy(pd);
  if (s)
    failDnnl(entry, "matmul primitive", s);
  return cache.emplace(key, prim).first->second;
}

void zeroC(const Problem &p) {
  // +0.0 is all-zero bits in f32 and bf16 alike.
  char *c = static_cast<char *>(const_cast<void *>(p.c.data));
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t i = 0; i < p.M; ++i)
      std::memset(c + (b * p.c.strides[0] + i * p.c.strides[1]) * p.cElem, 0,
                  p.N * p.cElem);
}

bool bf16MatmulAvailable();
void runBF16AsF32(const char *entry, const Problem &p, dnnl_data_type_t outType);

void runMatmul(const char *entry, const Problem &p, dnnl_data_type_t inType,
               dnnl_data_type_t outType = dnnl_f32) {
  if (p.batch == 0 || p.M == 0 || p.N == 0)
    return;
  if (p.K == 0)
    return zeroC(p);
  if (inType == dnnl_bf16 && !bf16MatmulAvailable())
    return runBF16AsF32(entry, p, outType);
  const int threads = threadsFor(p);
  ThreadScope scope(threads);
  const Primitive &prim = getPrimitive(entry, p, inType, outType, threads);
  dnnl_engine_t eng = engine(entry);
  thread_local ScratchHolder scratch;
  const int nargs = prim.scratchBytes ? 4 : 3;
  dnnl_memory_t mem[4] = {nullptr, nullptr, nullptr, nullptr};
  const dnnl_memory_desc_t *mds[4] = {&prim.a, &prim.b, &prim.c,
                                      &prim.scratch};
  const void *data[4] = {p.a.data, p.b.data, p.c.data,
                         nargs == 4 ? scratch.get(entry, prim.scratchBytes)
                                    : nullptr};
  for (int i = 0; i < nargs; ++i)
    if (dnnl_status_t s = dnnl_memory_create(&mem[i], mds[i], eng,
                                             const_cast<void *>(data[i])))
      failDnnl(entry, "memory creation", s);
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, mem[0]},
                             {DNNL_ARG_WEIGHTS, mem[1]},
                             {DNNL_ARG_DST, mem[2]},
                             {DNNL_ARG_SCRATCHPAD, mem[3]}};
  dnnl_stream_t str = stream(entry);
  if (dnnl_status_t s = dnnl_primitive_execute(prim.prim, str, nargs, args))
    failDnnl(entry, "matmul execution", s);
  if (dnnl_status_t s = dnnl_stream_wait(str))
    failDnnl(entry, "stream wait", s);
  for (int i = 0; i < nargs; ++i)
    dnnl_memory_destroy(mem[i]);
}

//===----------------------------------------------------------------------===//
// f16: widen to f32, then the f32 path
//===----------------------------------------------------------------------===//

/// Exact IEEE binary16 -> binary32 (integer code: independent of FTZ/DAZ).
inline float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) // inf / NaN (payload kept)
    bits = sign | 0x7f800000u | (man << 13);
  else if (exp != 0) // normal
    bits = sign | ((exp + 112) << 23) | (man << 13);
  else if (man == 0) // zero
    bits = sign;
  else { // subnormal: man * 2^-24, normalized
    const int shift = __builtin_clz(man) - 21; // moves the leading 1 to bit 10
    man = (man << shift) & 0x3ffu;
    bits = sign | (static_cast<uint32_t>(113 - shift) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

void widenRowScalar(const uint16_t *src, float *dst, int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    dst[j] = halfToFloat(src[j]);
}

#if defined(__x86_64__)
/// The same with F16C (vcvtph2ps is exact, subnormals included).
__attribute__((target("avx,f16c"))) void widenRowF16C(const uint16_t *src,
                                                     float *dst, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(dst + j, _mm256_cvtph_ps(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i *>(src + j))));
  widenRowScalar(src + j, dst + j, n - j);
}
#endif

using WidenRow = void (*)(const uint16_t *, float *, int64_t);
WidenRow widenRow() {
#if defined(__x86_64__)
  static const WidenRow fn =
      __builtin_cpu_supports("f16c") ? widenRowF16C : widenRowScalar;
  return fn;
#else
  return widenRowScalar;
#endif
}

/// Widens the matrices of `op` row by row (`widen(src, dst, n)`) into
/// `buf`, densely packed (rows of length sizes[2]); returns the operand
/// that describes it.
template <typename Src, typename Dst, typename RowFn>
Operand widenOperand(const Operand &op, std::vector<Dst> &buf, RowFn widen) {
  const int64_t batch = op.sizes[0], rows = op.sizes[1], cols = op.sizes[2];
  buf.resize(static_cast<size_t>(batch * rows * cols));
  const Src *src = static_cast<const Src *>(op.data);
  Dst *dst = buf.data();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i, dst += cols)
      widen(src + b * op.strides[0] + i * op.strides[1], dst, cols);
  Operand w = op;
  w.data = buf.data();
  w.strides[2] = 1;
  w.strides[1] = std::max<int64_t>(cols, 1);
  w.strides[0] = std::max<int64_t>(rows * w.strides[1], 1);
  w.extentElems = batch * rows * cols;
  return w;
}

/// f16 matrices widened to f32.
Operand widenHalf(const Operand &op, std::vector<float> &buf) {
  return widenOperand<uint16_t>(op, buf, widenRow());
}

/// bf16 bit patterns of the 256 codes of an FP8 format (exact).
struct FP8ToBF16 {
  uint16_t bits[256];
  explicit FP8ToBF16(const lpc::rt::MiniFloat &fp8) {
    for (unsigned c = 0; c < 256; ++c)
      bits[c] = uint16_t(lpc::rt::kBF16.encode(fp8.decode(c)));
  }
};
const FP8ToBF16 kE4M3ToBF16(lpc::rt::kE4M3), kE5M2ToBF16(lpc::rt::kE5M2);

/// FP8 matrices widened to bf16 (exactly) through `table`.
Operand widenFP8(const Operand &op, const FP8ToBF16 &table,
                 std::vector<uint16_t> &buf) {
  return widenOperand<uint8_t>(
      op, buf, [&](const uint8_t *src, uint16_t *dst, int64_t n) {
        for (int64_t j = 0; j < n; ++j)
          dst[j] = table.bits[src[j]];
      });
}

void gemmFP8(const char *entry, MemRef3U8 *A, MemRef3U8 *B, MemRef3F32 *C,
             int64_t transA, int64_t transB, int64_t broadcastB,
             const FP8ToBF16 &aTable, const FP8ToBF16 &bTable) {
  CallInfo<uint8_t> call{entry, A, B, C, transA, transB, broadcastB};
  Problem p = checkCall(call);
  if (p.batch == 0 || p.M == 0 || p.N == 0)
    return;
  if (p.K == 0)
    return zeroC(p);
  thread_local std::vector<uint16_t> aBuf, bBuf;
  p.a = widenFP8(p.a, aTable, aBuf);
  p.b = widenFP8(p.b, bTable, bBuf);
  runMatmul(entry, p, dnnl_bf16);
}

/// f32 to bf16 bits, to nearest even (NaN stays a quiet NaN).
uint16_t roundToBF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((u >> 16) | 0x40);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

/// Whether oneDNN has bf16 matmul kernels on this CPU: they need AVX-512
/// (AVX512-BF16 or AVX512-BW emulation); on an AVX2-only host it reports
/// "unimplemented" and bf16 GEMMs take runBF16AsF32 instead.
bool bf16MatmulAvailable() {
  static const bool ok = [] {
    dnnl_dims_t d = {1, 16, 16}, st = {256, 16, 1};
    for (dnnl_data_type_t out : {dnnl_f32, dnnl_bf16}) {
      dnnl_memory_desc_t a, b, c;
      dnnl_matmul_desc_t desc;
      dnnl_primitive_desc_t pd = nullptr;
      if (dnnl_memory_desc_init_by_strides(&a, 3, d, dnnl_bf16, st) ||
          dnnl_memory_desc_init_by_strides(&b, 3, d, dnnl_bf16, st) ||
          dnnl_memory_desc_init_by_strides(&c, 3, d, out, st) ||
          dnnl_matmul_desc_init(&desc, &a, &b, nullptr, &c) ||
          dnnl_primitive_desc_create(&pd, &desc, nullptr, engine("bf16 probe"),
                                     nullptr))
        return false;
      dnnl_primitive_desc_destroy(pd);
    }
    return true;
  }();
  return ok;
}

/// A bf16 GEMM as an f32 one: operands widened exactly (bf16 is the top
/// half of f32), products exact and accumulated in f32 as oneDNN's bf16
/// kernels do; a bf16 C is rounded to nearest even from the f32 result.
void runBF16AsF32(const char *entry, const Problem &p, dnnl_data_type_t outType) {
  thread_local std::vector<float> aBuf, bBuf, cBuf;
  auto widen = [](const uint16_t *src, float *dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      uint32_t u = uint32_t(src[i]) << 16;
      std::memcpy(dst + i, &u, 4);
    }
  };
  Problem q = p;
  q.a = widenOperand<uint16_t>(p.a, aBuf, widen);
  q.b = widenOperand<uint16_t>(p.b, bBuf, widen);
  if (outType == dnnl_f32)
    return runMatmul(entry, q, dnnl_f32);
  cBuf.resize(size_t(p.batch * p.M * p.N));
  q.c.data = cBuf.data();
  q.c.strides[2] = 1;
  q.c.strides[1] = p.N;
  q.c.strides[0] = p.M * p.N;
  q.c.extentElems = p.batch * p.M * p.N;
  q.cElem = sizeof(float);
  runMatmul(entry, q, dnnl_f32);
  uint16_t *c = static_cast<uint16_t *>(const_cast<void *>(p.c.data));
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t i = 0; i < p.M; ++i) {
      const float *src = cBuf.data() + (b * p.M + i) * p.N;
      uint16_t *dst = c + b * p.c.strides[0] + i * p.c.strides[1];
      for (int64_t j = 0; j < p.N; ++j)
        dst[j] = roundToBF16(src[j]);
    }
}

/// gemmFP8, then C * (sa * sb) in f32 (lpc's dequantization), written as
/// f32 or rounded to bf16 (uint16_t C).
template <typename CT>
void gemmFP8Scaled(const char *entry, MemRef3U8 *A, MemRef3U8 *B,
                   MemRef<CT, 3> *C, const MemRef0F32 *SA,
                   const MemRef0F32 *SB, int64_t transA, int64_t transB,
                   int64_t broadcastB, const FP8ToBF16 &aTable,
                   const FP8ToBF16 &bTable) {
  const float s = SA->aligned[SA->offset] * SB->aligned[SB->offset];
  const int64_t batch = C->sizes[0], M = C->sizes[1], N = C->sizes[2];
  // The f32 product: C itself, or a dense temporary for a bf16 C.
  thread_local std::vector<float> tmp;
  MemRef3F32 acc;
  if constexpr (std::is_same_v<CT, float>) {
    acc = *C;
  } else {
    tmp.resize(size_t(std::max<int64_t>(batch * M * N, 0)));
    acc = MemRef3F32{tmp.data(), tmp.data(), 0, {batch, M, N}, {M * N, N, 1}};
  }
  gemmFP8(entry, A, B, &acc, transA, transB, broadcastB, aTable, bTable);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < M; ++i) {
      float *row = acc.aligned + acc.offset + b * acc.strides[0] +
                   i * acc.strides[1];
      CT *out = C->aligned + C->offset + b * C->strides[0] + i * C->strides[1];
      for (int64_t j = 0; j < N; ++j) {
        float v = row[j * acc.strides[2]] * s;
        if constexpr (std::is_same_v<CT, float>)
          out[j * C->strides[2]] = v;
        else
          out[j * C->strides[2]] = roundToBF16(v);
      }
    }
}

/// C[b, i, j] += bias[j] (f32), after a GEMM with an f32 C.
void addBias(const char *entry, MemRef3F32 *C, const MemRef1F32 *bias) {
  if (bias->sizes[0] != C->sizes[2]) {
    std::fprintf(stderr,
                 "lpc gemm: %s: bias has %" PRId64 " elements for %" PRId64
                 " columns of C\n",
                 entry, bias->sizes[0], C->sizes[2]);
    std::abort();
  }
  const float *bv = bias->aligned + bias->offset;
  for (int64_t b = 0; b < C->sizes[0]; ++b)
    for (int64_t i = 0; i < C->sizes[1]; ++i) {
      float *row = C->aligned + C->offset + b * C->strides[0] + i * C->strides[1];
      for (int64_t j = 0; j < C->sizes[2]; ++j)
        row[j * C->strides[2]] += bv[j * bias->strides[0]];
    }
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

extern "C" void _mlir_ciface_lpc_rt_gemm_f8e4m3_f8e4m3(
    MemRef3U8 *A, MemRef3U8 *B, MemRef3F32 *C, int64_t transA, int64_t transB,
    int64_t broadcastB) {
  gemmFP8("lpc_rt_gemm_f8e4m3_f8e4m3", A, B, C, transA, transB, broadcastB,
          kE4M3ToBF16, kE4M3ToBF16);
}

extern "C" void _mlir_ciface_lpc_rt_gemm_f8e4m3_f8e5m2(
    MemRef3U8 *A, MemRef3U8 *B, MemRef3F32 *C, int64_t transA, int64_t transB,
    int64_t broadcastB) {
  gemmFP8("lpc_rt_gemm_f8e4m3_f8e5m2", A, B, C, transA, transB, broadcastB,
          kE4M3ToBF16, kE5M2ToBF16);
}

extern "C" void _mlir_ciface_lpc_rt_gemm_f8e5m2_f8e4m3(
    MemRef3U8 *A, MemRef3U8 *B, MemRef3F32 *C, int64_t transA, int64_t transB,
    int64_t broadcastB) {
  gemmFP8("lpc_rt_gemm_f8e5m2_f8e4m3", A, B, C, transA, transB, broadcastB,
          kE5M2ToBF16, kE4M3ToBF16);
}

// The plain GEMM into C, then the bias added to it.
#define LPC_DEFINE_BIAS(NAME, ABTYPE, PLAIN)                                   \
  extern "C" LPC_RT_GEMM_BIAS(NAME, ABTYPE) {                                  \
    _mlir_ciface_##PLAIN(A, B, C, transA, transB, broadcastB);                 \
    addBias(#NAME, C, BIAS);                                                   \
  }
LPC_DEFINE_BIAS(lpc_rt_gemm_f32_bias, MemRef3F32, lpc_rt_gemm_f32)
LPC_DEFINE_BIAS(lpc_rt_gemm_bf16_bias, MemRef3U16, lpc_rt_gemm_bf16)
LPC_DEFINE_BIAS(lpc_rt_gemm_f16_bias, MemRef3U16, lpc_rt_gemm_f16)
#undef LPC_DEFINE_BIAS

#define LPC_DEFINE_FP8_SCALED(NAME, CTYPE, ATABLE, BTABLE)                    \
  extern "C" LPC_RT_GEMM_FP8_SCALED(NAME, CTYPE) {                             \
    gemmFP8Scaled(#NAME, A, B, C, SA, SB, transA, transB, broadcastB, ATABLE,  \
                  BTABLE);                                                     \
  }
LPC_DEFINE_FP8_SCALED(lpc_rt_gemm_f8e4m3_f8e4m3_scaled, MemRef3F32, kE4M3ToBF16, kE4M3ToBF16)
LPC_DEFINE_FP8_SCALED(lpc_rt_gemm_f8e4m3_f8e5m2_scaled, MemRef3F32, kE4M3ToBF16, kE5M2ToBF16)
LPC_DEFINE_FP8_SCALED(lpc_rt_gemm_f8e5m2_f8e4m3_scaled, MemRef3F32, kE5M2ToBF16, kE4M3ToBF16)
LPC_DEFINE_FP8_SCALED(lpc_rt_gemm_f8e4m3_f8e4m3_scaled_bf16, MemRef3U16, kE4M3ToBF16, kE4M3ToBF16)
LPC_DEFINE_FP8_SCALED(lpc_rt_gemm_f8e4m3_f8e5m2_scaled_bf16, MemRef3U16, kE4M3ToBF16, kE5M2ToBF16)
LPC_DEFINE_FP8_SCALED(lpc_rt_gemm_f8e5m2_f8e4m3_scaled_bf16, MemRef3U16, kE5M2ToBF16, kE4M3ToBF16)
#undef LPC_DEFINE_FP8_SCALED

extern "C" void _mlir_ciface_lpc_rt_gemm_f32(MemRef3F32 *A, MemRef3F32 *B,
                                             MemRef3F32 *C, int64_t transA,
                                             int64_t transB,
                                             int64_t broadcastB) {
  const char *entry = "lpc_rt_gemm_f32";
  CallInfo<float> call{entry, A, B, C, transA, transB, broadcastB};
  runMatmul(entry, checkCall(call), dnnl_f32);
}

extern "C" void _mlir_ciface_lpc_rt_gemm_bf16(MemRef3U16 *A, MemRef3U16 *B,
                                              MemRef3F32 *C, int64_t transA,
                                              int64_t transB,
                                              int64_t broadcastB) {
  const char *entry = "lpc_rt_gemm_bf16";
  CallInfo<uint16_t> call{entry, A, B, C, transA, transB, broadcastB};
  runMatmul(entry, checkCall(call), dnnl_bf16);
}

extern "C" void _mlir_ciface_lpc_rt_gemm_bf16_bf16(MemRef3U16 *A,
                                                   MemRef3U16 *B,
                                                   MemRef3U16 *C,
                                                   int64_t transA,
                                                   int64_t transB,
                                                   int64_t broadcastB) {
  const char *entry = "lpc_rt_gemm_bf16_bf16";
  CallInfo<uint16_t, uint16_t> call{entry, A, B, C, transA, transB, broadcastB};
  runMatmul(entry, checkCall(call), dnnl_bf16, dnnl_bf16);
}

extern "C" void _mlir_ciface_lpc_rt_gemm_f16(MemRef3U16 *A, MemRef3U16 *B,
                                             MemRef3F32 *C, int64_t transA,
                                             int64_t transB,
                                             int64_t broadcastB) {
  const char *entry = "lpc_rt_gemm_f16";
  CallInfo<uint16_t> call{entry, A, B, C, transA, transB, broadcastB};
  Problem p = checkCall(call);
  if (p.batch == 0 || p.M == 0 || p.N == 0)
    return;
  if (p.K == 0)
    return zeroC(p);
  thread_local std::vector<float> aBuf, bBuf;
  p.a = widenHalf(p.a, aBuf);
  p.b = widenHalf(p.b, bBuf);
  runMatmul(entry, p, dnnl_f32);
}

namespace lpc {
namespace rt {

void setGemmThreads(int n) {
  requestedThreads.store(n > 0 ? n : 0, std::memory_order_relaxed);
}

int gemmThreads() { return wantedThreads(); }

const GemmSymbol *gemmSymbols(size_t *count) {
#define LPC_GEMM_SYMBOL(NAME)                                                  \
  {"_mlir_ciface_" #NAME, reinterpret_cast<void *>(&_mlir_ciface_##NAME)}
  static const GemmSymbol symbols[] = {
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f32),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_bf16),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f16),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_bf16_bf16),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f8e4m3_f8e4m3),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f8e4m3_f8e5m2),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f8e5m2_f8e4m3),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f8e4m3_f8e4m3_scaled),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f8e4m3_f8e5m2_scaled),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f8e5m2_f8e4m3_scaled),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f8e4m3_f8e4m3_scaled_bf16),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f8e4m3_f8e5m2_scaled_bf16),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f8e5m2_f8e4m3_scaled_bf16),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f32_bias),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_bf16_bias),
      LPC_GEMM_SYMBOL(lpc_rt_gemm_f16_bias),
      // Fused attention (Attention.cpp).
      LPC_GEMM_SYMBOL(lpc_rt_attention_fwd_f32),
      LPC_GEMM_SYMBOL(lpc_rt_attention_fwd_f32_mask),
      LPC_GEMM_SYMBOL(lpc_rt_attention_bwd_f32),
      LPC_GEMM_SYMBOL(lpc_rt_attention_bwd_f32_mask),
      LPC_GEMM_SYMBOL(lpc_rt_attention_fwd_bf16),
      LPC_GEMM_SYMBOL(lpc_rt_attention_fwd_bf16_mask),
      LPC_GEMM_SYMBOL(lpc_rt_attention_bwd_bf16),
      LPC_GEMM_SYMBOL(lpc_rt_attention_bwd_bf16_mask),
      LPC_GEMM_SYMBOL(lpc_rt_attention_fwd_f16),
      LPC_GEMM_SYMBOL(lpc_rt_attention_fwd_f16_mask),
      LPC_GEMM_SYMBOL(lpc_rt_attention_bwd_f16),
      LPC_GEMM_SYMBOL(lpc_rt_attention_bwd_f16_mask),
      // Grouped GEMMs (GroupedGemm.cpp).
      LPC_GEMM_SYMBOL(lpc_rt_grouped_gemm_f32),
      LPC_GEMM_SYMBOL(lpc_rt_grouped_gemm_bf16),
      LPC_GEMM_SYMBOL(lpc_rt_grouped_gemm_f16),
      LPC_GEMM_SYMBOL(lpc_rt_grouped_gemm_wgrad_f32),
      LPC_GEMM_SYMBOL(lpc_rt_grouped_gemm_wgrad_bf16),
      LPC_GEMM_SYMBOL(lpc_rt_grouped_gemm_wgrad_f16),
  };
#undef LPC_GEMM_SYMBOL
  *count = sizeof(symbols) / sizeof(symbols[0]);
  return symbols;
}

} // namespace rt
} // namespace lpc
