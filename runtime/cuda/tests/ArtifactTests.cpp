// ArtifactTests.cpp - the CUDA artifact (lpc-cuda-tests groups cuda-artifact:
// parsing and validation; cuda-executor: CudaFunction on the fake driver,
// tests/FakeDriver.cpp, with a host reference GEMM). No GPU needed.

#include "TestHarness.h"
#include "FakeDevice.h"

#include "lpc/Runtime/CudaAllocator.h"
#include "lpc/Runtime/CudaArtifact.h"

#include "GemmReference.h"
#include "PtxScan.h"
#include "TestKernels.h"

using namespace lpc::rt::cuda;

namespace {

Artifact toyArtifact() {
  Expected<Artifact> a = parseArtifact(testArtifactJson(), "toy.json");
  CHECK_OK(a);
  return a ? a.take() : Artifact();
}

/// The toy JSON with the first `from` replaced by `to`, parsed.
Expected<Artifact> toyWith(const std::string &from, const std::string &to) {
  std::string text = testArtifactJson();
  size_t at = text.find(from);
  if (at == std::string::npos)
    return Error::make("test bug: '" + from + "' not in the toy artifact");
  text.replace(at, from.size(), to);
  return parseArtifact(text, "toy.json");
}

/// `text` with every `from` replaced by `to`.
std::string replaceAll(std::string text, const std::string &from, const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

template <typename T> T *opAs(Artifact &a, size_t op) {
  return std::get_if<T>(&a.functions[0].ops[op]);
}

} // namespace

//===----------------------------------------------------------------------===//
// cuda-artifact: parsing and validation
//===----------------------------------------------------------------------===//

TEST(cuda_artifact, ptx_scan) {
  using namespace lpc::rt::cuda::ptx;
  CHECK(entryParams(kTestPtx, "lpc_test_axpy") == std::vector<unsigned>({8, 8, 4, 4}));
  CHECK(!entryParams(kTestPtx, "lpc_test_ax"));  // a prefix is not the name
  CHECK(!entryParams(kTestPtx, "lpc_test_axpy2"));
  CHECK(entryParams(kBrokenPtx, "lpc_test_broken") == std::vector<unsigned>());
  CHECK_EQ(entryParams(kFakeAffinePtx, "lpc_fake_affine_2d")->size(), size_t(16));
  CHECK(entryParams(kFakeRampPtx, "lpc_fake_ramp") ==
        std::vector<unsigned>({8, 8, 8, 8, 8, 8, 8, 4}));
  // By-value structs (.b8 arrays) and comments in the list.
  const char *ptx = ".visible .entry k( // two\n .param .align 8 .b8 k_p0[16], // s\n"
                    " .param .f16 k_p1 )\n{ ret; }";
  CHECK(entryParams(ptx, "k") == std::vector<unsigned>({16, 2}));
  CHECK(entryNames(std::string(kFakeAffinePtx) + kFakeRampPtx) ==
        std::vector<std::string>({"lpc_fake_affine_2d", "lpc_fake_ramp"}));
}

TEST(cuda_artifact, parses_the_toy_artifact) {
  Artifact a = toyArtifact();
  CHECK_OK(a.validate());
  CHECK_EQ(a.chip, std::string("sm_90"));
  CHECK_EQ(a.functions.size(), size_t(1));
  if (a.functions.size() != 1)
    return;
  const ArtifactFunction &f = a.functions[0];
  CHECK(a.find("toy_step") == &f);
  CHECK(!a.find("nope"));
  CHECK_EQ(f.args.size(), size_t(2));
  CHECK_EQ(f.results.size(), size_t(5));
  CHECK_EQ(f.args[1].state, std::string("param"));
  CHECK_EQ(f.args[1].name, std::string("fc.weight"));
  CHECK(f.args[1].init && *f.args[1].init == 0.5);
  CHECK(!f.args[0].init);
  CHECK_EQ(f.args[0].input, std::string("x"));
  CHECK_EQ(f.results[0].metric, std::string("y"));
  CHECK_EQ(f.args[0].byteSize(), size_t(48));
  CHECK_EQ(f.arenaBytes, uint64_t(512));
  CHECK_EQ(f.buffers[1].offset, uint64_t(256));
  CHECK_EQ(f.modules[1].name, std::string("ramp"));
  CHECK_EQ(f.modules[1].ptx, std::string(kFakeRampPtx));
  CHECK_EQ(f.ops.size(), size_t(7));
  const LaunchOp *ramp = std::get_if<LaunchOp>(&f.ops[3]);
  CHECK(ramp);
  if (ramp) {
    CHECK_EQ(ramp->kernelParamCount(), size_t(8));
    CHECK_EQ(ramp->block.x, 32u);
    CHECK(ramp->params[1].kind == LaunchParam::Kind::F64 && ramp->params[1].f == 1.5);
    CHECK(ramp->params[2].kind == LaunchParam::Kind::I64 && ramp->params[2].i == 3);
    CHECK(ramp->params[3].kind == LaunchParam::Kind::I32 && ramp->params[3].i == 2);
  }
  const GemmOp *g = std::get_if<GemmOp>(&f.ops[6]);
  CHECK(g);
  if (g) {
    GemmDesc d = g->desc();
    CHECK_EQ(d.batch, int64_t(2));
    CHECK_EQ(d.m, int64_t(2));
    CHECK_EQ(d.n, int64_t(2));
    CHECK_EQ(d.k, int64_t(3));
    CHECK(d.transB && !d.transA && d.broadcastB);
  }
  CHECK(std::holds_alternative<CopyOp>(f.ops[4]));
  CHECK_EQ(opLabel(f.ops[0]), std::string("launch lpc_fake_affine_2d"));
  CHECK_EQ(opLabel(f.ops[1]), std::string("gemm"));
  CHECK_EQ(opLabel(f.ops[4]), std::string("copy"));

  // From a file: loadArtifact parses and validates.
  std::string path = tmp("toy-artifact.json");
  writeText(path, testArtifactJson());
  Expected<Artifact> loaded = loadArtifact(path);
  CHECK_OK(loaded);
  if (loaded)
    CHECK_EQ(loaded->source, path);
  CHECK_ERR(loadArtifact(tmp("missing.json")), "missing.json");
  std::string bad = tmp("bad-artifact.json");
  std::string text = testArtifactJson();
  text.replace(text.find("\"arena_bytes\": 512"), 18, "\"arena_bytes\": 100");
  writeText(bad, text);
  CHECK_ERR(loadArtifact(bad), "bad-artifact.json: function 'toy_step', buffer 1: bytes [256, 288) "
                               "leave the arena of 100 bytes");
}

TEST(cuda_artifact, view_rules) {
  View v;
  v.sizes = {2, 3};
  v.strides = {3, 1};
  CHECK(v.isContiguous());
  CHECK_EQ(v.numElements(), int64_t(6));
  v.strides = {1, 2};
  CHECK(!v.isContiguous());
  v.sizes = {1, 3};
  v.strides = {99, 1}; // a size-1 dimension's stride does not matter
  CHECK(v.isContiguous());
  v.sizes = {};
  v.strides = {};
  CHECK(v.isContiguous());
  CHECK_EQ(v.numElements(), int64_t(1));
}

TEST(cuda_artifact, validate_rejects) {
  const char *op0 = "toy.json: function 'toy_step', op 0 (launch lpc_fake_affine_2d): ";
  {
    Artifact a = toyArtifact();
    opAs<LaunchOp>(a, 0)->params[1].view.sizes = {5, 3};
    CHECK_ERR(a.validate(), op0, "param 1: view of buffer 0 reaches byte 60 of 48");
  }
  {
    Artifact a = toyArtifact(); // a negative stride reaching before the start
    opAs<LaunchOp>(a, 0)->params[0].view.strides = {-3, 1};
    CHECK_ERR(a.validate(), op0, "param 0: view of arg 0 starts at byte -36");
  }
  {
    Artifact a = toyArtifact();
    opAs<LaunchOp>(a, 0)->params[0].view.index = 7;
    CHECK_ERR(a.validate(), op0, "param 0: arg 7 does not exist (2 args)");
  }
  {
    Artifact a = toyArtifact();
    opAs<LaunchOp>(a, 0)->module = 2;
    CHECK_ERR(a.validate(), op0, "module 2 does not exist (2 modules)");
  }
  {
    Artifact a = toyArtifact();
    opAs<LaunchOp>(a, 0)->kernel = "lpc_fake_affine";
    CHECK_ERR(a.validate(), "op 0 (launch lpc_fake_affine): kernel 'lpc_fake_affine' is not in "
                            "module 0 ('affine'): its PTX has no readable '.entry "
                            "lpc_fake_affine('");
  }
  {
    Artifact a = toyArtifact();
    opAs<LaunchOp>(a, 0)->params.pop_back();
    CHECK_ERR(a.validate(), op0, "kernel 'lpc_fake_affine_2d' declares 16 parameters; the "
                                   "launch passes 15");
  }
  {
    Artifact a = toyArtifact();
    opAs<LaunchOp>(a, 3)->params[3].kind = LaunchParam::Kind::I64;
    CHECK_ERR(a.validate(), "op 3 (launch lpc_fake_ramp): kernel 'lpc_fake_ramp' parameter 7 is "
                            "4 bytes in the PTX; the launch passes 8");
  }
  {
    Artifact a = toyArtifact();
    opAs<LaunchOp>(a, 0)->grid.y = 0;
    CHECK_ERR(a.validate(), op0, "empty grid or block ([1, 0, 1] x [128, 1, 1])");
  }
  {
    Artifact a = toyArtifact();
    opAs<GemmOp>(a, 1)->b.strides = {6, 1, 2};
    CHECK_ERR(a.validate(), "op 1 (gemm): b: GEMM views must be contiguous row-major (sizes "
                            "[1, 2, 3], strides [6, 1, 2])");
  }
  {
    Artifact a = toyArtifact();
    opAs<GemmOp>(a, 1)->transB = false;
    CHECK_ERR(a.validate(), "op 1 (gemm): B is [1, 2, 3], expected [1, 3, 2] (from C [1, 4, 2]: "
                            "batch 1, M 4, N 2; K 3 from A)");
  }
  {
    Artifact a = toyArtifact();
    opAs<GemmOp>(a, 6)->broadcastB = false;
    CHECK_ERR(a.validate(), "op 6 (gemm): B is [1, 2, 3], expected [2, 2, 3]");
  }
  {
    Artifact a = toyArtifact();
    GemmOp *g = opAs<GemmOp>(a, 1);
    g->a.sizes = {4, 3};
    g->a.strides = {3, 1};
    CHECK_ERR(a.validate(), "op 1 (gemm): a: GEMM views are rank 3 ([batch, rows, columns]), "
                            "not rank 2");
  }
  {
    Artifact a = toyArtifact();
    opAs<GemmOp>(a, 1)->cType = DType::BF16;
    CHECK_ERR(a.validate(), "op 1 (gemm): c: elem_bytes 4 but the type is BF16");
  }
  {
    Artifact a = toyArtifact(); // cuBLASLt's rules, before anything runs
    GemmOp *g = opAs<GemmOp>(a, 1);
    g->aType = g->bType = DType::F8_E4M3;
    g->a.elemBytes = g->b.elemBytes = 1;
    CHECK_ERR(a.validate(), "op 1 (gemm): ", "M, N and K multiples of 16");
  }
  {
    Artifact a = toyArtifact();
    opAs<CopyOp>(a, 4)->dst.sizes = {2, 3};
    opAs<CopyOp>(a, 4)->dst.strides = {3, 1};
    CHECK_ERR(a.validate(), "op 4 (copy): copies 32 bytes into 24");
  }
  {
    Artifact a = toyArtifact();
    opAs<CopyOp>(a, 4)->src.strides = {2};
    opAs<CopyOp>(a, 4)->src.sizes = {4};
    CHECK_ERR(a.validate(), "op 4 (copy): src: copy views must be contiguous row-major");
  }
  {
    Artifact a = toyArtifact();
    a.functions[0].buffers[1].offset = 128;
    CHECK_ERR(a.validate(), "function 'toy_step', buffer 1: offset 128 is not a multiple of 256");
  }
  {
    Artifact a = toyArtifact();
    a.functions[0].args[0].shape = {INT64_MAX / 2, 4};
    CHECK_ERR(a.validate(), "function 'toy_step', arg 0: shape", "overflows");
  }
  {
    Artifact a = toyArtifact();
    a.functions.push_back(a.functions[0]);
    CHECK_ERR(a.validate(), "toy.json: two functions are named 'toy_step'");
  }
  {
    // The GEMM flags: tf32 fits an F32 GEMM, fast accumulation does not.
    Artifact a = toyArtifact();
    opAs<GemmOp>(a, 1)->tf32 = true;
    CHECK_OK(a.validate());
    CHECK(opAs<GemmOp>(a, 1)->desc().tf32);
    opAs<GemmOp>(a, 1)->fastAccum = true;
    CHECK_ERR(a.validate(), "op 1 (gemm)", "fast accumulation applies to FP8 GEMMs only");
  }
  {
    // Dequantization scales: both, rank-0 F32 views, FP8 GEMMs only.
    Artifact a = toyArtifact();
    View scale{ViewSpace::Arg, 1, 0, {}, {}, 4};
    GemmOp *g = opAs<GemmOp>(a, 1);
    g->aScale = scale;
    CHECK_ERR(a.validate(), "op 1 (gemm): a_scale and b_scale come together");
    g->bScale = scale;
    CHECK_ERR(a.validate(), "op 1 (gemm): scales apply to FP8 GEMMs only");
  }
  {
    // A bias: one F32 per column of C ([1, 4, 2] here).
    Artifact a = toyArtifact();
    GemmOp *g = opAs<GemmOp>(a, 1);
    g->bias = View{ViewSpace::Arg, 1, 0, {2}, {1}, 4};
    CHECK_OK(a.validate());
    CHECK(g->desc().epilogue == GemmEpilogue::Bias);
    g->bias = View{ViewSpace::Arg, 1, 0, {3}, {1}, 4};
    CHECK_ERR(a.validate(), "op 1 (gemm): bias: the bias is a contiguous [2] view of F32 "
                            "(one per column of C)");
  }
}

TEST(cuda_artifact, collective_ranks_and_traffic) {
  CollectiveDesc a2a;
  a2a.kind = CollectiveKind::AllToAll;
  a2a.dtype = DType::F8_E4M3;
  a2a.count = 8;
  a2a.ranks = 2;
  CHECK_EQ(checkCollectiveRanks(a2a, 2), std::string());
  CHECK_EQ(checkCollectiveRanks(a2a, 1),
           std::string("all_to_all was built for 2 ranks but the run has 1 (compile the step "
                       "for this rank count: lpc-run under mpirun with the same -np)"));
  // Its own block stays: (N - 1) / N of the bytes leave each rank.
  CHECK_EQ(collectiveWireBytes(a2a, 2), uint64_t(4));
  a2a.dtype = DType::F32;
  a2a.ranks = 4;
  CHECK_EQ(collectiveWireBytes(a2a, 4), uint64_t(24));
  CHECK_EQ(collectiveWireBytes(a2a, 1), uint64_t(0));
  // As the other data-movement collectives count theirs (count: one block).
  CollectiveDesc gather = a2a;
  gather.kind = CollectiveKind::AllGather;
  gather.count = 2;
  CHECK_EQ(collectiveWireBytes(gather, 4), uint64_t(24));
  CHECK_EQ(std::string(collectiveKindName(CollectiveKind::AllToAll)), std::string("all_to_all"));
}

TEST(cuda_artifact, parse_rejects) {
  CHECK_ERR(toyWith("\"dtype\": \"F32\", \"shape\": [2, 3]", "\"dtype\": \"F33\", \"shape\": [2, 3]"),
            "toy.json: function 'toy_step', arg 1: unknown dtype 'F33'");
  CHECK_ERR(toyWith("\"c_type\": \"F32\"", "\"c_type\": \"FP32\""),
            "toy.json: function 'toy_step', op 1 (gemm): unknown dtype 'FP32'");
  CHECK_ERR(toyWith("\"version\": 2", "\"version\": 3"),
            "toy.json: format version 3; this runtime reads version 2");
  CHECK_ERR(toyWith("lpc-cuda-artifact", "safetensors"), "format is 'safetensors'");
  CHECK_ERR(toyWith("\"arena_bytes\": 512", "\"arena\": 512"),
            "toy.json: function 'toy_step': missing 'arena_bytes'");
  CHECK_ERR(toyWith("\"arena_bytes\": 512", "\"arena_bytes\": -1"),
            "'arena_bytes' is not a non-negative integer (-1)");
  CHECK_ERR(toyWith("\"op\": \"copy\"", "\"op\": \"memset\""),
            "op 4: unknown op 'memset' (launch, gemm, copy, attention, attention_backward, "
            "all_reduce, reduce_scatter, all_gather, all_to_all or shard)");
  // Collectives: the reduction, and a rank count where the sizes need one.
  const std::string allReduce =
      "{\"op\": \"all_reduce\", \"reduce\": \"mean\", \"dtype\": \"F32\", "
      "\"in\": {\"space\": \"arg\", \"index\": 0, \"offset\": 0, \"sizes\": [4], "
      "\"strides\": [1], \"elem_bytes\": 4}, \"out\": {\"space\": \"result\", \"index\": "
      "0, \"offset\": 0, \"sizes\": [4], \"strides\": [1], \"elem_bytes\": 4}}, ";
  {
    Expected<Artifact> a = toyWith("\"ops\": [", "\"ops\": [" + allReduce);
    CHECK_OK(a);
    if (a) {
      const CollectiveOp *c = std::get_if<CollectiveOp>(&a->functions[0].ops[0]);
      CHECK(c && c->kind == CollectiveKind::AllReduce && c->reduce == CollectiveReduce::Mean &&
            c->ranks == 0 && c->desc().count == 4);
      CHECK_EQ(opLabel(a->functions[0].ops[0]), std::string("all_reduce mean"));
    }
  }
  CHECK_ERR(toyWith("\"ops\": [", "\"ops\": [" + replaceAll(allReduce, "mean", "avg")),
            "op 0 (all_reduce): reduce 'avg' is not sum, mean or max");
  CHECK_ERR(toyWith("\"ops\": [", "\"ops\": [" + replaceAll(allReduce, "all_reduce",
                                                               "reduce_scatter")),
            "op 0 (reduce_scatter): missing 'ranks'");
  {
    // Validation: the sizes fit the kind and the rank count.
    std::string rs = replaceAll(replaceAll(allReduce, "all_reduce", "reduce_scatter"),
                                "\"dtype\": \"F32\", ", "\"dtype\": \"F32\", \"ranks\": 2, ");
    Expected<Artifact> a = toyWith("\"ops\": [", "\"ops\": [" + rs);
    CHECK_OK(a);
    if (a)
      CHECK_ERR(a->validate(), "op 0 (reduce_scatter mean): in has 4 elements; out has 4 and "
                               "there are 2 blocks");
    Expected<Artifact> b = toyWith("\"ops\": [", "\"ops\": [" + replaceAll(rs, "\"sizes\": [4], "
                                   "\"strides\": [1], \"elem_bytes\": 4}}", "\"sizes\": [2], "
                                   "\"strides\": [1], \"elem_bytes\": 4}}"));
    CHECK_OK(b);
    if (b)
      CHECK_OK(b->validate());
    Expected<Artifact> c = toyWith("\"ops\": [", "\"ops\": [" + replaceAll(allReduce, "\"F32\"",
                                                                           "\"I32\""));
    CHECK_OK(c);
    if (c)
      CHECK_ERR(c->validate(), "op 0 (all_reduce mean): dtype I32 (collectives move F32, BF16, "
                               "F16 or FP8)");
  }
  {
    // all_to_all (the FP8 wire's exchange): `ranks` whole blocks, the same
    // count in and out, no byte of in shared with out.
    const std::string a2a =
        "{\"op\": \"all_to_all\", \"dtype\": \"F8_E4M3\", \"ranks\": 2, "
        "\"in\": {\"space\": \"buffer\", \"index\": 0, \"offset\": 0, \"sizes\": [8], "
        "\"strides\": [1], \"elem_bytes\": 1}, \"out\": {\"space\": \"buffer\", \"index\": "
        "0, \"offset\": 8, \"sizes\": [8], \"strides\": [1], \"elem_bytes\": 1}}, ";
    auto withA2a = [&](const std::string &op) { return toyWith("\"ops\": [", "\"ops\": [" + op); };
    Expected<Artifact> a = withA2a(a2a);
    CHECK_OK(a);
    if (a) {
      CHECK_OK(a->validate());
      const CollectiveOp *c = std::get_if<CollectiveOp>(&a->functions[0].ops[0]);
      CHECK(c && c->kind == CollectiveKind::AllToAll && c->dtype == DType::F8_E4M3 &&
            c->ranks == 2 && c->desc().count == 8);
      CHECK_EQ(opLabel(a->functions[0].ops[0]), std::string("all_to_all"));
    }
    // Every data-movement dtype (elem_bytes follows it).
    Expected<Artifact> bf = withA2a(replaceAll(replaceAll(a2a, "F8_E4M3", "BF16"),
                                               "\"elem_bytes\": 1", "\"elem_bytes\": 2"));
    CHECK_OK(bf);
    if (bf)
      CHECK_OK(bf->validate());
    CHECK_ERR(withA2a(replaceAll(a2a, "\"ranks\": 2, ", "")), "op 0 (all_to_all): missing 'ranks'");
    CHECK_ERR(withA2a(replaceAll(a2a, "F8_E4M3", "F8_E4M3FN")),
              "op 0 (all_to_all): unknown dtype 'F8_E4M3FN'");
    auto refused = [&](const std::string &op, const std::string &why) {
      Expected<Artifact> b = withA2a(op);
      CHECK_OK(b);
      std::string want = "op 0 (all_to_all): " + why;
      if (b)
        CHECK_ERR(b->validate(), want.c_str());
    };
    refused(replaceAll(a2a, "\"ranks\": 2", "\"ranks\": 3"),
            "8 elements are not 3 equal blocks (one per rank)");
    refused(replaceAll(a2a, "\"offset\": 8, \"sizes\": [8]", "\"offset\": 8, \"sizes\": [6]"),
            "in has 8 elements and out 6 (an all_to_all keeps the count)");
    refused(replaceAll(a2a, "\"offset\": 8", "\"offset\": 7"),
            "in and out share bytes of buffer 0 (an all_to_all writes out while it sends in)");
    refused(replaceAll(a2a, "\"offset\": 8", "\"offset\": 0"),
            "in and out share bytes of buffer 0");
    refused(replaceAll(replaceAll(replaceAll(a2a, "F8_E4M3", "I32"), "\"elem_bytes\": 1",
                                  "\"elem_bytes\": 4"),
                       "[8]", "[4]"),
            "dtype I32 (collectives move F32, BF16, F16 or FP8)");
    refused(replaceAll(a2a, "F8_E4M3", "F32"), "in: elem_bytes 1 but the dtype is F32");
  }
  CHECK_ERR(toyWith("{\"f32\": 2.0}", "{\"f32\": 2.0, \"i32\": 1}"),
            "op 0 (launch lpc_fake_affine_2d): param 2: a parameter is an object with one member");
  CHECK_ERR(toyWith("{\"i32\": 2}", "{\"i32\": 4294967296}"), "does not fit in 32 bits");
  CHECK_ERR(toyWith("\"space\": \"arg\"", "\"space\": \"args\""), "unknown space 'args'");
  CHECK_ERR(toyWith("\"strides\": [3, 1], \"elem_bytes\": 4", "\"strides\": [3], \"elem_bytes\": 4"),
            "op 0 (launch lpc_fake_affine_2d): param 0: 2 sizes but 1 strides");
  CHECK_ERR(toyWith("\"grid\": [1, 1, 1]", "\"grid\": [1, 1]"), "'grid' has 2 entries, not 3");
  CHECK_ERR(toyWith("\"ops\": [", "\"ops\": 7, \"x\": ["), "'ops' is a JSON number, not an array");
  CHECK_ERR(parseArtifact("[1]", "t.json"), "t.json: the artifact is a JSON array, not an object");
  CHECK_ERR(parseArtifact("{", "t.json"), "t.json: not valid JSON: byte 1");
}

//===----------------------------------------------------------------------===//
// cuda-executor: CudaFunction on the fake driver
//===----------------------------------------------------------------------===//

namespace {

/// F32 GEMMs on the host, reading the fake driver's "device" pointers
/// (host addresses) directly once the work queued before has run (done
/// when it returns, as GemmCallback allows).
struct HostGemm {
  Device *device = nullptr;
  int calls = 0;
  Error operator()(const GemmDesc &d, const GemmOperands &o) {
    ++calls;
    if (Error e = validateGemm(d, o))
      return e;
    if (device)
      if (Error e = device->synchronize())
        return e;
    if (d.a != DType::F32 || d.c != DType::F32)
      return Error::make("host GEMM: f32 only");
    auto load = [](CUdeviceptr p, int64_t n) {
      const float *f = reinterpret_cast<const float *>(uintptr_t(p));
      return std::vector<double>(f, f + n);
    };
    std::vector<double> c =
        referenceGemm(d, load(o.a, d.batch * d.m * d.k),
                      load(o.b, (d.broadcastB ? 1 : d.batch) * d.k * d.n),
                      o.bias ? load(o.bias, d.n) : std::vector<double>{}, o.alpha);
    float *out = reinterpret_cast<float *>(uintptr_t(o.c));
    for (size_t i = 0; i < c.size(); ++i)
      out[i] = float(c[i]);
    return Error::success();
  }
};

struct ToyIO {
  std::vector<float> x = std::vector<float>(12), w = std::vector<float>(6);
  std::vector<std::vector<float>> results = {std::vector<float>(8), std::vector<float>(12),
                                             std::vector<float>(8), std::vector<float>(9),
                                             std::vector<float>(8)};
  explicit ToyIO(float shift) {
    for (int i = 0; i < 12; ++i)
      x[size_t(i)] = float(i) - 5 + shift;
    for (int i = 0; i < 6; ++i)
      w[size_t(i)] = 0.25f * float(i) - 0.5f;
    for (auto &r : results)
      std::fill(r.begin(), r.end(), -1234.0f);
  }
  std::vector<const void *> argPtrs() const { return {x.data(), w.data()}; }
  std::vector<void *> resultPtrs() {
    std::vector<void *> p;
    for (auto &r : results)
      p.push_back(r.data());
    return p;
  }
  /// Checks every result against the artifact's meaning (TestKernels.h);
  /// `withGemms` false: the GEMM results are not checked.
  void check(bool withGemms = true) const {
    auto X = [&](int i, int j) { return double(x[size_t(i * 3 + j)]); };
    auto W = [&](int n, int k) { return double(w[size_t(n * 3 + k)]); };
    int bad = 0;
    auto expect = [&](float got, double want) { bad += std::fabs(got - want) > 1e-5; };
    for (int i = 0; i < 4; ++i)
      for (int n = 0; n < 2 && withGemms; ++n) {
        double y = 0, y4 = 0;
        for (int k = 0; k < 3; ++k) {
          y += (2 * X(i, k) + 1) * W(n, k);
          y4 += X(i, k) * W(n, k);
        }
        expect(results[0][size_t(i * 2 + n)], y);
        expect(results[4][size_t(i * 2 + n)], y4); // [2, 2, 2] = rows of x in pairs
      }
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 4; ++i)
        expect(results[1][size_t(j * 4 + i)], -X(i, j) + 0.5);
    for (int i = 0; i < 8; ++i)
      expect(results[2][size_t(i)], 1.5 + i * 1.5);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        expect(results[3][size_t(i * 3 + j)], X(i + 1, j));
    CHECK_EQ(bad, 0);
  }
};

} // namespace

TEST(cuda_executor, runs_the_toy_artifact) {
  FakeDevice fake = openFakeDevice();
  if (!fake.device)
    return;
  Device &device = *fake.device;
  Artifact art = toyArtifact();
  HostGemm gemm;
  gemm.device = &device;
  {
    Expected<std::unique_ptr<CudaFunction>> fn = CudaFunction::create(
        device, art.functions[0], [&](const GemmDesc &d, const GemmOperands &o) { return gemm(d, o); },
        "toy.json");
    CHECK_OK(fn);
    if (!fn)
      return;
    CudaFunction &f = **fn;
    CHECK(f.arena() != 0);
    ToyIO io(0);
    CHECK_OK(f.runHost(io.argPtrs(), io.resultPtrs()));
    io.check();
    CHECK_EQ(gemm.calls, 2);
    // Again with other inputs: the device blocks are reused.
    size_t inUse = device.allocator().stats().inUse;
    ToyIO io2(0.25f);
    CHECK_OK(f.runHost(io2.argPtrs(), io2.resultPtrs()));
    io2.check();
    CHECK_EQ(device.allocator().stats().inUse, inUse);
    CHECK_EQ(gemm.calls, 4);

    // Calls that cannot be right.
    CHECK_ERR(f.run({1}, {}), "toy.json: function 'toy_step': called with 1 args and 0 results; "
                              "it takes 2 and 5");
    CHECK_ERR(f.run({0, 0}, {0, 0, 0, 0, 0}), "toy.json: function 'toy_step': arg 0 is a null "
                                             "pointer");
    // A pointer the fake knows nothing of: it faults at the first launch,
    // and the message names the op.
    Expected<DeviceBuffer> w = device.allocate(24);
    CHECK_OK(w);
    std::vector<DeviceBuffer> outs;
    std::vector<CUdeviceptr> outPtrs;
    for (const ArtifactSlot &s : art.functions[0].results) {
      outs.push_back(device.allocate(s.byteSize()).take());
      outPtrs.push_back(outs.back().get());
    }
    // The kernels assume 16-byte aligned bases (vector accesses).
    CHECK_ERR(f.run({w->get() + 4, w->get()}, outPtrs),
              "toy.json: function 'toy_step': arg 0 is not 16-byte aligned");
    CHECK_ERR(f.run({CUdeviceptr(0x10), w->get()}, outPtrs),
              "toy.json: function 'toy_step', op 0 (launch lpc_fake_affine_2d): cuLaunchKernel "
              "failed: CUDA_ERROR_ILLEGAL_ADDRESS (fake: lpc_fake_affine_2d param 0: pointer "
              "0x10 is in no live allocation)");
  }
  CHECK_EQ(device.allocator().stats().inUse, size_t(0));
}

TEST(cuda_executor, graph_replays) {
  FakeDevice fake = openFakeDevice();
  if (!fake.device)
    return;
  Device &device = *fake.device;
  // The host GEMM is not stream-ordered work the fake can capture, so the
  // graph test leaves the GEMMs out.
  ArtifactFunction f = toyArtifact().functions[0];
  f.ops.erase(std::remove_if(f.ops.begin(), f.ops.end(),
                             [](const ArtifactOp &op) { return std::holds_alternative<GemmOp>(op); }),
              f.ops.end());
  Expected<std::unique_ptr<CudaFunction>> fn = CudaFunction::create(device, f, nullptr, "toy.json");
  CHECK_OK(fn);
  if (!fn)
    return;
  CHECK_ERR((*fn)->captureGraph(), "captureGraph needs a run() first");
  ToyIO io(0);
  CHECK_OK((*fn)->runHost(io.argPtrs(), io.resultPtrs()));
  io.check(false);
  CHECK_OK((*fn)->captureGraph());
  CHECK((*fn)->hasGraph());
  // Same blocks, new inputs: the graph runs them.
  ToyIO io2(3.0f);
  CHECK_OK((*fn)->runHost(io2.argPtrs(), io2.resultPtrs()));
  io2.check(false);
}

// One rank: an all_to_all is a device copy (no NCCL), also from a graph;
// a step built for two ranks fails when it runs, naming the op.
TEST(cuda_executor, all_to_all_on_one_rank) {
  FakeDevice fake = openFakeDevice();
  if (!fake.device)
    return;
  Device &device = *fake.device;
  auto view = [](ViewSpace space) { return View{space, 0, 0, {6}, {1}, 1}; };
  ArtifactFunction f;
  f.name = "a2a";
  Slot s;
  s.dtype = DType::F8_E5M2;
  s.shape = {6};
  f.args = {s};
  f.results = {s};
  CollectiveOp op;
  op.kind = CollectiveKind::AllToAll;
  op.dtype = DType::F8_E5M2;
  op.ranks = 1;
  op.in = view(ViewSpace::Arg);
  op.out = view(ViewSpace::Result);
  f.ops = {op};
  int calls = 0;
  auto steps = [&] {
    StepCallbacks c;
    c.collective = [&](const CollectiveDesc &d, const CollectiveOperands &o) {
      ++calls;
      return runCollective(device, nullptr, d, o);
    };
    return c;
  };
  Expected<std::unique_ptr<CudaFunction>> fn = CudaFunction::create(device, f, steps(), "a2a.json");
  CHECK_OK(fn);
  if (!fn)
    return;
  std::vector<uint8_t> in = {0x00, 0x7f, 0x80, 0xff, 0x3c, 0x01}, out(6, 0xaa);
  CHECK_OK((*fn)->runHost({in.data()}, {out.data()}));
  CHECK(out == in);
  CHECK_OK((*fn)->captureGraph());
  in = {1, 2, 3, 4, 5, 6};
  CHECK_OK((*fn)->runHost({in.data()}, {out.data()}));
  CHECK((*fn)->lastRunHasGraph());
  CHECK(out == in);
  CHECK_EQ(calls, 2); // the replay calls nothing

  std::get_if<CollectiveOp>(&f.ops[0])->ranks = 2;
  Expected<std::unique_ptr<CudaFunction>> two =
      CudaFunction::create(device, f, steps(), "a2a.json");
  CHECK_OK(two);
  if (two)
    CHECK_ERR((*two)->runHost({in.data()}, {out.data()}),
              "a2a.json: function 'a2a', op 0 (all_to_all): all_to_all was built for 2 ranks but "
              "the run has 1");
}

TEST(cuda_executor, creation_errors) {
  FakeDevice fake = openFakeDevice();
  if (!fake.device)
    return;
  Device &device = *fake.device;
  Artifact art = toyArtifact();
  CHECK_ERR(CudaFunction::create(device, art.functions[0], nullptr, "toy.json"),
            "toy.json: function 'toy_step': has GEMMs but no GEMM callback was given");
  // Validation comes first.
  ArtifactFunction bad = art.functions[0];
  std::get_if<LaunchOp>(&bad.ops[0])->grid.x = 0;
  CHECK_ERR(CudaFunction::create(device, bad, nullptr, "toy.json"), "op 0", "empty grid");
  // A kernel the (fake) JIT cannot build: the module load fails with its log.
  ArtifactFunction unknown = art.functions[0];
  std::string &ptx = unknown.modules[1].ptx;
  ptx.replace(ptx.find("lpc_fake_ramp("), 13, "lpc_fake_rump");
  std::get_if<LaunchOp>(&unknown.ops[3])->kernel = "lpc_fake_rump";
  HostGemm gemm;
  CHECK_ERR(CudaFunction::create(device, unknown, std::ref(gemm), "toy.json"),
            "toy.json: function 'toy_step', module 1 ('ramp'): cuModuleLoadDataEx failed: "
            "CUDA_ERROR_INVALID_IMAGE",
            "fake JIT: no host implementation of kernel 'lpc_fake_rump'");
  CHECK_EQ(device.allocator().stats().inUse, size_t(0));
}

TEST(cuda_executor, fake_driver_checks_parameter_count) {
  FakeDevice fake = openFakeDevice();
  if (!fake.device)
    return;
  Device &device = *fake.device;
  Expected<Module> m = Module::load(device, kFakeRampPtx);
  CHECK_OK(m);
  Expected<DeviceBuffer> out = device.allocate(16);
  CHECK_OK(out);
  if (!m || !out)
    return;
  Expected<CUfunction> k = m->function("lpc_fake_ramp");
  CHECK_OK(k);
  CUdeviceptr p = out->get();
  int64_t offset = 0, size = 4, stride = 1, num = 1;
  double start = 0;
  uint32_t den = 1;
  void *good[] = {&p, &p, &offset, &size, &stride, &start, &num, &den, nullptr};
  CHECK_OK(device.launch(*k, Dim3{}, Dim3{}, 0, good));
  void *extra[] = {&p, &p, &offset, &size, &stride, &start, &num, &den, &den, nullptr};
  CHECK_ERR(device.launch(*k, Dim3{}, Dim3{}, 0, extra),
            "CUDA_ERROR_INVALID_VALUE (fake: lpc_fake_ramp takes 8 parameters");
  size = 129; // one element past the block (the allocator rounds to 512 bytes)
  CHECK_ERR(device.launch(*k, Dim3{}, Dim3{}, 0, good), "CUDA_ERROR_ILLEGAL_ADDRESS",
            "view elements [0, 128] leave the allocation");
}
