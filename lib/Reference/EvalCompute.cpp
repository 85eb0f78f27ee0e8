//===- EvalCompute.cpp - reference evaluation of compute ops --------------===//
//
// The forward compute ops: matmul, elementwise arithmetic and activations,
// reductions, and data movement (broadcast, reshape, transpose, slice, concat,
// embedding, causal mask, where, dropout).
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

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

ReduceMap makeReduceMap(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes,
                        bool keepdims) {
  int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes)
    reduced[normalizeAxis(a, rank)] = true;
  ReduceMap map;
  std::vector<int64_t> keptShape; // output dims, reduced ones dropped
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      keptShape.push_back(shape[d]);
    else
      map.groupSize *= shape[d];
    if (!reduced[d] || keepdims)
      map.outShape.push_back(reduced[d] ? 1 : shape[d]);
  }
  // Output stride of each input dim (0 for reduced dims).
  std::vector<int64_t> keptStrides = stridesOf(keptShape), outStride(rank, 0);
  for (int64_t d = 0, k = 0; d < rank; ++d)
    if (!reduced[d])
      outStride[d] = keptStrides[k++];
  map.numOutputs = product(keptShape);
  map.outOf.resize(product(shape));
  forEachIndex(shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t out = 0;
    for (int64_t d = 0; d < rank; ++d)
      out += index[d] * outStride[d];
    map.outOf[linear] = out;
  });
  return map;
}

//===----------------------------------------------------------------------===//
// Matrix product
//===----------------------------------------------------------------------===//

/// Copies a rows x cols matrix into `dst` (row-major), reading it from `src`
/// as stored: row-major rows x cols, or cols x rows when `transposed`.
static void loadMatrix(const double *src, int64_t rows, int64_t cols,
                       bool transposed, std::vector<double> &dst) {
  dst.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dst[r * cols + c] = transposed ? src[c * rows + r] : src[r * cols + c];
}

/// lhs x rhs with lpc.matmul's shapes, accumulated in double, unrounded.
Tensor matmulExact(const Tensor &lhs, const Tensor &rhs, bool transposeA,
                   bool transposeB) {
  int64_t lr = lhs.rank(), rr = rhs.rank();
  int64_t m = lhs.shape[lr - (transposeA ? 1 : 2)];
  int64_t k = lhs.shape[lr - (transposeA ? 2 : 1)];
  int64_t n = rhs.shape[rr - (transposeB ? 2 : 1)];
  bool sharedRhs = rr == 2;
  std::vector<int64_t> outShape(lhs.shape.begin(), lhs.shape.end() - 2);
  int64_t batches = product(outShape);
  outShape.push_back(m);
  outShape.push_back(n);
  Tensor out = zeros(outShape);

  std::vector<double> a, b; // the current batch's [m, k] and [k, n]
  for (int64_t batch = 0; batch < batches; ++batch) {
    loadMatrix(lhs.data.data() + batch * m * k, m, k, transposeA, a);
    if (batch == 0 || !sharedRhs)
      loadMatrix(rhs.data.data() + (sharedRhs ? 0 : batch * k * n), k, n,
                 transposeB, b);
    double *c = out.data.data() + batch * m * n;
    // In blocks of kRows x kCols of C (128 KiB, stays in cache while k runs;
    // row by row, each row of C streamed all of B). Every element still adds
    // its k products in the order p = 0, 1, ..., k - 1: the same bits as the
    // plain triple loop.
    constexpr int64_t kRows = 64, kCols = 256;
    for (int64_t j0 = 0; j0 < n; j0 += kCols) {
      const int64_t j1 = std::min(n, j0 + kCols);
      for (int64_t i0 = 0; i0 < m; i0 += kRows) {
        const int64_t i1 = std::min(m, i0 + kRows);
        for (int64_t p = 0; p < k; ++p) {
          const double *bRow = b.data() + p * n;
          for (int64_t i = i0; i < i1; ++i) {
            const double aip = a[i * k + p];
            double *cRow = c + i * n;
            for (int64_t j = j0; j < j1; ++j)
              cRow[j] += aip * bRow[j];
          }
        }
      }
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

LogicalResult Evaluator::eval(MatmulOp op) {
  return define(op.getResult(),
                matmulExact(get(op.getLhs()), get(op.getRhs()),
                            op.getTransposeA(), op.getTransposeB()));
}

// Grouped GEMMs: in double, exactly as the definition reads (the products
// of f32/bf16/f16 values are exact in double; the sums round once per add,
// far below the compiled code's f32 accumulation).
LogicalResult Evaluator::eval(GroupedMatmulOp op) {
  const Tensor &x = get(op.getLhs()), &w = get(op.getRhs()),
               &g = get(op.getGroups());
  const int64_t rows = x.shape[0], k = x.shape[1], groups = w.shape[0];
  const bool tb = op.getTransposeB();
  const int64_t n = tb ? w.shape[1] : w.shape[2];
  Tensor out = zeros({rows, n});
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t e = static_cast<int64_t>(g.data[r]);
    if (e < 0 || e >= groups)
      continue; // a row of no group: 0
    const double *we = w.data.data() + e * k * n;
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += x.data[r * k + p] * (tb ? we[j * k + p] : we[p * n + j]);
      out.data[r * n + j] = acc;
    }
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(GroupedMatmulWeightGradOp op) {
  const Tensor &x = get(op.getLhs()), &dy = get(op.getRhs()),
               &g = get(op.getGroups());
  const int64_t rows = x.shape[0], k = x.shape[1], n = dy.shape[1];
  const int64_t groups = op.getResult().getType().getDimSize(0);
  Tensor out = zeros({groups, k, n});
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t e = static_cast<int64_t>(g.data[r]);
    if (e < 0 || e >= groups)
      continue;
    double *oe = out.data.data() + e * k * n;
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        oe[p * n + j] += x.data[r * k + p] * dy.data[r * n + j];
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(AddOp op) {
  return binary(op, [](double a, double b) { return a + b; });
}
LogicalResult Evaluator::eval(SubOp op) {
  return binary(op, [](double a, double b) { return a - b; });
}
LogicalResult Evaluator::eval(MulOp op) {
  return binary(op, [](double a, double b) { return a * b; });
}
LogicalResult Evaluator::eval(DivOp op) {
  return binary(op, [](double a, double b) { return a / b; });
}

LogicalResult Evaluator::eval(BiasAddOp op) {
  const Tensor &x = get(op.getInput()), &bias = get(op.getBias());
  Tensor out = zeros(x.shape);
  int64_t n = bias.numElements();
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[i] = x.data[i] + bias.data[i % n];
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(NegOp op) {
  return unary(op, [](double x) { return -x; });
}
LogicalResult Evaluator::eval(ReluOp op) { return unary(op, relu); }
LogicalResult Evaluator::eval(GeluOp op) {
  GeluApproximation approx = op.getApproximation();
  return unary(op, [&](double x) { return gelu(x, approx); });
}
LogicalResult Evaluator::eval(SiluOp op) {
  return unary(op, [](double x) { return x * sigmoid(x); });
}
LogicalResult Evaluator::eval(TanhOp op) {
  return unary(op, [](double x) { return std::tanh(x); });
}
LogicalResult Evaluator::eval(SigmoidOp op) { return unary(op, sigmoid); }
LogicalResult Evaluator::eval(ExpOp op) {
  return unary(op, [](double x) { return std::exp(x); });
}
LogicalResult Evaluator::eval(LogOp op) {
  return unary(op, [](double x) { return std::log(x); });
}
LogicalResult Evaluator::eval(Log1pOp op) {
  return unary(op, [](double x) { return std::log1p(x); });
}
LogicalResult Evaluator::eval(Expm1Op op) {
  return unary(op, [](double x) { return std::expm1(x); });
}
LogicalResult Evaluator::eval(SinOp op) {
  return unary(op, [](double x) { return std::sin(x); });
}
LogicalResult Evaluator::eval(CosOp op) {
  return unary(op, [](double x) { return std::cos(x); });
}
LogicalResult Evaluator::eval(ErfOp op) {
  return unary(op, [](double x) { return std::erf(x); });
}
LogicalResult Evaluator::eval(SqrtOp op) {
  return unary(op, [](double x) { return std::sqrt(x); });
}
LogicalResult Evaluator::eval(RsqrtOp op) {
  return unary(op, [](double x) { return 1.0 / std::sqrt(x); });
}
LogicalResult Evaluator::eval(PowOp op) {
  double e = op.getExponent().convertToDouble();
  return unary(op, [e](double x) { return std::pow(x, e); });
}
LogicalResult Evaluator::eval(ScaleOp op) {
  double f = op.getFactor().convertToDouble();
  return unary(op, [f](double x) { return x * f; });
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

LogicalResult Evaluator::eval(ReduceSumOp op) {
  const Tensor &x = get(op.getInput());
  ReduceMap rm = makeReduceMap(x.shape, op.getAxes(), op.getKeepdims());
  Tensor out = zeros(rm.outShape);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[rm.outOf[i]] += x.data[i];
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(ReduceMeanOp op) {
  const Tensor &x = get(op.getInput());
  ReduceMap rm = makeReduceMap(x.shape, op.getAxes(), op.getKeepdims());
  Tensor out = zeros(rm.outShape);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[rm.outOf[i]] += x.data[i];
  for (double &v : out.data)
    v /= static_cast<double>(rm.groupSize);
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(ReduceMaxOp op) {
  const Tensor &x = get(op.getInput());
  ReduceMap rm = makeReduceMap(x.shape, op.getAxes(), op.getKeepdims());
  Tensor out = zeros(rm.outShape);
  std::fill(out.data.begin(), out.data.end(), -kInf);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[rm.outOf[i]] = maxNaN(out.data[rm.outOf[i]], x.data[i]);
  return define(op.getResult(), std::move(out));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult Evaluator::eval(BroadcastOp op) {
  const Tensor &x = get(op.getInput());
  ArrayRef<int64_t> dims = op.getDims();
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  Tensor out = zeros(shapeOf(op.getResult()));
  forEachIndex(out.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t src = 0;
    for (int64_t i = 0; i < x.rank(); ++i)
      if (x.shape[i] != 1)
        src += index[dims[i]] * inStrides[i];
    out.data[linear] = x.data[src];
  });
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(ReshapeOp op) {
  Tensor out = get(op.getInput());
  out.shape = shapeOf(op.getResult());
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(TransposeOp op) {
  const Tensor &x = get(op.getInput());
  ArrayRef<int64_t> perm = op.getPermutation();
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  Tensor out = zeros(shapeOf(op.getResult()));
  forEachIndex(out.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i)
      src += index[i] * inStrides[perm[i]];
    out.data[linear] = x.data[src];
  });
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(SliceOp op) {
  const Tensor &x = get(op.getInput());
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  Tensor out = zeros(shapeOf(op.getResult()));
  forEachIndex(out.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    out.data[linear] = x.data[sliceSource(index, op.getStart(), op.getStep(),
                                          inStrides)];
  });
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(ConcatOp op) {
  Tensor out = zeros(shapeOf(op.getResult()));
  int64_t axis = normalizeAxis((int64_t)op.getAxis(), out.rank());
  std::vector<int64_t> outStrides = stridesOf(out.shape);
  int64_t offset = 0; // position of the current input along `axis`
  for (Value v : op.getInputs()) {
    const Tensor &x = get(v);
    forEachIndex(x.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
      int64_t dst = offset * outStrides[axis];
      for (int64_t d = 0; d < x.rank(); ++d)
        dst += index[d] * outStrides[d];
      out.data[dst] = x.data[linear];
    });
    offset += x.shape[axis];
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(EmbeddingOp op) {
  const Tensor &table = get(op.getTable()), &ids = get(op.getIndices());
  int64_t vocab = table.shape[0], dim = table.shape[1];
  Tensor out = zeros(shapeOf(op.getResult()));
  for (int64_t p = 0; p < ids.numElements(); ++p) {
    if (failed(checkId(op, ids.data[p], p, vocab)))
      return failure();
    int64_t row = static_cast<int64_t>(ids.data[p]);
    std::copy_n(table.data.begin() + row * dim, dim,
                out.data.begin() + p * dim);
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(CausalMaskOp op) {
  Tensor out = get(op.getInput());
  double fill = op.getFill().convertToDouble();
  int64_t q = out.shape[out.rank() - 2], k = out.shape.back();
  int64_t matrices = out.numElements() / (q * k);
  for (int64_t b = 0; b < matrices; ++b)
    for (int64_t i = 0; i < q; ++i)
      for (int64_t j = 0; j < k; ++j)
        if (j > i + (k - q))
          out.data[(b * q + i) * k + j] = fill;
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(WhereOp op) {
  const Tensor &cond = get(op.getCond()), &a = get(op.getOnTrue()),
               &b = get(op.getOnFalse());
  Tensor out = zeros(a.shape);
  for (size_t i = 0; i < out.data.size(); ++i)
    out.data[i] = cond.data[i] != 0.0 ? a.data[i] : b.data[i];
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(CompareOp op) {
  const Tensor &a = get(op.getLhs()), &b = get(op.getRhs());
  Tensor out = zeros(a.shape);
  // Values are held as doubles exactly (floats already rounded to their
  // type, integers within 2^53): C++'s comparisons are IEEE's, NaN included.
  auto test = [p = op.getPredicate()](double x, double y) {
    switch (p) {
    case ComparePredicate::lt: return x < y;
    case ComparePredicate::le: return x <= y;
    case ComparePredicate::gt: return x > y;
    case ComparePredicate::ge: return x >= y;
    case ComparePredicate::eq: return x == y;
    case ComparePredicate::ne: return x != y;
    }
    llvm_unreachable("unknown compare predicate");
  };
  for (size_t i = 0; i < out.data.size(); ++i)
    out.data[i] = test(a.data[i], b.data[i]) ? 1.0 : 0.0;
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(ConvertOp op) {
  const Tensor &x = get(op.getInput());
  Type to = op.getType().getElementType();
  std::optional<DType> dt = dtypeOf(to);
  Tensor out = Tensor::filled(*dt, x.shape, 0.0);
  for (size_t i = 0; i < out.data.size(); ++i) {
    double v = x.data[i];
    if (to.isInteger(1))
      out.data[i] = v != 0.0 ? 1.0 : 0.0;
    else if (to.isInteger(32))
      out.data[i] = static_cast<double>(
          static_cast<int32_t>(static_cast<int64_t>(std::trunc(v))));
    else if (to.isInteger(64))
      out.data[i] = std::trunc(v);
    else
      out.data[i] = static_cast<double>(static_cast<float>(v));
  }
  return define(op.getResult(), std::move(out));
}

LogicalResult Evaluator::eval(DropoutOp op) {
  const Tensor &x = get(op.getInput());
  double rate = op.getRate().convertToDouble();
  double keepScale = 1.0 / (1.0 - rate);
  Tensor out = zeros(x.shape);
  for (size_t i = 0; i < x.data.size(); ++i)
    if (dropoutUniform(op.getSeed(), opts.step, i) >= rate)
      out.data[i] = x.data[i] * keepScale;
  return define(op.getResult(), std::move(out));
}

} // namespace detail
} // namespace ref
} // namespace lpc
} // namespace mlir
