//===- CommMpiTest.cpp - the collectives' entry points on several ranks ---===//
//
// ctest runtime/comm-mpi: `mpirun -np 3 lpc-comm-mpi-test`. Every rank
// builds every rank's input from the rank's seed, so each can compute the
// expected result by itself:
//
// - the narrow wire formats (bf16, f16, FP8 E4M3 and E5M2, mean only):
//   bit for bit against the algorithm lpc.all_reduce's description states,
//   written here with the slow double-precision encoder (MiniFloat::encode),
//   none of the runtime's buffers, slabs or padding; and within each
//   format's rounding of the double-precision mean;
// - fp32 (sum, mean, max): within 1e-6 of the double-precision result;
// - every rank holds the same bits (a hash compared with rank 0's);
// - a NaN or inf on one rank: FP8's whole result is NaN, bf16's element
//   stays non-finite;
// - sizes below, at and above the rank count and across slabs
//   (commSetNarrowSlab), and the traffic counters;
// - lpc.reduce_scatter and lpc.all_gather (every kind and wire format): bit
//   for bit against their documented algorithms, within 1e-6 (fp32) or the
//   format's rounding of the double-precision result, and an all-gather of
//   a reduce-scatter against the all-reduce.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Comm.h"
#include "lpc/Runtime/HostFloat.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace rt = lpc::rt;

static int failures = 0;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "FAIL rank %d %s:%d: ", rt::commRank(), __FILE__,   \
                   __LINE__);                                                  \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

namespace {

/// Rank r's input of n elements for test case `seed`: normal values times
/// magnitudes spread over 2^-12 .. 2^12 (gradients of several tensors in one
/// bucket), never all zero.
std::vector<float> inputOf(int r, int64_t n, uint64_t seed) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + uint64_t(r) * 7919 + 1;
  auto uniform = [&] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return double(s >> 11) / double(uint64_t(1) << 53);
  };
  std::vector<float> x(static_cast<size_t>(n));
  for (auto &v : x) {
    double u1 = uniform() + 1e-12, u2 = uniform();
    double g = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    v = float(g * std::exp2(std::floor(24 * uniform()) - 12));
  }
  return x;
}

const rt::MiniFloat &formatOf(rt::Wire w) {
  switch (w) {
  case rt::Wire::F16:
    return rt::kF16;
  case rt::Wire::BF16:
    return rt::kBF16;
  case rt::Wire::E4M3:
    return rt::kE4M3;
  default:
    return rt::kE5M2;
  }
}

float roundTo(const rt::MiniFloat &f, float x) {
  return float(f.decode(f.encode(double(x))));
}

/// The documented algorithm, element by element.
std::vector<float> expectedNarrow(const std::vector<std::vector<float>> &xs,
                                  rt::Wire w) {
  const rt::MiniFloat &f = formatOf(w);
  const int ranks = int(xs.size());
  const size_t n = xs[0].size();
  float scale = 1.0f;
  if (w == rt::Wire::E4M3 || w == rt::Wire::E5M2) {
    double fmax = w == rt::Wire::E4M3 ? 448.0 : 57344.0, amax = 0;
    for (auto &x : xs)
      for (float v : x) {
        if (!std::isfinite(v))
          return std::vector<float>(n, NAN);
        amax = std::max(amax, double(std::fabs(v)));
      }
    if (amax > 0)
      scale = float(std::ldexp(
          1.0, std::min(126, int(std::floor(std::log2(fmax / amax))))));
  }
  std::vector<float> y(n);
  for (size_t i = 0; i < n; ++i) {
    float acc = 0.0f;
    for (int r = 0; r < ranks; ++r)
      acc += roundTo(f, xs[size_t(r)][i] * scale);
    y[i] = roundTo(f, acc / float(ranks)) * (1.0f / scale);
  }
  return y;
}

uint64_t hashOf(const std::vector<float> &y) {
  uint64_t h = 1469598103934665603ull;
  for (float v : y) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    h = (h ^ u) * 1099511628211ull;
  }
  return h;
}

std::vector<float> allReduce(std::vector<float> x, int64_t kind, rt::Wire w) {
  std::vector<float> y(x.size(), -7.0f);
  rt::CommMemRef1F32 a{x.data(), x.data(), 0, int64_t(x.size()), 1};
  rt::CommMemRef1F32 b{y.data(), y.data(), 0, int64_t(y.size()), 1};
  _mlir_ciface_lpc_rt_all_reduce_f32(&a, &b, kind, int64_t(w));
  return y;
}

std::vector<float> reduceScatter(std::vector<float> x, int64_t kind,
                                 rt::Wire w, int ranks) {
  std::vector<float> y(x.size() / size_t(ranks), -7.0f);
  rt::CommMemRef1F32 a{x.data(), x.data(), 0, int64_t(x.size()), 1};
  rt::CommMemRef1F32 b{y.data(), y.data(), 0, int64_t(y.size()), 1};
  _mlir_ciface_lpc_rt_reduce_scatter_f32(&a, &b, kind, int64_t(w), ranks);
  return y;
}

std::vector<float> allGather(std::vector<float> x, rt::Wire w, int ranks) {
  std::vector<float> y(x.size() * size_t(ranks), -7.0f);
  rt::CommMemRef1F32 a{x.data(), x.data(), 0, int64_t(x.size()), 1};
  rt::CommMemRef1F32 b{y.data(), y.data(), 0, int64_t(y.size()), 1};
  _mlir_ciface_lpc_rt_all_gather_f32(&a, &b, int64_t(w), ranks);
  return y;
}

bool isFp8(rt::Wire w) { return w == rt::Wire::E4M3 || w == rt::Wire::E5M2; }

/// FP8's shared scale over every rank's values (NaN: one is not finite);
/// 1 for the other formats.
float sharedScaleOf(const std::vector<std::vector<float>> &xs, rt::Wire w) {
  if (!isFp8(w))
    return 1.0f;
  double fmax = w == rt::Wire::E4M3 ? 448.0 : 57344.0, amax = 0;
  for (auto &x : xs)
    for (float v : x) {
      if (!std::isfinite(v))
        return NAN;
      amax = std::max(amax, double(std::fabs(v)));
    }
  if (amax == 0)
    return 1.0f;
  return float(
      std::ldexp(1.0, std::min(126, int(std::floor(std::log2(fmax / amax))))));
}

/// lpc.reduce_scatter's documented algorithm: rank `me`'s block, every
/// rank's value rounded to the wire format (FP8: scaled), added in f32 in
/// rank order (max: NaN wins), the mean divided by N and unscaled.
std::vector<float> expectedReduceScatter(
    const std::vector<std::vector<float>> &xs, int me, int64_t kind,
    rt::Wire w) {
  const int ranks = int(xs.size());
  const size_t k = xs[0].size() / size_t(ranks);
  const float scale = sharedScaleOf(xs, w);
  if (std::isnan(scale))
    return std::vector<float>(k, NAN);
  auto wire = [&](float v) {
    return w == rt::Wire::F32 ? v : roundTo(formatOf(w), v * scale);
  };
  std::vector<float> y(k);
  for (size_t i = 0; i < k; ++i) {
    size_t at = size_t(me) * k + i;
    float acc = wire(xs[0][at]);
    for (int r = 1; r < ranks; ++r) {
      float v = wire(xs[size_t(r)][at]);
      acc = kind == 2 ? (std::isnan(acc) || acc >= v ? acc : v) : acc + v;
    }
    y[i] = kind == 1 ? acc / float(ranks) * (1.0f / scale) : acc;
  }
  return y;
}

/// lpc.all_gather's: every rank's values rounded (FP8: with the shared
/// scale), in rank order.
std::vector<float> expectedAllGather(const std::vector<std::vector<float>> &xs,
                                     rt::Wire w) {
  const float scale = sharedScaleOf(xs, w);
  std::vector<float> y;
  for (auto &x : xs)
    for (float v : x)
      y.push_back(std::isnan(scale)       ? NAN
                  : w == rt::Wire::F32 ? v
                                       : roundTo(formatOf(w), v * scale) *
                                             (1.0f / scale));
  return y;
}

/// The number of elements whose bits differ.
int bitDiffs(const std::vector<float> &a, const std::vector<float> &b,
             size_t *first) {
  int n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t u, v;
    std::memcpy(&u, &a[i], 4);
    std::memcpy(&v, &b[i], 4);
    if (u != v && n++ == 0)
      *first = i;
  }
  return n + int(a.size() != b.size());
}

const char *nameOf(rt::Wire w) {
  static const char *names[] = {"fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"};
  return names[int(w)];
}

} // namespace

int main(int argc, char **argv) {
  if (rt::Error e = rt::commInit(&argc, &argv)) {
    std::fprintf(stderr, "commInit: %s\n", e.message().c_str());
    return 1;
  }
  const int ranks = rt::commSize(), me = rt::commRank();
  if (ranks < 2) {
    std::fprintf(stderr, "run under mpirun with 2 or more ranks\n");
    return 1;
  }
  uint64_t seed = 0;
  for (int64_t n : {int64_t(1), int64_t(2), int64_t(ranks), int64_t(5),
                    int64_t(1000), int64_t(4099)}) {
    for (int slab : {0, 7}) {
      rt::commSetNarrowSlab(slab);
      ++seed;
      std::vector<std::vector<float>> xs;
      for (int r = 0; r < ranks; ++r)
        xs.push_back(inputOf(r, n, seed));
      const std::vector<float> &mine = xs[size_t(me)];
      for (rt::Wire w : {rt::Wire::F16, rt::Wire::BF16, rt::Wire::E4M3,
                         rt::Wire::E5M2}) {
        std::vector<float> y = allReduce(mine, 1, w);
        std::vector<float> want = expectedNarrow(xs, w);
        const rt::MiniFloat &f = formatOf(w);
        int bad = 0;
        for (int64_t i = 0; i < n; ++i) {
          uint32_t a, b;
          std::memcpy(&a, &y[size_t(i)], 4);
          std::memcpy(&b, &want[size_t(i)], 4);
          if (a != b && bad++ < 3)
            CHECK(false, "%s n=%lld slab=%d [%lld]: %a, expected %a",
                  nameOf(w), (long long)n, slab, (long long)i,
                  double(y[size_t(i)]), double(want[size_t(i)]));
          // Against the exact mean: each rank's rounding and the mean's,
          // half an ulp each at the largest input's binade, plus FP8's
          // subnormal floor.
          double exact = 0, big = 0;
          for (int r = 0; r < ranks; ++r) {
            exact += xs[size_t(r)][size_t(i)];
            big = std::max(big, double(std::fabs(xs[size_t(r)][size_t(i)])));
          }
          exact /= ranks;
          double amax = 0;
          for (auto &x : xs)
            for (float v : x)
              amax = std::max(amax, double(std::fabs(v)));
          // The subnormals' absolute steps (FP8: in scaled units, and
          // 1 / scale <= 2 amax / fmax).
          const bool fp8 = w == rt::Wire::E4M3 || w == rt::Wire::E5M2;
          double minSub = std::ldexp(1.0, 1 - f.bias() - f.manBits);
          double floor =
              fp8 ? 4 * amax * minSub / (w == rt::Wire::E4M3 ? 448.0 : 57344.0)
                  : minSub;
          double tol = 2 * big * std::ldexp(1.0, -f.manBits) + floor;
          if (!(std::fabs(y[size_t(i)] - exact) <= tol) && bad++ < 3)
            CHECK(false, "%s n=%lld [%lld]: %g, exact mean %g (tolerance %g)",
                  nameOf(w), (long long)n, (long long)i, double(y[size_t(i)]),
                  exact, tol);
        }
        uint64_t h = hashOf(y);
        CHECK(rt::commBroadcastFromRoot(h) == h, "%s n=%lld: ranks differ",
              nameOf(w), (long long)n);
      }
      // fp32: sum, mean, max.
      for (int64_t kind : {0, 1, 2}) {
        std::vector<float> y = allReduce(mine, kind, rt::Wire::F32);
        for (int64_t i = 0; i < n; ++i) {
          double want = kind == 2 ? -INFINITY : 0, big = 0;
          for (int r = 0; r < ranks; ++r) {
            double v = xs[size_t(r)][size_t(i)];
            want = kind == 2 ? std::max(want, v) : want + v;
            big = std::max(big, std::fabs(v));
          }
          if (kind == 1)
            want /= ranks;
          CHECK(std::fabs(y[size_t(i)] - want) <= 1e-6 * big,
                "fp32 kind %lld n=%lld [%lld]: %g, expected %g",
                (long long)kind, (long long)n, (long long)i,
                double(y[size_t(i)]), want);
        }
      }
    }
  }
  rt::commSetNarrowSlab(0);

  // lpc.reduce_scatter and lpc.all_gather: K elements per rank.
  const rt::Wire wires[] = {rt::Wire::F32, rt::Wire::F16, rt::Wire::BF16,
                            rt::Wire::E4M3, rt::Wire::E5M2};
  for (int64_t k : {int64_t(1), int64_t(2), int64_t(5), int64_t(1000),
                    int64_t(4099)}) {
    for (int slab : {0, 7}) {
      rt::commSetNarrowSlab(slab);
      ++seed;
      std::vector<std::vector<float>> xs, parts;
      for (int r = 0; r < ranks; ++r) {
        xs.push_back(inputOf(r, k * ranks, seed));
        parts.push_back(inputOf(r, k, seed + 1000));
      }
      for (rt::Wire w : wires) {
        for (int64_t kind : {0, 1, 2}) {
          if (w != rt::Wire::F32 && kind != 1)
            continue; // the verifier refuses these
          std::vector<float> y = reduceScatter(xs[size_t(me)], kind, w, ranks);
          std::vector<float> want = expectedReduceScatter(xs, me, kind, w);
          size_t at = 0;
          if (int d = bitDiffs(y, want, &at))
            CHECK(false,
                  "reduce_scatter %s kind %lld k=%lld slab=%d: %d elements "
                  "differ from the algorithm, first [%zu]: %a, expected %a",
                  nameOf(w), (long long)kind, (long long)k, slab, d, at,
                  double(y[at]), double(want[at]));
          // Against double precision: fp32 within 1e-6 of the largest
          // input, the narrow formats within each rank's rounding (half an
          // ulp at the largest input's binade) plus FP8's subnormal floor.
          double amax = 0;
          for (auto &x : xs)
            for (float v : x)
              amax = std::max(amax, double(std::fabs(v)));
          const rt::MiniFloat &f = formatOf(w);
          int bad = 0;
          for (int64_t i = 0; i < k; ++i) {
            double exact = kind == 2 ? -INFINITY : 0, big = 0;
            for (int r = 0; r < ranks; ++r) {
              double v = xs[size_t(r)][size_t(me * k + i)];
              exact = kind == 2 ? std::max(exact, v) : exact + v;
              big = std::max(big, std::fabs(v));
            }
            if (kind == 1)
              exact /= ranks;
            double tol = 1e-6 * big;
            if (w != rt::Wire::F32) {
              double minSub = std::ldexp(1.0, 1 - f.bias() - f.manBits);
              tol = big * std::ldexp(1.0, -f.manBits) +
                    (isFp8(w) ? 4 * amax * minSub /
                                    (w == rt::Wire::E4M3 ? 448.0 : 57344.0)
                              : minSub);
            }
            if (!(std::fabs(y[size_t(i)] - exact) <= tol) && bad++ < 3)
              CHECK(false,
                    "reduce_scatter %s kind %lld k=%lld [%lld]: %g, exact %g "
                    "(tolerance %g)",
                    nameOf(w), (long long)kind, (long long)k, (long long)i,
                    double(y[size_t(i)]), exact, tol);
          }
        }
        // all_gather: the same bits on every rank, the documented ones.
        std::vector<float> g = allGather(parts[size_t(me)], w, ranks);
        std::vector<float> want = expectedAllGather(parts, w);
        size_t at = 0;
        if (int d = bitDiffs(g, want, &at))
          CHECK(false,
                "all_gather %s k=%lld slab=%d: %d elements differ, first "
                "[%zu]: %a, expected %a",
                nameOf(w), (long long)k, slab, d, at, double(g[at]),
                double(want[at]));
        uint64_t h = hashOf(g);
        CHECK(rt::commBroadcastFromRoot(h) == h, "all_gather %s k=%lld: "
              "ranks differ", nameOf(w), (long long)k);
      }
      // ZeRO's pair: the all-gather of the reduce-scatter's means is the
      // all-reduce's mean (within 1e-6 of the largest input: MPI_Allreduce
      // may add in another order).
      std::vector<float> pair = allGather(
          reduceScatter(xs[size_t(me)], 1, rt::Wire::F32, ranks),
          rt::Wire::F32, ranks);
      std::vector<float> whole = allReduce(xs[size_t(me)], 1, rt::Wire::F32);
      for (size_t i = 0; i < whole.size(); ++i) {
        double big = 0;
        for (auto &x : xs)
          big = std::max(big, double(std::fabs(x[i])));
        CHECK(std::fabs(pair[i] - whole[i]) <= 1e-6 * big,
              "all_gather(reduce_scatter) [%zu]: %g, all_reduce %g", i,
              double(pair[i]), double(whole[i]));
      }
    }
  }
  rt::commSetNarrowSlab(0);

  // Non-finite on the last rank only.
  {
    std::vector<float> x = inputOf(me, 10, 99);
    if (me == ranks - 1)
      x[3] = NAN;
    for (rt::Wire w : {rt::Wire::E4M3, rt::Wire::E5M2}) {
      std::vector<float> y = allReduce(x, 1, w);
      bool allNan = true;
      for (float v : y)
        allNan = allNan && std::isnan(v);
      CHECK(allNan, "%s: a NaN on one rank must make the result NaN",
            nameOf(w));
    }
    if (me == ranks - 1)
      x[3] = INFINITY;
    for (rt::Wire w : {rt::Wire::BF16, rt::Wire::F16}) {
      std::vector<float> y = allReduce(x, 1, w);
      CHECK(!std::isfinite(y[3]) && std::isfinite(y[2]),
            "%s: an inf on one rank: got %g (and %g)", nameOf(w),
            double(y[3]), double(y[2]));
    }
    // The sharding collectives (x[3] is now infinite on the last rank).
    // The reduce-scatter's input: 10 elements per rank, element 3 in rank
    // 0's block.
    std::vector<float> xx = inputOf(me, 10 * ranks, 98);
    if (me == ranks - 1)
      xx[3] = NAN; // rank 0's block
    for (rt::Wire w : {rt::Wire::E4M3, rt::Wire::E5M2}) {
      bool allNan = true;
      for (float v : reduceScatter(xx, 1, w, ranks))
        allNan = allNan && std::isnan(v);
      for (float v : allGather(x, w, ranks))
        allNan = allNan && std::isnan(v);
      CHECK(allNan, "%s: a non-finite value on one rank must make the "
            "reduce-scatter's and the all-gather's results NaN", nameOf(w));
    }
    if (me == ranks - 1)
      xx[3] = INFINITY;
    for (rt::Wire w : {rt::Wire::BF16, rt::Wire::F16}) {
      std::vector<float> y = reduceScatter(xx, 1, w, ranks);
      if (me == 0)
        CHECK(!std::isfinite(y[3]) && std::isfinite(y[2]),
              "reduce_scatter %s: an inf on one rank: got %g (and %g)",
              nameOf(w), double(y[3]), double(y[2]));
      std::vector<float> g = allGather(x, w, ranks);
      size_t inf = size_t(ranks - 1) * 10 + 3;
      CHECK(!std::isfinite(g[inf]) && std::isfinite(g[2]),
            "all_gather %s: an inf on one rank: got %g (and %g)", nameOf(w),
            double(g[inf]), double(g[2]));
    }
  }

  // lpc.shard: rank r's block of its own input, nothing sent.
  {
    std::vector<float> x = inputOf(me, 37 * ranks, 8), y(37, -7.0f);
    rt::CommMemRef1F32 a{x.data(), x.data(), 0, int64_t(x.size()), 1};
    rt::CommMemRef1F32 b{y.data(), y.data(), 0, 37, 1};
    rt::CommTraffic before = rt::commTraffic();
    _mlir_ciface_lpc_rt_shard_f32(&a, &b, ranks);
    rt::CommTraffic after = rt::commTraffic();
    CHECK(std::memcmp(y.data(), x.data() + size_t(me) * 37, 37 * sizeof(float)) == 0,
          "shard: rank %d did not get its block", me);
    CHECK(after.collectives == before.collectives, "shard counted as a collective");
  }

  // The byte-moving entries (the GPU's FP8 wire run on the CPU): every
  // byte names its source rank, block and position, so a misplaced one
  // shows; slabs of 5 elements make the pieces uneven.
  {
    const int64_t k = 13;
    std::vector<uint8_t> x(size_t(k * ranks)), y(x.size(), 0xEE);
    for (int64_t j = 0; j < ranks; ++j)
      for (int64_t i = 0; i < k; ++i)
        x[size_t(j * k + i)] = uint8_t(me * 64 + j * 16 + i);
    rt::CommMemRef1Bytes a{x.data(), x.data(), 0, k * ranks, 1},
        b{y.data(), y.data(), 0, k * ranks, 1};
    rt::commSetNarrowSlab(5);
    rt::CommTraffic before = rt::commTraffic();
    _mlir_ciface_lpc_rt_all_to_all_f8e4m3(&a, &b, ranks);
    rt::CommTraffic after = rt::commTraffic();
    bool right = true;
    for (int64_t j = 0; j < ranks; ++j)
      for (int64_t i = 0; i < k; ++i)
        right = right && y[size_t(j * k + i)] == uint8_t(j * 64 + me * 16 + i);
    CHECK(right, "all_to_all f8e4m3: rank %d got misplaced bytes", me);
    uint64_t sent = after.bytes[int(rt::Wire::E4M3)] -
                    before.bytes[int(rt::Wire::E4M3)];
    CHECK(sent == uint64_t(ranks - 1) * uint64_t(k),
          "all_to_all f8e4m3 sent %llu bytes", (unsigned long long)sent);
    // all_gather of bf16 values (2 bytes each, an offset of 1 element).
    std::vector<uint16_t> h(size_t(k + 1)), g(size_t(k * ranks), 0);
    for (int64_t i = 0; i <= k; ++i)
      h[size_t(i)] = uint16_t(me * 1000 + i);
    rt::CommMemRef1Bytes c{h.data(), h.data(), 1, k, 1},
        d{g.data(), g.data(), 0, k * ranks, 1};
    _mlir_ciface_lpc_rt_all_gather_bf16(&c, &d, int64_t(rt::Wire::BF16), ranks);
    right = true;
    for (int64_t j = 0; j < ranks; ++j)
      for (int64_t i = 0; i < k; ++i)
        right = right && g[size_t(j * k + i)] == uint16_t(j * 1000 + i + 1);
    CHECK(right, "all_gather bf16: rank %d got misplaced values", me);
    rt::commSetNarrowSlab(0);
  }

  // Traffic: one bf16 mean of 4099 elements sends 2 (N - 1) / N of the
  // padded tensor's bytes.
  {
    rt::CommTraffic before = rt::commTraffic();
    allReduce(inputOf(me, 4099, 5), 1, rt::Wire::BF16);
    rt::CommTraffic after = rt::commTraffic();
    uint64_t perRank = (4099 + uint64_t(ranks) - 1) / uint64_t(ranks);
    uint64_t want = 2 * uint64_t(ranks - 1) * perRank * 2;
    CHECK(after.bytes[int(rt::Wire::BF16)] - before.bytes[int(rt::Wire::BF16)] ==
              want,
          "bf16 traffic %llu, expected %llu",
          (unsigned long long)(after.bytes[2] - before.bytes[2]),
          (unsigned long long)want);
    CHECK(after.collectives - before.collectives == 2,
          "a bf16 mean is 2 collectives, counted %llu",
          (unsigned long long)(after.collectives - before.collectives));
    // A reduce-scatter and an all-gather each send (N - 1) / N of the
    // whole tensor: the other ranks' blocks of K elements.
    before = rt::commTraffic();
    reduceScatter(inputOf(me, 4099 * ranks, 6), 1, rt::Wire::BF16, ranks);
    allGather(inputOf(me, 4099, 7), rt::Wire::F32, ranks);
    after = rt::commTraffic();
    uint64_t bf16 = after.bytes[int(rt::Wire::BF16)] -
                    before.bytes[int(rt::Wire::BF16)],
             f32 = after.bytes[int(rt::Wire::F32)] -
                   before.bytes[int(rt::Wire::F32)];
    CHECK(bf16 == uint64_t(ranks - 1) * 4099 * 2 &&
              f32 == uint64_t(ranks - 1) * 4099 * 4 &&
              after.collectives - before.collectives == 2,
          "reduce_scatter bf16 sent %llu bytes, all_gather fp32 %llu, in %llu "
          "collectives",
          (unsigned long long)bf16, (unsigned long long)f32,
          (unsigned long long)(after.collectives - before.collectives));
  }

  int total = 0;
  {
    double f = failures;
    rt::commAllReduceSum(&f, 1);
    total = int(f);
  }
  rt::commFinalize();
  if (me == 0) {
    if (total)
      std::printf("comm over %d ranks: %d failures\n", ranks, total);
    else
      std::printf("comm over %d ranks: ok\n", ranks);
  }
  return total ? 1 : 0;
}
