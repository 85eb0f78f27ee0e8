//===- LpcAutodiff.cpp - --lpc-autodiff -----------------------------------===//
//
// Turns a forward model (lpc.param / lpc.input ops, one scalar loss) into a
// train-step function: the forward ops, reverse-mode gradients (one
// vector-Jacobian rule per differentiable op), optional global-norm
// clipping, and the optimizer update. All state is explicit in the
// signature (see Passes.td for the contract).
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Passes/PrecisionUtils.h"
#include "lpc/Reference/Evaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCAUTODIFF
#include "lpc/Passes/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

namespace {


RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

Value splat(OpBuilder &b, Location loc, RankedTensorType type, double v) {
  Attribute elt = b.getFloatAttr(type.getElementType(), v);
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, elt));
}

/// Gradient of a sum/mean reduction: broadcast back, times `factor`.
template <typename ReduceOpT>
Value unreduceImpl(OpBuilder &b, Location loc, ReduceOpT op, Value g,
                          double factor) {
  RankedTensorType in = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType gt = cast<RankedTensorType>(g.getType());
  // Shape with the reduced dims kept as 1.
  SmallVector<int64_t> kept(in.getShape());
  for (int64_t a : op.getAxes())
    kept[a < 0 ? a + in.getRank() : a] = 1;
  auto keptType = RankedTensorType::get(kept, gt.getElementType());
  Value v = g;
  if (g.getType() != keptType)
    v = ReshapeOp::create(b, loc, keptType, g);
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < in.getRank(); ++i)
    dims.push_back(i);
  if (keptType != in)
    v = BroadcastOp::create(b, loc, in, v, dims);
  if (factor != 1.0)
    v = ScaleOp::create(b, loc, v, b.getF64FloatAttr(factor));
  return v;
}

/// Reverse-mode differentiation of one forward function body that has
/// already been cloned into the train step (params and inputs are block
/// arguments there).
class Differentiator {
public:
  Differentiator(OpBuilder &b, DenseSet<Value> params)
      : b(b), params(std::move(params)) {}

  /// Computes d(loss)/d(v) for every parameter; fails with a diagnostic on
  /// an op without a gradient rule.
  LogicalResult run(ArrayRef<Operation *> forwardOps, Value loss) {
    // Activity: values that depend on a parameter. lpc.stop_gradient's
    // result is a constant to the backward, whatever its input.
    for (Operation *op : forwardOps) {
      if (isa<StopGradientOp>(op))
        continue;
      for (Value operand : op->getOperands())
        if (params.contains(operand) || varied.contains(operand)) {
          for (Value r : op->getResults())
            if (isFloatTensor(r))
              varied.insert(r);
          break;
        }
    }
    for (Value p : params)
      varied.insert(p);

    Location lossLoc = loss.getLoc();
    // A dedicated op, not a constant: folding must never merge it with
    // other 1.0 constants (loss scaling scales exactly its uses).
    adjoint[loss] = GradSeedOp::create(
        b, NameLoc::get(b.getStringAttr("loss.grad_seed"), lossLoc),
        tensorType(loss));
    for (Operation *op : llvm::reverse(forwardOps)) {
      bool hasAdjoint = llvm::any_of(op->getResults(), [&](Value r) {
        return adjoint.count(r) != 0;
      });
      if (!hasAdjoint)
        continue;
      bool needed = llvm::any_of(op->getOperands(), [&](Value v) {
        return varied.contains(v);
      });
      if (!needed)
        continue;
      if (failed(backprop(op)))
        return failure();
    }
    mergeSliceGradSums();
    return success();
  }

  Value gradient(Value v) const {
    auto it = adjoint.find(v);
    return it == adjoint.end() ? Value() : it->second;
  }

private:
  OpBuilder &b;
  DenseSet<Value> params;
  DenseSet<Value> varied;
  DenseMap<Value, Value> adjoint;

  bool active(Value v) const { return varied.contains(v); }

  /// Adds `g` to the adjoint of `v` (only for values that depend on a
  /// parameter).
  void accumulate(Location loc, Value v, Value g) {
    if (!active(v) || !g)
      return;
    assert(g.getType() == v.getType() && "gradient type mismatch");
    auto it = adjoint.find(v);
    if (it == adjoint.end()) {
      adjoint[v] = g;
      return;
    }
    AddOp sum = AddOp::create(b, loc, it->second, g);
    accumulated.push_back(sum);
    it->second = sum;
  }

  /// The adds accumulate() made, in creation order.
  SmallVector<AddOp> accumulated;

  /// Collects the slice_grad leaves of a sum made by accumulate() whose
  /// inner adds and leaves have no other use.
  bool sliceGradLeaves(Value v, bool root, SmallVectorImpl<SliceGradOp> &leaves,
                       SmallVectorImpl<AddOp> &adds) {
    if (!root && !v.hasOneUse())
      return false;
    if (auto sg = v.getDefiningOp<SliceGradOp>()) {
      leaves.push_back(sg);
      return true;
    }
    auto add = v.getDefiningOp<AddOp>();
    if (!add || !llvm::is_contained(accumulated, add))
      return false;
    adds.push_back(add);
    return sliceGradLeaves(add.getLhs(), false, leaves, adds) &&
           sliceGradLeaves(add.getRhs(), false, leaves, adds);
  }

  /// A sum of slice_grads that tile one axis (the gradient of a fused qkv
  /// projection split into q, k, v) becomes one concat of the pieces: the
  /// same values without materializing each piece in a tensor of zeros and
  /// adding them up. (Only -0.0 differs: concat keeps it, -0 + 0 is +0.)
  void mergeSliceGradSums() {
    DenseSet<Operation *> erased;
    for (AddOp root : llvm::reverse(accumulated)) {
      if (erased.contains(root))
        continue;
      SmallVector<SliceGradOp> leaves;
      SmallVector<AddOp> adds;
      if (!sliceGradLeaves(root.getResult(), true, leaves, adds))
        continue;
      auto type = cast<RankedTensorType>(root.getType());
      int64_t axis = -1;
      bool ok = true;
      for (SliceGradOp sg : leaves) {
        if (sg.getType() != type)
          ok = false;
        for (int64_t d = 0; ok && d < type.getRank(); ++d) {
          if (sg.getStep()[d] != 1)
            ok = false;
          else if (sg.getStart()[d] != 0 ||
                   sg.getLimit()[d] != type.getDimSize(d)) {
            // Sliced along d: every leaf must slice along the same axis.
            ok = axis == -1 || axis == d;
            axis = d;
          }
        }
      }
      if (!ok || axis < 0)
        continue;
      llvm::sort(leaves, [&](SliceGradOp x, SliceGradOp y) {
        return x.getStart()[axis] < y.getStart()[axis];
      });
      int64_t next = 0;
      for (SliceGradOp sg : leaves) {
        ok &= sg.getStart()[axis] == next;
        next = sg.getLimit()[axis];
      }
      if (!ok || next != type.getDimSize(axis))
        continue;
      SmallVector<Value> pieces;
      for (SliceGradOp sg : leaves)
        pieces.push_back(sg.getGrad());
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(root);
      Value concat = ConcatOp::create(b, root.getLoc(), pieces,
                                      b.getI64IntegerAttr(axis));
      root.getResult().replaceAllUsesWith(concat);
      for (auto &entry : adjoint)
        if (entry.second == root.getResult())
          entry.second = concat;
      // Root first, then the inner adds (each used only by the one above),
      // then the leaves.
      for (AddOp add : adds) {
        erased.insert(add);
        add.erase();
      }
      for (SliceGradOp sg : leaves)
        sg.erase();
    }
  }

  /// A gradient w.r.t. a value that comes from a parameter through pure data
  /// movement is a weight gradient; everything else is a data gradient.
  bool isWeight(Value v) const {
    while (true) {
      if (params.contains(v))
        return true;
      Operation *def = v.getDefiningOp();
      if (!def || !isa<ReshapeOp, TransposeOp, BroadcastOp, CastOp>(def))
        return false;
      v = def->getOperand(0);
    }
  }

  GemmRoleAttr role(GemmRole r) { return GemmRoleAttr::get(b.getContext(), r); }

  Value matmul(Location loc, Value lhs, Value rhs, bool ta, bool tb,
               GemmRole r) {
    auto op = MatmulOp::create(b, loc, lhs, rhs, ta, tb, role(r));
    return op.getResult();
  }

  /// Swaps the last two dimensions.
  Value transposeLast2(Location loc, Value v) {
    int64_t rank = tensorType(v).getRank();
    SmallVector<int64_t> perm;
    for (int64_t i = 0; i < rank; ++i)
      perm.push_back(i);
    std::swap(perm[rank - 1], perm[rank - 2]);
    return TransposeOp::create(b, loc, v, perm);
  }

  Value reshape(Location loc, Value v, RankedTensorType to) {
    if (v.getType() == to)
      return v;
    return ReshapeOp::create(b, loc, to, v);
  }

  /// Sum of `g` over `axes`, reshaped to `to` (undoes a broadcast).
  Value sumTo(Location loc, Value g, ArrayRef<int64_t> axes,
              RankedTensorType to) {
    if (axes.empty())
      return reshape(loc, g, to);
    Value s = ReduceSumOp::create(b, loc, g, axes, /*keepdims=*/false);
    return reshape(loc, s, to);
  }

  template <typename ReduceOpT>
  Value unreduce(Location loc, ReduceOpT op, Value g, double factor) {
    return unreduceImpl(b, loc, op, g, factor);
  }

  LogicalResult backprop(Operation *op);
  LogicalResult backpropMatmul(MatmulOp op, Value g);
};

LogicalResult Differentiator::backpropMatmul(MatmulOp op, Value g) {
  Location loc = NameLoc::get(b.getStringAttr("backward"), op.getLoc());
  Value a = op.getLhs(), w = op.getRhs();
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  RankedTensorType at = tensorType(a), wt = tensorType(w);
  bool broadcastRhs = wt.getRank() == 2 && at.getRank() > 2;

  if (active(a)) {
    GemmRole r = isWeight(a) ? GemmRole::wgrad : GemmRole::dgrad;
    Value da;
    if (!ta) {
      // dA = dC . B^T
      da = matmul(loc, g, w, false, !tb, r);
    } else if (!broadcastRhs) {
      // dA^T = B . dC^T
      da = matmul(loc, w, g, tb, true, r);
    } else {
      da = transposeLast2(loc, matmul(loc, g, w, false, !tb, r));
    }
    accumulate(loc, a, da);
  }
  if (active(w)) {
    GemmRole r = isWeight(w) ? GemmRole::wgrad : GemmRole::dgrad;
    Value lhs = a, grad = g;
    bool lhsT = ta;
    if (broadcastRhs) {
      // The shared matrix sees every batch: fold the batch dims into M.
      if (lhsT) {
        lhs = transposeLast2(loc, lhs);
        lhsT = false;
      }
      RankedTensorType lt = tensorType(lhs), gt = tensorType(g);
      int64_t k = lt.getShape().back(), n = gt.getShape().back();
      int64_t rows = lt.getNumElements() / k;
      lhs = reshape(loc, lhs, RankedTensorType::get({rows, k},
                                                    lt.getElementType()));
      grad = reshape(loc, grad, RankedTensorType::get({rows, n},
                                                      gt.getElementType()));
    }
    Value dw = tb ? matmul(loc, grad, lhs, true, lhsT, r)   // dB^T = dC^T . A
                  : matmul(loc, lhs, grad, !lhsT, false, r); // dB = A^T . dC
    accumulate(loc, w, dw);
  }
  return success();
}

LogicalResult Differentiator::backprop(Operation *op) {
  Location loc = NameLoc::get(b.getStringAttr("backward"), op->getLoc());
  auto grad = [&](unsigned i = 0) { return adjoint.lookup(op->getResult(i)); };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](MatmulOp m) { return backpropMatmul(m, grad()); })
      .Case([&](AddOp o) {
        accumulate(loc, o.getLhs(), grad());
        accumulate(loc, o.getRhs(), grad());
        return success();
      })
      .Case([&](SubOp o) {
        accumulate(loc, o.getLhs(), grad());
        if (active(o.getRhs()))
          accumulate(loc, o.getRhs(), NegOp::create(b, loc, grad()));
        return success();
      })
      .Case([&](MulOp o) {
        if (active(o.getLhs()))
          accumulate(loc, o.getLhs(), MulOp::create(b, loc, grad(), o.getRhs()));
        if (active(o.getRhs()))
          accumulate(loc, o.getRhs(), MulOp::create(b, loc, grad(), o.getLhs()));
        return success();
      })
      .Case([&](DivOp o) {
        Value da = DivOp::create(b, loc, grad(), o.getRhs());
        accumulate(loc, o.getLhs(), da);
        if (active(o.getRhs())) // d/db (a/b) = -(g/b) * (a/b)
          accumulate(loc, o.getRhs(),
                     NegOp::create(b, loc, MulOp::create(b, loc, da, o.getResult())));
        return success();
      })
      .Case([&](BiasAddOp o) {
        accumulate(loc, o.getInput(), grad());
        if (active(o.getBias())) {
          int64_t rank = tensorType(o.getInput()).getRank();
          SmallVector<int64_t> axes;
          for (int64_t i = 0; i + 1 < rank; ++i)
            axes.push_back(i);
          accumulate(loc, o.getBias(),
                     sumTo(loc, grad(), axes, tensorType(o.getBias())));
        }
        return success();
      })
      .Case([&](NegOp o) {
        accumulate(loc, o.getInput(), NegOp::create(b, loc, grad()));
        return success();
      })
      .Case([&](ScaleOp o) {
        accumulate(loc, o.getInput(),
                   ScaleOp::create(b, loc, grad(), o.getFactorAttr()));
        return success();
      })
      .Case([&](ReluOp o) {
        accumulate(loc, o.getInput(),
                   ReluGradOp::create(b, loc, grad(), o.getInput()));
        return success();
      })
      .Case([&](GeluOp o) {
        accumulate(loc, o.getInput(),
                   GeluGradOp::create(b, loc, grad(), o.getInput(),
                                      o.getApproximationAttr()));
        return success();
      })
      .Case([&](SiluOp o) {
        accumulate(loc, o.getInput(),
                   SiluGradOp::create(b, loc, grad(), o.getInput()));
        return success();
      })
      .Case([&](TanhOp o) {
        accumulate(loc, o.getInput(),
                   TanhGradOp::create(b, loc, grad(), o.getResult()));
        return success();
      })
      .Case([&](SigmoidOp o) {
        accumulate(loc, o.getInput(),
                   SigmoidGradOp::create(b, loc, grad(), o.getResult()));
        return success();
      })
      .Case([&](ExpOp o) {
        accumulate(loc, o.getInput(), MulOp::create(b, loc, grad(), o.getResult()));
        return success();
      })
      .Case([&](LogOp o) {
        accumulate(loc, o.getInput(), DivOp::create(b, loc, grad(), o.getInput()));
        return success();
      })
      .Case([&](Log1pOp o) { // g / (1 + x)
        Value one = splat(b, loc, tensorType(o.getInput()), 1.0);
        accumulate(loc, o.getInput(),
                   DivOp::create(b, loc, grad(), AddOp::create(b, loc, o.getInput(), one)));
        return success();
      })
      .Case([&](SinOp o) { // g cos(x)
        accumulate(loc, o.getInput(),
                   MulOp::create(b, loc, grad(), CosOp::create(b, loc, o.getInput())));
        return success();
      })
      .Case([&](CosOp o) { // -g sin(x)
        accumulate(loc, o.getInput(),
                   NegOp::create(b, loc,
                                 MulOp::create(b, loc, grad(),
                                               SinOp::create(b, loc, o.getInput()))));
        return success();
      })
      .Case([&](ErfOp o) { // g 2/sqrt(pi) exp(-x^2)
        Value x = o.getInput();
        Value e = ExpOp::create(b, loc, NegOp::create(b, loc, MulOp::create(b, loc, x, x)));
        Value d = ScaleOp::create(b, loc, e, b.getF64FloatAttr(2.0 / std::sqrt(M_PI)));
        accumulate(loc, x, MulOp::create(b, loc, grad(), d));
        return success();
      })
      .Case([&](Expm1Op o) { // g exp(x) = g (y + 1)
        Value one = splat(b, loc, tensorType(o.getResult()), 1.0);
        accumulate(loc, o.getInput(),
                   MulOp::create(b, loc, grad(), AddOp::create(b, loc, o.getResult(), one)));
        return success();
      })
      .Case([&](SqrtOp o) { // g / (2 sqrt(x))
        Value twoY = ScaleOp::create(b, loc, o.getResult(), b.getF64FloatAttr(2.0));
        accumulate(loc, o.getInput(), DivOp::create(b, loc, grad(), twoY));
        return success();
      })
      .Case([&](RsqrtOp o) { // g * (-1/2) y^3
        Value y = o.getResult();
        Value y3 = MulOp::create(b, loc, y, MulOp::create(b, loc, y, y));
        Value d = ScaleOp::create(b, loc, y3, b.getF64FloatAttr(-0.5));
        accumulate(loc, o.getInput(), MulOp::create(b, loc, grad(), d));
        return success();
      })
      .Case([&](PowOp o) { // g * e x^(e-1)
        double e = o.getExponent().convertToDouble();
        Value d;
        if (e == 2.0)
          d = ScaleOp::create(b, loc, o.getInput(), b.getF64FloatAttr(2.0));
        else
          d = ScaleOp::create(
              b, loc,
              PowOp::create(b, loc, o.getInput(), b.getF64FloatAttr(e - 1.0)),
              b.getF64FloatAttr(e));
        accumulate(loc, o.getInput(), MulOp::create(b, loc, grad(), d));
        return success();
      })
      .Case([&](LayerNormOp o) {
        auto g = LayerNormGradOp::create(b, loc, grad(), o.getInput(),
                                         o.getGamma(), o.getEpsilonAttr());
        accumulate(loc, o.getInput(), g.getGradInput());
        accumulate(loc, o.getGamma(), g.getGradGamma());
        accumulate(loc, o.getBeta(), g.getGradBeta());
        return success();
      })
      .Case([&](RmsNormOp o) {
        auto g = RmsNormGradOp::create(b, loc, grad(), o.getInput(),
                                       o.getGamma(), o.getEpsilonAttr());
        accumulate(loc, o.getInput(), g.getGradInput());
        accumulate(loc, o.getGamma(), g.getGradGamma());
        return success();
      })
      .Case([&](AttentionOp o) -> LogicalResult {
        // lse is a statistic for the backward, not a differentiable output.
        if (adjoint.count(o.getLse()))
          return o.emitError("lpc-autodiff: the loss depends on lpc.attention's "
                             "lse; only its result is differentiable");
        if (o.getMask() && active(o.getMask()))
          return o.emitError("lpc-autodiff: lpc.attention's mask depends on a "
                             "parameter; the mask is not differentiable");
        auto g = AttentionGradOp::create(
            b, loc, grad(), o.getQuery(), o.getKey(), o.getValue(),
            o.getResult(), o.getLse(), o.getMask(), o.getCausalAttr(),
            o.getScaleAttr());
        accumulate(loc, o.getQuery(), g.getGradQuery());
        accumulate(loc, o.getKey(), g.getGradKey());
        accumulate(loc, o.getValue(), g.getGradValue());
        return success();
      })
      .Case([&](SoftmaxOp o) {
        accumulate(loc, o.getInput(),
                   SoftmaxGradOp::create(b, loc, grad(), o.getResult(),
                                         o.getAxisAttr()));
        return success();
      })
      .Case([&](LogSoftmaxOp o) {
        accumulate(loc, o.getInput(),
                   LogSoftmaxGradOp::create(b, loc, grad(), o.getResult(),
                                            o.getAxisAttr()));
        return success();
      })
      .Case([&](ReduceSumOp o) {
        accumulate(loc, o.getInput(), unreduce(loc, o, grad(), 1.0));
        return success();
      })
      .Case([&](ReduceMeanOp o) {
        RankedTensorType in = tensorType(o.getInput()),
                         out = tensorType(o.getResult());
        double n = double(in.getNumElements()) / double(out.getNumElements());
        accumulate(loc, o.getInput(), unreduce(loc, o, grad(), 1.0 / n));
        return success();
      })
      .Case([&](ReduceMaxOp o) {
        accumulate(loc, o.getInput(),
                   ReduceMaxGradOp::create(b, loc, grad(), o.getInput(),
                                           o.getResult(), o.getAxesAttr(),
                                           o.getKeepdimsAttr()));
        return success();
      })
      .Case([&](BroadcastOp o) {
        RankedTensorType in = tensorType(o.getInput()),
                         out = tensorType(o.getResult());
        llvm::SmallSet<int64_t, 4> kept;
        for (auto [i, d] : llvm::enumerate(o.getDims()))
          if (in.getDimSize(i) == out.getDimSize(d))
            kept.insert(d);
        SmallVector<int64_t> axes;
        for (int64_t d = 0; d < out.getRank(); ++d)
          if (!kept.contains(d))
            axes.push_back(d);
        accumulate(loc, o.getInput(), sumTo(loc, grad(), axes, in));
        return success();
      })
      .Case([&](ReshapeOp o) {
        accumulate(loc, o.getInput(), reshape(loc, grad(), tensorType(o.getInput())));
        return success();
      })
      .Case([&](TransposeOp o) {
        ArrayRef<int64_t> perm = o.getPermutation();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          inverse[p] = i;
        accumulate(loc, o.getInput(), TransposeOp::create(b, loc, grad(), inverse));
        return success();
      })
      .Case([&](SliceOp o) {
        accumulate(loc, o.getInput(),
                   SliceGradOp::create(b, loc, tensorType(o.getInput()), grad(),
                                       o.getStartAttr(), o.getLimitAttr(),
                                       o.getStepAttr()));
        return success();
      })
      .Case([&](ConcatOp o) {
        RankedTensorType out = tensorType(o.getResult());
        int64_t axis = static_cast<int64_t>(o.getAxis());
        if (axis < 0)
          axis += out.getRank();
        int64_t offset = 0;
        for (Value in : o.getInputs()) {
          RankedTensorType t = tensorType(in);
          SmallVector<int64_t> start(out.getRank(), 0), limit(out.getShape()),
              step(out.getRank(), 1);
          start[axis] = offset;
          limit[axis] = offset + t.getDimSize(axis);
          offset += t.getDimSize(axis);
          if (active(in))
            accumulate(loc, in, SliceOp::create(b, loc, grad(), start, limit, step));
        }
        return success();
      })
      .Case([&](GroupedMatmulOp o) {
        // y[r] = x[r] op(W[g[r]]): dx[r] = dy[r] op(W[g[r]])^T, a grouped
        // GEMM with the matrices transposed the other way; dW[e] sums the
        // outer products of group e's rows (dW^T for transpose_b).
        Value x = o.getLhs(), w = o.getRhs(), groups = o.getGroups();
        bool tb = o.getTransposeB();
        if (active(x))
          accumulate(loc, x,
                     GroupedMatmulOp::create(b, loc, tensorType(x), grad(), w,
                                             groups, !tb));
        if (active(w))
          accumulate(loc, w,
                     GroupedMatmulWeightGradOp::create(
                         b, loc, tensorType(w), tb ? grad() : x,
                         tb ? x : grad(), groups));
        return success();
      })
      .Case([&](EmbeddingOp o) {
        accumulate(loc, o.getTable(),
                   EmbeddingGradOp::create(b, loc, tensorType(o.getTable()),
                                           grad(), o.getIndices(),
                                           o.getPaddingIdxAttr()));
        return success();
      })
      .Case([&](CausalMaskOp o) {
        accumulate(loc, o.getInput(),
                   CausalMaskOp::create(b, loc, grad(), b.getF64FloatAttr(0.0)));
        return success();
      })
      .Case([&](WhereOp o) {
        Value zeros = splat(b, loc, tensorType(o.getResult()), 0.0);
        if (active(o.getOnTrue()))
          accumulate(loc, o.getOnTrue(),
                     WhereOp::create(b, loc, o.getCond(), grad(), zeros));
        if (active(o.getOnFalse()))
          accumulate(loc, o.getOnFalse(),
                     WhereOp::create(b, loc, o.getCond(), zeros, grad()));
        return success();
      })
      .Case([&](DropoutOp o) {
        // Same seed, same shape: the same mask and 1/(1-p) scaling.
        accumulate(loc, o.getInput(),
                   DropoutOp::create(b, loc, grad(), o.getRateAttr(),
                                     o.getSeedAttr()));
        return success();
      })
      .Case([&](CastOp o) {
        accumulate(loc, o.getInput(),
                   CastOp::create(b, loc, tensorType(o.getInput()), grad()));
        return success();
      })
      .Case([&](SoftmaxCrossEntropyOp o) {
        accumulate(loc, o.getLogits(),
                   SoftmaxCrossEntropyGradOp::create(
                       b, loc, grad(), o.getLogits(), o.getLabels(),
                       o.getReductionAttr(), o.getIgnoreIndexAttr()));
        return success();
      })
      .Case([&](MseLossOp o) {
        Value d = MseLossGradOp::create(b, loc, grad(), o.getPrediction(),
                                        o.getTarget(), o.getReductionAttr());
        accumulate(loc, o.getPrediction(), d);
        if (active(o.getTarget()))
          accumulate(loc, o.getTarget(), NegOp::create(b, loc, d));
        return success();
      })
      .Case<AllReduceOp, ReduceScatterOp, AllGatherOp, ShardOp, AllToAllOp,
            WireScaleOp>([&](Operation *o) {
        return o->emitError()
               << "lpc-autodiff: " << o->getName() << " lies between a parameter and "
                  "the loss; collectives have no gradient rule: they belong "
                  "after the backward (lpc-data-parallel puts them between "
                  "the gradients and the optimizer)";
      })
      .Default([&](Operation *other) {
        return other->emitError()
               << "lpc-autodiff: no gradient rule for '" << other->getName()
               << "', which lies between a parameter and the loss";
      });
}

} // namespace

namespace {

struct LpcAutodiffPass : ::mlir::lpc::impl::LpcAutodiffBase<LpcAutodiffPass> {
  using Base::Base;

  /// Range checks when the options are parsed (lpc-opt's pipeline, lpc-run's
  /// --autodiff), so a bad value stops before any IR is touched and the
  /// message names the option, the value and what is allowed.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Pass::initializeOptions(options, errorHandler)))
      return failure();
    auto bad = [&](StringRef name, double value, StringRef allowed) {
      return errorHandler("lpc-autodiff: option '" + name + "' is " +
                          llvm::formatv("{0}", llvm::format("%g", value)).str() + "; it must be " +
                          allowed);
    };
    auto finite = [](double v) { return std::isfinite(v); };
    if (!(lr >= 0 && finite(lr)))
      return bad("lr", lr, "a finite number >= 0");
    if (!(minLr >= 0 && finite(minLr)))
      return bad("min-lr", minLr, "a finite number >= 0");
    if (warmupSteps < 0)
      return bad("warmup-steps", warmupSteps, "an integer >= 0");
    if (totalSteps < 0)
      return bad("total-steps", totalSteps, "an integer >= 0");
    if (!(beta1 >= 0 && beta1 < 1))
      return bad("beta1", beta1, "a number in [0, 1)");
    if (!(beta2 >= 0 && beta2 < 1))
      return bad("beta2", beta2, "a number in [0, 1)");
    if (!(eps > 0 && finite(eps)))
      return bad("eps", eps, "a finite number > 0");
    if (!(weightDecay >= 0 && finite(weightDecay)))
      return bad("weight-decay", weightDecay, "a finite number >= 0");
    if (!(momentum >= 0 && momentum < 1))
      return bad("momentum", momentum, "a number in [0, 1)");
    if (!(clipGradNorm >= 0 && finite(clipGradNorm)))
      return bad("clip-grad-norm", clipGradNorm,
                 "a finite number >= 0 (0: no clipping)");
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (optimizer != "sgd" && optimizer != "adamw" && optimizer != "none") {
      module.emitError() << "lpc-autodiff: unknown optimizer '" << optimizer
                         << "' (expected sgd, adamw or none)";
      return signalPassFailure();
    }
    if (lrSchedule != "constant" && lrSchedule != "linear" &&
        lrSchedule != "cosine" && lrSchedule != "input") {
      module.emitError() << "lpc-autodiff: unknown lr-schedule '" << lrSchedule
                         << "' (expected constant, linear, cosine or input)";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> targets;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!function.empty()) {
        if (fn.getSymName() == function)
          targets.push_back(fn);
        continue;
      }
      if (!fn.isExternal() && !fn.getOps<ParamOp>().empty())
        targets.push_back(fn);
    }
    if (targets.empty()) {
      module.emitError() << "lpc-autodiff: "
                         << (function.empty()
                                 ? std::string("no function declares lpc.param "
                                               "ops; nothing to train")
                                 : "no function named '" + function + "'");
      return signalPassFailure();
    }
    for (func::FuncOp fn : targets) {
      if (failed(differentiate(fn)))
        return signalPassFailure();
      if (emitEval && failed(buildEval(fn)))
        return signalPassFailure();
    }
  }

  LogicalResult buildEval(func::FuncOp fwd);

  LogicalResult differentiate(func::FuncOp fwd);
};

/// The argument attributes of a buffer's state: {lpc.state = "buffer",
/// lpc.name = N, lpc.init = value} (lpc-run fills it with the value until
/// --init gives the buffer's entry).
static DictionaryAttr bufferArgAttrs(Builder &b, BufferOp buf) {
  return b.getDictionaryAttr(
      {b.getNamedAttr(kStateAttr, b.getStringAttr("buffer")),
       b.getNamedAttr(kNameAttr, buf.getNameAttr()),
       b.getNamedAttr("lpc.init", buf.getValueAttr())});
}

/// Removes what nothing uses: the side of each lpc.train_or_eval a function
/// does not take, and the updates an evaluation drops.
static void eraseDeadOps(Block *body) {
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
}

/// The attributes of the argument that takes lpc.input `in`: its name, and
/// for integer ids that index an embedding (directly or through data
/// movement) the table's rows, so a runtime can check the data it feeds
/// (lpc.id_bound; lpc-run refuses ids outside [0, rows)).
static DictionaryAttr inputArgAttrs(Builder &b, InputOp in) {
  SmallVector<NamedAttribute, 2> attrs{
      b.getNamedAttr(kInputAttr, in.getNameAttr())};
  if (in.getType().getElementType().isInteger(32))
    if (std::optional<int64_t> rows = ref::embeddingIdBound(in.getResult()))
      attrs.push_back(b.getNamedAttr("lpc.id_bound", b.getI64IntegerAttr(*rows)));
  return b.getDictionaryAttr(attrs);
}

/// The forward pass with parameters and inputs as arguments.
LogicalResult LpcAutodiffPass::buildEval(func::FuncOp fwd) {
  MLIRContext *ctx = fwd.getContext();
  OpBuilder b(ctx);
  std::string name = (fwd.getSymName() + "_eval").str();
  if (SymbolTable::lookupNearestSymbolFrom(fwd, b.getStringAttr(name)))
    return fwd.emitError() << "lpc-autodiff: a function named '" << name
                           << "' already exists";
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  SmallVector<Location> locs;
  SmallVector<Operation *> sources;
  for (ParamOp p : fwd.getOps<ParamOp>()) {
    types.push_back(p.getType());
    attrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr(kStateAttr, b.getStringAttr("param")),
         b.getNamedAttr(kNameAttr, p.getNameAttr())}));
    locs.push_back(NameLoc::get(p.getNameAttr(), p.getLoc()));
    sources.push_back(p);
  }
  for (BufferOp buf : fwd.getOps<BufferOp>()) {
    types.push_back(buf.getType());
    attrs.push_back(bufferArgAttrs(b, buf));
    locs.push_back(NameLoc::get(buf.getNameAttr(), buf.getLoc()));
    sources.push_back(buf);
  }
  for (InputOp in : fwd.getOps<InputOp>()) {
    types.push_back(in.getType());
    attrs.push_back(inputArgAttrs(b, in));
    locs.push_back(NameLoc::get(in.getNameAttr(), in.getLoc()));
    sources.push_back(in);
  }
  if (fwd.getNumArguments() != 0)
    return fwd.emitError("lpc-autodiff: eval=true needs a model whose data "
                         "comes from lpc.input ops, not function arguments");
  auto ret = cast<func::ReturnOp>(fwd.getBody().front().getTerminator());
  b.setInsertionPointAfter(fwd);
  auto fn = func::FuncOp::create(b, fwd.getLoc(), name,
                                 b.getFunctionType(types, {}));
  Block *body = new Block();
  fn.getBody().push_back(body);
  IRMapping map;
  for (auto [t, l, src] : llvm::zip(types, locs, sources))
    map.map(src->getResult(0), body->addArgument(t, l));
  for (auto [i, a] : llvm::enumerate(attrs))
    fn.setArgAttrs(i, a);
  b.setInsertionPointToStart(body);
  for (Operation &op : fwd.getBody().front().without_terminator()) {
    // Evaluation keeps the buffers as they are.
    if (isa<ParamOp, InputOp, BufferOp, BufferUpdateOp>(op))
      continue;
    // Evaluation runs without dropout and takes the eval side of
    // lpc.train_or_eval (model.eval()).
    if (auto d = dyn_cast<DropoutOp>(op)) {
      map.map(d.getResult(), map.lookupOrDefault(d.getInput()));
      continue;
    }
    if (auto sel = dyn_cast<TrainOrEvalOp>(op)) {
      map.map(sel.getResult(), map.lookupOrDefault(sel.getEval()));
      continue;
    }
    if (auto sg = dyn_cast<StopGradientOp>(op)) {
      map.map(sg.getResult(), map.lookupOrDefault(sg.getInput()));
      continue;
    }
    b.clone(op, map);
  }
  Value loss = map.lookup(ret.getOperand(0));
  SmallVector<Value> results{loss};
  SmallVector<DictionaryAttr> resultAttrs{
      b.getDictionaryAttr(b.getNamedAttr(kMetricAttr, b.getStringAttr("loss")))};
  if (auto ce = loss.getDefiningOp<SoftmaxCrossEntropyOp>()) {
    results.push_back(ce.getLogits());
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(kMetricAttr, b.getStringAttr("logits"))));
  }
  func::ReturnOp::create(b, fwd.getLoc(), results);
  fn.setFunctionType(
      b.getFunctionType(types, ValueRange(results).getTypes()));
  for (auto [i, a] : llvm::enumerate(resultAttrs))
    fn.setResultAttrs(i, a);
  eraseDeadOps(body);
  return success();
}

LogicalResult LpcAutodiffPass::differentiate(func::FuncOp fwd) {
  MLIRContext *ctx = fwd.getContext();
  if (!fwd.getBody().hasOneBlock())
    return fwd.emitError("lpc-autodiff: the forward function must have a "
                         "single block");
  auto ret = cast<func::ReturnOp>(fwd.getBody().front().getTerminator());
  auto f32Scalar = RankedTensorType::get({}, Float32Type::get(ctx));
  if (ret.getNumOperands() != 1 || ret.getOperand(0).getType() != f32Scalar)
    return ret.emitError() << "lpc-autodiff: @" << fwd.getSymName()
                           << " must return one scalar loss of type "
                           << f32Scalar << ", got " << ret.getOperandTypes();
  bool train = optimizer != "none";

  SmallVector<ParamOp> paramOps(fwd.getOps<ParamOp>());
  SmallVector<InputOp> inputOps(fwd.getOps<InputOp>());
  if (paramOps.empty())
    return fwd.emitError() << "lpc-autodiff: @" << fwd.getSymName()
                           << " declares no lpc.param: nothing to train";

  // Signature: params, optimizer state, buffers, step, [lr], inputs,
  // forward args.
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  Builder ab(ctx);
  auto stateAttrs = [&](StringRef state, StringRef name) {
    SmallVector<NamedAttribute> attrs{ab.getNamedAttr(kStateAttr, ab.getStringAttr(state))};
    if (!name.empty())
      attrs.push_back(ab.getNamedAttr(kNameAttr, ab.getStringAttr(name)));
    return ab.getDictionaryAttr(attrs);
  };
  for (ParamOp p : paramOps) {
    argTypes.push_back(p.getType());
    argAttrs.push_back(stateAttrs("param", p.getName()));
  }
  SmallVector<StringRef> slotNames;
  if (optimizer == "adamw")
    slotNames = {"exp_avg", "exp_avg_sq"};
  else if (optimizer == "sgd")
    slotNames = {"momentum_buffer"};
  for (StringRef slot : slotNames)
    for (ParamOp p : paramOps) {
      argTypes.push_back(p.getType());
      argAttrs.push_back(stateAttrs(slot, p.getName()));
    }
  SmallVector<BufferOp> bufferOps(fwd.getOps<BufferOp>());
  int64_t firstBuffer = argTypes.size();
  for (BufferOp buf : bufferOps) {
    argTypes.push_back(buf.getType());
    argAttrs.push_back(bufferArgAttrs(ab, buf));
  }
  auto i64Scalar = RankedTensorType::get({}, IntegerType::get(ctx, 64));
  int64_t stepArg = -1, lrArg = -1;
  if (train) {
    stepArg = argTypes.size();
    argTypes.push_back(i64Scalar);
    argAttrs.push_back(stateAttrs("step", ""));
    if (lrSchedule == "input") {
      lrArg = argTypes.size();
      argTypes.push_back(f32Scalar);
      argAttrs.push_back(ab.getDictionaryAttr(
          ab.getNamedAttr(kInputAttr, ab.getStringAttr("lr"))));
    }
  }
  int64_t firstInput = argTypes.size();
  for (InputOp in : inputOps) {
    argTypes.push_back(in.getType());
    argAttrs.push_back(inputArgAttrs(ab, in));
  }
  int64_t firstFwdArg = argTypes.size();
  for (auto [i, t] : llvm::enumerate(fwd.getArgumentTypes())) {
    argTypes.push_back(t);
    argAttrs.push_back(ab.getDictionaryAttr(ab.getNamedAttr(
        kInputAttr, ab.getStringAttr("arg" + std::to_string(i)))));
  }

  OpBuilder b(ctx);
  b.setInsertionPointAfter(fwd);
  std::string name =
      (fwd.getSymName() + (train ? "_train_step" : "_grad")).str();
  if (SymbolTable::lookupNearestSymbolFrom(fwd, b.getStringAttr(name)))
    return fwd.emitError() << "lpc-autodiff: a function named '" << name
                           << "' already exists";
  auto step = func::FuncOp::create(b, fwd.getLoc(), name,
                                   b.getFunctionType(argTypes, {}));
  // Arguments carry NameLocs (`--mlir-use-nameloc-as-prefix` prints them as
  // %fc1.weight etc.) in addition to the lpc.name / lpc.input attributes.
  Block *body = new Block();
  step.getBody().push_back(body);
  for (auto [t, attrs] : llvm::zip(argTypes, argAttrs)) {
    std::string argName;
    if (auto n = attrs.getAs<StringAttr>(kNameAttr))
      argName = (attrs.getAs<StringAttr>(kStateAttr).getValue() == "param"
                     ? n.getValue()
                     : n.getValue() + "." +
                           attrs.getAs<StringAttr>(kStateAttr).getValue())
                    .str();
    else if (auto n = attrs.getAs<StringAttr>(kInputAttr))
      argName = n.getValue().str();
    else
      argName = attrs.getAs<StringAttr>(kStateAttr).getValue().str();
    body->addArgument(t, NameLoc::get(ab.getStringAttr(argName), fwd.getLoc()));
  }
  for (auto [i, attrs] : llvm::enumerate(argAttrs))
    step.setArgAttrs(i, attrs);
  b.setInsertionPointToStart(body);

  // Forward: clone, with params and inputs replaced by arguments.
  IRMapping map;
  DenseSet<Value> paramArgs;
  for (auto [i, p] : llvm::enumerate(paramOps)) {
    map.map(p.getResult(), body->getArgument(i));
    paramArgs.insert(body->getArgument(i));
  }
  for (auto [i, in] : llvm::enumerate(inputOps))
    map.map(in.getResult(), body->getArgument(firstInput + i));
  for (auto [i, buf] : llvm::enumerate(bufferOps))
    map.map(buf.getResult(), body->getArgument(firstBuffer + i));
  for (auto [i, a] : llvm::enumerate(fwd.getArguments()))
    map.map(a, body->getArgument(firstFwdArg + i));
  SmallVector<Operation *> forwardOps;
  SmallVector<std::pair<BufferUpdateOp, Value>> bufferUpdates;
  for (Operation &op : fwd.getBody().front().without_terminator()) {
    if (isa<ParamOp, InputOp, BufferOp>(op))
      continue;
    // A training step takes the train side of lpc.train_or_eval and returns
    // each buffer's update (not differentiated).
    if (auto sel = dyn_cast<TrainOrEvalOp>(op)) {
      map.map(sel.getResult(), map.lookupOrDefault(sel.getTrain()));
      continue;
    }
    if (auto upd = dyn_cast<BufferUpdateOp>(op)) {
      bufferUpdates.push_back({upd, map.lookupOrDefault(upd.getValue())});
      continue;
    }
    Operation *clone = b.clone(op, map);
    if (auto mm = dyn_cast<MatmulOp>(clone))
      mm.setRoleAttr(GemmRoleAttr::get(ctx, GemmRole::fprop));
    forwardOps.push_back(clone);
  }
  Value loss = map.lookup(ret.getOperand(0));

  // Backward.
  Differentiator diff(b, paramArgs);
  if (failed(diff.run(forwardOps, loss)))
    return failure();
  // The backward sent nothing through lpc.stop_gradient; from here on it
  // is its input.
  for (Operation *op : forwardOps)
    if (auto sg = dyn_cast<StopGradientOp>(op)) {
      if (loss == sg.getResult())
        loss = sg.getInput();
      sg.getResult().replaceAllUsesWith(sg.getInput());
      sg.erase();
    }

  SmallVector<Value> grads;
  for (auto [i, p] : llvm::enumerate(paramOps)) {
    Value arg = body->getArgument(i);
    Value g = diff.gradient(arg);
    if (!g) {
      if (arg.use_empty())
        p.emitWarning() << "lpc-autodiff: parameter '" << p.getName()
                        << "' does not affect the loss; its gradient is zero";
      else
        p.emitWarning() << "lpc-autodiff: parameter '" << p.getName()
                        << "' gets no gradient (it reaches the loss only through "
                           "lpc.stop_gradient, or not at all); its gradient is zero";
      g = splat(b, NameLoc::get(b.getStringAttr(p.getName() + ".grad"), p.getLoc()),
                p.getType(), 0.0);
    }
    grads.push_back(g);
  }

  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  if (!train) {
    results.push_back(loss);
    resultAttrs.push_back(ab.getDictionaryAttr(
        ab.getNamedAttr(kMetricAttr, ab.getStringAttr("loss"))));
    for (auto [p, g] : llvm::zip(paramOps, grads)) {
      results.push_back(g);
      resultAttrs.push_back(stateAttrs("grad", p.getName()));
    }
  } else {
    Location optLoc = NameLoc::get(b.getStringAttr("optimizer"), fwd.getLoc());
    Value gradNorm;
    if (clipGradNorm > 0.0) {
      auto clip = ClipByGlobalNormOp::create(b, optLoc, grads,
                                             b.getF64FloatAttr(clipGradNorm));
      grads.assign(clip.getClipped().begin(), clip.getClipped().end());
      gradNorm = clip.getNorm();
    }
    Value stepVal = body->getArgument(stepArg);
    Value one = ConstantOp::create(
        b, optLoc, DenseElementsAttr::get(i64Scalar, b.getI64IntegerAttr(1)));
    Value newStep = AddOp::create(b, optLoc, stepVal, one);
    Value lrVal;
    if (lrArg >= 0) {
      lrVal = body->getArgument(lrArg);
    } else if (lrSchedule == "constant" && warmupSteps == 0) {
      lrVal = splat(b, optLoc, f32Scalar, lr);
    } else {
      LrScheduleKind kind = lrSchedule == "constant" ? LrScheduleKind::constant
                            : lrSchedule == "linear" ? LrScheduleKind::linear
                                                     : LrScheduleKind::cosine;
      auto sched = LrScheduleOp::create(
          b, optLoc, stepVal, LrScheduleKindAttr::get(ctx, kind),
          b.getF64FloatAttr(lr), b.getI64IntegerAttr(warmupSteps),
          b.getI64IntegerAttr(totalSteps), b.getF64FloatAttr(minLr));
      if (failed(mlir::verify(sched)))
        return failure();
      lrVal = sched.getLr();
    }

    size_t n = paramOps.size();
    SmallVector<Value> newParams, slot0, slot1;
    for (auto [i, p] : llvm::enumerate(paramOps)) {
      Location loc = NameLoc::get(b.getStringAttr(p.getName()), p.getLoc());
      Value param = body->getArgument(i);
      if (optimizer == "adamw") {
        auto upd = AdamWOp::create(
            b, loc, param, grads[i], body->getArgument(n + i),
            body->getArgument(2 * n + i), newStep, lrVal,
            b.getF64FloatAttr(beta1), b.getF64FloatAttr(beta2),
            b.getF64FloatAttr(eps), b.getF64FloatAttr(weightDecay));
        if (failed(mlir::verify(upd)))
          return failure();
        newParams.push_back(upd.getNewParam());
        slot0.push_back(upd.getNewExpAvg());
        slot1.push_back(upd.getNewExpAvgSq());
      } else {
        auto upd = SgdOp::create(b, loc, param, grads[i],
                                 body->getArgument(n + i), lrVal,
                                 b.getF64FloatAttr(momentum),
                                 b.getF64FloatAttr(0.0),
                                 b.getF64FloatAttr(weightDecay),
                                 nesterov ? b.getUnitAttr() : UnitAttr());
        if (failed(mlir::verify(upd)))
          return failure();
        newParams.push_back(upd.getNewParam());
        slot0.push_back(upd.getNewMomentumBuffer());
      }
    }
    for (auto [p, v] : llvm::zip(paramOps, newParams)) {
      results.push_back(v);
      resultAttrs.push_back(stateAttrs("param", p.getName()));
    }
    for (auto [k, slot] : llvm::enumerate(slotNames)) {
      ArrayRef<Value> vals = k == 0 ? slot0 : slot1;
      for (auto [p, v] : llvm::zip(paramOps, vals)) {
        results.push_back(v);
        resultAttrs.push_back(stateAttrs(slot, p.getName()));
      }
    }
    for (auto [upd, v] : bufferUpdates) {
      results.push_back(v);
      resultAttrs.push_back(stateAttrs("buffer", upd.getName()));
    }
    results.push_back(newStep);
    resultAttrs.push_back(stateAttrs("step", ""));
    results.push_back(loss);
    resultAttrs.push_back(ab.getDictionaryAttr(
        ab.getNamedAttr(kMetricAttr, ab.getStringAttr("loss"))));
    if (gradNorm) {
      results.push_back(gradNorm);
      resultAttrs.push_back(ab.getDictionaryAttr(
          ab.getNamedAttr(kMetricAttr, ab.getStringAttr("grad_norm"))));
    }
  }

  func::ReturnOp::create(b, fwd.getLoc(), results);
  step.setFunctionType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, attrs] : llvm::enumerate(resultAttrs))
    step.setResultAttrs(i, attrs);
  eraseDeadOps(body);
  return success();
}

} // namespace
