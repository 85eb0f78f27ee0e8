//===- CommMpiTest.cpp - the all-reduce entry point on several ranks ------===//
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
//   (commSetNarrowSlab), and the traffic counters.
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
