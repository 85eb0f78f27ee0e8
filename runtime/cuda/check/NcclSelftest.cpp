//===- NcclSelftest.cpp - lpc-cuda-check --nccl-selftest ------------------===//
//
// The collective steps of an artifact function (the data-parallel step's)
// through NCCL, direct and in a CUDA graph, on one rank or on every rank of
// mpirun; see ncclSelftest.
//
//===----------------------------------------------------------------------===//

#include "Check.h"

#include "lpc/Runtime/Comm.h"
#include "lpc/Runtime/CudaArtifact.h"
#include "lpc/Runtime/CudaNccl.h"
#include "lpc/Runtime/HostFloat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {
namespace check {

/// The collective steps of an artifact function through NCCL (or the
/// fake): every rank passes its own random input; the results are checked
/// against sums over every rank's input (MPI gathers them) in double. f32
/// sums in NCCL's order differ from rank order by a few ulps of the
/// magnitudes summed; gathers and shards are exact. The FP8 cases (the
/// --comm-precision=fp8 wire: an all_to_all and an all_gather of FP8 bytes)
/// move random bytes, NaN encodings included, and are checked byte for
/// byte against what every rank's seed gives. Then again in a CUDA graph
/// (NCCL's calls are capturable). Only rank 0 prints; a failure on any rank
/// fails every rank.
void ncclSelftest(Device &dev, Report &r) {
  const int ranks = commSize(), rank = commRank();
  // The other ranks' stdout is /dev/null (main): their failures go to stderr.
  const bool quiet = rank != 0;
  auto line = [&](bool pass, const std::string &what, const std::string &detail) {
    r.line(pass, what, detail);
    if (quiet && !pass)
      std::fprintf(stderr, "lpc-cuda-check: rank %d: FAIL %s: %s\n", rank, what.c_str(),
                   detail.c_str());
  };
  Expected<std::unique_ptr<NcclComm>> comm = NcclComm::create(dev, rank, ranks);
  if (!comm) {
    // Every rank fails here together (a library or bootstrap problem).
    line(false, "NCCL communicator", comm.error().message());
    return;
  }
  std::printf("NCCL self-test: NCCL %d (%s), %d rank(s)\n", (*comm)->info().version,
                (*comm)->info().path.c_str(), ranks);
  // Odd sizes: nothing lines up with NCCL's chunks. The f32 input, and
  // the same values rounded to bf16 for the bf16 collectives
  // (lpc-native-wire-collectives' form).
  const int64_t k = 4099, n = k * ranks;
  std::vector<double> xd(static_cast<size_t>(n));
  Rng rng(0x5eed + uint64_t(rank));
  for (double &v : xd)
    v = (rng.uniform() * 4.0 - 2.0) * (1.0 + rank); // never all zero
  std::vector<float> x(xd.begin(), xd.end());
  std::vector<uint8_t> xb = encodeAs(DType::BF16, xd);
  // Every rank's inputs (as each type holds them), for the references.
  std::vector<float> all(size_t(n) * size_t(ranks));
  std::vector<uint8_t> allbBytes(xb.size() * size_t(ranks));
  commAllGatherBytes(x.data(), x.size() * sizeof(float), all.data());
  commAllGatherBytes(xb.data(), xb.size(), allbBytes.data());
  std::vector<double> allb = decodeAs(DType::BF16, allbBytes.data(), allbBytes.size() / 2);
  // The FP8 input: any byte (the data-movement collectives never look at
  // the values). Every rank can make every rank's from its seed.
  auto fp8Input = [n](int q) {
    Rng bytes(0xf8f8 + uint64_t(q));
    std::vector<uint8_t> v(static_cast<size_t>(n));
    for (uint8_t &b : v)
      b = uint8_t(bytes.next() >> 56);
    return v;
  };
  std::vector<uint8_t> x8 = fp8Input(rank);
  std::vector<std::vector<uint8_t>> all8;
  for (int q = 0; q < ranks; ++q)
    all8.push_back(fp8Input(q));

  auto slot = [](DType t, int64_t elems) {
    Slot s;
    s.dtype = t;
    s.shape = {elems};
    return s;
  };
  auto view = [](ViewSpace space, uint64_t index, DType t, int64_t elems) {
    View v;
    v.space = space;
    v.index = index;
    v.sizes = {elems};
    v.strides = {1};
    v.elemBytes = uint32_t(dtypeSize(t));
    return v;
  };
  struct Case {
    const char *what;
    CollectiveKind kind;
    CollectiveReduce reduce;
    DType dtype;
    int64_t outElems;
  } cases[] = {
      {"all_reduce sum", CollectiveKind::AllReduce, CollectiveReduce::Sum, DType::F32, n},
      {"all_reduce mean", CollectiveKind::AllReduce, CollectiveReduce::Mean, DType::F32, n},
      {"all_reduce max", CollectiveKind::AllReduce, CollectiveReduce::Max, DType::F32, n},
      {"reduce_scatter sum", CollectiveKind::ReduceScatter, CollectiveReduce::Sum, DType::F32, k},
      {"reduce_scatter mean", CollectiveKind::ReduceScatter, CollectiveReduce::Mean, DType::F32,
       k},
      {"all_gather", CollectiveKind::AllGather, CollectiveReduce::Sum, DType::F32, n * ranks},
      {"shard", CollectiveKind::Shard, CollectiveReduce::Sum, DType::F32, k},
      {"all_reduce mean BF16", CollectiveKind::AllReduce, CollectiveReduce::Mean, DType::BF16, n},
      {"reduce_scatter mean BF16", CollectiveKind::ReduceScatter, CollectiveReduce::Mean,
       DType::BF16, k},
      {"all_to_all F8_E4M3", CollectiveKind::AllToAll, CollectiveReduce::Sum, DType::F8_E4M3, n},
      {"all_gather F8_E4M3", CollectiveKind::AllGather, CollectiveReduce::Sum, DType::F8_E4M3,
       n * ranks},
  };
  // The argument each dtype's cases read.
  auto argOf = [](DType t) { return t == DType::F32 ? 0 : t == DType::BF16 ? 1 : 2; };
  ArtifactFunction f;
  f.name = "nccl_selftest";
  f.args = {slot(DType::F32, n), slot(DType::BF16, n), slot(DType::F8_E4M3, n)};
  for (const Case &c : cases) {
    CollectiveOp op;
    op.kind = c.kind;
    op.reduce = c.reduce;
    op.dtype = c.dtype;
    op.ranks = c.kind == CollectiveKind::AllReduce ? 0 : ranks;
    op.in = view(ViewSpace::Arg, uint64_t(argOf(c.dtype)), c.dtype, n);
    op.out = view(ViewSpace::Result, f.results.size(), c.dtype, c.outElems);
    f.results.push_back(slot(c.dtype, c.outElems));
    f.ops.push_back(op);
  }
  NcclComm *nccl = comm->get();
  StepCallbacks steps;
  steps.collective = [&dev, nccl](const CollectiveDesc &d, const CollectiveOperands &o) {
    return runCollective(dev, nccl, d, o);
  };
  Expected<std::unique_ptr<CudaFunction>> fn =
      CudaFunction::create(dev, f, std::move(steps), "the NCCL self-test");
  if (!fn) {
    line(false, "NCCL self-test function", fn.error().message());
    return;
  }
  std::vector<std::vector<uint8_t>> out;
  for (const Case &c : cases)
    out.emplace_back(size_t(c.outElems) * dtypeSize(c.dtype), 0xff); // NaNs

  // The references, in double. f32 sums in NCCL's order differ from any
  // other order by a few ulps of the magnitudes summed; bf16 ones round
  // every partial sum (NCCL) or the total (the fake) to 8 bits.
  auto expected = [&](const Case &c, int64_t i, double *tol) -> double {
    *tol = 0;
    if (c.dtype == DType::F8_E4M3) // bytes: expectedByte
      return 0;
    if (c.kind == CollectiveKind::AllGather)
      return all[size_t(i)];
    if (c.kind == CollectiveKind::Shard)
      return x[size_t(rank * k + i)];
    int64_t at = c.kind == CollectiveKind::ReduceScatter ? rank * k + i : i;
    const bool bf16 = c.dtype == DType::BF16;
    double sum = 0, mag = 0, mx = -INFINITY;
    for (int q = 0; q < ranks; ++q) {
      size_t j = size_t(q) * size_t(n) + size_t(at);
      double v = bf16 ? allb[j] : double(all[j]);
      sum += v, mag += std::fabs(v), mx = std::max(mx, v);
    }
    if (c.reduce == CollectiveReduce::Max)
      return mx;
    bool mean = c.reduce == CollectiveReduce::Mean;
    *tol = (bf16 ? ranks * std::ldexp(1.0, -8) : 2.0 * ranks * 6e-8) * mag /
           (mean ? ranks : 1);
    return mean ? sum / ranks : sum;
  };
  for (int pass = 0; pass < 2; ++pass) {
    const char *how = pass == 0 ? "" : " (CUDA graph)";
    for (auto &o : out)
      std::fill(o.begin(), o.end(), uint8_t(0xff));
    std::vector<const void *> args{x.data(), xb.data(), x8.data()};
    std::vector<void *> results;
    for (auto &o : out)
      results.push_back(o.data());
    Error e;
    if (pass == 1)
      e = (*fn)->captureGraph();
    if (!e)
      e = (*fn)->runHost(args, results);
    if (pass == 1 && !e && !(*fn)->lastRunHasGraph())
      e = Error::make("the run did not replay the captured graph");
    bool ranOk = !e;
    if (commAny(!ranOk)) {
      line(false, std::string("NCCL collectives") + how,
           ranOk ? "another rank failed" : e.message());
      return;
    }
    for (size_t ci = 0; ci < out.size(); ++ci) {
      const Case &c = cases[ci];
      if (c.dtype == DType::F8_E4M3) {
        // Out's block j (k elements): rank j's block `rank` (all_to_all),
        // or rank j's whole input (all_gather, blocks of n).
        const bool toAll = c.kind == CollectiveKind::AllToAll;
        const int64_t block = toAll ? k : n;
        auto want = [&](int64_t i) {
          int64_t j = i / block, at = i % block + (toAll ? rank * k : 0);
          return all8[size_t(j)][size_t(at)];
        };
        int64_t bad = -1;
        for (int64_t i = 0; i < c.outElems && bad < 0; ++i)
          if (out[ci][size_t(i)] != want(i))
            bad = i;
        bool okHere = bad < 0, okAll = !commAny(!okHere);
        char detail[160];
        if (!okHere)
          std::snprintf(detail, sizeof(detail),
                        "rank %d element %lld: byte 0x%02x, expected 0x%02x", rank,
                        (long long)bad, out[ci][size_t(bad)], want(bad));
        else
          std::snprintf(detail, sizeof(detail), "%lld elements%s, bit-exact",
                        (long long)c.outElems, okAll ? "" : " (another rank failed)");
        line(okAll && okHere, std::string(c.what) + how, detail);
        continue;
      }
      std::vector<double> got = decodeAs(c.dtype, out[ci].data(), size_t(c.outElems));
      double worst = 0;
      int64_t bad = -1;
      for (int64_t i = 0; i < c.outElems; ++i) {
        double tol = 0, want = expected(c, i, &tol);
        double err = std::fabs(got[size_t(i)] - want);
        if (!(err <= tol)) {
          bad = i;
          break;
        }
        worst = std::max(worst, err);
      }
      bool okHere = bad < 0, okAll = !commAny(!okHere);
      char detail[160];
      if (!okHere) {
        double tol = 0, want = expected(c, bad, &tol);
        std::snprintf(detail, sizeof(detail), "rank %d element %lld: %.9g, expected %.9g",
                      rank, (long long)bad, got[size_t(bad)], want);
      } else {
        std::snprintf(detail, sizeof(detail), "%lld elements%s, max error %.3g",
                      (long long)c.outElems, okAll ? "" : " (another rank failed)", worst);
      }
      line(okAll && okHere, std::string(c.what) + how, detail);
    }
  }
  std::printf("  queued by rank 0: %llu bytes (as a ring sends them) in %llu collectives "
              "(the graph's when captured)\n",
                (unsigned long long)(*comm)->bytesSent(),
                (unsigned long long)(*comm)->collectives());
}

} // namespace check
} // namespace cuda
} // namespace rt
} // namespace lpc
