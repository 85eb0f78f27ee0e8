//===- CommTest.cpp - LpcComm in one process (ctest runtime/comm) ---------===//
//
// Without an MPI launcher a process is rank 0 of 1 and never calls MPI: the
// all-reduce entry points copy their input (sum, mean, max) or test it
// (any_nonfinite). Built twice: against LpcComm (with MPI when found) and
// against LpcCommNoMpi (the same source without MPI), where a launch with
// several ranks must fail with a message saying that MPI is missing.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Comm.h"
#include "lpc/Runtime/HostFloat.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace rt = lpc::rt;

static int failures = 0;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static rt::CommMemRef1F32 view(std::vector<float> &v) {
  return {v.data(), v.data(), 0, int64_t(v.size()), 1};
}

int main(int argc, char **argv) {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    unsetenv(var);
  CHECK(rt::commLaunchedSize() == 0, "no launcher: launched size %d",
        rt::commLaunchedSize());
  rt::Error e = rt::commInit(&argc, &argv);
  CHECK(!e, "commInit without a launcher: %s", e.message().c_str());
  CHECK(rt::commRank() == 0 && rt::commSize() == 1, "rank %d of %d",
        rt::commRank(), rt::commSize());

  // 0.1 is not a bf16, f16 or FP8 value: one rank sends nothing, so the
  // narrow wire formats must not round it.
  std::vector<float> in = {1.5f, -2.0f, 0.1f, 3.25f}, out(4, 7.0f);
  for (int64_t kind : {0, 1, 2}) {
    std::fill(out.begin(), out.end(), 7.0f);
    rt::CommMemRef1F32 a = view(in), b = view(out);
    _mlir_ciface_lpc_rt_all_reduce_f32(&a, &b, kind, 0);
    CHECK(std::memcmp(in.data(), out.data(), 16) == 0,
          "kind %lld: one rank must copy its input", (long long)kind);
  }
  for (int64_t wire = 1; wire < rt::kWireFormats; ++wire) {
    std::fill(out.begin(), out.end(), 7.0f);
    rt::CommMemRef1F32 a = view(in), b = view(out);
    _mlir_ciface_lpc_rt_all_reduce_f32(&a, &b, 1, wire);
    CHECK(std::memcmp(in.data(), out.data(), 16) == 0,
          "mean, wire %lld: one rank must copy its input unrounded",
          (long long)wire);
  }
  CHECK(rt::commTraffic().collectives == 0 && rt::commTraffic().bytes[0] == 0,
        "one rank sends nothing");

  // MiniFloat::encodeFloat (the wire formats' fast encode) against encode:
  // every exponent from below the formats' subnormals to above their
  // maxima, random mantissas, the halfway points, signs, zeros, inf, NaN.
  {
    uint64_t state = 0x9e3779b97f4a7c15ull;
    auto next = [&] {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return state;
    };
    std::vector<float> xs = {0.0f, -0.0f, INFINITY, -INFINITY, NAN,
                             1e-45f, 65504.0f, 65520.0f, 448.0f, 464.0f,
                             57344.0f, 61440.0f};
    for (int e = -40; e <= 20; ++e)
      for (int k = 0; k < 2000; ++k) {
        uint32_t u = (uint32_t(e + 127) << 23) | uint32_t(next() & 0x7fffffu);
        if (k % 4 == 0) // a tie in some format: low mantissa bits zeroed
          u &= ~uint32_t((1u << (12 + k % 9)) - 1);
        if (k % 2)
          u |= 0x80000000u;
        float x;
        std::memcpy(&x, &u, 4);
        xs.push_back(x);
      }
    for (const rt::MiniFloat *f : {&rt::kF16, &rt::kE4M3, &rt::kE5M2}) {
      int bad = 0;
      for (float x : xs)
        if (f->encodeFloat(x) != f->encode(double(x)) && bad++ < 3)
          CHECK(false, "encodeFloat(%a) = %#x, encode = %#x (%d exponent bits)",
                double(x), f->encodeFloat(x), f->encode(double(x)), f->expBits);
    }
  }
  // An offset view (the descriptor's offset counts).
  {
    std::vector<float> big = {9.0f, 1.0f, 2.0f}, res(2, 0.0f);
    rt::CommMemRef1F32 a{big.data(), big.data(), 1, 2, 1}, b = view(res);
    _mlir_ciface_lpc_rt_all_reduce_f32(&a, &b, 1, 0);
    CHECK(res[0] == 1.0f && res[1] == 2.0f, "offset view: %g %g", res[0],
          res[1]);
  }
  bool flag = true;
  rt::CommMemRef0I1 f{&flag, &flag, 0};
  rt::CommMemRef1F32 a = view(in);
  _mlir_ciface_lpc_rt_all_reduce_any_nonfinite_f32(&a, &f);
  CHECK(!flag, "finite input reported non-finite");
  std::vector<float> bad = {1.0f, NAN};
  rt::CommMemRef1F32 c = view(bad);
  _mlir_ciface_lpc_rt_all_reduce_any_nonfinite_f32(&c, &f);
  CHECK(flag, "NaN not reported");
  bad[1] = INFINITY;
  flag = false;
  _mlir_ciface_lpc_rt_all_reduce_any_nonfinite_f32(&c, &f);
  CHECK(flag, "inf not reported");

  double sums[2] = {1.0, 2.0};
  rt::commAllReduceSum(sums, 2);
  CHECK(sums[0] == 1.0 && sums[1] == 2.0, "one rank: sums unchanged");
  CHECK(rt::commAny(true) && !rt::commAny(false), "one rank: any = value");
  size_t n = 0;
  const rt::CommSymbol *syms = rt::commSymbols(&n);
  CHECK(n == 14 && std::string(syms[0].name) ==
                       "_mlir_ciface_lpc_rt_all_reduce_f32" &&
            std::string(syms[3].name) == "_mlir_ciface_lpc_rt_all_gather_f32" &&
            std::string(syms[4].name) == "_mlir_ciface_lpc_rt_shard_f32" &&
            std::string(syms[8].name) ==
                "_mlir_ciface_lpc_rt_all_to_all_f8e4m3" &&
            std::string(syms[13].name) ==
                "_mlir_ciface_lpc_rt_all_gather_f8e5m2",
        "commSymbols: %zu entries", n);
  // The byte-moving entries over one rank: a copy, the view's offset
  // counted in elements of the type.
  {
    uint8_t src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[8] = {};
    rt::CommMemRef1Bytes in{src, src, 2, 6, 1}, out{dst, dst, 0, 6, 1};
    _mlir_ciface_lpc_rt_all_to_all_f8e4m3(&in, &out, 1);
    CHECK(std::memcmp(dst, src + 2, 6) == 0, "one rank: all_to_all f8e4m3");
    std::memset(dst, 0, sizeof(dst));
    rt::CommMemRef1Bytes in2{src, src, 1, 3, 1}, out2{dst, dst, 0, 3, 1};
    _mlir_ciface_lpc_rt_all_gather_bf16(&in2, &out2, 2, 1);
    CHECK(std::memcmp(dst, src + 2, 6) == 0, "one rank: all_gather bf16");
  }

  // The sharding collectives over one rank (ranks = 1): the input, unrounded
  // whatever the wire format.
  {
    float big[6] = {1.0f / 3, -2.5e-7f, 7.0f, 3e38f, -0.0f, 1e-40f};
    float got[6] = {};
    rt::CommMemRef1F32 in{big, big, 0, 6, 1}, out{got, got, 0, 6, 1};
    for (int64_t wire = 0; wire < 5; ++wire) {
      std::memset(got, 0, sizeof(got));
      _mlir_ciface_lpc_rt_reduce_scatter_f32(&in, &out, wire == 0 ? 2 : 1,
                                             wire, 1);
      CHECK(std::memcmp(got, big, sizeof(big)) == 0,
            "one rank: reduce_scatter (wire %lld) changed its input",
            (long long)wire);
      std::memset(got, 0, sizeof(got));
      _mlir_ciface_lpc_rt_all_gather_f32(&in, &out, wire, 1);
      CHECK(std::memcmp(got, big, sizeof(big)) == 0,
            "one rank: all_gather (wire %lld) changed its input",
            (long long)wire);
    }
    std::memset(got, 0, sizeof(got));
    _mlir_ciface_lpc_rt_shard_f32(&in, &out, 1);
    CHECK(std::memcmp(got, big, sizeof(big)) == 0,
          "one rank: shard changed its input");
  }

  if (!rt::commBuiltWithMpi()) {
    // A launcher announced two ranks, and there is no MPI: a clear error.
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    rt::Error e2 = rt::commInit(&argc, &argv);
    CHECK(bool(e2) && e2.message().find("built without MPI") !=
                          std::string::npos,
          "2 ranks without MPI: '%s'", e2 ? e2.message().c_str() : "no error");
    CHECK(rt::commSize() == 1, "still one rank");
  }
  rt::commFinalize();
  if (failures)
    return 1;
  std::printf("comm: ok (%s)\n",
              rt::commBuiltWithMpi() ? "with MPI" : "without MPI");
  return 0;
}
