//===- AttentionTest.cpp - the fused attention kernel against double -----===//
//
// The twelve _mlir_ciface_lpc_rt_attention_* entry points against a naive
// double-precision reference (AttentionReference.h), on random nonzero inputs
// (several seeds): every type, causal or not, with or without an additive mask
// (random finite values, some -inf, one row and one column entirely -inf),
// Sq == Skv, Sq < Skv, Sq > Skv, odd D and Dv (D != Dv), sizes of one tile
// exactly, one more and one less, batch * head above the thread count, and
// strided views ([B, S, H, D] interleaved with padding, last stride not 1,
// reversed) for every operand, outputs included (nothing outside them may be
// written). Every kernel the CPU has: generic x86-64, AVX2+FMA, and AVX2+FMA
// with AVX512-BF16 dot products (bf16 entry points).
//
// The reference's gradient is itself checked against central finite
// differences of its forward. Also: bit-identical results for 1, 2 and 3
// threads; exact -inf / 0 for rows and keys that see nothing; every abort.
//
// Tolerances. The kernel computes in f32 what the reference computes in
// double, from the same (exactly widened) inputs. An f32 result must be
// within 2e-6 of its row's scale, the largest over the row of sum |terms|
// of what the element sums (for o_ie: sum_j p_ij |v_je|, times 1 + the
// row's largest |s_ij| + |lse_i|, since an error in s moves p relatively
// by as much); 2e-6 is ~34 f32 roundings (2^-24 each), for sums of up to
// 300 terms whose rounding errors mostly cancel (the worst seen is ~5% of
// it). A bf16 / f16 result is that f32 value rounded once to nearest, so
// it must be within that bound plus half an ulp of T at |ref| + bound: the
// f32 error may move the value across a rounding boundary, never further.
// The bf16 entry points also round P and dS to bf16 before their products,
// which moves each term by at most 2^-8 of itself: a bf16 o or dv may also
// be off by 2^-8 of its sum of |p v| (|p dO|), a dq or dk by 2^-8 of its sum
// of |scale ds k| (|scale ds q|) (AttentionReference.h).
//
// `lpc-attention-test --bench [ROUNDS [B H S D]]` instead times a causal
// case (default B=4, H=8, S=256, D=64) against the unfused GEMM + softmax
// path (README.md).
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Attention.h"

#include "AttentionReference.h"
#include "TestCheck.h"
#include "lpc/Runtime/Gemm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using lpc::rt::MemRef;
using namespace attention_test;

namespace {

enum class Kind { F32, BF16, F16 };
const char *kindName(Kind k) {
  return k == Kind::F32 ? "f32" : k == Kind::BF16 ? "bf16" : "f16";
}

float bitsToFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t floatToBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// bf16 nearest to x (ties to even), by comparing the two neighbours in
/// double (independent of the kernel's bit trick).
uint16_t toBf16(double x) {
  const float f = static_cast<float>(x); // exact for the values used here
  const uint32_t b = floatToBits(f);
  const uint32_t lo = b & 0xffff0000u, hi = lo + 0x10000u;
  const double dl = std::fabs(double(bitsToFloat(lo)) - x),
               dh = std::fabs(double(bitsToFloat(hi)) - x);
  if (dl < dh || (dl == dh && ((lo >> 16) & 1) == 0))
    return uint16_t(lo >> 16);
  return uint16_t(hi >> 16);
}
double fromBf16(uint16_t h) { return bitsToFloat(uint32_t(h) << 16); }
uint16_t toF16(double x) {
  _Float16 h = static_cast<_Float16>(static_cast<float>(x));
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
double fromF16(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return static_cast<double>(static_cast<float>(h));
}

/// The value of x rounded to the kind.
double roundTo(Kind k, double x) {
  switch (k) {
  case Kind::F32: return static_cast<float>(x);
  case Kind::BF16: return fromBf16(toBf16(x));
  case Kind::F16: return fromF16(toF16(x));
  }
  return x;
}

/// The spacing of the kind's values at |x| (x finite).
double ulp(Kind k, double x) {
  const int mant = k == Kind::F32 ? 23 : k == Kind::BF16 ? 7 : 10;
  const int minExp = k == Kind::F16 ? -14 : -126;
  x = std::fabs(x);
  int e = x > 0 ? std::ilogb(x) : minExp;
  e = std::max(e, minExp);
  return std::ldexp(1.0, e - mant);
}

//===----------------------------------------------------------------------===//
// Strided buffers
//===----------------------------------------------------------------------===//

/// How a tensor lies in its storage: the dimensions from outermost to
/// innermost in storage, padding of the innermost storage dimension, and an
/// offset.
struct Layout {
  const char *name;
  int order[4];
  int64_t pad;
  int64_t offset;
};
// Rank-4 [B, H, S, X] layouts.
const Layout kLayouts4[] = {
    {"dense", {0, 1, 2, 3}, 0, 0},
    {"[B,S,H,X]+pad", {0, 2, 1, 3}, 3, 5},   // interleaved heads, padded
    {"[B,H,X,S]", {0, 1, 3, 2}, 1, 2},       // last stride != 1
    {"reversed", {3, 2, 1, 0}, 0, 1},        // column-major
    {"[S,B,X,H]+pad", {2, 0, 3, 1}, 2, 7}};
// Rank-3 [B, H, S] (lse) and rank-2 [Sq, Skv] (mask) layouts.
const Layout kLayouts3[] = {{"dense", {0, 1, 2, 0}, 0, 0},
                            {"[B,S,H]+pad", {0, 2, 1, 0}, 2, 3},
                            {"[S,H,B]", {2, 1, 0, 0}, 0, 1}};
const Layout kLayouts2[] = {{"dense", {0, 1, 0, 0}, 0, 0},
                            {"transposed", {1, 0, 0, 0}, 0, 0},
                            {"padded", {0, 1, 0, 0}, 5, 3}};

constexpr float kSentinelF = 12345.0f;
constexpr uint16_t kSentinelH = 0x7bcd;

/// A tensor of rank R in a strided view of its own storage; everything
/// outside the view holds a sentinel.
struct Buf {
  Kind kind;
  int rank;
  int64_t sizes[4] = {1, 1, 1, 1};
  int64_t strides[4] = {0, 0, 0, 0};
  int64_t offset = 0;
  std::vector<float> f;
  std::vector<uint16_t> h;

  Buf(Kind kind, int rank, const int64_t *sz, const Layout &lay)
      : kind(kind), rank(rank), offset(lay.offset) {
    for (int d = 0; d < rank; ++d)
      sizes[d] = sz[d];
    int64_t stride = 1;
    for (int i = rank - 1; i >= 0; --i) {
      const int d = lay.order[i];
      strides[d] = stride;
      stride *= sizes[d] + (i == rank - 1 ? lay.pad : 0);
    }
    const size_t n = static_cast<size_t>(offset + stride + 4);
    if (kind == Kind::F32)
      f.assign(n, kSentinelF);
    else
      h.assign(n, kSentinelH);
  }

  int64_t elements() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d)
      n *= sizes[d];
    return n;
  }
  /// Storage index of the element with row-major linear index `lin`.
  int64_t at(int64_t lin) const {
    int64_t idx = offset;
    for (int d = rank - 1; d >= 0; --d) {
      idx += (lin % sizes[d]) * strides[d];
      lin /= sizes[d];
    }
    return idx;
  }
  double get(int64_t lin) const {
    const int64_t i = at(lin);
    switch (kind) {
    case Kind::F32: return f[i];
    case Kind::BF16: return fromBf16(h[i]);
    case Kind::F16: return fromF16(h[i]);
    }
    return 0;
  }
  void set(int64_t lin, double x) {
    const int64_t i = at(lin);
    switch (kind) {
    case Kind::F32: f[i] = static_cast<float>(x); break;
    case Kind::BF16: h[i] = toBf16(x); break;
    case Kind::F16: h[i] = toF16(x); break;
    }
  }
  /// Raw bits of element `lin` (for bit-exact comparisons).
  uint32_t bits(int64_t lin) const {
    const int64_t i = at(lin);
    return kind == Kind::F32 ? floatToBits(f[i]) : h[i];
  }
  /// The element values, row-major, as doubles.
  std::vector<double> values() const {
    std::vector<double> v(static_cast<size_t>(elements()));
    for (int64_t i = 0; i < elements(); ++i)
      v[i] = get(i);
    return v;
  }
  /// Count of storage slots outside the view that lost their sentinel.
  int64_t outsideWritten() const {
    std::vector<bool> in(kind == Kind::F32 ? f.size() : h.size(), false);
    for (int64_t i = 0; i < elements(); ++i)
      in[at(i)] = true;
    int64_t bad = 0;
    for (size_t i = 0; i < in.size(); ++i)
      if (!in[i] && (kind == Kind::F32 ? floatToBits(f[i]) !=
                                             floatToBits(kSentinelF)
                                       : h[i] != kSentinelH))
        ++bad;
    return bad;
  }

  template <typename T, int R> MemRef<T, R> desc() {
    MemRef<T, R> m;
    T *base;
    if constexpr (std::is_same_v<T, float>)
      base = f.data();
    else
      base = h.data();
    m.allocated = m.aligned = base;
    m.offset = offset;
    for (int d = 0; d < R; ++d) {
      m.sizes[d] = sizes[d];
      m.strides[d] = strides[d];
    }
    return m;
  }
};

//===----------------------------------------------------------------------===//
// Calling the entry points
//===----------------------------------------------------------------------===//

using M4F = MemRef<float, 4>;
using M4H = MemRef<uint16_t, 4>;
using M3F = MemRef<float, 3>;
using M2F = MemRef<float, 2>;

void callForward(Kind kind, Buf &q, Buf &k, Buf &v, Buf *mask, Buf &o,
                 Buf &lse, int64_t causal, double scale) {
  M3F L = lse.desc<float, 3>();
  M2F Mk = mask ? mask->desc<float, 2>() : M2F{};
  if (kind == Kind::F32) {
    M4F Q = q.desc<float, 4>(), K = k.desc<float, 4>(), V = v.desc<float, 4>(),
        O = o.desc<float, 4>();
    if (mask)
      _mlir_ciface_lpc_rt_attention_fwd_f32_mask(&Q, &K, &V, &Mk, &O, &L,
                                                 causal, scale);
    else
      _mlir_ciface_lpc_rt_attention_fwd_f32(&Q, &K, &V, &O, &L, causal, scale);
    return;
  }
  M4H Q = q.desc<uint16_t, 4>(), K = k.desc<uint16_t, 4>(),
      V = v.desc<uint16_t, 4>(), O = o.desc<uint16_t, 4>();
  if (kind == Kind::BF16) {
    if (mask)
      _mlir_ciface_lpc_rt_attention_fwd_bf16_mask(&Q, &K, &V, &Mk, &O, &L,
                                                  causal, scale);
    else
      _mlir_ciface_lpc_rt_attention_fwd_bf16(&Q, &K, &V, &O, &L, causal, scale);
  } else {
    if (mask)
      _mlir_ciface_lpc_rt_attention_fwd_f16_mask(&Q, &K, &V, &Mk, &O, &L,
                                                 causal, scale);
    else
      _mlir_ciface_lpc_rt_attention_fwd_f16(&Q, &K, &V, &O, &L, causal, scale);
  }
}

void callBackward(Kind kind, Buf &q, Buf &k, Buf &v, Buf &o, Buf &dout,
                  Buf &lse, Buf *mask, Buf &dq, Buf &dk, Buf &dv,
                  int64_t causal, double scale) {
  M3F L = lse.desc<float, 3>();
  M2F Mk = mask ? mask->desc<float, 2>() : M2F{};
  if (kind == Kind::F32) {
    M4F Q = q.desc<float, 4>(), K = k.desc<float, 4>(), V = v.desc<float, 4>(),
        O = o.desc<float, 4>(), dO = dout.desc<float, 4>(),
        dQ = dq.desc<float, 4>(), dK = dk.desc<float, 4>(),
        dV = dv.desc<float, 4>();
    if (mask)
      _mlir_ciface_lpc_rt_attention_bwd_f32_mask(&Q, &K, &V, &O, &dO, &L, &Mk,
                                                 &dQ, &dK, &dV, causal, scale);
    else
      _mlir_ciface_lpc_rt_attention_bwd_f32(&Q, &K, &V, &O, &dO, &L, &dQ, &dK,
                                            &dV, causal, scale);
    return;
  }
  M4H Q = q.desc<uint16_t, 4>(), K = k.desc<uint16_t, 4>(),
      V = v.desc<uint16_t, 4>(), O = o.desc<uint16_t, 4>(),
      dO = dout.desc<uint16_t, 4>(), dQ = dq.desc<uint16_t, 4>(),
      dK = dk.desc<uint16_t, 4>(), dV = dv.desc<uint16_t, 4>();
  if (kind == Kind::BF16) {
    if (mask)
      _mlir_ciface_lpc_rt_attention_bwd_bf16_mask(&Q, &K, &V, &O, &dO, &L, &Mk,
                                                  &dQ, &dK, &dV, causal, scale);
    else
      _mlir_ciface_lpc_rt_attention_bwd_bf16(&Q, &K, &V, &O, &dO, &L, &dQ, &dK,
                                             &dV, causal, scale);
  } else {
    if (mask)
      _mlir_ciface_lpc_rt_attention_bwd_f16_mask(&Q, &K, &V, &O, &dO, &L, &Mk,
                                                 &dQ, &dK, &dV, causal, scale);
    else
      _mlir_ciface_lpc_rt_attention_bwd_f16(&Q, &K, &V, &O, &dO, &L, &dQ, &dK,
                                            &dV, causal, scale);
  }
}

//===----------------------------------------------------------------------===//
// One case: forward and backward against the reference
//===----------------------------------------------------------------------===//

struct Case {
  Dims d;
  bool causal;
  int maskMode; // 0 none, 1 random finite + some -inf (+ a full row/column)
  int layout;   // rotates through the layouts, operand by operand
  uint32_t seed;
};

std::string describeCase(Kind kind, const Case &c) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "%s B=%lld H=%lld Sq=%lld Skv=%lld D=%lld Dv=%lld causal=%d "
                "mask=%d layout=%d seed=%u kernel=%d",
                kindName(kind), (long long)c.d.B, (long long)c.d.H,
                (long long)c.d.Sq, (long long)c.d.Skv, (long long)c.d.D,
                (long long)c.d.Dv, c.causal, c.maskMode, c.layout, c.seed,
                lpc::rt::attentionKernel());
  return buf;
}

/// All the operands of one case, filled.
struct Operands {
  Inputs in;
  Buf q, k, v, o, lse, dout, dq, dk, dv, mask;
  bool hasMask;

  /// Layout of operand `operand`; layout < 0: everything dense.
  static const Layout &lay4(int layout, int operand) {
    return kLayouts4[layout < 0 ? 0 : (layout + operand) % 5];
  }
  static const Layout &lay3(int layout) {
    return kLayouts3[layout < 0 ? 0 : layout % 3];
  }
  static const Layout &lay2(int layout) {
    return kLayouts2[layout < 0 ? 0 : layout % 3];
  }
  Operands(Kind kind, const Case &c)
      : q(kind, 4, sz4(c.d.B, c.d.H, c.d.Sq, c.d.D).data(), lay4(c.layout, 0)),
        k(kind, 4, sz4(c.d.B, c.d.H, c.d.Skv, c.d.D).data(), lay4(c.layout, 1)),
        v(kind, 4, sz4(c.d.B, c.d.H, c.d.Skv, c.d.Dv).data(),
          lay4(c.layout, 2)),
        o(kind, 4, sz4(c.d.B, c.d.H, c.d.Sq, c.d.Dv).data(), lay4(c.layout, 3)),
        lse(Kind::F32, 3, sz4(c.d.B, c.d.H, c.d.Sq, 0).data(),
            lay3(c.layout)),
        dout(kind, 4, sz4(c.d.B, c.d.H, c.d.Sq, c.d.Dv).data(),
             lay4(c.layout, 4)),
        dq(kind, 4, sz4(c.d.B, c.d.H, c.d.Sq, c.d.D).data(), lay4(c.layout, 1)),
        dk(kind, 4, sz4(c.d.B, c.d.H, c.d.Skv, c.d.D).data(),
           lay4(c.layout, 2)),
        dv(kind, 4, sz4(c.d.B, c.d.H, c.d.Skv, c.d.Dv).data(),
           lay4(c.layout, 3)),
        mask(Kind::F32, 2, sz4(c.d.Sq, c.d.Skv, 0, 0).data(),
             lay2(c.layout)),
        hasMask(c.maskMode != 0) {
    std::mt19937 rng(c.seed);
    std::uniform_real_distribution<double> uni(-1.0, 1.0);
    // Nonzero values: |x| in [1/16, 1].
    auto nonzero = [&] {
      double x = uni(rng);
      return x < 0 ? std::min(x, -0.0625) : std::max(x, 0.0625);
    };
    auto fill = [&](Buf &b, std::vector<double> *dense) {
      for (int64_t i = 0; i < b.elements(); ++i)
        b.set(i, nonzero());
      if (dense)
        *dense = b.values();
    };
    in.d = c.d;
    in.causal = c.causal;
    in.scale = 1.0 / std::sqrt(double(std::max<int64_t>(c.d.D, 1)));
    fill(q, &in.q);
    fill(k, &in.k);
    fill(v, &in.v);
    fill(dout, nullptr);
    if (hasMask) {
      for (int64_t i = 0; i < mask.elements(); ++i) {
        const double u = uni(rng);
        mask.set(i, u < -0.8 ? -kInf : 2.0 * uni(rng)); // ~10% -inf
      }
      // One query row and one key column that see nothing.
      if (c.d.Sq >= 2 && c.d.Skv >= 2) {
        const int64_t row = c.d.Sq / 2, col = c.d.Skv / 3;
        for (int64_t j = 0; j < c.d.Skv; ++j)
          mask.set(row * c.d.Skv + j, -kInf);
        for (int64_t i = 0; i < c.d.Sq; ++i)
          mask.set(i * c.d.Skv + col, -kInf);
      }
      in.mask = mask.values();
    }
  }
  static std::vector<int64_t> sz4(int64_t a, int64_t b, int64_t c, int64_t d) {
    return {a, b, c, d};
  }
};

/// Worst |error| / bound seen, over f32 results and over bf16 / f16 ones
/// (printed at the end: how much room the bounds leave).
double worst32 = 0, worst16 = 0;

/// got vs ref: for T outputs, the f32 bound `tol` plus half an ulp of T at
/// |ref| + tol (see the file comment). Returns the number of failures.
/// For bf16, `rowTolP` (P's or dS's rounding to bf16) is added to `tol`.
int64_t compare(const char *what, const std::string &label, Kind kind,
                const Buf &got, const std::vector<double> &ref,
                const std::vector<double> &rowTol, int64_t width,
                const std::vector<double> *rowTolP = nullptr) {
  int64_t bad = 0;
  double &worst = kind == Kind::F32 ? worst32 : worst16;
  for (int64_t i = 0; i < got.elements(); ++i) {
    const double g = got.get(i), r = ref[i];
    const int64_t row = width ? i / width : 0;
    const double tP = kind == Kind::BF16 && rowTolP ? (*rowTolP)[row] : 0.0;
    const double t = rowTol[row] + tP;
    const double bound =
        kind == Kind::F32 ? t : t + 0.5 * ulp(kind, std::fabs(r) + t);
    bool ok;
    if (std::isinf(r))
      ok = g == r;
    else
      ok = std::fabs(g - r) <= bound;
    if (!std::isinf(r) && bound > 0)
      worst = std::max(worst, std::fabs(g - r) / bound);
    if (!ok && bad++ < 3)
      CHECK(false,
            "%s: %s[%lld] = %.9g, reference %.9g (bound %.3g: f32 %.3g, "
            "bf16 P/dS %.3g, then half an ulp)",
            label.c_str(), what, (long long)i, g, r, bound, rowTol[row], tP);
  }
  CHECK(bad == 0, "%s: %s: %lld elements out of bounds", label.c_str(), what,
        (long long)bad);
  return bad;
}

/// Forward and backward of one case; returns false on any failure.
bool runCase(Kind kind, const Case &c) {
  const std::string label = describeCase(kind, c);
  const int before = failures;
  Operands ops(kind, c);
  const Dims &d = c.d;
  Buf *mask = ops.hasMask ? &ops.mask : nullptr;

  // Forward.
  callForward(kind, ops.q, ops.k, ops.v, mask, ops.o, ops.lse, c.causal,
              ops.in.scale);
  const FwdRef fr = referenceForward(ops.in);
  compare("o", label, kind, ops.o, fr.o, fr.oTol, d.Dv, &fr.oTolP);
  compare("lse", label, Kind::F32, ops.lse, fr.lse, fr.lseTol, 1);
  CHECK(ops.o.outsideWritten() == 0 && ops.lse.outsideWritten() == 0,
        "%s: the forward wrote outside o / lse", label.c_str());
  // Rows that see nothing: exactly lse = -inf and o = +-0.
  for (int64_t row = 0; row < d.BH() * d.Sq; ++row)
    if (fr.lse[row] == -kInf) {
      bool zero = ops.lse.get(row) == -kInf;
      for (int64_t e = 0; e < d.Dv; ++e)
        zero &= ops.o.get(row * d.Dv + e) == 0.0;
      CHECK(zero, "%s: row %lld sees nothing but lse = %g or o != 0",
            label.c_str(), (long long)row, ops.lse.get(row));
    }

  // Backward, from o and lse as the reference's forward stored them (o
  // rounded to T, lse to f32): independent of the kernel's forward.
  std::vector<double> oStored(fr.o.size()), lseStored(fr.lse.size());
  for (size_t i = 0; i < fr.o.size(); ++i) {
    ops.o.set(static_cast<int64_t>(i), fr.o[i]);
    oStored[i] = roundTo(kind, fr.o[i]);
  }
  for (size_t i = 0; i < fr.lse.size(); ++i) {
    ops.lse.set(static_cast<int64_t>(i), fr.lse[i]);
    lseStored[i] = static_cast<float>(fr.lse[i]);
  }
  callBackward(kind, ops.q, ops.k, ops.v, ops.o, ops.dout, ops.lse, mask,
               ops.dq, ops.dk, ops.dv, c.causal, ops.in.scale);
  const BwdRef br =
      referenceBackward(ops.in, oStored, lseStored, ops.dout.values());
  compare("dq", label, kind, ops.dq, br.dq, br.dqTol, d.D, &br.dqTolP);
  compare("dk", label, kind, ops.dk, br.dk, br.dkTol, d.D, &br.dkTolP);
  compare("dv", label, kind, ops.dv, br.dv, br.dvTol, d.Dv, &br.dvTolP);
  CHECK(ops.dq.outsideWritten() == 0 && ops.dk.outsideWritten() == 0 &&
            ops.dv.outsideWritten() == 0,
        "%s: the backward wrote outside dq / dk / dv", label.c_str());
  // Rows that see nothing: dq exactly 0; keys no query sees: dk = dv = 0.
  for (int64_t row = 0; row < d.BH() * d.Sq; ++row)
    if (lseStored[row] == -kInf)
      for (int64_t x = 0; x < d.D; ++x)
        CHECK(ops.dq.get(row * d.D + x) == 0.0, "%s: dq row %lld not 0",
              label.c_str(), (long long)row);
  for (int64_t bh = 0; bh < d.BH(); ++bh)
    for (int64_t j = 0; j < d.Skv; ++j) {
      bool seen = false;
      for (int64_t i = 0; i < d.Sq && !seen; ++i)
        seen = lseStored[bh * d.Sq + i] != -kInf &&
               score(ops.in, bh, i, j) != -kInf;
      if (seen)
        continue;
      bool zero = true;
      for (int64_t x = 0; x < d.D; ++x)
        zero &= ops.dk.get((bh * d.Skv + j) * d.D + x) == 0.0;
      for (int64_t e = 0; e < d.Dv; ++e)
        zero &= ops.dv.get((bh * d.Skv + j) * d.Dv + e) == 0.0;
      CHECK(zero, "%s: key %lld of (b, h) %lld seen by no query: dk / dv != 0",
            label.c_str(), (long long)j, (long long)bh);
    }
  return failures == before;
}

//===----------------------------------------------------------------------===//
// The tests
//===----------------------------------------------------------------------===//

/// The reference's analytic gradient against central differences of its
/// forward (loss = sum dO * o), so that the gradient the kernel is compared
/// with is itself proven.
void testReferenceGradient() {
  for (int causal = 0; causal < 2; ++causal)
    for (int maskMode = 0; maskMode < 2; ++maskMode)
      for (Dims d : {Dims{1, 2, 4, 6, 3, 2}, Dims{1, 1, 5, 3, 2, 4}}) {
        Case c{d, causal != 0, maskMode, 0, 77u + causal + 2 * maskMode};
        Operands ops(Kind::F32, c);
        Inputs in = ops.in;
        std::mt19937 rng(5);
        std::uniform_real_distribution<double> uni(-1.0, 1.0);
        std::vector<double> w(d.BH() * d.Sq * d.Dv);
        for (double &x : w)
          x = uni(rng);
        auto loss = [&](const Inputs &at) {
          const FwdRef f = referenceForward(at);
          double l = 0;
          for (size_t i = 0; i < w.size(); ++i)
            l += w[i] * f.o[i];
          return l;
        };
        const FwdRef f = referenceForward(in);
        const BwdRef g = referenceBackward(in, f.o, f.lse, w);
        double worst = 0;
        const double h = 1e-5;
        auto probe = [&](std::vector<double> Inputs::*field,
                         const std::vector<double> &grad, const char *name) {
          for (size_t i = 0; i < (in.*field).size(); ++i) {
            Inputs plus = in, minus = in;
            (plus.*field)[i] += h;
            (minus.*field)[i] -= h;
            const double fd = (loss(plus) - loss(minus)) / (2 * h);
            const double err = std::fabs(fd - grad[i]);
            worst = std::max(worst, err);
            CHECK(err <= 1e-7 * (1 + std::fabs(grad[i])),
                  "reference gradient d%s[%zu] = %.10g, finite differences "
                  "%.10g (causal=%d mask=%d)",
                  name, i, grad[i], fd, causal, maskMode);
          }
        };
        probe(&Inputs::q, g.dq, "q");
        probe(&Inputs::k, g.dk, "k");
        probe(&Inputs::v, g.dv, "v");
      }
}

/// The grid of cases, for one kernel.
int testGrid(bool full) {
  const Dims shapes[] = {
      {1, 1, 1, 1, 1, 1},       // one query, one key
      {2, 3, 17, 17, 3, 5},     // Sq == Skv, odd D != Dv
      {1, 2, 33, 129, 17, 16},  // Sq < Skv, a key tile + 1
      {2, 1, 129, 40, 64, 80},  // Sq > Skv: the first rows see nothing
      {1, 1, 64, 64, 64, 64},   // exactly one tile
      {3, 5, 65, 63, 8, 3},     // B*H = 15 > threads, tile + 1 / tile - 1
      {1, 2, 128, 128, 80, 17}, // exactly two tiles
      {2, 2, 50, 70, 1, 2},     // D = 1
      {1, 2, 100, 101, 24, 40}, // Skv = Sq + 1: diagonal 1 off tile edges
      {2, 1, 127, 64, 9, 16}};  // Skv - Sq = -63 (= 1 mod the tile)
  int cases = 0;
  int layout = 0;
  for (Kind kind : {Kind::F32, Kind::BF16, Kind::F16})
    for (int causal = 0; causal < 2; ++causal)
      for (int maskMode = 0; maskMode < 2; ++maskMode)
        for (const Dims &d : shapes) {
          if (!full && d.Sq * d.Skv * d.D > 100000)
            continue;
          const uint32_t seed = 1000u + static_cast<uint32_t>(cases);
          runCase(kind, Case{d, causal != 0, maskMode, layout++ % 15, seed});
          ++cases;
        }
  if (full) {
    // The benchmark's shape, smaller batch: several seeds.
    for (uint32_t seed : {1u, 2u, 3u}) {
      runCase(Kind::F32, Case{{2, 2, 256, 256, 64, 64}, true, 0, int(seed), seed});
      runCase(Kind::BF16, Case{{2, 2, 256, 256, 64, 64}, true, seed == 2,
                               int(seed) + 3, seed});
      cases += 2;
    }
    runCase(Kind::F16, Case{{1, 3, 200, 300, 32, 48}, false, 1, 4, 9u});
    ++cases;
  }
  return cases;
}

/// Results must not depend on the thread count: 1, 2 and 3 threads give the
/// same bits (forward and backward, several key-tile groups per head).
void testThreads() {
  const Case cases[] = {
      {{1, 2, 150, 200, 40, 24}, true, 1, 1, 42u},  // 2 heads: 4 groups each
      {{2, 4, 70, 130, 16, 33}, false, 0, 2, 43u},  // 8 heads: 3 groups
      {{4, 10, 65, 65, 8, 8}, true, 0, 0, 44u}};    // 40 heads: 1 group
  for (Kind kind : {Kind::F32, Kind::BF16})
    for (const Case &c : cases) {
      std::vector<std::vector<uint32_t>> results;
      for (int threads : {1, 2, 3}) {
        lpc::rt::setGemmThreads(threads);
        Operands ops(kind, c);
        Buf *mask = ops.hasMask ? &ops.mask : nullptr;
        callForward(kind, ops.q, ops.k, ops.v, mask, ops.o, ops.lse, c.causal,
                    ops.in.scale);
        callBackward(kind, ops.q, ops.k, ops.v, ops.o, ops.dout, ops.lse, mask,
                     ops.dq, ops.dk, ops.dv, c.causal, ops.in.scale);
        std::vector<uint32_t> bits;
        for (const Buf *b : {&ops.o, &ops.lse, &ops.dq, &ops.dk, &ops.dv})
          for (int64_t i = 0; i < b->elements(); ++i)
            bits.push_back(b->bits(i));
        results.push_back(std::move(bits));
      }
      CHECK(results[0] == results[1] && results[0] == results[2],
            "%s: results differ between 1, 2 and 3 threads",
            describeCase(kind, c).c_str());
    }
  lpc::rt::setGemmThreads(0);
}

void testInvalid() {
  const Dims d{2, 3, 5, 7, 4, 6};
  Case c{d, false, 1, 0, 3u};
  Operands f(Kind::F32, c);
  Operands h(Kind::BF16, c);
  M4F Q = f.q.desc<float, 4>(), K = f.k.desc<float, 4>(),
      V = f.v.desc<float, 4>(), O = f.o.desc<float, 4>(),
      dO = f.dout.desc<float, 4>(), dQ = f.dq.desc<float, 4>(),
      dK = f.dk.desc<float, 4>(), dV = f.dv.desc<float, 4>();
  M4H Qh = h.q.desc<uint16_t, 4>(), Kh = h.k.desc<uint16_t, 4>(),
      Vh = h.v.desc<uint16_t, 4>(), Oh = h.o.desc<uint16_t, 4>(),
      dOh = h.dout.desc<uint16_t, 4>(), dQh = h.dq.desc<uint16_t, 4>(),
      dKh = h.dk.desc<uint16_t, 4>(), dVh = h.dv.desc<uint16_t, 4>();
  M3F L = f.lse.desc<float, 3>();
  M2F Mk = f.mask.desc<float, 2>();

  expectAbort("lpc_rt_attention_fwd_f32", "shape mismatch: k is [2, 3, 7, 5]",
              [&] {
                M4F k = K;
                k.sizes[3] = 5; // D differs from q's
                _mlir_ciface_lpc_rt_attention_fwd_f32(&Q, &k, &V, &O, &L, 0, 1);
              });
  expectAbort("lpc_rt_attention_fwd_f32_mask", "shape mismatch: mask", [&] {
    M2F m = Mk;
    m.sizes[1] = 6; // Skv - 1
    _mlir_ciface_lpc_rt_attention_fwd_f32_mask(&Q, &K, &V, &m, &O, &L, 1, 1);
  });
  expectAbort("lpc_rt_attention_fwd_bf16", "shape mismatch: o", [&] {
    M4H o = Oh;
    o.sizes[2] = 4; // Sq - 1
    _mlir_ciface_lpc_rt_attention_fwd_bf16(&Qh, &Kh, &Vh, &o, &L, 0, 1);
  });
  expectAbort("lpc_rt_attention_fwd_f16", "shape mismatch: lse", [&] {
    M3F l = L;
    l.sizes[1] = 2;
    _mlir_ciface_lpc_rt_attention_fwd_f16(&Qh, &Kh, &Vh, &Oh, &l, 0, 1);
  });
  expectAbort("lpc_rt_attention_bwd_f32", "shape mismatch: dv", [&] {
    M4F dv = dV;
    dv.sizes[3] = 4;
    _mlir_ciface_lpc_rt_attention_bwd_f32(&Q, &K, &V, &O, &dO, &L, &dQ, &dK,
                                          &dv, 0, 1);
  });
  expectAbort("lpc_rt_attention_bwd_f16_mask", "shape mismatch: v", [&] {
    M4H v = Vh;
    v.sizes[2] = 8; // Skv + 1
    _mlir_ciface_lpc_rt_attention_bwd_f16_mask(&Qh, &Kh, &v, &Oh, &dOh, &L,
                                               &Mk, &dQh, &dKh, &dVh, 0, 1);
  });
  expectAbort("lpc_rt_attention_bwd_bf16_mask", "the descriptor of mask is null",
              [&] {
                _mlir_ciface_lpc_rt_attention_bwd_bf16_mask(
                    &Qh, &Kh, &Vh, &Oh, &dOh, &L, nullptr, &dQh, &dKh, &dVh, 0,
                    1);
              });
  expectAbort("lpc_rt_attention_fwd_f32", "the descriptor of q is null", [&] {
    _mlir_ciface_lpc_rt_attention_fwd_f32(nullptr, &K, &V, &O, &L, 0, 1);
  });
  expectAbort("lpc_rt_attention_fwd_f32", "k has a negative size", [&] {
    M4F k = K;
    k.sizes[2] = -1;
    _mlir_ciface_lpc_rt_attention_fwd_f32(&Q, &k, &V, &O, &L, 0, 1);
  });
  expectAbort("lpc_rt_attention_bwd_f32", "dout has a null data pointer", [&] {
    M4F o = dO;
    o.aligned = nullptr;
    _mlir_ciface_lpc_rt_attention_bwd_f32(&Q, &K, &V, &O, &o, &L, &dQ, &dK,
                                          &dV, 0, 1);
  });
  expectAbort("lpc_rt_attention_fwd_f32", "causal must be 0 or 1, got 2", [&] {
    _mlir_ciface_lpc_rt_attention_fwd_f32(&Q, &K, &V, &O, &L, 2, 1);
  });
  expectAbort("lpc_rt_attention_fwd_f32", "scale is not finite", [&] {
    _mlir_ciface_lpc_rt_attention_fwd_f32(&Q, &K, &V, &O, &L, 0, NAN);
  });
  expectAbort("lpc_rt_attention_bwd_f32", "output dk has overlapping elements",
              [&] {
                M4F dk = dK;
                dk.strides[3] = 0; // the 4 elements of a row in one place
                _mlir_ciface_lpc_rt_attention_bwd_f32(&Q, &K, &V, &O, &dO, &L,
                                                      &dQ, &dk, &dV, 0, 1);
              });
  // The descriptors above, unmodified, are valid: these calls return.
  _mlir_ciface_lpc_rt_attention_fwd_f32_mask(&Q, &K, &V, &Mk, &O, &L, 0, 0.5);
  _mlir_ciface_lpc_rt_attention_bwd_bf16(&Qh, &Kh, &Vh, &Oh, &dOh, &L, &dQh,
                                         &dKh, &dVh, 1, 0.5);
}

/// Output rounding, exhaustively: two keys with equal scores and values x,
/// y adjacent in T give o = (x + y) / 2 exactly in f32 (p = 1/2, exp(0) = 1,
/// the sum and the halving exact), a tie, which must round to the one of x,
/// y with an even pattern. Every finite pair of adjacent bf16 / f16
/// patterns, subnormals included, in one call (Dv = pairs); for bf16 on the
/// AVX512-BF16 kernel no subnormals (its products read them as 0).
void testRounding() {
  const bool dotKernel = lpc::rt::attentionKernel() == 3;
  for (Kind kind : {Kind::BF16, Kind::F16}) {
    std::vector<uint16_t> lo;
    for (uint32_t pat = 0; pat < 0x10000; ++pat) {
      const uint16_t x = uint16_t(pat), y = uint16_t(pat + 1);
      if ((x & 0x7fff) == 0x7fff) // y would cross into the other sign
        continue;
      if (kind == Kind::BF16 && dotKernel &&
          ((x & 0x7f80) == 0 || (y & 0x7f80) == 0))
        continue;
      const double a = kind == Kind::BF16 ? fromBf16(x) : fromF16(x);
      const double b = kind == Kind::BF16 ? fromBf16(y) : fromF16(y);
      // (bf16 above 2^127: x + y would overflow the f32 accumulation.)
      if (std::isfinite(static_cast<float>(a + b)))
        lo.push_back(x);
    }
    const int64_t n = static_cast<int64_t>(lo.size());
    const Dims d{1, 1, 3, 2, 5, n};
    Operands ops(kind, Case{d, false, 0, -1, 99u});
    for (int64_t x = 0; x < d.D; ++x) // k rows equal: s_i0 == s_i1
      ops.k.h[ops.k.at(d.D + x)] = ops.k.h[ops.k.at(x)];
    for (int64_t e = 0; e < n; ++e) {
      ops.v.h[ops.v.at(e)] = lo[e];
      ops.v.h[ops.v.at(n + e)] = uint16_t(lo[e] + 1);
    }
    callForward(kind, ops.q, ops.k, ops.v, nullptr, ops.o, ops.lse, 0, 0.5);
    int64_t bad = 0;
    for (int64_t i = 0; i < d.Sq; ++i)
      for (int64_t e = 0; e < n; ++e) {
        const uint16_t want = (lo[e] & 1) ? uint16_t(lo[e] + 1) : lo[e];
        const uint16_t got = ops.o.h[ops.o.at(i * n + e)];
        if (got != want && bad++ < 3)
          CHECK(false, "%s: o = (%#06x + %#06x) / 2 rounded to %#06x, "
                "expected %#06x (ties to even)", kindName(kind), lo[e],
                lo[e] + 1, got, want);
      }
    CHECK(bad == 0, "%s: %lld of %lld ties not rounded to even",
          kindName(kind), (long long)bad, (long long)(n * d.Sq));
  }
}

/// Empty dimensions: nothing to do, or (Skv = 0) rows that see nothing.
void testEmpty() {
  for (const Dims &d : {Dims{0, 2, 3, 3, 2, 2}, Dims{1, 1, 0, 5, 2, 2},
                        Dims{1, 2, 3, 0, 4, 2}, Dims{1, 1, 4, 4, 0, 3},
                        Dims{1, 1, 4, 4, 3, 0}})
    for (int causal = 0; causal < 2; ++causal)
      runCase(Kind::F32, Case{d, causal != 0, 0, 0, 11u});
}

//===----------------------------------------------------------------------===//
// Benchmark
//===----------------------------------------------------------------------===//

/// Median and best of `reps` timed calls (ms), after one warm-up call.
struct Timing {
  double median, best;
};
Timing timeMs(const std::function<void()> &fn, int reps) {
  fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - a)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t[0]};
}

/// The unfused path: S = Q K^T and the other products as batched GEMMs
/// (lpc_rt_gemm_f32 / _bf16), softmax and dS in loops, the S x S matrices
/// materialized. bf16: P and dS rounded to bf16 before their products, as
/// lpc's bf16 policy would.
struct Unfused {
  int64_t BH, S, D;
  bool bf16;
  bool gemmsOnly = false; // skip the softmax / dS loops (the GEMMs' share)
  std::vector<float> q, k, v, dO, s, o, dP, dq, dk, dv, lse, Di;
  std::vector<uint16_t> qh, kh, vh, dOh, ph, dsh;

  Unfused(int64_t BH, int64_t S, int64_t D, bool bf16)
      : BH(BH), S(S), D(D), bf16(bf16) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> uni(-1, 1);
    for (auto *x : {&q, &k, &v, &dO}) {
      x->resize(BH * S * D);
      for (float &y : *x)
        y = static_cast<float>(fromBf16(toBf16(uni(rng))));
    }
    for (auto *x : {&s, &dP})
      x->resize(BH * S * S);
    for (auto *x : {&o, &dq, &dk, &dv})
      x->resize(BH * S * D);
    lse.resize(BH * S);
    Di.resize(BH * S);
    if (bf16) {
      auto conv = [](const std::vector<float> &a, std::vector<uint16_t> &b) {
        b.resize(a.size());
        for (size_t i = 0; i < a.size(); ++i)
          b[i] = toBf16(a[i]);
      };
      conv(q, qh);
      conv(k, kh);
      conv(v, vh);
      conv(dO, dOh);
      ph.resize(BH * S * S);
      dsh.resize(BH * S * S);
    }
  }
  /// f32 -> bf16 to nearest even (finite values), as the compiled code
  /// would round.
  static uint16_t bf16Bits(float x) {
    const uint32_t b = floatToBits(x);
    return uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
  }
  template <typename T> static MemRef<T, 3> m3(std::vector<T> &x, int64_t b,
                                               int64_t r, int64_t c) {
    return {x.data(), x.data(), 0, {b, r, c}, {r * c, c, 1}};
  }
  /// C = op(A) op(B) on [BH] batches.
  void gemm(std::vector<float> &A, std::vector<uint16_t> &Ah, int64_t ar,
            int64_t ac, std::vector<float> &B, std::vector<uint16_t> &Bh,
            int64_t br, int64_t bc, std::vector<float> &C, int64_t cr,
            int64_t cc, bool tA, bool tB) {
    MemRef<float, 3> c = m3(C, BH, cr, cc);
    if (bf16) {
      MemRef<uint16_t, 3> a = m3(Ah, BH, ar, ac), b = m3(Bh, BH, br, bc);
      _mlir_ciface_lpc_rt_gemm_bf16(&a, &b, &c, tA, tB, 0);
    } else {
      MemRef<float, 3> a = m3(A, BH, ar, ac), b = m3(B, BH, br, bc);
      _mlir_ciface_lpc_rt_gemm_f32(&a, &b, &c, tA, tB, 0);
    }
  }
  void forward() {
    const float scale = 1.0f / std::sqrt(float(D));
    gemm(q, qh, S, D, k, kh, S, D, s, S, S, false, true); // S = Q K^T
    for (int64_t r = 0; r < (gemmsOnly ? 0 : BH * S); ++r) {
      const int64_t i = r % S;
      float *row = &s[r * S];
      float m = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        row[j] = j > i ? -INFINITY : row[j] * scale;
        m = std::max(m, row[j]);
      }
      float sum = 0;
      for (int64_t j = 0; j < S; ++j)
        sum += row[j] = std::exp(row[j] - m);
      for (int64_t j = 0; j < S; ++j) {
        row[j] /= sum;
        if (bf16)
          ph[r * S + j] = bf16Bits(row[j]);
      }
      lse[r] = m + std::log(sum);
    }
    gemm(s, ph, S, S, v, vh, S, D, o, S, D, false, false); // O = P V
  }
  void backward() {
    const float scale = 1.0f / std::sqrt(float(D));
    gemm(s, ph, S, S, dO, dOh, S, D, dv, S, D, true, false); // dV = P^T dO
    gemm(dO, dOh, S, D, v, vh, S, D, dP, S, S, false, true); // dP = dO V^T
    for (int64_t r = 0; r < (gemmsOnly ? 0 : BH * S); ++r) {
      float di = 0;
      for (int64_t e = 0; e < D; ++e)
        di += dO[r * D + e] * o[r * D + e];
      for (int64_t j = 0; j < S; ++j) {
        float &x = dP[r * S + j];
        x = s[r * S + j] * (x - di) * scale; // dS, scaled
        if (bf16)
          dsh[r * S + j] = bf16Bits(x);
      }
    }
    gemm(dP, dsh, S, S, k, kh, S, D, dq, S, D, false, false); // dQ = dS K
    gemm(dP, dsh, S, S, q, qh, S, D, dk, S, D, true, false);  // dK = dS^T Q
  }
};

const char *kernelName(int kernel) {
  return kernel == 3 ? "AVX512-BF16" : kernel == 2 ? "AVX2+FMA" : "generic";
}

void bench(int reps, int64_t B, int64_t H, int64_t S, int64_t D) {
  const double dense = double(B * H) * S * S * D; // multiply-adds of one product
  const double fwdFlop = 2 * 2 * dense / 2, bwdFlop = 5 * 2 * dense / 2; // causal
  std::printf("attention B=%lld H=%lld S=%lld D=%lld causal, %d CPUs, gemm "
              "threads %d, median and best of %d\n",
              (long long)B, (long long)H, (long long)S, (long long)D,
              int(sysconf(_SC_NPROCESSORS_ONLN)), lpc::rt::gemmThreads(), reps);
#if defined(__x86_64__)
  std::printf("CPU: avx2 %d, fma %d, avx512f %d; attention kernel %s\n",
              __builtin_cpu_supports("avx2") != 0,
              __builtin_cpu_supports("fma") != 0,
              __builtin_cpu_supports("avx512f") != 0,
              kernelName(lpc::rt::attentionKernel()));
#endif
  std::printf("GF/s: one fixed count for every row (the causal half: forward "
              "2 products, backward 5, of B*H*S*S*D/2 multiply-adds each) "
              "over the best time\n");
  std::printf("%-44s %15s %15s %15s %8s %8s\n", "", "fwd ms", "bwd ms",
              "fwd+bwd ms", "fwd GF/s", "bwd GF/s");
  std::printf("%-44s %15s %15s %15s %8s %8s\n", "", "median   best",
              "median   best", "median   best", "best", "best");
  auto row = [&](const char *name, Timing f, Timing b) {
    std::printf("%-44s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %8.1f %8.1f\n",
                name, f.median, f.best, b.median, b.best, f.median + b.median,
                f.best + b.best, fwdFlop / f.best * 1e-6,
                bwdFlop / b.best * 1e-6);
  };
  for (Kind kind : {Kind::F32, Kind::BF16})
    for (int kernel : {3, 2, 1})
      for (int threads : {0, 1}) {
        lpc::rt::setAttentionKernel(kernel);
        if (lpc::rt::attentionKernel() != kernel)
          continue;
        lpc::rt::setGemmThreads(threads);
        Operands ops(kind, Case{{B, H, S, S, D, D}, true, 0, -1, 7u});
        const Timing f = timeMs(
            [&] {
              callForward(kind, ops.q, ops.k, ops.v, nullptr, ops.o, ops.lse,
                          1, ops.in.scale);
            },
            reps);
        const Timing b = timeMs(
            [&] {
              callBackward(kind, ops.q, ops.k, ops.v, ops.o, ops.dout, ops.lse,
                           nullptr, ops.dq, ops.dk, ops.dv, 1, ops.in.scale);
            },
            reps);
        char name[100];
        std::snprintf(name, sizeof name, "fused %s, %s, %d thread(s)",
                      kindName(kind), kernelName(kernel),
                      lpc::rt::gemmThreads());
        row(name, f, b);
      }
  lpc::rt::setAttentionKernel(0);
  for (bool bf16 : {false, true})
    for (int threads : {0, 1})
      for (bool gemmsOnly : {false, true}) {
        lpc::rt::setGemmThreads(threads);
        Unfused u(B * H, S, D, bf16);
        u.gemmsOnly = gemmsOnly;
        const Timing f = timeMs([&] { u.forward(); }, reps);
        const Timing b = timeMs([&] { u.backward(); }, reps);
        char name[100];
        std::snprintf(name, sizeof name, "unfused %s%s, %d thread(s)",
                      bf16 ? "bf16" : "f32",
                      gemmsOnly ? ": its GEMMs alone" : " (GEMMs + loops)",
                      lpc::rt::gemmThreads());
        row(name, f, b);
      }
  lpc::rt::setGemmThreads(0);
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "--bench") == 0) {
    // --bench [ROUNDS [B H S D]]: the shape defaults to 4 8 256 64.
    int64_t shape[4] = {4, 8, 256, 64};
    for (int i = 0; i < 4 && 3 + i < argc; ++i)
      shape[i] = std::atoll(argv[3 + i]);
    if (shape[0] < 1 || shape[1] < 1 || shape[2] < 1 || shape[3] < 1) {
      std::fprintf(stderr, "lpc-attention-test --bench [ROUNDS [B H S D]]: "
                           "sizes must be positive\n");
      return 2;
    }
    bench(argc > 2 ? std::atoi(argv[2]) : 15, shape[0], shape[1], shape[2],
          shape[3]);
    return 0;
  }
  testInvalid(); // first: fork before the pool has threads
  testReferenceGradient();
  int cases = 0;
  const int best = lpc::rt::attentionKernel();
  std::string ran;
  for (int kernel : {3, 2, 1}) {
    lpc::rt::setAttentionKernel(kernel);
    if (lpc::rt::attentionKernel() != kernel)
      continue; // the CPU lacks it
    ran += std::string(ran.empty() ? "" : ", ") + kernelName(kernel);
    cases += testGrid(kernel == best);
    testEmpty();
    testRounding();
    testThreads();
  }
  lpc::rt::setAttentionKernel(0);
  std::printf("lpc attention test: %d cases (kernels %s; the full grid on "
              "%s), worst |error| / bound: f32 results %.3f, bf16/f16 results "
              "%.3f; %d checks, %d failed\n",
              cases, ran.c_str(), kernelName(best), worst32, worst16, checks,
              failures);
  return failures ? 1 : 0;
}
