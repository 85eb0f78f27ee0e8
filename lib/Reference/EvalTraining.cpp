//===- EvalTraining.cpp - reference evaluation of training ops ------------===//
//
// Layer/RMS norm and softmax, the losses, the backward (*_grad) ops, and the
// optimizers (SGD, AdamW, lr schedule, global-norm clipping).
//
//===----------------------------------------------------------------------===//

#include "EvaluatorImpl.h"

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::ref;

namespace mlir {
namespace lpc {
namespace ref {
namespace detail {

/// Calls fn(base, stride, size) for every lane of `shape` along `axis`: the
/// lane's elements are at base + k * stride for k in [0, size).
template <typename Fn>
static void forEachLane(ArrayRef<int64_t> shape, int64_t axis, Fn fn) {
  int64_t outer = product(shape.take_front(axis));
  int64_t size = shape[axis];
  int64_t inner = product(shape.drop_front(axis + 1));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      fn(o * size * inner + i, inner, size);
}

//===----------------------------------------------------------------------===//
// Normalization, softmax
//===----------------------------------------------------------------------===//

/// Mean and biased variance of `n` contiguous values.
static std::pair<double, double> meanVar(const double *x, int64_t n) {
  double sum = 0.0;
  for (int64_t k = 0; k < n; ++k)
    sum += x[k];
  double mean = sum / n, sq = 0.0;
  for (int64_t k = 0; k < n; ++k)
    sq += (x[k] - mean) * (x[k] - mean);
  return {mean, sq / n};
}

static double meanSquare(const double *x, int64_t n) {
  double sq = 0.0;
  for (int64_t k = 0; k < n; ++k)
    sq += x[k] * x[k];
  return sq / n;
}

LogicalResult Evaluator::eval(LayerNormOp op) {
  const Tensor &x = get(op.getInput()), &gamma = get(op.getGamma()),
               &beta = get(op.getBeta());
  double eps = op.getEpsilon().convertToDouble();
  int64_t n = x.shape.back(), rows = x.numElements() / n;
  Tensor out = zeros(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * n;
    auto [mean, var] = meanVar(row, n);
    double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t k = 0; k < n; ++k)
      out.data[r * n + k] = (row[k] - mean) * rstd * gamma.data[k] +
                            beta.data[k];
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(RmsNormOp op) {
  const Tensor &x = get(op.getInput()), &gamma = get(op.getGamma());
  double eps = op.getEpsilon().convertToDouble();
  int64_t n = x.shape.back(), rows = x.numElements() / n;
  Tensor out = zeros(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * n;
    double rms = 1.0 / std::sqrt(meanSquare(row, n) + eps);
    for (int64_t k = 0; k < n; ++k)
      out.data[r * n + k] = row[k] * rms * gamma.data[k];
  }
  return define(op.getResult(), std::move(out));
}

/// softmax (or log_softmax) of `x` along `axis`, max-subtracted.
static Tensor softmax(const Tensor &x, int64_t axis, bool log) {
  Tensor out = zeros(x.shape);
  forEachLane(x.shape, normalizeAxis(axis, x.rank()),
              [&](int64_t base, int64_t stride, int64_t size) {
                const double *in = x.data.data();
                double mx = -kInf;
                for (int64_t k = 0; k < size; ++k)
                  mx = std::max(mx, in[base + k * stride]);
                double sum = 0.0;
                for (int64_t k = 0; k < size; ++k)
                  sum += std::exp(in[base + k * stride] - mx);
                for (int64_t k = 0; k < size; ++k) {
                  double shifted = in[base + k * stride] - mx;
                  out.data[base + k * stride] =
                      log ? shifted - std::log(sum) : std::exp(shifted) / sum;
                }
              });
  return out;
}

LogicalResult Evaluator::eval(SoftmaxOp op) {
  return define(op.getResult(),
                softmax(get(op.getInput()), (int64_t)op.getAxis(), false));
}
LogicalResult Evaluator::eval(LogSoftmaxOp op) {
  return define(op.getResult(),
                softmax(get(op.getInput()), (int64_t)op.getAxis(), true));
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

double Evaluator::logSumExp(const double *row, int64_t c) {
  double mx = -kInf;
  for (int64_t k = 0; k < c; ++k)
    mx = std::max(mx, row[k]);
  double sum = 0.0;
  for (int64_t k = 0; k < c; ++k)
    sum += std::exp(row[k] - mx);
  return mx + std::log(sum);
}

FailureOr<std::vector<int64_t>>
Evaluator::crossEntropyLabels(Operation *op, const Tensor &labels,
                              int64_t numClasses,
                              std::optional<uint64_t> ignore) {
  std::vector<int64_t> out;
  for (int64_t p = 0; p < labels.numElements(); ++p) {
    auto label = static_cast<int64_t>(labels.data[p]);
    if (ignore && label == static_cast<int64_t>(*ignore)) {
      out.push_back(-1);
      continue;
    }
    if (label < 0 || label >= numClasses)
      return op->emitError() << "reference evaluator: label " << label
                             << " at position " << p
                             << " is out of range for " << numClasses
                             << " classes";
    out.push_back(label);
  }
  return out;
}

LogicalResult Evaluator::eval(SoftmaxCrossEntropyOp op) {
  const Tensor &logits = get(op.getLogits());
  int64_t c = logits.shape.back();
  auto labels = crossEntropyLabels(op, get(op.getLabels()), c,
                                   op.getIgnoreIndex());
  if (failed(labels))
    return failure();
  double total = 0.0;
  int64_t counted = 0;
  for (size_t r = 0; r < labels->size(); ++r) {
    int64_t label = (*labels)[r];
    if (label < 0)
      continue;
    const double *row = logits.data.data() + r * c;
    total += logSumExp(row, c) - row[label];
    ++counted;
  }
  if (op.getReduction() == LossReduction::mean)
    total /= static_cast<double>(counted); // 0/0 = NaN if all are ignored
  Tensor out = zeros({});
  out.data[0] = total;
  return define(op.getLoss(), std::move(out));
}

LogicalResult Evaluator::eval(MseLossOp op) {
  const Tensor &p = get(op.getPrediction()), &t = get(op.getTarget());
  double total = 0.0;
  for (size_t i = 0; i < p.data.size(); ++i)
    total += (p.data[i] - t.data[i]) * (p.data[i] - t.data[i]);
  if (op.getReduction() == LossReduction::mean)
    total /= static_cast<double>(p.numElements());
  Tensor out = zeros({});
  out.data[0] = total;
  return define(op.getLoss(), std::move(out));
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

LogicalResult Evaluator::eval(ReluGradOp op) {
  return define(op.getResult(),
                zipWith(get(op.getGrad()), get(op.getInput()),
                        [](double g, double x) { return x > 0.0 ? g : 0.0; }));
}

LogicalResult Evaluator::eval(GeluGradOp op) {
  GeluApproximation approx = op.getApproximation();
  return define(op.getResult(),
                zipWith(get(op.getGrad()), get(op.getInput()),
                        [&](double g, double x) {
                          return g * geluDerivative(x, approx);
                        }));
}

LogicalResult Evaluator::eval(SiluGradOp op) {
  return define(op.getResult(),
                zipWith(get(op.getGrad()), get(op.getInput()),
                        [](double g, double x) {
                          double s = sigmoid(x);
                          return g * s * (1.0 + x * (1.0 - s));
                        }));
}

LogicalResult Evaluator::eval(TanhGradOp op) {
  return define(op.getResult(),
                zipWith(get(op.getGrad()), get(op.getOutput()),
                        [](double g, double y) { return g * (1.0 - y * y); }));
}

LogicalResult Evaluator::eval(SigmoidGradOp op) {
  return define(op.getResult(),
                zipWith(get(op.getGrad()), get(op.getOutput()),
                        [](double g, double y) { return g * y * (1.0 - y); }));
}

LogicalResult Evaluator::eval(SoftmaxGradOp op) {
  const Tensor &g = get(op.getGrad()), &y = get(op.getOutput());
  Tensor out = zeros(g.shape);
  forEachLane(g.shape, normalizeAxis((int64_t)op.getAxis(), g.rank()),
              [&](int64_t base, int64_t stride, int64_t size) {
                double dot = 0.0;
                for (int64_t k = 0; k < size; ++k)
                  dot += g.data[base + k * stride] * y.data[base + k * stride];
                for (int64_t k = 0; k < size; ++k) {
                  int64_t i = base + k * stride;
                  out.data[i] = y.data[i] * (g.data[i] - dot);
                }
              });
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(LogSoftmaxGradOp op) {
  const Tensor &g = get(op.getGrad()), &y = get(op.getOutput());
  Tensor out = zeros(g.shape);
  forEachLane(g.shape, normalizeAxis((int64_t)op.getAxis(), g.rank()),
              [&](int64_t base, int64_t stride, int64_t size) {
                double sum = 0.0;
                for (int64_t k = 0; k < size; ++k)
                  sum += g.data[base + k * stride];
                for (int64_t k = 0; k < size; ++k) {
                  int64_t i = base + k * stride;
                  out.data[i] = g.data[i] - std::exp(y.data[i]) * sum;
                }
              });
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(LayerNormGradOp op) {
  const Tensor &dy = get(op.getGrad()), &x = get(op.getInput()),
               &gamma = get(op.getGamma());
  double eps = op.getEpsilon().convertToDouble();
  int64_t n = x.shape.back(), rows = x.numElements() / n;
  Tensor dx = zeros(x.shape), dgamma = zeros(gamma.shape),
         dbeta = zeros(gamma.shape);
  std::vector<double> xhat(n), dxhat(n);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * n, *dyRow = dy.data.data() + r * n;
    auto [mean, var] = meanVar(row, n);
    double rstd = 1.0 / std::sqrt(var + eps);
    double meanDxhat = 0.0, meanDxhatXhat = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      xhat[k] = (row[k] - mean) * rstd;
      dxhat[k] = dyRow[k] * gamma.data[k];
      dgamma.data[k] += dyRow[k] * xhat[k];
      dbeta.data[k] += dyRow[k];
      meanDxhat += dxhat[k] / n;
      meanDxhatXhat += dxhat[k] * xhat[k] / n;
    }
    for (int64_t k = 0; k < n; ++k)
      dx.data[r * n + k] =
          rstd * (dxhat[k] - meanDxhat - xhat[k] * meanDxhatXhat);
  }
  if (failed(define(op.getGradInput(), std::move(dx))) ||
      failed(define(op.getGradGamma(), std::move(dgamma))))
    return failure();
  return define(op.getGradBeta(), std::move(dbeta));
}

LogicalResult Evaluator::eval(RmsNormGradOp op) {
  const Tensor &dy = get(op.getGrad()), &x = get(op.getInput()),
               &gamma = get(op.getGamma());
  double eps = op.getEpsilon().convertToDouble();
  int64_t n = x.shape.back(), rows = x.numElements() / n;
  Tensor dx = zeros(x.shape), dgamma = zeros(gamma.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * n, *dyRow = dy.data.data() + r * n;
    double rms = 1.0 / std::sqrt(meanSquare(row, n) + eps); // 1 / rms really
    double meanDxhatX = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      double dxhat = dyRow[k] * gamma.data[k];
      dgamma.data[k] += dyRow[k] * row[k] * rms;
      meanDxhatX += dxhat * row[k] / n;
    }
    // y = x * r * gamma, r = (mean(x^2) + eps)^-1/2, dr/dx_j = -r^3 x_j / n.
    for (int64_t k = 0; k < n; ++k)
      dx.data[r * n + k] = rms * dyRow[k] * gamma.data[k] -
                           row[k] * rms * rms * rms * meanDxhatX;
  }
  if (failed(define(op.getGradInput(), std::move(dx))))
    return failure();
  return define(op.getGradGamma(), std::move(dgamma));
}

LogicalResult Evaluator::eval(SoftmaxCrossEntropyGradOp op) {
  const Tensor &logits = get(op.getLogits());
  int64_t c = logits.shape.back();
  auto labels = crossEntropyLabels(op, get(op.getLabels()), c,
                                   op.getIgnoreIndex());
  if (failed(labels))
    return failure();
  double n = 1.0;
  if (op.getReduction() == LossReduction::mean)
    n = static_cast<double>(
        llvm::count_if(*labels, [](int64_t l) { return l >= 0; }));
  double seed = scalar(op.getGrad());
  Tensor out = zeros(logits.shape);
  for (size_t r = 0; r < labels->size(); ++r) {
    int64_t label = (*labels)[r];
    if (label < 0)
      continue; // ignored positions get 0
    const double *row = logits.data.data() + r * c;
    double lse = logSumExp(row, c);
    for (int64_t k = 0; k < c; ++k) {
      double p = std::exp(row[k] - lse) - (k == label ? 1.0 : 0.0);
      out.data[r * c + k] = seed * p / n;
    }
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(MseLossGradOp op) {
  const Tensor &p = get(op.getPrediction()), &t = get(op.getTarget());
  double n = op.getReduction() == LossReduction::mean
                 ? static_cast<double>(p.numElements())
                 : 1.0;
  double seed = scalar(op.getGrad());
  return define(op.getResult(), zipWith(p, t, [&](double a, double b) {
                  return seed * 2.0 * (a - b) / n;
                }));
}

LogicalResult Evaluator::eval(EmbeddingGradOp op) {
  const Tensor &g = get(op.getGrad()), &ids = get(op.getIndices());
  Tensor out = zeros(shapeOf(op.getResult()));
  int64_t vocab = out.shape[0], dim = out.shape[1];
  for (int64_t p = 0; p < ids.numElements(); ++p) {
    if (failed(checkId(op, ids.data[p], p, vocab)))
      return failure();
    int64_t row = static_cast<int64_t>(ids.data[p]);
    if (auto pad = op.getPaddingIdx(); pad && uint64_t(row) == *pad)
      continue; // nn.Embedding's padding row gets no gradient
    for (int64_t k = 0; k < dim; ++k)
      out.data[row * dim + k] += g.data[p * dim + k];
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(ReduceMaxGradOp op) {
  const Tensor &g = get(op.getGrad()), &x = get(op.getInput()),
               &y = get(op.getOutput());
  ReduceMap rm = makeReduceMap(x.shape, op.getAxes(), op.getKeepdims());
  std::vector<int64_t> ties(rm.numOutputs, 0);
  for (size_t i = 0; i < x.data.size(); ++i)
    if (x.data[i] == y.data[rm.outOf[i]])
      ++ties[rm.outOf[i]];
  Tensor out = zeros(x.shape);
  for (size_t i = 0; i < x.data.size(); ++i) {
    int64_t o = rm.outOf[i];
    if (x.data[i] == y.data[o])
      out.data[i] = g.data[o] / static_cast<double>(ties[o]);
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(SliceGradOp op) {
  const Tensor &g = get(op.getGrad());
  Tensor out = zeros(shapeOf(op.getResult()));
  std::vector<int64_t> outStrides = stridesOf(out.shape);
  forEachIndex(g.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    out.data[sliceSource(index, op.getStart(), op.getStep(), outStrides)] =
        g.data[linear];
  });
  return define(op.getResult(), std::move(out));
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

LogicalResult Evaluator::eval(SgdOp op) {
  const Tensor &p = get(op.getParam()), &g = get(op.getGrad()),
               &buf = get(op.getMomentumBuffer());
  double lr = scalar(op.getLr());
  double momentum = op.getMomentum().convertToDouble();
  double dampening = op.getDampening().convertToDouble();
  double wd = op.getWeightDecay().convertToDouble();
  Tensor newP = zeros(p.shape), newBuf = buf;
  for (size_t i = 0; i < p.data.size(); ++i) {
    double d = g.data[i] + wd * p.data[i];
    if (momentum != 0.0) {
      double b = rnd(momentum * buf.data[i] + (1.0 - dampening) * d,
                     DType::f32);
      newBuf.data[i] = b;
      d = op.getNesterov() ? d + momentum * b : b;
    }
    newP.data[i] = p.data[i] - lr * d;
  }
  if (failed(define(op.getNewParam(), std::move(newP))))
    return failure();
  return define(op.getNewMomentumBuffer(), std::move(newBuf));
}

LogicalResult Evaluator::eval(AdamWOp op) {
  const Tensor &p = get(op.getParam()), &g = get(op.getGrad()),
               &m = get(op.getExpAvg()), &v = get(op.getExpAvgSq());
  double t = scalar(op.getStep()), lr = scalar(op.getLr());
  double b1 = op.getBeta1().convertToDouble();
  double b2 = op.getBeta2().convertToDouble();
  double eps = op.getEps().convertToDouble();
  double wd = op.getWeightDecay().convertToDouble();
  double bc1 = 1.0 - std::pow(b1, t), bc2 = 1.0 - std::pow(b2, t);
  Tensor newP = zeros(p.shape), newM = zeros(p.shape), newV = zeros(p.shape);
  for (size_t i = 0; i < p.data.size(); ++i) {
    double gi = g.data[i];
    double mi = rnd(b1 * m.data[i] + (1.0 - b1) * gi, DType::f32);
    double vi = rnd(b2 * v.data[i] + (1.0 - b2) * gi * gi, DType::f32);
    double decayed = p.data[i] * (1.0 - lr * wd);
    newP.data[i] = decayed - lr * (mi / bc1) / (std::sqrt(vi / bc2) + eps);
    newM.data[i] = mi;
    newV.data[i] = vi;
  }
  if (failed(define(op.getNewParam(), std::move(newP))) ||
      failed(define(op.getNewExpAvg(), std::move(newM))))
    return failure();
  return define(op.getNewExpAvgSq(), std::move(newV));
}

LogicalResult Evaluator::eval(LrScheduleOp op) {
  double step = scalar(op.getStep());
  double base = op.getBaseLr().convertToDouble();
  double minLr = op.getMinLr().convertToDouble();
  double warmup = static_cast<double>(op.getWarmupSteps());
  double total = static_cast<double>(op.getTotalSteps());
  double lr;
  if (step < warmup) {
    lr = base * step / std::max(1.0, warmup);
  } else if (op.getKind() == LrScheduleKind::constant) {
    lr = base;
  } else {
    double p = (step - warmup) / std::max(1.0, total - warmup);
    p = std::clamp(p, 0.0, 1.0);
    double decay = op.getKind() == LrScheduleKind::linear
                       ? 1.0 - p
                       : 0.5 * (1.0 + std::cos(M_PI * p));
    lr = minLr + (base - minLr) * decay;
  }
  Tensor out = zeros({});
  out.data[0] = lr;
  return define(op.getLr(), std::move(out));
}

LogicalResult Evaluator::eval(ClipByGlobalNormOp op) {
  double sumSq = 0.0;
  for (Value g : op.getGrads())
    for (double x : get(g).data)
      sumSq += x * x;
  double norm = std::sqrt(sumSq);
  double coef = op.getMaxNorm().convertToDouble() / (norm + 1e-6);
  if (coef > 1.0) // clamp(max=1); a NaN coefficient stays NaN
    coef = 1.0;
  for (auto [g, clipped] : llvm::zip(op.getGrads(), op.getClipped()))
    if (failed(define(clipped, map(get(g), [&](double x) {
                        return x * coef;
                      }))))
      return failure();
  Tensor out = zeros({});
  out.data[0] = norm;
  return define(op.getNorm(), std::move(out));
}

} // namespace detail
} // namespace ref
} // namespace lpc
} // namespace mlir
