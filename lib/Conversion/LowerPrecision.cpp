//===- LowerPrecision.cpp - FP8, scaling and state ops to linalg ----------===//
//
// FP8 conversions are integer code that vectorizes (arith.truncf/extf to
// fp8 have no CPU lowering); they round to nearest even exactly as the
// reference evaluator (APFloat) does, including subnormals, ties, overflow
// and NaN. For the GPU (lpc-to-linalg{fp8-hardware-cvt}) they stay
// arith.truncf/extf, which lpc-fp8-to-nvvm turns into cvt instructions.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::lpc;
using namespace mlir::lpc::lowering;

namespace {

struct FP8Format {
  int mantBits, bias;
  uint32_t maxCode;  // largest finite magnitude code
  uint32_t overCode; // first code past it: inf (E5M2) or NaN (E4M3FN)
  uint32_t nanCode;
  bool hasInf;
};

FP8Format formatOf(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return {3, 7, 0x7E, 0x7F, 0x7F, false};
  return {2, 15, 0x7B, 0x7C, 0x7E, true};
}

Value i32c(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantOp::create(b, l, b.getI32IntegerAttr(v));
}

// lpc-to-linalg{fp8-hardware-cvt} while it runs (FP8HardwareCvtScope).
thread_local bool hardwareFP8 = false;

double largestFinite(Type fp8) {
  return llvm::APFloat::getLargest(cast<FloatType>(fp8).getFloatSemantics())
      .convertToDouble();
}

} // namespace

mlir::lpc::lowering::FP8HardwareCvtScope::FP8HardwareCvtScope(bool enable)
    : saved(hardwareFP8) {
  hardwareFP8 = enable;
}

mlir::lpc::lowering::FP8HardwareCvtScope::~FP8HardwareCvtScope() {
  hardwareFP8 = saved;
}

// maximumf / minimumf propagate NaN (maxnumf would turn it into -M).
Value mlir::lpc::lowering::clampFP8(OpBuilder &b, Location l, Value x,
                                    Type fp8) {
  double m = largestFinite(fp8);
  Value lo = arith::MaximumFOp::create(b, l, x, f32Const(b, l, -m));
  return arith::MinimumFOp::create(b, l, lo, f32Const(b, l, m));
}

Value mlir::lpc::lowering::matchClampFP8(Value clamped, Type fp8) {
  double m = largestFinite(fp8);
  // The operand of `op` that is not the constant c, if the other one is.
  auto other = [](Operation *op, double c) -> Value {
    if (!op)
      return nullptr;
    for (unsigned i = 0; i < 2; ++i) {
      FloatAttr k;
      if (matchPattern(op->getOperand(i), m_Constant(&k)) &&
          k.getValueAsDouble() == c)
        return op->getOperand(1 - i);
    }
    return nullptr;
  };
  Value inner = other(clamped.getDefiningOp<arith::MinimumFOp>(), m);
  if (!inner)
    return nullptr;
  return other(inner.getDefiningOp<arith::MaximumFOp>(), -m);
}

Value mlir::lpc::lowering::decodeFP8(OpBuilder &b, Location l, Value v) {
  if (hardwareFP8)
    return arith::ExtFOp::create(b, l, b.getF32Type(), v);
  FP8Format f = formatOf(v.getType());
  Value byte = arith::BitcastOp::create(b, l, b.getI8Type(), v);
  Value u = arith::ExtUIOp::create(b, l, b.getI32Type(), byte);
  Value sign = arith::ShLIOp::create(
      b, l, arith::AndIOp::create(b, l, u, i32c(b, l, 0x80)), i32c(b, l, 24));
  Value mag = arith::AndIOp::create(b, l, u, i32c(b, l, 0x7F));
  Value exp = arith::ShRUIOp::create(b, l, mag, i32c(b, l, f.mantBits));
  Value mant =
      arith::AndIOp::create(b, l, mag, i32c(b, l, (1 << f.mantBits) - 1));
  // Normal: rebias the exponent and move the mantissa into f32's field.
  Value normal = arith::OrIOp::create(
      b, l,
      arith::ShLIOp::create(
          b, l, arith::AddIOp::create(b, l, exp, i32c(b, l, 127 - f.bias)),
          i32c(b, l, 23)),
      arith::ShLIOp::create(b, l, mant, i32c(b, l, 23 - f.mantBits)));
  Value normalF = arith::BitcastOp::create(b, l, b.getF32Type(), normal);
  // Subnormal: mant * 2^(1 - bias - mantBits), exact in f32.
  Value subF = mulf(b, l, arith::UIToFPOp::create(b, l, b.getF32Type(), mant),
                    f32Const(b, l, std::ldexp(1.0, 1 - f.bias - f.mantBits)));
  Value isSub =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, exp, i32c(b, l, 0));
  Value magF = arith::SelectOp::create(b, l, isSub, subF, normalF);
  // Specials.
  Value special;
  if (f.hasInf) {
    Value top = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, exp,
                                      i32c(b, l, (1 << (7 - f.mantBits)) - 1));
    Value isInf = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, mant,
                                        i32c(b, l, 0));
    Value inf = f32Const(b, l, INFINITY);
    Value nan = f32Const(b, l, NAN);
    magF = arith::SelectOp::create(
        b, l, top, arith::SelectOp::create(b, l, isInf, inf, nan), magF);
  } else {
    Value isNan = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, mag,
                                        i32c(b, l, 0x7F));
    magF = arith::SelectOp::create(b, l, isNan, f32Const(b, l, NAN), magF);
  }
  (void)special;
  Value bits = arith::OrIOp::create(
      b, l, arith::BitcastOp::create(b, l, b.getI32Type(), magF), sign);
  return arith::BitcastOp::create(b, l, b.getF32Type(), bits);
}

Value mlir::lpc::lowering::encodeFP8(OpBuilder &b, Location l, Value x,
                                     Type fp8, bool saturate) {
  if (hardwareFP8)
    return arith::TruncFOp::create(b, l, fp8,
                                   saturate ? clampFP8(b, l, x, fp8) : x);
  FP8Format f = formatOf(fp8);
  Value bits = arith::BitcastOp::create(b, l, b.getI32Type(), x);
  Value sign = arith::AndIOp::create(
      b, l, arith::ShRUIOp::create(b, l, bits, i32c(b, l, 24)),
      i32c(b, l, 0x80));
  Value absBits = arith::AndIOp::create(b, l, bits, i32c(b, l, 0x7FFFFFFF));
  Value ax = arith::BitcastOp::create(b, l, b.getF32Type(), absBits);
  int shift = 23 - f.mantBits;
  // Normal range: round the f32 mantissa to mantBits (ties to even) by
  // integer addition, then rebias. Carries into the exponent are right.
  Value lsb = arith::AndIOp::create(
      b, l, arith::ShRUIOp::create(b, l, absBits, i32c(b, l, shift)),
      i32c(b, l, 1));
  Value rounded = arith::AddIOp::create(
      b, l, absBits,
      arith::AddIOp::create(b, l, i32c(b, l, (1 << (shift - 1)) - 1), lsb));
  Value normalCode = arith::SubIOp::create(
      b, l, arith::ShRUIOp::create(b, l, rounded, i32c(b, l, shift)),
      i32c(b, l, (127 - f.bias) << f.mantBits));
  // Below the smallest normal (2^(1 - bias)): count units of the smallest
  // subnormal, rounded to nearest even; 2^mantBits units is the smallest
  // normal's code, which is what the integer encodes.
  Value units = math::RoundEvenOp::create(
      b, l, mulf(b, l, ax, f32Const(b, l, std::ldexp(1.0, f.bias - 1 + f.mantBits))));
  Value subCode = arith::FPToUIOp::create(b, l, b.getI32Type(), units);
  Value isSub = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, ax,
                                      f32Const(b, l, std::ldexp(1.0, 1 - f.bias)));
  Value code = arith::SelectOp::create(b, l, isSub, subCode, normalCode);
  // Overflow (including inf): saturate, or inf / NaN.
  Value over = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                     arith::SelectOp::create(
                                         b, l,
                                         arith::CmpIOp::create(
                                             b, l, arith::CmpIPredicate::sge,
                                             absBits, i32c(b, l, 0x7F800000)),
                                         i32c(b, l, 0x7FFF), code),
                                     i32c(b, l, f.overCode));
  code = arith::SelectOp::create(
      b, l, over, i32c(b, l, saturate ? f.maxCode : f.overCode), code);
  Value isNan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
  code = arith::SelectOp::create(b, l, isNan, i32c(b, l, f.nanCode), code);
  code = arith::OrIOp::create(b, l, code, sign);
  Value byte = arith::TruncIOp::create(b, l, b.getI8Type(), code);
  return arith::BitcastOp::create(b, l, fp8, byte);
}

namespace {

/// An elementwise op whose result is encoded with saturation (fp8).
Value elementwiseSat(OpBuilder &b, Location loc, RankedTensorType out,
                     ValueRange inputs, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = out.getRank();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(tt(in).getRank() == 0 && rank != 0
                       ? AffineMap::get(rank, 0, {}, ctx)
                       : idMap(ctx, rank));
  maps.push_back(idMap(ctx, rank));
  auto g = linalg::GenericOp::create(
      b, loc, TypeRange{out}, inputs, ValueRange{emptyLike(b, loc, out)}, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        SmallVector<Value> in;
        for (Value a : args.drop_back())
          in.push_back(toF32(nb, l, a));
        Value r = body(nb, l, in)[0];
        linalg::YieldOp::create(
            nb, l, encodeFP8(nb, l, r, out.getElementType(), true));
      });
  return g.getResult(0);
}

/// cast {saturate} (fp8 results only, as the verifier checks).
struct LowerSaturatingCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getSaturate())
      return failure();
    Value r = elementwiseSat(
        rewriter, op.getLoc(), op.getType(), op.getInput(),
        [](OpBuilder &, Location, ValueRange v) -> SmallVector<Value> {
          return {v[0]};
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// sat(f32(x * scale)).
struct LowerQuantize : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, elementwiseSat(rewriter, op.getLoc(), op.getType(),
                           {op.getInput(), op.getScale()},
                           [](OpBuilder &b, Location l, ValueRange v)
                               -> SmallVector<Value> {
                             return {mulf(b, l, v[0], v[1])};
                           }));
    return success();
  }
};

struct LowerDequantize : OpRewritePattern<DequantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DequantizeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, elementwise(rewriter, op.getLoc(), op.getType(),
                        {op.getInput(), op.getScaleInv()},
                        [](OpBuilder &b, Location l, ValueRange v)
                            -> SmallVector<Value> {
                          return {mulf(b, l, v[0], v[1])};
                        }));
    return success();
  }
};

/// max |x| with reduceF32's exact integer-key max (NaN wins, as in the
/// reference; it vectorizes where a maximumf reduction does not).
struct LowerAmax : OpRewritePattern<AmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AmaxOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType t = op.getInput().getType();
    auto axes = llvm::to_vector(llvm::seq<int64_t>(0, t.getRank()));
    Value r = reduceF32(rewriter, op.getLoc(), op.getInput(), axes, 0.0,
                        /*isMax=*/true,
                        op.getType(),
                        [](OpBuilder &b, Location l, Value x) -> Value {
                          return math::AbsFOp::create(b, l, x);
                        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Counts of saturating and underflowing elements (i64, exact), then the
/// fractions computed in f64 and rounded once, as the reference does.
struct LowerFP8Stats : OpRewritePattern<FP8StatsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FP8StatsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType t = op.getInput().getType();
    unsigned rank = t.getRank();
    bool e5m2 = op.getFormat() == Precision::fp8_e5m2;
    double fp8Max = e5m2 ? 57344.0 : 448.0;
    double halfMinSub = std::ldexp(1.0, e5m2 ? -17 : -10);
    // Counted in i32 where the count cannot overflow it: the loop then
    // vectorizes at twice (AVX-512: four times) the width of i64 counts.
    Type countElt = t.getNumElements() < (int64_t(1) << 31)
                        ? rewriter.getI32Type()
                        : rewriter.getI64Type();
    auto countType = RankedTensorType::get({}, countElt);
    AffineMap scalar = AffineMap::get(rank, 0, {}, ctx);
    SmallVector<Value> counts = generic(
        rewriter, loc, {op.getInput(), op.getScale()},
        {idMap(ctx, rank), scalar},
        {filled(rewriter, loc, countType, 0), filled(rewriter, loc, countType, 0)},
        {scalar, scalar},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value a = math::AbsFOp::create(b, l, mulf(b, l, v[0], v[1]));
          Value sat = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a,
                                            f32Const(b, l, fp8Max));
          Value nonzero = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::ONE, v[0], f32Const(b, l, 0.0));
          Value tiny = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, a,
                                             f32Const(b, l, halfMinSub));
          Value under = arith::AndIOp::create(b, l, nonzero, tiny);
          auto add = [&](Value acc, Value bit) -> Value {
            return arith::AddIOp::create(
                b, l, acc, arith::ExtUIOp::create(b, l, countElt, bit));
          };
          return {add(v[2], sat), add(v[3], under)};
        },
        /*passOutputs=*/true);
    double n = std::max<int64_t>(t.getNumElements(), 1);
    auto fraction = [&](Value count) {
      return elementwise(
          rewriter, loc, RankedTensorType::get({}, rewriter.getF32Type()),
          count, [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
            Value c = arith::UIToFPOp::create(b, l, b.getF64Type(), v[0]);
            Value f = arith::DivFOp::create(
                b, l, c,
                arith::ConstantOp::create(b, l, b.getF64FloatAttr(n)));
            return {arith::TruncFOp::create(b, l, b.getF32Type(), f)};
          });
    };
    rewriter.replaceOp(op, {fraction(counts[0]), fraction(counts[1])});
    return success();
  }
};

/// (lhs * sa) x (rhs * sb) + bias: the product of the fp8 values
/// accumulated in f32, scaled once, then the bias, rounded to the output.
struct LowerScaledMatmul : OpRewritePattern<ScaledMatmulOp> {
  LowerScaledMatmul(MLIRContext *ctx, bool fp8Gemm)
      : OpRewritePattern(ctx, /*benefit=*/2), fp8Gemm(fp8Gemm) {}
  bool fp8Gemm;

  /// Whether the GEMM can run on FP8 tensor cores as it is: cuBLASLt wants
  /// M, N and K multiples of 16 (the rows of a batched operand count in M).
  static bool fp8Shapes(RankedTensorType a, RankedTensorType w,
                        RankedTensorType out, bool ta) {
    int64_t k = a.getShape()[a.getRank() - (ta ? 2 : 1)];
    int64_t n = out.getShape().back();
    int64_t m = out.getNumElements() / std::max<int64_t>(n, 1);
    return w.getRank() == 2 && k % 16 == 0 && n % 16 == 0 && m % 16 == 0 &&
           (isa<Float8E4M3FNType>(a.getElementType()) ||
            isa<Float8E4M3FNType>(w.getElementType()));
  }

  LogicalResult matchAndRewrite(ScaledMatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType a = op.getLhs().getType(), w = op.getRhs().getType(),
                     out = op.getType();
    int64_t rank = out.getRank();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineMap> maps = gemmMaps(ctx, a.getRank(), w.getRank(),
                                           op.getTransposeA(),
                                           op.getTransposeB());
    auto accType = RankedTensorType::get(out.getShape(), rewriter.getF32Type());
    // fp8 operands widened to bf16 (exact: bf16 holds every E4M3 and E5M2
    // value, subnormals and specials included; the products of two bf16
    // values are exact in f32), then the bf16 GEMM library with f32
    // accumulation: what an FP8 tensor core computes, up to summation order,
    // at half the memory traffic of widening to f32.
    // With fp8-gemm (a GPU with FP8 tensor cores) the GEMM reads the FP8
    // operands themselves (lpc-gemm-to-calls makes it an FP8 cuBLASLt
    // call): the same products, without the widened copies. E5M2 x E5M2
    // has no FP8 GEMM and widens as before.
    bool direct = fp8Gemm && fp8Shapes(a, w, out, op.getTransposeA());
    Value lhs = direct ? op.getLhs()
                       : castTensor(rewriter, loc, op.getLhs(),
                                    a.clone(rewriter.getBF16Type()));
    Value rhs = direct ? op.getRhs()
                       : castTensor(rewriter, loc, op.getRhs(),
                                    w.clone(rewriter.getBF16Type()));
    Value acc = generic(
        rewriter, loc, {lhs, rhs}, {maps[0], maps[1]},
        filled(rewriter, loc, accType, 0.0), maps[2],
        gemmIterators(a.getRank()),
        // (generic() hands the body f32 values, FP8 ones decoded.)
        [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          return {addf(b, l, v[2], mulf(b, l, v[0], v[1]))};
        },
        true)[0];
    markGemm(acc, op.getTransposeA(), op.getTransposeB());
    // The recipe's fast accumulation (fprop), for the FP8 GEMM call.
    if (direct && op.getFastAccum())
      acc.getDefiningOp()->setAttr("lpc_fast_accum", rewriter.getUnitAttr());
    SmallVector<Value> ins{acc, op.getLhsScaleInv(), op.getRhsScaleInv()};
    maps = {idMap(ctx, rank),
                                AffineMap::get(rank, 0, {}, ctx),
                                AffineMap::get(rank, 0, {}, ctx)};
    if (Value bias = op.getBias()) {
      ins.push_back(bias);
      maps.push_back(AffineMap::get(rank, 0, {d(rank - 1)}, ctx));
    }
    bool hasBias = bool(op.getBias());
    Value r = generic(
        rewriter, loc, ins, maps, emptyLike(rewriter, loc, out),
        idMap(ctx, rank),
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value y = mulf(b, l, v[0], mulf(b, l, v[1], v[2]));
          return {hasBias ? addf(b, l, y, v[3]) : y};
        })[0];
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// true iff no element of any input is inf or NaN.
struct LowerAllFinite : OpRewritePattern<AllFiniteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllFiniteOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Count of non-finite elements: x - x is 0 for finite x, NaN otherwise.
    Value bad = sumOverTensors(
        rewriter, loc, op.getInputs(), [](OpBuilder &b, Location l, Value x) {
          Value fin = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                            subf(b, l, x, x),
                                            f32Const(b, l, 0.0));
          return Value(arith::SelectOp::create(b, l, fin, f32Const(b, l, 0.0),
                                               f32Const(b, l, 1.0)));
        });
    Value r = generic(
        rewriter, loc, bad, AffineMap::get(0, 0, {}, op.getContext()),
        emptyLike(rewriter, loc, op.getType()),
        AffineMap::get(0, 0, {}, op.getContext()), {},
        [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          return {arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, v[0],
                                        f32Const(b, l, 0.0))};
        })[0];
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// new_history = [amax, history[0..L-2]]; scale_amax = max or amax.
struct LowerAmaxHistoryPush : OpRewritePattern<AmaxHistoryPushOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AmaxHistoryPushOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType ht = op.getHistory().getType();
    Value hist = op.getHistory();
    Value shifted = generic(
        rewriter, loc, op.getAmax(), AffineMap::get(1, 0, {}, ctx),
        emptyLike(rewriter, loc, ht), idMap(ctx, 1),
        {utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value i = linalg::IndexOp::create(b, l, 0);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value one = arith::ConstantIndexOp::create(b, l, 1);
          Value first =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, i, zero);
          Value prev = arith::SelectOp::create(
              b, l, first, zero, arith::SubIOp::create(b, l, i, one));
          Value old = tensor::ExtractOp::create(b, l, hist, ValueRange{prev});
          return {arith::SelectOp::create(b, l, first, v[0], old)};
        })[0];
    Value scaleAmax = op.getAmax();
    if (op.getAlgo() == AmaxComputeAlgo::max)
      scaleAmax = reduceBody(
          rewriter, loc, ht, allAxes(1), shifted, idMap(ctx, 1), {-INFINITY},
          [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
            return {arith::MaximumFOp::create(b, l, v[0], v[1])};
          })[0];
    rewriter.replaceOp(op, {shifted, scaleAmax});
    return success();
  }
};

Value toF32Scalar(OpBuilder &b, Location l, Value v) {
  if (isa<IntegerType>(v.getType()))
    return arith::SIToFPOp::create(b, l, b.getF32Type(), v);
  return v;
}

struct LowerFP8ComputeScale : OpRewritePattern<FP8ComputeScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FP8ComputeScaleOp op,
                                PatternRewriter &rewriter) const override {
    double fp8Max = op.getFormat() == Precision::fp8_e4m3 ? 448.0 : 57344.0;
    double div = std::ldexp(1.0, static_cast<int>(op.getMargin()));
    int64_t interval = static_cast<int64_t>(op.getInterval());
    Value r = elementwise(
        rewriter, op.getLoc(), op.getType(),
        {op.getAmax(), op.getScale(), op.getStep()},
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value amax = v[0], prev = v[1];
          Value sf = divf(b, l, divf(b, l, f32Const(b, l, fp8Max), amax),
                          f32Const(b, l, div));
          Value pos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                            amax, f32Const(b, l, 0.0));
          Value fin = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OLT, math::AbsFOp::create(b, l, amax),
              f32Const(b, l, INFINITY));
          Value keep = arith::AndIOp::create(b, l, pos, fin);
          sf = arith::SelectOp::create(b, l, keep, sf, prev);
          Value inf = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                            math::AbsFOp::create(b, l, sf),
                                            f32Const(b, l, INFINITY));
          sf = arith::SelectOp::create(b, l, inf,
                                       f32Const(b, l, 3.4028234663852886e38), sf);
          if (interval > 1) {
            Type st = v[2].getType();
            Value next = arith::AddIOp::create(
                b, l, v[2], arith::ConstantOp::create(b, l, b.getIntegerAttr(st, 1)));
            Value rem = arith::RemSIOp::create(
                b, l, next,
                arith::ConstantOp::create(b, l, b.getIntegerAttr(st, interval)));
            Value due = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::eq, rem,
                arith::ConstantOp::create(b, l, b.getIntegerAttr(st, 0)));
            sf = arith::SelectOp::create(b, l, due, sf, prev);
          }
          return {sf};
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// s = 2^min(floor(log2(fmax / |amax|)), 126) with integer code only (no
/// log2 / exp2 approximation, the same bits on the CPU and the GPU): the
/// exponent field of the f32 quotient, then one step down (or up) where the
/// quotient's rounding crossed a power of two. amax * s is exact (s is a
/// power of two and the product is a normal f32 below 2 fmax), so the
/// checks are too.
struct LowerWireScale : OpRewritePattern<WireScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WireScaleOp op,
                                PatternRewriter &rewriter) const override {
    double fmax = op.getFormat() == Precision::fp8_e4m3 ? 448.0 : 57344.0;
    Value r = elementwise(
        rewriter, op.getLoc(), op.getType(), {op.getAmax()},
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Type i32 = b.getI32Type(), f32 = b.getF32Type();
          Value a = math::AbsFOp::create(b, l, v[0]);
          Value fm = f32Const(b, l, fmax);
          // fmax / a >= 448 / FLT_MAX > 2^-120: normal, or +inf when a is
          // tiny (its exponent field then reads 128, clamped to 126).
          Value q = arith::BitcastOp::create(b, l, i32, divf(b, l, fm, a));
          Value e = arith::SubIOp::create(
              b, l,
              arith::AndIOp::create(
                  b, l, arith::ShRUIOp::create(b, l, q, i32c(b, l, 23)),
                  i32c(b, l, 0xFF)),
              i32c(b, l, 127));
          e = arith::MinSIOp::create(b, l, e, i32c(b, l, 126));
          auto pow2 = [&](Value k) -> Value {
            return arith::BitcastOp::create(
                b, l, f32,
                arith::ShLIOp::create(
                    b, l, arith::AddIOp::create(b, l, k, i32c(b, l, 127)),
                    i32c(b, l, 23)));
          };
          auto above = [&](Value k) -> Value {
            return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                         mulf(b, l, a, pow2(k)), fm);
          };
          Value down = arith::SubIOp::create(b, l, e, i32c(b, l, 1));
          Value up = arith::AddIOp::create(b, l, e, i32c(b, l, 1));
          Value canUp = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, e,
                                    i32c(b, l, 126)),
              arith::XOrIOp::create(
                  b, l, above(up),
                  arith::ConstantOp::create(b, l, b.getBoolAttr(true))));
          e = arith::SelectOp::create(
              b, l, above(e), down,
              arith::SelectOp::create(b, l, canUp, up, e));
          Value sc = pow2(e);
          Value zero = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, a,
                                             f32Const(b, l, 0.0));
          Value finite = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT,
                                               a, f32Const(b, l, INFINITY));
          sc = arith::SelectOp::create(b, l, zero, f32Const(b, l, 1.0), sc);
          return {arith::SelectOp::create(b, l, finite, sc,
                                          f32Const(b, l, NAN))};
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// torch._amp_update_scale_.
struct LowerLossScaleUpdate : OpRewritePattern<LossScaleUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LossScaleUpdateOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    double growth = op.getGrowthFactor().convertToDouble(),
           backoff = op.getBackoffFactor().convertToDouble();
    int64_t interval = static_cast<int64_t>(op.getGrowthInterval());
    AffineMap s = AffineMap::get(0, 0, {}, ctx);
    SmallVector<Value> r = generic(
        rewriter, loc, {op.getScale(), op.getGrowthTracker(), op.getFinite()},
        {s, s, s},
        ValueRange{emptyLike(rewriter, loc, op.getNewScale().getType()),
                   emptyLike(rewriter, loc, tt(op.getNewGrowthTracker()))},
        {s, s}, {},
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value scale = v[0], tracker = v[1], finite = v[2];
          Type it = tracker.getType();
          Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(it, 0));
          Value next = arith::AddIOp::create(
              b, l, tracker, arith::ConstantOp::create(b, l, b.getIntegerAttr(it, 1)));
          Value due = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::eq, next,
              arith::ConstantOp::create(b, l, b.getIntegerAttr(it, interval)));
          Value grown = mulf(b, l, scale, f32Const(b, l, growth));
          Value grownFinite = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OLT, math::AbsFOp::create(b, l, grown),
              f32Const(b, l, INFINITY));
          Value okScale = arith::SelectOp::create(
              b, l, arith::AndIOp::create(b, l, due, grownFinite), grown, scale);
          Value okTracker = arith::SelectOp::create(b, l, due, zero, next);
          Value badScale = mulf(b, l, scale, f32Const(b, l, backoff));
          return {arith::SelectOp::create(b, l, finite, okScale, badScale),
                  arith::SelectOp::create(b, l, finite, okTracker, zero)};
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct LowerLrSchedule : OpRewritePattern<LrScheduleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LrScheduleOp op,
                                PatternRewriter &rewriter) const override {
    double base = op.getBaseLr().convertToDouble(),
           minLr = op.getMinLr().convertToDouble();
    double warm = double(static_cast<int64_t>(op.getWarmupSteps()));
    double total = double(static_cast<int64_t>(op.getTotalSteps()));
    LrScheduleKind kind = op.getKind();
    Value r = elementwise(
        rewriter, op.getLoc(), op.getType(), op.getStep(),
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value step = toF32Scalar(b, l, v[0]);
          Value one = f32Const(b, l, 1.0);
          Value warmF = f32Const(b, l, std::max(1.0, warm));
          Value inWarm = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT,
                                               step, f32Const(b, l, warm));
          Value warmLr = mulf(b, l, f32Const(b, l, base), divf(b, l, step, warmF));
          Value after = f32Const(b, l, base);
          if (kind != LrScheduleKind::constant) {
            Value p = divf(b, l, subf(b, l, step, f32Const(b, l, warm)),
                           f32Const(b, l, std::max(1.0, total - warm)));
            p = arith::MinimumFOp::create(
                b, l, arith::MaximumFOp::create(b, l, p, f32Const(b, l, 0.0)),
                one);
            Value frac =
                kind == LrScheduleKind::linear
                    ? subf(b, l, one, p)
                    : mulf(b, l, f32Const(b, l, 0.5),
                           addf(b, l, one,
                                math::CosOp::create(
                                    b, l, mulf(b, l, f32Const(b, l, M_PI), p))));
            after = addf(b, l, f32Const(b, l, minLr),
                         mulf(b, l, f32Const(b, l, base - minLr), frac));
          }
          return {arith::SelectOp::create(b, l, inWarm, warmLr, after)};
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// norm = sqrt(sum g^2); g *= min(1, max_norm / (norm + 1e-6)).
struct LowerClip : OpRewritePattern<ClipByGlobalNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ClipByGlobalNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto scalar = RankedTensorType::get({}, rewriter.getF32Type());
    Value sq = sumOverTensors(rewriter, loc, op.getGrads(),
                              [](OpBuilder &b, Location l, Value g) {
                                return mulf(b, l, g, g);
                              });
    double maxNorm = op.getMaxNorm().convertToDouble();
    Value norm = elementwise(rewriter, loc, scalar, sq,
                             [](OpBuilder &b, Location l, ValueRange v)
                                 -> SmallVector<Value> {
                               return {math::SqrtOp::create(b, l, v[0])};
                             });
    Value coef = elementwise(
        rewriter, loc, scalar, norm,
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          Value c = divf(b, l, f32Const(b, l, maxNorm),
                         addf(b, l, v[0], f32Const(b, l, 1e-6)));
          return {arith::MinimumFOp::create(b, l, c, f32Const(b, l, 1.0))};
        });
    SmallVector<Value> results;
    for (Value g : op.getGrads())
      results.push_back(elementwise(
          rewriter, loc, tt(g), {g, coef},
          [](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
            return {mulf(b, l, v[0], v[1])};
          }));
    results.push_back(norm);
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::lpc::lowering::populatePrecisionPatterns(
    RewritePatternSet &patterns, bool fp8Gemm) {
  patterns.add<LowerSaturatingCast, LowerQuantize, LowerDequantize, LowerAmax,
               LowerFP8Stats, LowerAllFinite, LowerAmaxHistoryPush,
               LowerFP8ComputeScale, LowerWireScale, LowerLossScaleUpdate, LowerLrSchedule,
               LowerClip>(patterns.getContext(), /*benefit=*/2);
  patterns.add<LowerScaledMatmul>(patterns.getContext(), fp8Gemm);
}
