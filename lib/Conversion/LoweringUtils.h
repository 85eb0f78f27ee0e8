//===- LoweringUtils.h - helpers of the lpc -> linalg lowering --*- C++ -*-===//
//
// Builders shared by the lowering patterns (lib/Conversion/Lower*.cpp).
// Bodies compute in f32: toF32 / fromF32 extend and round at the edges.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_LIB_CONVERSION_LOWERINGUTILS_H
#define LPC_LIB_CONVERSION_LOWERINGUTILS_H

#include "lpc/Dialect/LpcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallSet.h"

#include <cmath>
#include <cstring>

namespace mlir {
namespace lpc {
namespace lowering {

inline RankedTensorType tt(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Extends a scalar to f32 (floats) inside a body.
/// fp8 <-> f32 with integer code (LowerPrecision.cpp): arith.extf/truncf
/// of fp8 types have no CPU lowering. Round to nearest even; without
/// `saturate` overflow gives NaN (E4M3FN) or inf (E5M2).
Value decodeFP8(OpBuilder &b, Location loc, Value fp8);
Value encodeFP8(OpBuilder &b, Location loc, Value f32, Type fp8Type,
                bool saturate);

/// While one is alive (on this thread), decodeFP8 / encodeFP8 emit
/// arith.extf / arith.truncf instead of integer code, for a back end with
/// conversion instructions (lpc-to-linalg{fp8-hardware-cvt}, then
/// lpc-fp8-to-nvvm). A saturating encode is truncf(clampFP8(x)). The
/// helpers are called deep inside the patterns' body builders, out of
/// reach of the pass's options: the pass holds one of these while it runs.
class FP8HardwareCvtScope {
public:
  explicit FP8HardwareCvtScope(bool enable);
  ~FP8HardwareCvtScope();
  FP8HardwareCvtScope(const FP8HardwareCvtScope &) = delete;
  FP8HardwareCvtScope &operator=(const FP8HardwareCvtScope &) = delete;

private:
  bool saved;
};

/// min(max(x, -M), M) with M the largest finite value of `fp8Type`
/// (NaN stays NaN): what makes truncf saturating.
Value clampFP8(OpBuilder &b, Location loc, Value f32, Type fp8Type);
/// The x of a clampFP8(x) for `fp8Type` (either operand order), or null.
Value matchClampFP8(Value clamped, Type fp8Type);

inline Value toF32(OpBuilder &b, Location loc, Value v) {
  Type t = v.getType();
  if (t.isF32() || !isa<FloatType>(t))
    return v;
  if (isFP8(t))
    return decodeFP8(b, loc, v);
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

/// Rounds an f32 scalar to `t` inside a body.
inline Value fromF32(OpBuilder &b, Location loc, Value v, Type t) {
  if (v.getType() == t)
    return v;
  if (isFP8(t))
    return encodeFP8(b, loc, v, t, /*saturate=*/false);
  if (isa<FloatType>(t))
    return arith::TruncFOp::create(b, loc, t, v);
  return v;
}

inline Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

inline Value emptyLike(OpBuilder &b, Location loc, RankedTensorType t) {
  return tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType());
}

/// A tensor of `t` filled with `v` (in t's element type).
inline Value filled(OpBuilder &b, Location loc, RankedTensorType t, double v) {
  Value init = emptyLike(b, loc, t);
  Value c;
  if (isa<FloatType>(t.getElementType()))
    c = arith::ConstantOp::create(b, loc,
                                  b.getFloatAttr(t.getElementType(), v));
  else
    c = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(t.getElementType(), (int64_t)v));
  return linalg::FillOp::create(b, loc, c, init).getResult(0);
}

using BodyFn =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

/// A linalg.generic over `domainRank` loops. `inputMaps` / `outputMaps` map
/// the loops to each operand; the body gets the inputs extended to f32 (and
/// the outputs' current values, for reductions) and returns f32 values that
/// are rounded to the outputs' element types.
inline SmallVector<Value> generic(OpBuilder &b, Location loc, ValueRange inputs,
                           ArrayRef<AffineMap> inputMaps, ValueRange outputs,
                           ArrayRef<AffineMap> outputMaps,
                           ArrayRef<utils::IteratorType> iterators,
                           BodyFn body, bool passOutputs = false) {
  // Scalar (0-d) inputs are read once, before the loops, and used from
  // there: a load per element would be re-executed in every iteration (the
  // outputs may alias it as far as LLVM knows), and with it any pow/div
  // computed from it, e.g. the optimizer's bias corrections.
  SmallVector<Value> loopInputs, hoisted(inputs.size());
  SmallVector<AffineMap> maps;
  for (auto [i, in] : llvm::enumerate(inputs)) {
    if (tt(in).getRank() == 0 && inputMaps[i].getNumResults() == 0) {
      hoisted[i] = toF32(b, loc, tensor::ExtractOp::create(b, loc, in,
                                                           ValueRange{}));
      continue;
    }
    loopInputs.push_back(in);
    maps.push_back(inputMaps[i]);
  }
  llvm::append_range(maps, outputMaps);
  SmallVector<Type> resultTypes;
  for (Value o : outputs)
    resultTypes.push_back(o.getType());
  auto op = linalg::GenericOp::create(
      b, loc, resultTypes, loopInputs, outputs, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> in;
        unsigned next = 0;
        for (Value h : hoisted)
          in.push_back(h ? h : toF32(nb, nloc, args[next++]));
        if (passOutputs)
          for (Value a : args.drop_front(loopInputs.size()))
            in.push_back(toF32(nb, nloc, a));
        SmallVector<Value> res = body(nb, nloc, in);
        SmallVector<Value> yields;
        for (auto [r, o] : llvm::zip(res, outputs))
          yields.push_back(fromF32(nb, nloc, r,
                                   tt(o).getElementType()));
        linalg::YieldOp::create(nb, nloc, yields);
      });
  return SmallVector<Value>(op.getResults());
}

/// Elementwise op of same-shaped operands (0-d tensors broadcast).
inline Value elementwise(OpBuilder &b, Location loc, RankedTensorType out,
                  ValueRange inputs, BodyFn body) {
  unsigned rank = out.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(tt(in).getRank() == 0 && rank != 0
                       ? AffineMap::get(rank, 0, {}, ctx)
                       : AffineMap::getMultiDimIdentityMap(rank, ctx));
  SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
  return generic(b, loc, inputs, maps, emptyLike(b, loc, out),
                 AffineMap::getMultiDimIdentityMap(rank, ctx), its, body)[0];
}

/// Scalar helpers used in bodies.
inline Value mulf(OpBuilder &b, Location l, Value x, Value y) {
  return arith::MulFOp::create(b, l, x, y);
}
inline Value addf(OpBuilder &b, Location l, Value x, Value y) {
  return arith::AddFOp::create(b, l, x, y);
}
inline Value subf(OpBuilder &b, Location l, Value x, Value y) {
  return arith::SubFOp::create(b, l, x, y);
}
inline Value divf(OpBuilder &b, Location l, Value x, Value y) {
  return arith::DivFOp::create(b, l, x, y);
}
inline Value sigmoid(OpBuilder &b, Location l, Value x) {
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  return divf(b, l, f32Const(b, l, 1.0), addf(b, l, f32Const(b, l, 1.0), e));
}

/// GELU and its derivative (erf and tanh forms), as the reference.
inline Value gelu(OpBuilder &b, Location l, Value x, GeluApproximation approx) {
  Value half = f32Const(b, l, 0.5), one = f32Const(b, l, 1.0);
  if (approx == GeluApproximation::erf) {
    Value e = math::ErfOp::create(b, l, mulf(b, l, x, f32Const(b, l, M_SQRT1_2)));
    return mulf(b, l, mulf(b, l, half, x), addf(b, l, one, e));
  }
  Value x3 = mulf(b, l, x, mulf(b, l, x, x));
  Value inner = mulf(b, l, f32Const(b, l, std::sqrt(2.0 / M_PI)),
                     addf(b, l, x, mulf(b, l, f32Const(b, l, 0.044715), x3)));
  Value t = math::TanhOp::create(b, l, inner);
  return mulf(b, l, mulf(b, l, half, x), addf(b, l, one, t));
}

inline Value geluGrad(OpBuilder &b, Location l, Value x, GeluApproximation approx) {
  Value half = f32Const(b, l, 0.5), one = f32Const(b, l, 1.0);
  if (approx == GeluApproximation::erf) {
    // 0.5 (1 + erf(x/sqrt2)) + x * exp(-x^2/2) / sqrt(2 pi)
    Value cdf = mulf(b, l, half,
                     addf(b, l, one,
                          math::ErfOp::create(
                              b, l, mulf(b, l, x, f32Const(b, l, M_SQRT1_2)))));
    Value pdf = mulf(b, l, f32Const(b, l, 1.0 / std::sqrt(2.0 * M_PI)),
                     math::ExpOp::create(
                         b, l, mulf(b, l, f32Const(b, l, -0.5),
                                    mulf(b, l, x, x))));
    return addf(b, l, cdf, mulf(b, l, x, pdf));
  }
  Value c = f32Const(b, l, std::sqrt(2.0 / M_PI));
  Value k = f32Const(b, l, 0.044715);
  Value x2 = mulf(b, l, x, x);
  Value inner = mulf(b, l, c, addf(b, l, x, mulf(b, l, k, mulf(b, l, x2, x))));
  Value t = math::TanhOp::create(b, l, inner);
  Value dinner =
      mulf(b, l, c, addf(b, l, one, mulf(b, l, f32Const(b, l, 3.0), mulf(b, l, k, x2))));
  Value sech2 = subf(b, l, one, mulf(b, l, t, t));
  return addf(b, l, mulf(b, l, half, addf(b, l, one, t)),
              mulf(b, l, mulf(b, l, half, x), mulf(b, l, sech2, dinner)));
}

/// Reductions over `axes` into f32 accumulators; returns the f32 result in
/// the reduced shape (keepdims applied by the caller). `pre`, if given, maps
/// each element (in f32) before it is combined, e.g. |x| for amax.
inline Value reduceF32(OpBuilder &b, Location loc, Value input,
                ArrayRef<int64_t> axesIn, double init, bool isMax,
                RankedTensorType reducedType,
                function_ref<Value(OpBuilder &, Location, Value)> pre = {}) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType in = tt(input);
  int64_t rank = in.getRank();
  llvm::SmallSet<int64_t, 4> axes;
  for (int64_t a : axesIn)
    axes.insert(a < 0 ? a + rank : a);
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> its;
  for (int64_t i = 0; i < rank; ++i) {
    if (axes.contains(i)) {
      its.push_back(utils::IteratorType::reduction);
    } else {
      its.push_back(utils::IteratorType::parallel);
      outExprs.push_back(getAffineDimExpr(i, ctx));
    }
  }
  auto accType = RankedTensorType::get(
      [&] {
        SmallVector<int64_t> s;
        for (int64_t i = 0; i < rank; ++i)
          if (!axes.contains(i))
            s.push_back(in.getDimSize(i));
        return s;
      }(),
      b.getF32Type());
  Value r;
  if (isMax) {
    // max as an unsigned max of order-preserving integer keys of the floats
    // (sign-magnitude -> biased): exact, and a reduction LLVM vectorizes,
    // which llvm.maximum is not. NaN maps to the largest key, so it wins
    // as with maximumf (and in the reference).
    auto i32 = b.getI32Type();
    auto keyOf = [](uint32_t bits) -> uint32_t {
      return (bits & 0x80000000u) ? ~bits : bits ^ 0x80000000u;
    };
    auto c = [&](OpBuilder &nb, Location l, uint32_t v) -> Value {
      return arith::ConstantOp::create(
          nb, l, nb.getI32IntegerAttr(static_cast<int32_t>(v)));
    };
    float initF = static_cast<float>(init);
    uint32_t initBits;
    std::memcpy(&initBits, &initF, 4);
    Value keys = generic(
        b, loc, input, AffineMap::getMultiDimIdentityMap(rank, ctx),
        filled(b, loc, accType.clone(i32),
               static_cast<int32_t>(keyOf(initBits))),
        AffineMap::get(rank, 0, outExprs, ctx), its,
        [&](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
          Value x = pre ? pre(nb, l, v[0]) : v[0];
          Value isNaN = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO,
                                              x, x);
          Value bits = arith::SelectOp::create(
              nb, l, isNaN, c(nb, l, 0x7FC00000u),
              arith::BitcastOp::create(nb, l, i32, x));
          Value neg = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                            bits, c(nb, l, 0));
          Value key = arith::SelectOp::create(
              nb, l, neg, arith::XOrIOp::create(nb, l, bits, c(nb, l, ~0u)),
              arith::XOrIOp::create(nb, l, bits, c(nb, l, 0x80000000u)));
          return {arith::MaxUIOp::create(nb, l, v[1], key)};
        },
        /*passOutputs=*/true)[0];
    r = elementwise(
        b, loc, accType, keys,
        [&](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
          Value wasNeg = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::sge, v[0], c(nb, l, 0));
          Value bits = arith::SelectOp::create(
              nb, l, wasNeg, arith::XOrIOp::create(nb, l, v[0], c(nb, l, ~0u)),
              arith::XOrIOp::create(nb, l, v[0], c(nb, l, 0x80000000u)));
          return {arith::BitcastOp::create(nb, l, nb.getF32Type(), bits)};
        });
  } else {
    r = generic(
        b, loc, input, AffineMap::getMultiDimIdentityMap(rank, ctx),
        filled(b, loc, accType, init), AffineMap::get(rank, 0, outExprs, ctx),
        its,
        [&](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
          return {addf(nb, l, pre ? pre(nb, l, v[0]) : v[0], v[1])};
        },
        /*passOutputs=*/true)[0];
  }
  if (reducedType && reducedType.getShape() != accType.getShape())
    r = tensor::ReshapeOp::create(
        b, loc, reducedType.clone(b.getF32Type()), r,
        arith::ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(
                RankedTensorType::get({reducedType.getRank()},
                                      b.getI64Type()),
                ArrayRef<int64_t>(reducedType.getShape()))));
  return r;
}

inline Value castTensor(OpBuilder &b, Location loc, Value v, RankedTensorType to,
                 double factor = 1.0) {
  if (v.getType() == to && factor == 1.0)
    return v;
  return elementwise(b, loc, to, v,
                     [&](OpBuilder &nb, Location l, ValueRange a)
                         -> SmallVector<Value> {
                       if (factor == 1.0)
                         return {a[0]};
                       return {mulf(nb, l, a[0], f32Const(nb, l, factor))};
                     });
}

/// Broadcasts a reduced f32 tensor (over all dims but `keep`) back.
inline AffineMap keepMap(MLIRContext *ctx, unsigned rank, ArrayRef<int64_t> keep) {
  SmallVector<AffineExpr> e;
  for (int64_t k : keep)
    e.push_back(getAffineDimExpr(k, ctx));
  return AffineMap::get(rank, 0, e, ctx);
}

/// Cross-entropy over [..., C] logits flattened to [N, C]: returns the
/// per-row logsumexp (f32 [N]) computed stably.
inline std::pair<Value, Value> rowMaxAndLse(OpBuilder &b, Location loc,
                                     Value logits2d) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType t = tt(logits2d);
  int64_t n = t.getDimSize(0);
  auto rowType = RankedTensorType::get({n}, b.getF32Type());
  Value mx = reduceF32(b, loc, logits2d, {1}, -INFINITY, true, rowType);
  AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap row = keepMap(ctx, 2, {0});
  Value sum = generic(
      b, loc, {logits2d, mx}, {id2, row}, filled(b, loc, rowType, 0.0), row,
      {utils::IteratorType::parallel, utils::IteratorType::reduction},
      [](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
        return {addf(nb, l, v[2],
                     math::ExpOp::create(nb, l, subf(nb, l, v[0], v[1])))};
      },
      true)[0];
  Value lse = elementwise(
      b, loc, rowType, {mx, sum},
      [](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
        return {addf(nb, l, v[0], math::LogOp::create(nb, l, v[1]))};
      });
  return {mx, lse};
}

inline Value flatten2d(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = tt(v);
  int64_t c = t.getShape().back();
  int64_t n = t.getNumElements() / c;
  auto to = RankedTensorType::get({n, c}, t.getElementType());
  if (t == to)
    return v;
  SmallVector<ReassociationIndices> re(2);
  for (int64_t i = 0; i + 1 < t.getRank(); ++i)
    re[0].push_back(i);
  re[1].push_back(t.getRank() - 1);
  if (t.getRank() == 1)
    return tensor::ExpandShapeOp::create(b, loc, to, v,
                                         ArrayRef<ReassociationIndices>{{0, 1}});
  return tensor::CollapseShapeOp::create(b, loc, to, v, re);
}

inline Value flatten1d(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = tt(v);
  auto to = RankedTensorType::get({t.getNumElements()}, t.getElementType());
  if (t == to)
    return v;
  ReassociationIndices all;
  for (int64_t i = 0; i < t.getRank(); ++i)
    all.push_back(i);
  if (t.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, to, v,
                                         ArrayRef<ReassociationIndices>{});
  return tensor::CollapseShapeOp::create(b, loc, to, v,
                                         ArrayRef<ReassociationIndices>{all});
}


inline AffineMap idMap(MLIRContext *ctx, unsigned rank) {
  return AffineMap::getMultiDimIdentityMap(rank, ctx);
}

/// Every axis of a tensor of rank `rank`.
inline llvm::SmallSet<int64_t, 4> allAxes(unsigned rank) {
  llvm::SmallSet<int64_t, 4> s;
  for (unsigned i = 0; i < rank; ++i)
    s.insert(i);
  return s;
}

/// Identity map of `rank` dims restricted to the dims not in `axes`.
inline AffineMap dropDims(MLIRContext *ctx, unsigned rank,
                          const llvm::SmallSet<int64_t, 4> &axes) {
  SmallVector<AffineExpr> e;
  for (unsigned i = 0; i < rank; ++i)
    if (!axes.contains(i))
      e.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, e, ctx);
}

/// A reduction over `axes` of a body over `inputs` (with maps over the
/// input's full rank) into f32 accumulators starting at `init`; the body
/// gets the inputs (f32) then the accumulators and returns the new ones.
inline SmallVector<Value> reduceBody(OpBuilder &b, Location loc,
                                     RankedTensorType domain,
                                     const llvm::SmallSet<int64_t, 4> &axes,
                                     ValueRange inputs,
                                     ArrayRef<AffineMap> maps,
                                     ArrayRef<double> inits, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = domain.getRank();
  SmallVector<int64_t> shape;
  SmallVector<utils::IteratorType> its;
  for (unsigned i = 0; i < rank; ++i) {
    if (axes.contains(i)) {
      its.push_back(utils::IteratorType::reduction);
    } else {
      its.push_back(utils::IteratorType::parallel);
      shape.push_back(domain.getDimSize(i));
    }
  }
  auto accType = RankedTensorType::get(shape, b.getF32Type());
  SmallVector<Value> accs;
  SmallVector<AffineMap> outMaps;
  for (double init : inits) {
    accs.push_back(filled(b, loc, accType, init));
    outMaps.push_back(dropDims(ctx, rank, axes));
  }
  return generic(b, loc, inputs, maps, accs, outMaps, its, body,
                 /*passOutputs=*/true);
}

/// sum over every element of every tensor in `inputs` of `term(x)` (f32),
/// as a 0-d f32 tensor: the norms and counts of all_finite and clipping.
inline Value sumOverTensors(OpBuilder &b, Location loc, ValueRange inputs,
                            function_ref<Value(OpBuilder &, Location, Value)>
                                term) {
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  Value total = filled(b, loc, scalar, 0.0);
  for (Value in : inputs) {
    RankedTensorType t = tt(in);
    Value s = reduceBody(
        b, loc, t, allAxes(t.getRank()), in, idMap(b.getContext(), t.getRank()),
        {0.0},
        [&](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
          return {addf(nb, l, v[1], term(nb, l, v[0]))};
        })[0];
    total = elementwise(b, loc, scalar, {total, s},
                        [](OpBuilder &nb, Location l, ValueRange v)
                            -> SmallVector<Value> {
                          return {addf(nb, l, v[0], v[1])};
                        });
  }
  return total;
}

inline llvm::SmallSet<int64_t, 4> axisSet(ArrayRef<int64_t> axes,
                                          int64_t rank) {
  llvm::SmallSet<int64_t, 4> s;
  for (int64_t a : axes)
    s.insert(a < 0 ? a + rank : a);
  return s;
}

/// Indexing maps of a (batched) GEMM over loops [batch..., m, n, k]:
/// lhs [batch..., m, k] (or k, m), rhs [batch..., k, n] (or n, k; a matrix
/// shared by all batches when it has rank 2), result [batch..., m, n].
inline SmallVector<AffineMap> gemmMaps(MLIRContext *ctx, int64_t lhsRank,
                                       int64_t rhsRank, bool ta, bool tb) {
  int64_t batch = lhsRank - 2;
  unsigned nLoops = lhsRank + 1;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  AffineExpr m = d(batch), n = d(batch + 1), k = d(batch + 2);
  SmallVector<AffineExpr> aE, wE, oE;
  for (int64_t i = 0; i < batch; ++i) {
    aE.push_back(d(i));
    oE.push_back(d(i));
    if (rhsRank == lhsRank)
      wE.push_back(d(i));
  }
  aE.append(ta ? SmallVector<AffineExpr>{k, m} : SmallVector<AffineExpr>{m, k});
  wE.append(tb ? SmallVector<AffineExpr>{n, k} : SmallVector<AffineExpr>{k, n});
  oE.append({m, n});
  return {AffineMap::get(nLoops, 0, aE, ctx), AffineMap::get(nLoops, 0, wE, ctx),
          AffineMap::get(nLoops, 0, oE, ctx)};
}

/// Iterators of a GEMM: parallel, with the last (k) loop a reduction.
inline SmallVector<utils::IteratorType> gemmIterators(int64_t lhsRank) {
  SmallVector<utils::IteratorType> its(lhsRank + 1,
                                       utils::IteratorType::parallel);
  its.back() = utils::IteratorType::reduction;
  return its;
}

/// Marks the linalg.generic producing `v` as a GEMM for lpc-gemm-to-calls.
inline void markGemm(Value v, bool ta, bool tb) {
  Operation *op = v.getDefiningOp();
  Builder b(op->getContext());
  op->setAttr("lpc_gemm", b.getDenseBoolArrayAttr({ta, tb}));
}

/// The buffer a memref value is a view of (through casts, subviews and
/// reshapes: every ViewLikeOpInterface op).
inline Value rootBuffer(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// For a function outlined from a loop nest whose lowered parameters start
/// at `first` and then take `captures` (MLIR's memref descriptor convention:
/// allocated, aligned, offset, sizes, strides): the positions of the aligned
/// pointers that alias no other capture (the only view among them of a
/// buffer allocated in the caller), and in `numParams` the lowered parameter
/// count. LLVM must hear it (noalias), or it assumes every store in the body
/// may change every other capture and keeps accumulators in memory,
/// unvectorized; in the unsplit function it knew it from the allocation.
/// convert-func-to-llvm drops llvm.noalias on memref arguments, so the
/// positions go in `lpc.parallel_noalias` / `lpc.parallel_params` to
/// lpc-lower-parallel-calls, which sets it.
inline SmallVector<int64_t> noaliasPositions(ArrayRef<Value> captures,
                                             int64_t first,
                                             int64_t &numParams) {
  llvm::DenseMap<Value, unsigned> viewsOf;
  for (Value v : captures)
    if (isa<MemRefType>(v.getType()))
      ++viewsOf[rootBuffer(v)];
  SmallVector<int64_t> noalias;
  int64_t param = first;
  for (Value v : captures) {
    auto mt = dyn_cast<MemRefType>(v.getType());
    if (!mt) {
      ++param;
      continue;
    }
    Value root = rootBuffer(v);
    if (viewsOf[root] == 1 && root.getDefiningOp<memref::AllocOp>())
      noalias.push_back(param + 1);
    param += 3 + 2 * mt.getRank();
  }
  numParams = param;
  return noalias;
}

/// Patterns of the other lowering files.
void populateNormalizationPatterns(RewritePatternSet &patterns);
void populateDataMovementPatterns(RewritePatternSet &patterns);
/// `fp8Gemm`: lpc.scaled_matmul reads its FP8 operands directly (see
/// lpc-to-linalg{fp8-gemm}) instead of bf16 copies of them.
void populatePrecisionPatterns(RewritePatternSet &patterns,
                               bool fp8Gemm = false);

} // namespace lowering
} // namespace lpc
} // namespace mlir

#endif // LPC_LIB_CONVERSION_LOWERINGUTILS_H
