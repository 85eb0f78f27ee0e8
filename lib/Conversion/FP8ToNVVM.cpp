//===- FP8ToNVVM.cpp - --lpc-fp8-to-nvvm ----------------------------------===//
//
// The GPU's FP8 conversions: what lpc-to-linalg{fp8-hardware-cvt} leaves as
// arith.truncf / arith.extf becomes one PTX cvt each (both lanes of the x2
// instruction get the same value, so the lane order does not matter) plus
// the selects that make the result bit-identical with the CPU's integer
// code (encodeFP8 / decodeFP8) and the reference evaluator. The
// instruction's rounding (nearest even, subnormals included) and its
// saturation of finite overflow and inf are what the PTX manual specifies;
// the NaN it returns is not, so NaN is always replaced.
// test/Conversion/Inputs/fp8_cvt_model.py checks this reasoning against
// ml_dtypes on every class of f32 input.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/bit.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCFP8TONVVM
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using namespace mlir::lpc;

std::optional<unsigned> mlir::lpc::parseSMVersion(StringRef chip) {
  unsigned version;
  if (!chip.consume_front("sm_") || chip.consumeInteger(10, version) ||
      !(chip.empty() || chip == "a" || chip == "f"))
    return std::nullopt;
  return version;
}

namespace {

bool isHardwareFP8(Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); }

/// Where the formats differ for the fix-ups.
struct FixUps {
  uint8_t nanCode;       // lpc's NaN, ORed with the sign
  uint8_t overflowCode;  // a non-saturating overflow: NaN or inf
  uint32_t overflowBits; // the smallest |x| (f32 bits) that overflows
};

FixUps fixUpsOf(Type fp8) {
  // E4M3FN: 464, halfway between 448 and the next step, rounds to the even
  // 448; only above it is NaN. E5M2: 61440 rounds up to inf (57344's
  // mantissa is odd). encodeFP8's overCode test gives the same thresholds.
  if (isa<Float8E4M3FNType>(fp8))
    return {0x7F, 0x7F, llvm::bit_cast<uint32_t>(464.0f) + 1};
  return {0x7E, 0x7C, llvm::bit_cast<uint32_t>(61440.0f)};
}

class Emitter {
public:
  Emitter(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// f32 -> fp8 as encodeFP8(x, saturate) computes it.
  Value encode(Value x, Type fp8, bool saturate) {
    FixUps f = fixUpsOf(fp8);
    Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
        b, loc, b.getI16Type(), x, x, NVVM::FPRoundingMode::RN,
        NVVM::SaturationMode::SATFINITE, /*relu=*/false, fp8);
    Value code = arith::TruncIOp::create(b, loc, b.getI8Type(), pair);
    Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
    Value abs = arith::AndIOp::create(b, loc, bits, i32(0x7FFFFFFF));
    Value top = arith::ShRUIOp::create(b, loc, bits, i32(24));
    top = arith::TruncIOp::create(b, loc, b.getI8Type(), top);
    Value sign = arith::AndIOp::create(b, loc, top, i8(0x80));
    // code = |x| >= limit ? sign | special : code
    auto fixUp = [&](uint32_t limit, uint8_t special) {
      Value hit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, abs,
                                        i32(limit));
      Value fixed = arith::OrIOp::create(b, loc, sign, i8(special));
      code = arith::SelectOp::create(b, loc, hit, fixed, code);
    };
    if (!saturate)
      fixUp(f.overflowBits, f.overflowCode);
    // NaN lies above every overflow threshold: E4M3FN's non-saturating fix
    // already gave it lpc's NaN.
    if (saturate || f.overflowCode != f.nanCode)
      fixUp(0x7F800001, f.nanCode);
    return arith::BitcastOp::create(b, loc, fp8, code);
  }

  /// fp8 -> `to` (f16 or wider) as decodeFP8 computes it.
  Value decode(Value v, FloatType to) {
    Type fp8 = v.getType();
    Value byte = arith::BitcastOp::create(b, loc, b.getI8Type(), v);
    Value pair =
        LLVM::PoisonOp::create(b, loc, VectorType::get({2}, b.getI8Type()));
    for (int64_t lane : {0, 1})
      pair = LLVM::InsertElementOp::create(b, loc, pair, byte, index(lane));
    Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
        b, loc, VectorType::get({2}, b.getF16Type()), pair, /*relu=*/false,
        fp8);
    Value r = LLVM::ExtractElementOp::create(b, loc, halves, index(0));
    if (!to.isF16())
      r = arith::ExtFOp::create(b, loc, to, r);
    // Every non-NaN value is exact in f16 and wider; NaN becomes the
    // default quiet NaN with the byte's sign.
    const llvm::fltSemantics &sem = to.getFloatSemantics();
    Value negative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, byte, i8(0));
    Value negNan = floatConst(to, llvm::APFloat::getQNaN(sem, true));
    Value posNan = floatConst(to, llvm::APFloat::getQNaN(sem, false));
    Value nan = arith::SelectOp::create(b, loc, negative, negNan, posNan);
    Value isNan =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, r, r);
    return arith::SelectOp::create(b, loc, isNan, nan, r);
  }

private:
  Value i8(uint8_t v) {
    return arith::ConstantOp::create(
        b, loc, IntegerAttr::get(b.getI8Type(), APInt(8, v)));
  }
  Value i32(uint32_t v) {
    return arith::ConstantOp::create(
        b, loc, IntegerAttr::get(b.getI32Type(), APInt(32, v)));
  }
  Value index(int64_t lane) {
    return LLVM::ConstantOp::create(b, loc, b.getI32Type(), lane);
  }
  Value floatConst(FloatType t, const llvm::APFloat &v) {
    return arith::ConstantOp::create(b, loc, FloatAttr::get(t, v));
  }

  OpBuilder &b;
  Location loc;
};

/// The PTX version a target's features ask for ("+ptx81" -> 81), or 0.
unsigned ptxVersion(StringRef features) {
  SmallVector<StringRef> parts;
  features.split(parts, ',');
  for (StringRef f : parts) {
    f = f.trim();
    unsigned v;
    if (f.consume_front("+ptx") && !f.getAsInteger(10, v))
      return v;
  }
  return 0;
}

/// The conversions need sm_89 or later, and on sm_89 PTX 8.1 (7.8, LLVM's
/// default there, has them for sm_90 only): otherwise LLVM's NVPTX back end
/// aborts the process when it cannot select the instruction.
LogicalResult checkTarget(Operation *op) {
  auto module = op->getParentOfType<gpu::GPUModuleOp>();
  ArrayAttr targets = module ? module.getTargetsAttr() : nullptr;
  if (!targets)
    return success();
  for (Attribute a : targets) {
    auto target = dyn_cast<NVVM::NVVMTargetAttr>(a);
    if (!target)
      continue;
    std::optional<unsigned> sm = parseSMVersion(target.getChip());
    if (!sm || *sm < kFirstFP8Chip)
      return op->emitError()
             << "lpc-fp8-to-nvvm: FP8 conversions need sm_" << kFirstFP8Chip
             << " or later; the gpu.module targets " << target.getChip();
    if (*sm < 90 && ptxVersion(target.getFeatures()) < 81)
      return op->emitError()
             << "lpc-fp8-to-nvvm: FP8 conversions on " << target.getChip()
             << " need PTX 8.1 or later (target features \"+ptx81\")";
  }
  return success();
}

LogicalResult lowerTruncF(arith::TruncFOp op) {
  Type fp8 = op.getType();
  Value in = op.getIn();
  auto inType = dyn_cast<FloatType>(in.getType());
  if (!inType)
    return op.emitError() << "lpc-fp8-to-nvvm: only scalar FP8 conversions "
                             "are supported, got "
                          << in.getType();
  if (inType.getWidth() > 32)
    return op.emitError() << "lpc-fp8-to-nvvm: " << inType << " -> " << fp8
                          << " would round twice (through f32)";
  if (auto mode = op.getRoundingmodeAttr();
      mode && mode.getValue() != arith::RoundingMode::to_nearest_even)
    return op.emitError() << "lpc-fp8-to-nvvm: the instruction rounds to "
                             "nearest even, not "
                          << arith::stringifyRoundingMode(mode.getValue());
  // A truncf of clampFP8(x) is lpc's saturating cast of x: the
  // instruction saturates by itself, and the sign of a NaN x is x's.
  Value x = lowering::matchClampFP8(in, fp8);
  bool saturate = static_cast<bool>(x);
  if (!saturate)
    x = in;
  OpBuilder b(op);
  if (!x.getType().isF32())
    x = arith::ExtFOp::create(b, op.getLoc(), b.getF32Type(), x);
  op.replaceAllUsesWith(Emitter(b, op.getLoc()).encode(x, fp8, saturate));
  op.erase();
  if (saturate && in.use_empty()) {
    auto min = in.getDefiningOp<arith::MinimumFOp>();
    Operation *max = min.getLhs().getDefiningOp<arith::MaximumFOp>();
    if (!max)
      max = min.getRhs().getDefiningOp();
    min.erase();
    if (max->use_empty())
      max->erase();
  }
  return success();
}

/// canonicalize folds truncf(sitofp(i)) into one sitofp to fp8 (uitofp
/// too). Through f32 it is the same conversion: integers below 2^24 are
/// exact in f32, larger ones overflow both formats either way.
LogicalResult lowerIntToFP(Operation *op) {
  Value in = op->getOperand(0);
  Type fp8 = op->getResult(0).getType();
  if (!isa<IntegerType>(in.getType()))
    return op->emitError() << "lpc-fp8-to-nvvm: only scalar FP8 conversions "
                              "are supported, got "
                           << in.getType();
  OpBuilder b(op);
  Value x = isa<arith::SIToFPOp>(op)
                ? arith::SIToFPOp::create(b, op->getLoc(), b.getF32Type(), in)
                      .getResult()
                : arith::UIToFPOp::create(b, op->getLoc(), b.getF32Type(), in)
                      .getResult();
  op->getResult(0).replaceAllUsesWith(
      Emitter(b, op->getLoc()).encode(x, fp8, /*saturate=*/false));
  op->erase();
  return success();
}

LogicalResult lowerExtF(arith::ExtFOp op) {
  auto to = dyn_cast<FloatType>(op.getType());
  if (!to)
    return op.emitError() << "lpc-fp8-to-nvvm: only scalar FP8 conversions "
                             "are supported, got "
                          << op.getType();
  if (!to.isF16() && to.getWidth() <= 16)
    return op.emitError() << "lpc-fp8-to-nvvm: the instruction gives f16; "
                          << to << " is not wider";
  OpBuilder b(op);
  op.replaceAllUsesWith(Emitter(b, op.getLoc()).decode(op.getIn(), to));
  op.erase();
  return success();
}

struct LpcFP8ToNVVMPass
    : ::mlir::lpc::impl::LpcFP8ToNVVMBase<LpcFP8ToNVVMPass> {
  void runOnOperation() override {
    SmallVector<Operation *> conversions;
    getOperation()->walk([&](Operation *op) {
      if (isa<arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp>(op) &&
          isHardwareFP8(getElementTypeOrSelf(op->getResult(0).getType())))
        conversions.push_back(op);
      if (isa<arith::ExtFOp>(op) &&
          isHardwareFP8(getElementTypeOrSelf(op->getOperand(0).getType())))
        conversions.push_back(op);
    });
    for (Operation *op : conversions) {
      LogicalResult ok = checkTarget(op);
      if (succeeded(ok)) {
        if (auto t = dyn_cast<arith::TruncFOp>(op))
          ok = lowerTruncF(t);
        else if (auto e = dyn_cast<arith::ExtFOp>(op))
          ok = lowerExtF(e);
        else
          ok = lowerIntToFP(op);
      }
      if (failed(ok))
        return signalPassFailure();
    }
  }
};

} // namespace
