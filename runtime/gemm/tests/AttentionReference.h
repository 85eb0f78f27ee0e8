//===- AttentionReference.h - the attention test's double reference ----===//
//
// The definition lpc-attention-test holds the CPU kernel to: attention in
// double on dense operands, forward (o, lse) and backward (dq, dk, dv),
// each result with its tolerance (AttentionTest.cpp's header comment says
// how the bound is made). Naive loops on purpose: nothing here shares code
// or order of operations with the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_GEMM_TESTS_ATTENTIONREFERENCE_H
#define LPC_RUNTIME_GEMM_TESTS_ATTENTIONREFERENCE_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace attention_test {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTol = 2e-6; // f32 results, relative to the row's scale
// The bf16 entry points round P and dS to bf16 (to nearest even) before
// their products: each term of those sums moves by at most 2^-8 of itself
// (bf16 keeps 8 significant bits).
constexpr double kRoundBf16 = 1.0 / 256;

struct Dims {
  int64_t B, H, Sq, Skv, D, Dv;
  int64_t BH() const { return B * H; }
};

/// Dense double operands: q [BH][Sq][D], k [BH][Skv][D], v [BH][Skv][Dv],
/// mask [Sq][Skv] (empty: none).
struct Inputs {
  Dims d;
  bool causal;
  double scale;
  std::vector<double> q, k, v, mask;
};

/// s_ij (-inf where masked or above the causal diagonal).
inline double score(const Inputs &in, int64_t bh, int64_t i, int64_t j) {
  const Dims &d = in.d;
  if (in.causal && j > i + (d.Skv - d.Sq))
    return -kInf;
  double s = 0;
  for (int64_t x = 0; x < d.D; ++x)
    s += in.q[(bh * d.Sq + i) * d.D + x] * in.k[(bh * d.Skv + j) * d.D + x];
  s *= in.scale;
  if (!in.mask.empty())
    s += in.mask[i * d.Skv + j];
  return s;
}
/// |scale| sum_d |q_id k_jd| + |mask_ij|: how large s_ij's terms are.
inline double scoreMag(const Inputs &in, int64_t bh, int64_t i, int64_t j) {
  const Dims &d = in.d;
  double s = 0;
  for (int64_t x = 0; x < d.D; ++x)
    s += std::fabs(in.q[(bh * d.Sq + i) * d.D + x] *
                   in.k[(bh * d.Skv + j) * d.D + x]);
  s *= std::fabs(in.scale);
  if (!in.mask.empty())
    s += std::fabs(in.mask[i * d.Skv + j]);
  return s;
}

struct FwdRef {
  std::vector<double> o, lse; // [BH][Sq][Dv], [BH][Sq]
  std::vector<double> oTol, lseTol; // f32 error bounds (per element / row)
  std::vector<double> oTolP;        // per row: what P's bf16 rounding adds
};

inline FwdRef referenceForward(const Inputs &in) {
  const Dims &d = in.d;
  FwdRef r;
  r.o.assign(d.BH() * d.Sq * d.Dv, 0.0);
  r.oTol.assign(d.BH() * d.Sq, 0.0);
  r.lse.assign(d.BH() * d.Sq, -kInf);
  r.lseTol.assign(d.BH() * d.Sq, 0.0);
  r.oTolP.assign(d.BH() * d.Sq, 0.0);
  std::vector<double> s(d.Skv), mag(d.Dv);
  for (int64_t bh = 0; bh < d.BH(); ++bh)
    for (int64_t i = 0; i < d.Sq; ++i) {
      double m = -kInf, sMag = 0;
      for (int64_t j = 0; j < d.Skv; ++j) {
        s[j] = score(in, bh, i, j);
        m = std::max(m, s[j]);
        if (s[j] != -kInf)
          sMag = std::max(sMag, scoreMag(in, bh, i, j));
      }
      const int64_t row = bh * d.Sq + i;
      if (m == -kInf)
        continue; // sees nothing: o = 0, lse = -inf, tolerance 0
      double sum = 0;
      for (int64_t j = 0; j < d.Skv; ++j)
        sum += std::exp(s[j] - m);
      const double lse = m + std::log(sum);
      r.lse[row] = lse;
      const double rowScale = 1 + sMag + std::fabs(lse);
      r.lseTol[row] = kTol * rowScale;
      std::fill(mag.begin(), mag.end(), 0.0);
      for (int64_t j = 0; j < d.Skv; ++j) {
        const double p = std::exp(s[j] - lse);
        for (int64_t e = 0; e < d.Dv; ++e) {
          const double vv = in.v[(bh * d.Skv + j) * d.Dv + e];
          r.o[row * d.Dv + e] += p * vv;
          mag[e] += p * std::fabs(vv);
        }
      }
      const double magMax =
          d.Dv ? *std::max_element(mag.begin(), mag.end()) : 0.0;
      r.oTol[row] = kTol * rowScale * magMax;
      r.oTolP[row] = kRoundBf16 * magMax;
    }
  return r;
}

struct BwdRef {
  std::vector<double> dq, dk, dv;          // like q, k, v
  std::vector<double> dqTol, dkTol, dvTol; // per row of dq / dk / dv
  // Per row: what rounding P (dv) and dS (dq, dk) to bf16 adds.
  std::vector<double> dqTolP, dkTolP, dvTolP;
};

/// The analytic gradient, given o and lse as stored (the op's semantics).
inline BwdRef referenceBackward(const Inputs &in,
                                const std::vector<double> &o,
                                const std::vector<double> &lse,
                                const std::vector<double> &dout) {
  const Dims &d = in.d;
  BwdRef r;
  r.dq.assign(in.q.size(), 0.0);
  r.dk.assign(in.k.size(), 0.0);
  r.dv.assign(in.v.size(), 0.0);
  std::vector<double> dqMag(in.q.size(), 0.0), dkMag(in.k.size(), 0.0),
      dvMag(in.v.size(), 0.0);
  // sum |terms| of each element, for the bf16 rounding of P and dS.
  std::vector<double> dqTerms(in.q.size(), 0.0), dkTerms(in.k.size(), 0.0),
      dvTerms(in.v.size(), 0.0);
  for (int64_t bh = 0; bh < d.BH(); ++bh)
    for (int64_t i = 0; i < d.Sq; ++i) {
      const int64_t row = bh * d.Sq + i;
      if (lse[row] == -kInf)
        continue; // p = 0 for the whole row
      const double *dO = dout.data() + row * d.Dv, *O = o.data() + row * d.Dv;
      double Di = 0, DiMag = 0, sMag = 0;
      for (int64_t e = 0; e < d.Dv; ++e) {
        Di += dO[e] * O[e];
        DiMag += std::fabs(dO[e] * O[e]);
      }
      for (int64_t j = 0; j < d.Skv; ++j)
        if (score(in, bh, i, j) != -kInf)
          sMag = std::max(sMag, scoreMag(in, bh, i, j));
      const double rowScale = 1 + sMag + std::fabs(lse[row]);
      for (int64_t j = 0; j < d.Skv; ++j) {
        const double s = score(in, bh, i, j);
        if (s == -kInf)
          continue;
        const double p = std::exp(s - lse[row]);
        const double *V = in.v.data() + (bh * d.Skv + j) * d.Dv;
        double dp = 0, dpMag = 0;
        for (int64_t e = 0; e < d.Dv; ++e) {
          dp += dO[e] * V[e];
          dpMag += std::fabs(dO[e] * V[e]);
          r.dv[(bh * d.Skv + j) * d.Dv + e] += p * dO[e];
          dvMag[(bh * d.Skv + j) * d.Dv + e] += p * rowScale * std::fabs(dO[e]);
          dvTerms[(bh * d.Skv + j) * d.Dv + e] += p * std::fabs(dO[e]);
        }
        const double ds = p * (dp - Di);
        const double dsMag =
            p * (rowScale * std::fabs(dp - Di) + dpMag + DiMag);
        const double *Q = in.q.data() + row * d.D,
                     *K = in.k.data() + (bh * d.Skv + j) * d.D;
        for (int64_t x = 0; x < d.D; ++x) {
          r.dq[row * d.D + x] += in.scale * ds * K[x];
          dqMag[row * d.D + x] += std::fabs(in.scale) * dsMag * std::fabs(K[x]);
          r.dk[(bh * d.Skv + j) * d.D + x] += in.scale * ds * Q[x];
          dkMag[(bh * d.Skv + j) * d.D + x] +=
              std::fabs(in.scale) * dsMag * std::fabs(Q[x]);
          dqTerms[row * d.D + x] += std::fabs(in.scale * ds * K[x]);
          dkTerms[(bh * d.Skv + j) * d.D + x] +=
              std::fabs(in.scale * ds * Q[x]);
        }
      }
    }
  auto rowTol = [](const std::vector<double> &mag, int64_t width, double rel) {
    std::vector<double> t(width ? mag.size() / width : 0, 0.0);
    for (size_t row = 0; row < t.size(); ++row)
      for (int64_t x = 0; x < width; ++x)
        t[row] = std::max(t[row], rel * mag[row * width + x]);
    return t;
  };
  r.dqTol = rowTol(dqMag, d.D, kTol);
  r.dkTol = rowTol(dkMag, d.D, kTol);
  r.dvTol = rowTol(dvMag, d.Dv, kTol);
  r.dqTolP = rowTol(dqTerms, d.D, kRoundBf16);
  r.dkTolP = rowTol(dkTerms, d.D, kRoundBf16);
  r.dvTolP = rowTol(dvTerms, d.Dv, kRoundBf16);
  return r;
}

} // namespace attention_test

#endif // LPC_RUNTIME_GEMM_TESTS_ATTENTIONREFERENCE_H
