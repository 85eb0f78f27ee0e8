//===- GroupedGemmTest.cpp - grouped GEMMs against a double reference ----===//
//
// lpc_rt_grouped_gemm_<t> and lpc_rt_grouped_gemm_wgrad_<t> (f32, bf16,
// f16) on random nonzero inputs: groups sorted, unsorted, all one group,
// groups with no rows, rows of no group (negative, >= G), group sizes on
// both sides of the padding buckets (16, 64, 65, 100, 128, 129), K and N
// odd, both layouts of the matrices, padded row strides and offsets, and
// the empty cases (no rows, K = 0, no groups). The reference accumulates in
// double; a result must be within the f32-accumulation bound
// (K + 1) * 2^-24 * sum |a||b| of it, plus half a spacing of the result's
// format. The padding around each result must stay untouched. Invalid calls
// must abort with a message naming the entry point and the fault.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/GroupedGemm.h"
#include "lpc/Runtime/HostFloat.h"

#include "TestCheck.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>


using lpc::rt::MemRef;

namespace {

enum class Kind { F32, BF16, F16 };
const char *kindName(Kind k) {
  return k == Kind::F32 ? "f32" : k == Kind::BF16 ? "bf16" : "f16";
}
const lpc::rt::MiniFloat &format(Kind k) {
  return k == Kind::BF16 ? lpc::rt::kBF16 : lpc::rt::kF16;
}

/// A buffer of `rows` x `cols` values in the kind's storage (float, or
/// 16-bit patterns), with a row stride of cols + pad and `lead` elements
/// before the first row; the padding holds a sentinel.
struct Buf {
  Kind kind;
  int64_t rows, cols, stride, lead;
  std::vector<float> f;
  std::vector<uint16_t> h;
  static constexpr float kSentinel = 12345.0f;
  Buf(Kind k, int64_t r, int64_t c, int64_t pad, int64_t lead_)
      : kind(k), rows(r), cols(c), stride(c + pad), lead(lead_) {
    size_t n = size_t(lead + rows * stride + 1);
    if (k == Kind::F32)
      f.assign(n, kSentinel);
    else
      h.assign(n, uint16_t(format(k).encode(kSentinel)));
  }
  size_t at(int64_t i, int64_t j) const { return size_t(lead + i * stride + j); }
  double get(int64_t i, int64_t j) const {
    return kind == Kind::F32 ? f[at(i, j)] : format(kind).decode(h[at(i, j)]);
  }
  void set(int64_t i, int64_t j, double v) {
    if (kind == Kind::F32)
      f[at(i, j)] = float(v);
    else
      h[at(i, j)] = uint16_t(format(kind).encode(v));
  }
  /// Padding and lead untouched.
  bool paddingIntact() const {
    for (size_t i = 0; i < (kind == Kind::F32 ? f.size() : h.size()); ++i) {
      int64_t rel = int64_t(i) - lead;
      bool inside = rel >= 0 && rel < rows * stride && rel % stride < cols;
      if (inside)
        continue;
      if (kind == Kind::F32 ? f[i] != kSentinel
                            : h[i] != uint16_t(format(kind).encode(kSentinel)))
        return false;
    }
    return true;
  }
  template <typename T> MemRef<T, 2> desc2() {
    T *base = kind == Kind::F32 ? reinterpret_cast<T *>(f.data())
                                : reinterpret_cast<T *>(h.data());
    return {base, base, lead, {rows, cols}, {stride, 1}};
  }
};

/// G matrices of rows x cols, as one buffer of G * rows rows.
struct Stack3 {
  Buf b;
  int64_t count, rows;
  Stack3(Kind k, int64_t g, int64_t r, int64_t c, int64_t pad)
      : b(k, g * r, c, pad, 3), count(g), rows(r) {}
  double get(int64_t g, int64_t i, int64_t j) const { return b.get(g * rows + i, j); }
  template <typename T> MemRef<T, 3> desc3() {
    MemRef<T, 2> d = b.template desc2<T>();
    return {d.allocated, d.aligned, d.offset, {count, rows, b.cols},
            {rows * b.stride, b.stride, 1}};
  }
};

void fill(std::mt19937 &rng, Buf &b) {
  std::uniform_real_distribution<double> u(0.25, 1.0);
  std::bernoulli_distribution sign(0.5);
  for (int64_t i = 0; i < b.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j)
      b.set(i, j, (sign(rng) ? -1 : 1) * u(rng));
}

double halfSpacing(Kind k, double v) {
  if (k == Kind::F32)
    return std::ldexp(std::fabs(v), -24);
  return std::ldexp(std::fabs(v), k == Kind::BF16 ? -8 : -11) + 1e-7;
}

template <typename T>
void forward(Kind k, MemRef<T, 2> *x, MemRef<T, 3> *w, MemRef<int32_t, 1> *g,
             MemRef<T, 2> *y, int64_t tb) {
  if (k == Kind::F32)
    _mlir_ciface_lpc_rt_grouped_gemm_f32(reinterpret_cast<MemRef<float, 2> *>(x),
                                         reinterpret_cast<MemRef<float, 3> *>(w), g,
                                         reinterpret_cast<MemRef<float, 2> *>(y), tb);
  else if (k == Kind::BF16)
    _mlir_ciface_lpc_rt_grouped_gemm_bf16(reinterpret_cast<MemRef<uint16_t, 2> *>(x),
                                          reinterpret_cast<MemRef<uint16_t, 3> *>(w), g,
                                          reinterpret_cast<MemRef<uint16_t, 2> *>(y), tb);
  else
    _mlir_ciface_lpc_rt_grouped_gemm_f16(reinterpret_cast<MemRef<uint16_t, 2> *>(x),
                                         reinterpret_cast<MemRef<uint16_t, 3> *>(w), g,
                                         reinterpret_cast<MemRef<uint16_t, 2> *>(y), tb);
}

template <typename T>
void wgrad(Kind k, MemRef<T, 2> *x, MemRef<T, 2> *dy, MemRef<int32_t, 1> *g,
           MemRef<T, 3> *dw) {
  if (k == Kind::F32)
    _mlir_ciface_lpc_rt_grouped_gemm_wgrad_f32(
        reinterpret_cast<MemRef<float, 2> *>(x), reinterpret_cast<MemRef<float, 2> *>(dy), g,
        reinterpret_cast<MemRef<float, 3> *>(dw));
  else if (k == Kind::BF16)
    _mlir_ciface_lpc_rt_grouped_gemm_wgrad_bf16(
        reinterpret_cast<MemRef<uint16_t, 2> *>(x), reinterpret_cast<MemRef<uint16_t, 2> *>(dy),
        g, reinterpret_cast<MemRef<uint16_t, 3> *>(dw));
  else
    _mlir_ciface_lpc_rt_grouped_gemm_wgrad_f16(
        reinterpret_cast<MemRef<uint16_t, 2> *>(x), reinterpret_cast<MemRef<uint16_t, 2> *>(dy),
        g, reinterpret_cast<MemRef<uint16_t, 3> *>(dw));
}

/// One case: R rows of K, G groups, N columns; `groups` given.
template <typename T>
void runCase(Kind k, std::mt19937 &rng, std::vector<int32_t> groups, int64_t G,
             int64_t K, int64_t N, bool tb, const char *what) {
  const int64_t R = int64_t(groups.size());
  Buf x(k, R, K, 3, 5), y(k, R, N, 2, 1), dy(k, R, N, 0, 0);
  Stack3 w(k, G, tb ? N : K, tb ? K : N, 1), dw(k, G, K, N, 2);
  fill(rng, x);
  fill(rng, dy);
  fill(rng, w.b);
  MemRef<int32_t, 1> gd{groups.data(), groups.data(), 0, {R}, {1}};
  MemRef<T, 2> xd = x.desc2<T>(), yd = y.desc2<T>(), dyd = dy.desc2<T>();
  MemRef<T, 3> wd = w.desc3<T>(), dwd = dw.desc3<T>();
  forward(k, &xd, &wd, &gd, &yd, tb ? 1 : 0);
  wgrad(k, &xd, &dyd, &gd, &dwd);
  int bad = 0;
  for (int64_t r = 0; r < R; ++r) {
    const int32_t g = groups[size_t(r)];
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0, mag = 0;
      if (g >= 0 && g < G)
        for (int64_t p = 0; p < K; ++p) {
          double wv = tb ? w.get(g, j, p) : w.get(g, p, j);
          ref += x.get(r, p) * wv;
          mag += std::fabs(x.get(r, p) * wv);
        }
      double tol = (K + 1) * std::ldexp(mag, -24) + halfSpacing(k, ref);
      if (!(std::fabs(y.get(r, j) - ref) <= tol) && bad++ < 3)
        CHECK(false, "%s %s: y[%lld, %lld] = %g, expected %g", kindName(k), what,
              (long long)r, (long long)j, y.get(r, j), ref);
    }
  }
  for (int64_t g = 0; g < G; ++g)
    for (int64_t p = 0; p < K; ++p)
      for (int64_t j = 0; j < N; ++j) {
        double ref = 0, mag = 0;
        int64_t rows = 0;
        for (int64_t r = 0; r < R; ++r)
          if (groups[size_t(r)] == g) {
            ref += x.get(r, p) * dy.get(r, j);
            mag += std::fabs(x.get(r, p) * dy.get(r, j));
            ++rows;
          }
        double tol = (rows + 1) * std::ldexp(mag, -24) + halfSpacing(k, ref);
        if (!(std::fabs(dw.get(g, p, j) - ref) <= tol) && bad++ < 3)
          CHECK(false, "%s %s: dw[%lld, %lld, %lld] = %g, expected %g", kindName(k), what,
                (long long)g, (long long)p, (long long)j, dw.get(g, p, j), ref);
      }
  CHECK(bad == 0, "%s %s: %d wrong elements", kindName(k), what, bad);
  CHECK(y.paddingIntact(), "%s %s: y's padding or lead was written", kindName(k), what);
  CHECK(dw.b.paddingIntact(), "%s %s: dw's padding or lead was written", kindName(k), what);
}

std::vector<int32_t> runs(std::initializer_list<std::pair<int32_t, int>> parts) {
  std::vector<int32_t> g;
  for (auto [group, count] : parts)
    g.insert(g.end(), size_t(count), group);
  return g;
}

} // namespace

int main() {
  std::mt19937 rng(20261205);
  for (Kind k : {Kind::F32, Kind::BF16, Kind::F16}) {
    auto run = [&](std::vector<int32_t> g, int64_t G, int64_t K, int64_t N, bool tb,
                   const char *what) {
      if (k == Kind::F32)
        runCase<float>(k, rng, std::move(g), G, K, N, tb, what);
      else
        runCase<uint16_t>(k, rng, std::move(g), G, K, N, tb, what);
    };
    // Sorted, sizes around the buckets (16 and 64 in place, 65, 100, 128,
    // 129 padded), a group without rows (3), rows of no group at both ends.
    std::vector<int32_t> sorted =
        runs({{-1, 2}, {0, 16}, {1, 64}, {2, 65}, {4, 100}, {5, 128}, {6, 129}, {7, 1}, {9, 3}});
    for (bool tb : {false, true}) {
      run(sorted, 8, 33, 47, tb, tb ? "sorted, transposed" : "sorted");
      std::vector<int32_t> shuffled = sorted;
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      run(shuffled, 8, 33, 47, tb, tb ? "unsorted, transposed" : "unsorted");
    }
    run(runs({{0, 200}}), 1, 17, 5, false, "one group");
    run(runs({{2, 7}, {0, 5}, {2, 3}}), 3, 9, 11, true, "a group split in two");
    run({}, 4, 8, 8, false, "no rows");
    run(runs({{0, 5}, {1, 6}}), 2, 0, 7, false, "K = 0");
    run(runs({{-1, 4}, {3, 2}}), 0, 6, 5, false, "no groups");
  }

  // Invalid calls abort and say what is wrong.
  std::vector<float> data(64, 1.0f);
  std::vector<int32_t> gi(4, 0);
  MemRef<float, 2> x{data.data(), data.data(), 0, {4, 3}, {3, 1}};
  MemRef<float, 3> w{data.data(), data.data(), 0, {2, 3, 5}, {15, 5, 1}};
  MemRef<float, 2> y{data.data(), data.data(), 0, {4, 5}, {5, 1}};
  MemRef<int32_t, 1> g{gi.data(), gi.data(), 0, {4}, {1}};
  expectAbort("lpc_rt_grouped_gemm_f32", "transB must be 0 or 1, got 2", [&] {
    _mlir_ciface_lpc_rt_grouped_gemm_f32(&x, &w, &g, &y, 2);
  });
  expectAbort("lpc_rt_grouped_gemm_f32", "shapes differ", [&] {
    _mlir_ciface_lpc_rt_grouped_gemm_f32(&x, &w, &g, &y, 1);
  });
  expectAbort("lpc_rt_grouped_gemm_f32", "the descriptor of w is null", [&] {
    _mlir_ciface_lpc_rt_grouped_gemm_f32(&x, nullptr, &g, &y, 0);
  });
  MemRef<int32_t, 1> g3{gi.data(), gi.data(), 0, {3}, {1}};
  expectAbort("lpc_rt_grouped_gemm_f32", "groups has 3 entries for 4 rows", [&] {
    _mlir_ciface_lpc_rt_grouped_gemm_f32(&x, &w, &g3, &y, 0);
  });
  MemRef<float, 2> xs{data.data(), data.data(), 0, {4, 3}, {3, 2}};
  expectAbort("lpc_rt_grouped_gemm_f32", "x: the last dimension must be contiguous", [&] {
    _mlir_ciface_lpc_rt_grouped_gemm_f32(&xs, &w, &g, &y, 0);
  });
  MemRef<float, 3> dw{data.data(), data.data(), 0, {2, 3, 4}, {12, 4, 1}};
  expectAbort("lpc_rt_grouped_gemm_wgrad_f32", "shapes differ", [&] {
    _mlir_ciface_lpc_rt_grouped_gemm_wgrad_f32(&x, &y, &g, &dw);
  });

  std::printf("lpc-grouped-gemm-test: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
