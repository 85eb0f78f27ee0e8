//===- GroupedGemm.cpp - grouped GEMMs (mixture of experts) on the CPU ----===//
//
// The entry points of lpc.grouped_matmul and lpc.grouped_matmul_weight_grad
// (include/lpc/Runtime/GroupedGemm.h). The rows are put together by group (a
// stable counting sort); each group is one GEMM through this library's own
// entry points (Gemm.cpp: oneDNN's matmul, its checks and threads), its rows
// gathered into a buffer and its results scattered back to their rows, or
// read and written in place where the group's rows already follow each
// other and need no padding.
//
// A group's row count is data: it changes every step. oneDNN builds a primitive
// per shape (milliseconds each, kept for the life of the process), so a group
// is padded with zero rows to a bucket: a multiple of 16 up to 64 rows, then
// four buckets per power of two (a multiple of a quarter of the count's
// largest power of two). At most 25% more rows, and a bounded set of shapes
// per (K, N): the primitive cache stops growing once the buckets are seen.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/GroupedGemm.h"
#include "lpc/Runtime/Gemm.h"
#include "lpc/Runtime/HostFloat.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

using lpc::rt::MemRef;

namespace {

[[noreturn]] void fail(const char *entry, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

[[noreturn]] void fail(const char *entry, const char *fmt, ...) {
  std::fprintf(stderr, "lpc runtime: %s: invalid call (a bug in the caller): ",
               entry);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
  std::abort();
}

/// The rows a group of `len` rows is padded to (see the header comment).
int64_t bucket(int64_t len) {
  if (len <= 64)
    return (len + 15) / 16 * 16;
  int64_t p = 1;
  while (p * 2 <= len)
    p *= 2;
  const int64_t step = p / 4;
  return (len + step - 1) / step * step;
}

/// A checked row-major-rows matrix: element (i, j) at data[i * stride + j].
template <typename T> struct Mat {
  T *data;
  int64_t rows, cols, stride;
};

template <typename T>
Mat<T> checkMatrix(const char *entry, const char *name, MemRef<T, 2> *m) {
  if (!m)
    fail(entry, "the descriptor of %s is null", name);
  for (int d = 0; d < 2; ++d)
    if (m->sizes[d] < 0 || m->strides[d] < 0)
      fail(entry, "%s has a negative size or stride in dimension %d", name, d);
  if (m->offset < 0)
    fail(entry, "%s has a negative offset", name);
  Mat<T> r{m->aligned + m->offset, m->sizes[0], m->sizes[1], m->strides[0]};
  if (r.cols > 1 && m->strides[1] != 1)
    fail(entry, "%s: the last dimension must be contiguous, got stride %" PRId64,
         name, m->strides[1]);
  if (r.rows > 1 && r.stride < r.cols)
    fail(entry, "%s: rows overlap (stride %" PRId64 " < %" PRId64 " columns)",
         name, r.stride, r.cols);
  if (r.rows <= 1)
    r.stride = r.cols;
  if (r.rows * r.cols > 0 && !m->aligned)
    fail(entry, "%s has a null data pointer", name);
  return r;
}

/// The matrices of a [G, rows, cols] descriptor.
template <typename T> struct Stack {
  T *data;
  int64_t count, rows, cols, matStride, rowStride;
  Mat<T> at(int64_t g) const {
    return {data + g * matStride, rows, cols, rowStride};
  }
};

template <typename T>
Stack<T> checkStack(const char *entry, const char *name, MemRef<T, 3> *m) {
  if (!m)
    fail(entry, "the descriptor of %s is null", name);
  for (int d = 0; d < 3; ++d)
    if (m->sizes[d] < 0 || m->strides[d] < 0)
      fail(entry, "%s has a negative size or stride in dimension %d", name, d);
  if (m->offset < 0)
    fail(entry, "%s has a negative offset", name);
  Stack<T> s{m->aligned + m->offset, m->sizes[0], m->sizes[1], m->sizes[2],
             m->strides[0], m->strides[1]};
  if (s.cols > 1 && m->strides[2] != 1)
    fail(entry, "%s: the last dimension must be contiguous, got stride %" PRId64,
         name, m->strides[2]);
  if (s.rows <= 1)
    s.rowStride = s.cols;
  if (s.rows > 1 && s.rowStride < s.cols)
    fail(entry, "%s: rows overlap", name);
  if (s.count <= 1)
    s.matStride = s.rows * s.rowStride;
  if (s.count > 1 && s.matStride < (s.rows - 1) * s.rowStride + s.cols)
    fail(entry, "%s: matrices overlap", name);
  if (s.count * s.rows * s.cols > 0 && !m->aligned)
    fail(entry, "%s has a null data pointer", name);
  return s;
}

std::vector<int32_t> readGroups(const char *entry, MemRef<int32_t, 1> *g,
                                int64_t rows) {
  if (!g)
    fail(entry, "the descriptor of groups is null");
  if (g->sizes[0] != rows)
    fail(entry, "groups has %" PRId64 " entries for %" PRId64 " rows",
         g->sizes[0], rows);
  if (rows > 0 && (!g->aligned || g->offset < 0 || g->strides[0] < 0))
    fail(entry, "groups has a null data pointer or a negative offset/stride");
  std::vector<int32_t> out(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i)
    out[size_t(i)] = g->aligned[g->offset + i * g->strides[0]];
  return out;
}

/// The three element types: what the entry point's C holds, how a GEMM of
/// its operands is called, how a value of C becomes the result's.
struct F32 {
  using T = float;
  using C = float; // the GEMM's C
  static void gemm(MemRef<T, 3> *a, MemRef<T, 3> *b, MemRef<C, 3> *c,
                   int64_t ta, int64_t tb) {
    _mlir_ciface_lpc_rt_gemm_f32(a, b, c, ta, tb, 0);
  }
  static T narrow(C x) { return x; }
};
struct BF16 {
  using T = uint16_t;
  using C = uint16_t; // oneDNN rounds the f32 sums to bf16 as it writes C
  static void gemm(MemRef<T, 3> *a, MemRef<T, 3> *b, MemRef<C, 3> *c,
                   int64_t ta, int64_t tb) {
    _mlir_ciface_lpc_rt_gemm_bf16_bf16(a, b, c, ta, tb, 0);
  }
  static T narrow(C x) { return x; }
};
struct F16 {
  using T = uint16_t;
  using C = float; // f16 GEMMs are widened to f32 (Gemm.cpp)
  static void gemm(MemRef<T, 3> *a, MemRef<T, 3> *b, MemRef<C, 3> *c,
                   int64_t ta, int64_t tb) {
    _mlir_ciface_lpc_rt_gemm_f16(a, b, c, ta, tb, 0);
  }
  static T narrow(C x) { return uint16_t(lpc::rt::kF16.encodeFloat(x)); }
};

/// `m` as a one-matrix stack descriptor.
template <typename T> MemRef<T, 3> view(const Mat<T> &m) {
  MemRef<T, 3> d;
  d.allocated = d.aligned = m.data;
  d.offset = 0;
  d.sizes[0] = 1, d.sizes[1] = m.rows, d.sizes[2] = m.cols;
  d.strides[0] = std::max<int64_t>(m.rows * m.stride, 1);
  d.strides[1] = std::max<int64_t>(m.stride, 1);
  d.strides[2] = 1;
  return d;
}

/// The rows order[first .. first + len) of `m` in a zero-padded row-major
/// buffer of `rows` rows.
template <typename T>
Mat<T> padded(const Mat<T> &m, int64_t first, int64_t len, int64_t rows,
              const std::vector<int64_t> &order, std::vector<T> &buf) {
  buf.assign(size_t(rows * m.cols), T(0));
  for (int64_t i = 0; i < len; ++i) {
    const int64_t src = order[size_t(first + i)];
    std::memcpy(buf.data() + i * m.cols, m.data + src * m.stride,
                size_t(m.cols) * sizeof(T));
  }
  return {buf.data(), rows, m.cols, m.cols};
}

/// The rows of each group together: rows start[g] .. start[g + 1] of
/// `order` are group g's, in their original order (a stable counting sort;
/// rows of no group are left out). `contiguous`: each group's rows already
/// follow each other in place (order[j + 1] == order[j] + 1 within a group),
/// so a group can be read and written where it is.
struct Grouping {
  std::vector<int64_t> start, order;
  bool contiguous = true;
};

Grouping groupRows(const std::vector<int32_t> &groups, int64_t numGroups) {
  Grouping gr;
  gr.start.assign(static_cast<size_t>(numGroups) + 1, 0);
  for (int32_t g : groups)
    if (g >= 0 && g < numGroups)
      ++gr.start[size_t(g) + 1];
  for (int64_t g = 0; g < numGroups; ++g)
    gr.start[size_t(g) + 1] += gr.start[size_t(g)];
  gr.order.resize(static_cast<size_t>(gr.start[size_t(numGroups)]));
  std::vector<int64_t> next(gr.start.begin(), gr.start.end() - 1);
  for (size_t r = 0; r < groups.size(); ++r) {
    const int32_t g = groups[r];
    if (g >= 0 && g < numGroups)
      gr.order[size_t(next[size_t(g)]++)] = int64_t(r);
  }
  for (int64_t g = 0; g < numGroups && gr.contiguous; ++g)
    for (int64_t j = gr.start[size_t(g)]; j + 1 < gr.start[size_t(g) + 1]; ++j)
      if (gr.order[size_t(j) + 1] != gr.order[size_t(j)] + 1) {
        gr.contiguous = false;
        break;
      }
  return gr;
}

template <typename E>
void groupedGemm(const char *entry, MemRef<typename E::T, 2> *X,
                 MemRef<typename E::T, 3> *W, MemRef<int32_t, 1> *G,
                 MemRef<typename E::T, 2> *Y, int64_t transB) {
  using T = typename E::T;
  using C = typename E::C;
  if (transB != 0 && transB != 1)
    fail(entry, "transB must be 0 or 1, got %" PRId64, transB);
  const Mat<T> x = checkMatrix(entry, "x", X), y = checkMatrix(entry, "y", Y);
  const Stack<T> w = checkStack(entry, "w", W);
  const int64_t K = transB ? w.cols : w.rows, N = transB ? w.rows : w.cols;
  if (x.cols != K || y.rows != x.rows || y.cols != N)
    fail(entry,
         "shapes differ: x [%" PRId64 ", %" PRId64 "], w [%" PRId64 ", %" PRId64
         ", %" PRId64 "]%s, y [%" PRId64 ", %" PRId64 "]",
         x.rows, x.cols, w.count, w.rows, w.cols, transB ? " (transposed)" : "",
         y.rows, y.cols);
  const std::vector<int32_t> groups = readGroups(entry, G, x.rows);
  for (int64_t r = 0; r < x.rows; ++r) // rows of no group are 0
    if (groups[size_t(r)] < 0 || groups[size_t(r)] >= w.count)
      std::fill_n(y.data + r * y.stride, N, T(0));
  const Grouping gr = groupRows(groups, w.count);
  thread_local std::vector<T> xBuf;
  thread_local std::vector<C> cBuf;
  for (int64_t g = 0; g < w.count; ++g) {
    const int64_t first = gr.start[size_t(g)];
    const int64_t len = gr.start[size_t(g) + 1] - first;
    if (len == 0)
      continue;
    const int64_t rows = bucket(len);
    MemRef<T, 3> bv = view(w.at(g));
    if constexpr (std::is_same_v<T, C>) {
      if (gr.contiguous && rows == len) { // in place
        const int64_t r0 = gr.order[size_t(first)];
        MemRef<T, 3> av = view(Mat<T>{x.data + r0 * x.stride, len, K, x.stride});
        MemRef<T, 3> cv = view(Mat<T>{y.data + r0 * y.stride, len, N, y.stride});
        E::gemm(&av, &bv, &cv, 0, transB);
        continue;
      }
    }
    MemRef<T, 3> av = view(padded(x, first, len, rows, gr.order, xBuf));
    cBuf.resize(size_t(rows * N));
    MemRef<C, 3> cv = view(Mat<C>{cBuf.data(), rows, N, N});
    E::gemm(&av, &bv, &cv, 0, transB);
    for (int64_t i = 0; i < len; ++i) {
      T *dst = y.data + gr.order[size_t(first + i)] * y.stride;
      const C *src = cBuf.data() + i * N;
      for (int64_t j = 0; j < N; ++j)
        dst[j] = E::narrow(src[j]);
    }
  }
}

template <typename E>
void groupedGemmWeightGrad(const char *entry, MemRef<typename E::T, 2> *X,
                           MemRef<typename E::T, 2> *DY, MemRef<int32_t, 1> *G,
                           MemRef<typename E::T, 3> *DW) {
  using T = typename E::T;
  using C = typename E::C;
  const Mat<T> x = checkMatrix(entry, "x", X), dy = checkMatrix(entry, "dy", DY);
  const Stack<T> dw = checkStack(entry, "dw", DW);
  const int64_t K = x.cols, N = dy.cols;
  if (dy.rows != x.rows || dw.rows != K || dw.cols != N)
    fail(entry,
         "shapes differ: x [%" PRId64 ", %" PRId64 "], dy [%" PRId64 ", %" PRId64
         "], dw [%" PRId64 ", %" PRId64 ", %" PRId64 "]",
         x.rows, x.cols, dy.rows, dy.cols, dw.count, dw.rows, dw.cols);
  const Grouping gr = groupRows(readGroups(entry, G, x.rows), dw.count);
  thread_local std::vector<T> xBuf, dBuf;
  thread_local std::vector<C> cBuf;
  for (int64_t g = 0; g < dw.count; ++g) {
    const Mat<T> out = dw.at(g);
    const int64_t first = gr.start[size_t(g)];
    const int64_t len = gr.start[size_t(g) + 1] - first;
    if (len == 0) {
      for (int64_t r = 0; r < K; ++r)
        std::fill_n(out.data + r * out.stride, N, T(0));
      continue;
    }
    // dw[g] = a^T b over the group's rows; zero padding rows add nothing.
    const int64_t rows = bucket(len);
    const bool inPlace = gr.contiguous && rows == len;
    const int64_t r0 = gr.order[size_t(first)];
    Mat<T> a = inPlace ? Mat<T>{x.data + r0 * x.stride, len, K, x.stride}
                       : padded(x, first, len, rows, gr.order, xBuf);
    Mat<T> b = inPlace ? Mat<T>{dy.data + r0 * dy.stride, len, N, dy.stride}
                       : padded(dy, first, len, rows, gr.order, dBuf);
    MemRef<T, 3> av = view(a), bv = view(b);
    if constexpr (std::is_same_v<T, C>) {
      MemRef<T, 3> cv = view(out);
      E::gemm(&av, &bv, &cv, 1, 0);
    } else {
      cBuf.resize(size_t(K * N));
      MemRef<C, 3> cv = view(Mat<C>{cBuf.data(), K, N, N});
      E::gemm(&av, &bv, &cv, 1, 0);
      for (int64_t r = 0; r < K; ++r)
        for (int64_t j = 0; j < N; ++j)
          out.data[r * out.stride + j] = E::narrow(cBuf[size_t(r * N + j)]);
    }
  }
}

} // namespace

#define LPC_DEFINE_GROUPED(SUFFIX, E)                                          \
  extern "C" void _mlir_ciface_lpc_rt_grouped_gemm_##SUFFIX(                   \
      MemRef<E::T, 2> *X, MemRef<E::T, 3> *W, MemRef<int32_t, 1> *G,           \
      MemRef<E::T, 2> *Y, int64_t transB) {                                    \
    groupedGemm<E>("lpc_rt_grouped_gemm_" #SUFFIX, X, W, G, Y, transB);        \
  }                                                                            \
  extern "C" void _mlir_ciface_lpc_rt_grouped_gemm_wgrad_##SUFFIX(             \
      MemRef<E::T, 2> *X, MemRef<E::T, 2> *DY, MemRef<int32_t, 1> *G,          \
      MemRef<E::T, 3> *DW) {                                                   \
    groupedGemmWeightGrad<E>("lpc_rt_grouped_gemm_wgrad_" #SUFFIX, X, DY, G,   \
                             DW);                                              \
  }
LPC_DEFINE_GROUPED(f32, F32)
LPC_DEFINE_GROUPED(bf16, BF16)
LPC_DEFINE_GROUPED(f16, F16)
#undef LPC_DEFINE_GROUPED
