// InitTests.cpp - lpc-runtime-tests: parameter initializers (lpc/Runtime/Init.h).
//
// The golden values were printed by lpc-eval --print=json built from the
// reference implementation as it was before it moved here (commit 4d8a964,
// lib/Reference/Random.cpp): they prove the port bit-identical.
#include "TestHarness.h"

#include "lpc/Runtime/Init.h"

#include <limits>

namespace {

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

/// FNV-1a 64 over the little-endian bytes of the f32 bit patterns.
uint64_t checksum(const std::vector<float> &v) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (float f : v) {
    uint32_t b = bitsOf(f);
    for (int k = 0; k < 4; ++k) {
      h ^= (b >> (8 * k)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

InitSpec spec(InitKind kind) {
  InitSpec s;
  s.kind = kind;
  return s;
}

struct Stats {
  double mean = 0, std = 0, min = 0, max = 0;
};
Stats stats(const std::vector<float> &v) {
  Stats s;
  s.min = s.max = v.empty() ? 0.0 : v[0];
  double sum = 0;
  for (float x : v) {
    sum += x;
    s.min = std::min<double>(s.min, x);
    s.max = std::max<double>(s.max, x);
  }
  s.mean = sum / static_cast<double>(v.size());
  double sq = 0;
  for (float x : v)
    sq += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(sq / static_cast<double>(v.size()));
  return s;
}

/// Mean and deviation within 5 standard errors (as test/Reference/check_init.py);
/// kurtosis 1.8 for uniform, 3 for normal.
void checkMoments(const std::vector<float> &v, double wantMean, double wantStd, double kurtosis,
                  const char *what) {
  Stats s = stats(v);
  double n = static_cast<double>(v.size());
  double seMean = wantStd / std::sqrt(n);
  double seStd = wantStd * std::sqrt((kurtosis - 1) / (4 * n));
  if (std::fabs(s.mean - wantMean) > 5 * seMean + 1e-6 * std::fabs(wantMean))
    fail(__FILE__, __LINE__,
         std::string(what) + ": mean " + show(s.mean) + ", want " + show(wantMean));
  if (std::fabs(s.std - wantStd) > 5 * seStd)
    fail(__FILE__, __LINE__,
         std::string(what) + ": std " + show(s.std) + ", want " + show(wantStd));
}

} // namespace

TEST(init, kind_names) {
  const InitKind all[] = {InitKind::Zeros,          InitKind::Ones,          InitKind::Constant,
                          InitKind::Normal,         InitKind::Uniform,       InitKind::XavierUniform,
                          InitKind::XavierNormal,   InitKind::KaimingUniform, InitKind::KaimingNormal};
  const char *names[] = {"zeros",          "ones",          "constant",
                         "normal",         "uniform",       "xavier_uniform",
                         "xavier_normal",  "kaiming_uniform", "kaiming_normal"};
  for (int i = 0; i < 9; ++i) {
    CHECK_EQ(std::string(initKindName(all[i])), std::string(names[i]));
    std::optional<InitKind> k = parseInitKind(names[i]);
    CHECK(k && *k == all[i]);
  }
  CHECK(!parseInitKind(""));
  CHECK(!parseInitKind("Zeros"));
  CHECK(!parseInitKind("xavier"));
  CHECK(!parseInitKind(std::string_view("zeros\0", 6)));
  InitSpec d;
  CHECK(d.kind == InitKind::Zeros);
  CHECK(d.std == 1.0 && d.mean == 0.0 && d.low == -1.0 && d.high == 1.0 && d.value == 0.0 &&
        d.gain == 1.0);
}

TEST(init, hash_name) {
  // From an independent Python model of FNV-1a 64 + splitmix64.
  CHECK_EQ(hashName(0, ""), uint64_t(0x5b21f68ffa77f14cULL));
  CHECK_EQ(hashName(3, "layer0.weight"), uint64_t(0xe6c9fea62250a510ULL));
  CHECK_EQ(hashName(UINT64_MAX, "blocks.3.attn/qkv:w"), uint64_t(0xa3c8f269c3eed4eeULL));
  CHECK_EQ(hashName(42, "\xc3\xa9"), uint64_t(0xaa410db934cf77c2ULL)); // bytes, not chars
  CHECK(hashName(1, "w") != hashName(2, "w"));
  CHECK(hashName(1, "w") != hashName(1, "w "));
}

TEST(init, golden_reference_values) {
  // lpc-eval MODEL --seed=S --print=json of the reference implementation
  // before the move: whole-tensor checksums and the first values' bits.
  struct Golden {
    const char *name;
    InitSpec spec;
    std::vector<int64_t> shape;
    uint64_t seed;
    uint64_t fnv;
    std::vector<uint32_t> first;
  };
  auto mk = [](InitKind k, double gain = 1.0) {
    InitSpec s = spec(k);
    s.gain = gain;
    return s;
  };
  InitSpec n = spec(InitKind::Normal);
  n.std = 0.02;
  n.mean = 1.0;
  InitSpec u = spec(InitKind::Uniform);
  u.low = -3.0;
  u.high = 5.0;
  InitSpec c = spec(InitKind::Constant);
  c.value = 0.1;
  InitSpec s3 = spec(InitKind::Normal);
  s3.std = 3.0;
  const double sqrt2 = 1.4142135623730951;
  const Golden goldens[] = {
      // seed 0
      {"layer0.weight", mk(InitKind::XavierUniform), {3, 5}, 0, 0xbcbbe10b1c9fa123ULL,
       {0x3f1105df, 0xbede2d22, 0xbf16008f, 0x3f2ec95e}},
      {"layer1.weight", mk(InitKind::KaimingUniform, sqrt2), {7, 4}, 0, 0xbdc48a71c6fd7dbfULL,
       {0x3f3dfddc, 0xbf149e7d, 0xbf05f434, 0xbe48c398}},
      {"conv.w", mk(InitKind::XavierNormal, 2.0), {4, 3, 2, 2}, 0, 0x09b3592b5f4c0938ULL,
       {0x3b3fb194, 0x3f27aed4, 0xbea3c677, 0xbe88b186}},
      {"k3", mk(InitKind::KaimingNormal), {6, 2, 3}, 0, 0x48422fd548a22498ULL,
       {0x3e492e59, 0xbdb25462, 0x3d143599, 0x3e58fc1e}},
      {"bias.n", n, {8}, 0, 0x6a6afbc07ceaadb7ULL, {0x3f82d727, 0x3f7ba009, 0x3f80f46d, 0x3f82107f}},
      {"u", u, {2, 3}, 0, 0x9d33221428347d21ULL, {0xbe52cd9e, 0xbf98974a, 0xc018d301, 0x408778e2}},
      {"nd", spec(InitKind::Normal), {9, 2}, 0, 0xc54136ae8fe2367dULL,
       {0xbf813a3e, 0x3fa39338, 0x3fe68301, 0xbe4ac09c}},
      {"c", c, {5}, 0, 0x1ec339a4617fc6ffULL, {0x3dcccccd}},
      {"z", spec(InitKind::Zeros), {2, 2}, 0, 0x88201fb960ff6465ULL, {0}},
      {"o", spec(InitKind::Ones), {3}, 0, 0x8eec422e25920948ULL, {0x3f800000}},
      {"big", mk(InitKind::KaimingUniform), {64, 32}, 0, 0x51fc999d0a0c5b4cULL,
       {0x3dbeec2b, 0x3e493a83, 0x3e05569d, 0x3e37fbf1}},
      {"scalar", s3, {}, 0, 0x9b2c93bf8641854fULL, {0x3efa5f4f}},
      {"blocks.3.attn/qkv:w", spec(InitKind::Uniform), {3, 4}, 0, 0x7e18a1a838f43fb1ULL,
       {0xbcd1b583, 0x3f567c6d, 0x3c173936, 0xbf4d6a02}},
      // seed 3
      {"layer0.weight", mk(InitKind::XavierUniform), {3, 5}, 3, 0xb9352273d6d11c65ULL,
       {0x3ec543f9, 0x3f2c4848, 0xbe3da78c, 0x3ea08b7e}},
      {"layer1.weight", mk(InitKind::KaimingUniform, sqrt2), {7, 4}, 3, 0xf1532291258b1a07ULL,
       {0xbf57a9bc, 0xbf44ac8a, 0x3f040aa7, 0xbe9b65e1}},
      {"conv.w", mk(InitKind::XavierNormal, 2.0), {4, 3, 2, 2}, 3, 0x38f4648c0a38650eULL,
       {0xbf0691a9, 0x3da859f1, 0xbe9fc86e, 0x3e6a25b7}},
      {"k3", mk(InitKind::KaimingNormal), {6, 2, 3}, 3, 0xf68c341afe360ba6ULL,
       {0xbf0e836a, 0xbd4106cf, 0xbecd4f79, 0xbe4d5375}},
      {"bias.n", n, {8}, 3, 0x1d3c8ccca87b08eeULL, {0x3f83bcd3, 0x3f77b920, 0x3f7c53af, 0x3f847b44}},
      {"u", u, {2, 3}, 3, 0xfe99b3f8ecb0cbd2ULL, {0x3f4085da, 0xbfb44f21, 0x408e2062, 0x4007194b}},
      {"nd", spec(InitKind::Normal), {9, 2}, 3, 0xa10e3111cf41ffeaULL,
       {0x3eb45fcd, 0xbf3c3a65, 0xbf828f9c, 0x3f23081b}},
      {"big", mk(InitKind::KaimingUniform), {64, 32}, 3, 0xe0204964dc8393e1ULL,
       {0x3e4ba1f7, 0x3e226496, 0x3dded8fc, 0x3d5e7e3b}},
      {"scalar", s3, {}, 3, 0x4243d35f1869cd73ULL, {0xbedf2d04}},
      {"blocks.3.attn/qkv:w", spec(InitKind::Uniform), {3, 4}, 3, 0x09084b7b839cd846ULL,
       {0x3ec04e12, 0x3f79a4b2, 0x3d05cb59, 0x3f611482}},
      // seed 2^64 - 1
      {"layer0.weight", mk(InitKind::XavierUniform), {3, 5}, UINT64_MAX, 0xf2b974589109b6c3ULL,
       {0xbeed4bb5, 0xbe93be46, 0x3e9628c3, 0xbf0806f5}},
      {"conv.w", mk(InitKind::XavierNormal, 2.0), {4, 3, 2, 2}, UINT64_MAX, 0xf9ff0202590dbaaaULL,
       {0x3ef79027, 0x3c384514, 0x3e041a3b, 0x3fa2e67a}},
      {"k3", mk(InitKind::KaimingNormal), {6, 2, 3}, UINT64_MAX, 0x7cec87e2e0ddd902ULL,
       {0x3df57f99, 0x3eca5953, 0x3ea98d0b, 0x3e2ff0bb}},
      {"big", mk(InitKind::KaimingUniform), {64, 32}, UINT64_MAX, 0x7ade0b3203b9e18bULL,
       {0x3c7eb75d, 0x3d338d6c, 0x3b900f21, 0x3c4b072d}},
      {"blocks.3.attn/qkv:w", spec(InitKind::Uniform), {3, 4}, UINT64_MAX, 0x6cd3b103a235fe01ULL,
       {0xbd0a41ba, 0xbe69b60c, 0x3f0ffbfd, 0xbed9851a}},
  };
  for (const Golden &g : goldens) {
    std::vector<float> v = initializeParam(g.spec, g.name, g.shape, g.seed);
    int64_t count = 1;
    for (int64_t d : g.shape)
      count *= d;
    CHECK_EQ(v.size(), static_cast<size_t>(count));
    if (checksum(v) != g.fnv)
      fail(__FILE__, __LINE__,
           std::string("checksum of ") + g.name + " (" + initKindName(g.spec.kind) + ", seed " +
               std::to_string(g.seed) + ") differs from the reference's");
    for (size_t i = 0; i < g.first.size() && i < v.size(); ++i)
      CHECK_EQ(bitsOf(v[i]), g.first[i]);
  }
}

TEST(init, rounding_to_f32) {
  // roundToFormat(x, f32) of the reference (llvm::APFloat, nearest even):
  // the same bits, printed by lpc-eval for constant initializers.
  auto constant = [](double x) {
    InitSpec s = spec(InitKind::Constant);
    s.value = x;
    return bitsOf(initializeParam(s, "c", {1}, 0)[0]);
  };
  CHECK_EQ(constant(0.1), uint32_t(0x3dcccccd));
  CHECK_EQ(constant(1e39), uint32_t(0x7f800000));
  CHECK_EQ(constant(-0x1.ffffffp127), uint32_t(0xff800000)); // halfway: ties to even = inf
  CHECK_EQ(constant(std::nextafter(0x1.ffffffp127, 0.0)), uint32_t(0x7f7fffff));
  CHECK_EQ(constant(1e-45), uint32_t(0x00000001));
  CHECK_EQ(constant(7e-46), uint32_t(0x00000000)); // below half the smallest subnormal
  CHECK_EQ(constant(-0.0), uint32_t(0x80000000));
  CHECK_EQ(constant(1.0 + 0x1p-24), uint32_t(0x3f800000)); // tie to even
  CHECK_EQ(constant(1.0 + 0x1p-24 + 0x1p-52), uint32_t(0x3f800001));
  CHECK_EQ(bitsOf(roundToF32(std::numeric_limits<double>::infinity())), uint32_t(0x7f800000));
  CHECK_EQ(bitsOf(roundToF32(-std::numeric_limits<double>::infinity())), uint32_t(0xff800000));
  CHECK(std::isnan(roundToF32(std::numeric_limits<double>::quiet_NaN())));
  CHECK_EQ(bitsOf(roundToF32(-0x1p-149)), uint32_t(0x80000001));
}

TEST(init, constant_kinds) {
  for (InitKind k : {InitKind::Zeros, InitKind::Ones, InitKind::Constant}) {
    InitSpec s = spec(k);
    s.value = -2.5;
    std::vector<float> v = initializeParam(s, "w", {3, 4, 5}, 7);
    CHECK_EQ(v.size(), size_t(60));
    float want = k == InitKind::Zeros ? 0.0f : k == InitKind::Ones ? 1.0f : -2.5f;
    for (float x : v)
      CHECK_EQ(x, want);
  }
  // Rank 0: one element; an empty dim: none.
  CHECK_EQ(initializeParam(spec(InitKind::Ones), "s", {}, 0).size(), size_t(1));
  CHECK_EQ(initializeParam(spec(InitKind::Normal), "e", {4, 0}, 0).size(), size_t(0));
}

TEST(init, statistics) {
  const std::vector<int64_t> shape = {400, 500}; // 200000 values
  {
    InitSpec s = spec(InitKind::Uniform);
    s.low = -3.0;
    s.high = 5.0;
    std::vector<float> v = initializeParam(s, "u", shape, 1);
    Stats st = stats(v);
    CHECK(st.min >= -3.0 && st.max <= 5.0);
    CHECK(st.min < -2.99 && st.max > 4.99);
    checkMoments(v, 1.0, 8.0 / std::sqrt(12.0), 1.8, "uniform");
  }
  {
    InitSpec s = spec(InitKind::Normal);
    s.mean = 1.0;
    s.std = 0.02;
    checkMoments(initializeParam(s, "n", shape, 1), 1.0, 0.02, 3.0, "normal");
    checkMoments(initializeParam(spec(InitKind::Normal), "n", shape, 2), 0.0, 1.0, 3.0,
                 "normal(0, 1)");
  }
  double fanIn = 400, fanOut = 500;
  {
    InitSpec s = spec(InitKind::XavierUniform);
    s.gain = 1.5;
    double b = 1.5 * std::sqrt(6.0 / (fanIn + fanOut));
    std::vector<float> v = initializeParam(s, "xu", shape, 1);
    Stats st = stats(v);
    CHECK(st.min >= -b && st.max <= b);
    CHECK(st.min < -0.999 * b && st.max > 0.999 * b);
    checkMoments(v, 0.0, 2 * b / std::sqrt(12.0), 1.8, "xavier_uniform");
  }
  {
    InitSpec s = spec(InitKind::XavierNormal);
    s.gain = 2.0;
    checkMoments(initializeParam(s, "xn", shape, 1), 0.0, 2.0 * std::sqrt(2.0 / (fanIn + fanOut)),
                 3.0, "xavier_normal");
  }
  {
    InitSpec s = spec(InitKind::KaimingUniform);
    s.gain = std::sqrt(2.0);
    double b = std::sqrt(2.0) * std::sqrt(3.0 / fanIn);
    std::vector<float> v = initializeParam(s, "ku", shape, 1);
    Stats st = stats(v);
    CHECK(st.min >= -b && st.max <= b);
    CHECK(st.min < -0.999 * b && st.max > 0.999 * b);
    checkMoments(v, 0.0, 2 * b / std::sqrt(12.0), 1.8, "kaiming_uniform");
  }
  checkMoments(initializeParam(spec(InitKind::KaimingNormal), "kn", shape, 1), 0.0,
               1.0 / std::sqrt(fanIn), 3.0, "kaiming_normal");
}

TEST(init, determinism) {
  for (InitKind k : {InitKind::Normal, InitKind::Uniform, InitKind::XavierUniform,
                     InitKind::XavierNormal, InitKind::KaimingUniform, InitKind::KaimingNormal}) {
    std::vector<float> a = initializeParam(spec(k), "layer.w", {16, 8}, 11);
    CHECK(a == initializeParam(spec(k), "layer.w", {16, 8}, 11));
    CHECK(a != initializeParam(spec(k), "layer.v", {16, 8}, 11));
    CHECK(a != initializeParam(spec(k), "layer.w", {16, 8}, 12));
    // The stream depends on seed and name only: a longer tensor of the same
    // fans starts with the same values ([16, 8] vs [16, 8, 1]).
    std::vector<float> b = initializeParam(spec(k), "layer.w", {16, 8, 1}, 11);
    CHECK(a == b);
  }
}

TEST(init, fan_rules) {
  // fan_in = dim 0, fan_out = dim 1, each times the dims 2..: kaiming
  // depends on fan_in only, xavier on fan_in + fan_out; the same stream
  // (same seed and name) then gives the same values.
  auto first = [](InitKind k, std::vector<int64_t> shape, size_t n) {
    std::vector<float> v = initializeParam(spec(k), "w", shape, 5);
    v.resize(n);
    return v;
  };
  // kaiming: [4, 5] and [4, 7] share fan_in = 4; [6, 2, 3] and [18, 1] fan_in = 18.
  for (InitKind k : {InitKind::KaimingUniform, InitKind::KaimingNormal}) {
    CHECK(first(k, {4, 5}, 20) == first(k, {4, 7}, 20));
    CHECK(first(k, {4, 5}, 20) != first(k, {5, 4}, 20));
    CHECK(first(k, {6, 2, 3}, 18) == first(k, {18, 1}, 18));
    CHECK(first(k, {3, 2, 2, 2}, 24) == first(k, {12, 2}, 24));
  }
  // xavier: [4, 5] and [5, 4] share fan_in + fan_out = 9; [6, 2, 3]: 18 + 6 = 24 = [12, 12].
  for (InitKind k : {InitKind::XavierUniform, InitKind::XavierNormal}) {
    CHECK(first(k, {4, 5}, 20) == first(k, {5, 4}, 20));
    CHECK(first(k, {4, 5}, 18) == first(k, {3, 6}, 18));
    CHECK(first(k, {4, 5}, 20) != first(k, {4, 6}, 20));
    CHECK(first(k, {6, 2, 3}, 36) == first(k, {12, 12}, 36));
    CHECK(first(k, {8}, 8) == first(k, {8, 1}, 8)); // rank 1: fan_out = 1
  }
  // With gain 1 the fan forms are uniform / normal with the bound / deviation
  // from the formulas, value for value.
  const double fanIn = 18, fanOut = 6;
  auto plain = [](InitKind k, double a, double b) {
    InitSpec s = spec(k);
    if (k == InitKind::Uniform) {
      s.low = a;
      s.high = b;
    } else {
      s.mean = a;
      s.std = b;
    }
    return initializeParam(s, "w", {6, 2, 3}, 5);
  };
  double xb = std::sqrt(6.0 / (fanIn + fanOut)), kb = std::sqrt(3.0 / fanIn);
  CHECK(initializeParam(spec(InitKind::XavierUniform), "w", {6, 2, 3}, 5) ==
        plain(InitKind::Uniform, -xb, xb));
  CHECK(initializeParam(spec(InitKind::KaimingUniform), "w", {6, 2, 3}, 5) ==
        plain(InitKind::Uniform, -kb, kb));
  CHECK(initializeParam(spec(InitKind::XavierNormal), "w", {6, 2, 3}, 5) ==
        plain(InitKind::Normal, 0.0, std::sqrt(2.0 / (fanIn + fanOut))));
  CHECK(initializeParam(spec(InitKind::KaimingNormal), "w", {6, 2, 3}, 5) ==
        plain(InitKind::Normal, 0.0, 1.0 / std::sqrt(fanIn)));
}

TEST(init, rng_formulas) {
  // InitRng is std::mt19937_64 (fixed by the C++ standard: its 10000th
  // output from the default seed 5489 is 9981545732273789042) and fixed
  // formulas.
  std::mt19937_64 e(5489);
  e.discard(9999);
  CHECK_EQ(e(), uint64_t(9981545732273789042ULL));
  InitRng r(77);
  std::mt19937_64 m(77);
  CHECK_EQ(r.uniform(), static_cast<double>(m() >> 11) * 0x1p-53);
  double lo = -2, hi = 3;
  CHECK_EQ(r.uniform(lo, hi), lo + (hi - lo) * (static_cast<double>(m() >> 11) * 0x1p-53));
  double u1 = static_cast<double>(m() >> 11) * 0x1p-53, u2 = static_cast<double>(m() >> 11) * 0x1p-53;
  CHECK_EQ(r.normal(1.0, 0.5),
           1.0 + 0.5 * (std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * M_PI * u2)));
  for (int i = 0; i < 1000; ++i) {
    int64_t b = r.below(3);
    CHECK(b >= 0 && b < 3);
  }
  CHECK_EQ(r.below(1), int64_t(0));
}
