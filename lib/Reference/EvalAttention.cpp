//===- EvalAttention.cpp - reference semantics of lpc.attention -----------===//
//
// The definition the fused kernels (runtime/gemm/Attention.cpp, cuDNN) are
// checked against: every score, probability and sum in double, the results
// rounded to their types once by `define`. (Compiled bf16 attention also
// rounds p and ds to bf16 inside; EvalOptions::attentionTermMagnitudes gives
// the sums of |terms| that bound what that moves.)
//
//===----------------------------------------------------------------------===//

#include "EvaluatorImpl.h"

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::ref;
using namespace mlir::lpc::ref::detail;

namespace {

/// Sizes of an attention: N = product of the leading dims.
struct AttentionDims {
  int64_t n, sq, skv, d, dv;
};

AttentionDims dimsOf(const Tensor &q, const Tensor &v) {
  int64_t r = static_cast<int64_t>(q.shape.size());
  return {product(ArrayRef<int64_t>(q.shape).drop_back(2)), q.shape[r - 2],
          v.shape[r - 2], q.shape[r - 1], v.shape[r - 1]};
}

/// Row i of batch b's scores s_ij (scale * q.k + mask, -inf where causal
/// hides j), into `s` [skv].
void scoresRow(const Tensor &q, const Tensor &k, const Tensor *mask,
               bool causal, double scale, const AttentionDims &a, int64_t b,
               int64_t i, std::vector<double> &s) {
  const double *qi = q.data.data() + (b * a.sq + i) * a.d;
  for (int64_t j = 0; j < a.skv; ++j) {
    if (causal && j > i + (a.skv - a.sq)) {
      s[j] = -kInf;
      continue;
    }
    const double *kj = k.data.data() + (b * a.skv + j) * a.d;
    double dot = 0.0;
    for (int64_t c = 0; c < a.d; ++c)
      dot += qi[c] * kj[c];
    s[j] = scale * dot + (mask ? mask->data[i * a.skv + j] : 0.0);
  }
}

/// log(sum_j exp(s_j)); -inf when every s_j is -inf.
double logSumExpRow(const std::vector<double> &s) {
  double mx = -kInf;
  for (double x : s)
    mx = std::max(mx, x);
  if (mx == -kInf)
    return -kInf;
  double sum = 0.0;
  for (double x : s)
    sum += std::exp(x - mx);
  return mx + std::log(sum);
}

} // namespace

namespace mlir {
namespace lpc {
namespace ref {
namespace detail {

LogicalResult Evaluator::eval(AttentionOp op) {
  const Tensor &q = get(op.getQuery()), &k = get(op.getKey()),
               &v = get(op.getValue());
  const Tensor *mask = op.getMask() ? &get(op.getMask()) : nullptr;
  AttentionDims a = dimsOf(q, v);
  double scale = op.getScaleValue();
  std::vector<int64_t> outShape = q.shape;
  outShape.back() = a.dv;
  Tensor out = zeros(outShape);
  Tensor lse = zeros(ArrayRef<int64_t>(q.shape).drop_back());
  const bool mags = opts.attentionTermMagnitudes;
  std::vector<double> s(a.skv);
  for (int64_t b = 0; b < a.n; ++b)
    for (int64_t i = 0; i < a.sq; ++i) {
      scoresRow(q, k, mask, op.getCausal(), scale, a, b, i, s);
      double l = logSumExpRow(s);
      lse.data[b * a.sq + i] = l;
      if (l == -kInf)
        continue; // a row that sees no key: 0
      double *oi = out.data.data() + (b * a.sq + i) * a.dv;
      for (int64_t j = 0; j < a.skv; ++j) {
        double p = std::exp(s[j] - l);
        const double *vj = v.data.data() + (b * a.skv + j) * a.dv;
        for (int64_t c = 0; c < a.dv; ++c)
          oi[c] += p * (mags ? std::fabs(vj[c]) : vj[c]);
      }
    }
  if (failed(define(op.getResult(), std::move(out))))
    return failure();
  return define(op.getLse(), std::move(lse));
}

LogicalResult Evaluator::eval(AttentionGradOp op) {
  const Tensor &g = get(op.getGrad()), &q = get(op.getQuery()),
               &k = get(op.getKey()), &v = get(op.getValue()),
               &o = get(op.getResult()), &lse = get(op.getLse());
  const Tensor *mask = op.getMask() ? &get(op.getMask()) : nullptr;
  AttentionDims a = dimsOf(q, v);
  double scale = op.getScaleValue();
  Tensor dq = zeros(q.shape), dk = zeros(k.shape), dv = zeros(v.shape);
  const bool mags = opts.attentionTermMagnitudes;
  std::vector<double> s(a.skv);
  for (int64_t b = 0; b < a.n; ++b)
    for (int64_t i = 0; i < a.sq; ++i) {
      double l = lse.data[b * a.sq + i];
      if (l == -kInf)
        continue; // the row saw no key: it depends on nothing
      scoresRow(q, k, mask, op.getCausal(), scale, a, b, i, s);
      const double *gi = g.data.data() + (b * a.sq + i) * a.dv;
      const double *oi = o.data.data() + (b * a.sq + i) * a.dv;
      const double *qi = q.data.data() + (b * a.sq + i) * a.d;
      double di = 0.0;
      for (int64_t c = 0; c < a.dv; ++c)
        di += gi[c] * oi[c];
      double *dqi = dq.data.data() + (b * a.sq + i) * a.d;
      for (int64_t j = 0; j < a.skv; ++j) {
        if (s[j] == -kInf)
          continue;
        double p = std::exp(s[j] - l);
        const double *vj = v.data.data() + (b * a.skv + j) * a.dv;
        const double *kj = k.data.data() + (b * a.skv + j) * a.d;
        double *dvj = dv.data.data() + (b * a.skv + j) * a.dv;
        double *dkj = dk.data.data() + (b * a.skv + j) * a.d;
        double dp = 0.0;
        for (int64_t c = 0; c < a.dv; ++c) {
          dp += gi[c] * vj[c];
          dvj[c] += p * (mags ? std::fabs(gi[c]) : gi[c]);
        }
        double ds = p * (dp - di) * scale;
        for (int64_t c = 0; c < a.d; ++c) {
          dqi[c] += mags ? std::fabs(ds * kj[c]) : ds * kj[c];
          dkj[c] += mags ? std::fabs(ds * qi[c]) : ds * qi[c];
        }
      }
    }
  if (failed(define(op.getGradQuery(), std::move(dq))) ||
      failed(define(op.getGradKey(), std::move(dk))))
    return failure();
  return define(op.getGradValue(), std::move(dv));
}

} // namespace detail
} // namespace ref
} // namespace lpc
} // namespace mlir
