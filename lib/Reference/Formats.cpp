//===- Formats.cpp - element types and exact rounding ---------------------===//
//
// Every conversion goes through llvm::APFloat, whose conversions are exact
// IEEE-754 round-to-nearest-even for every format lpc uses (including the
// OCP FP8 formats, whose special values APFloat models: f8E4M3FN has NaN but
// no inf, f8E5M2 is IEEE-like). test/Reference/check_formats.py compares the
// results bit for bit with ml_dtypes.
//
//===----------------------------------------------------------------------===//

#include "lpc/Reference/Evaluator.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::lpc::ref;

std::optional<DType> mlir::lpc::ref::dtypeOf(Type t) {
  if (t.isF32())
    return DType::f32;
  if (t.isF16())
    return DType::f16;
  if (t.isBF16())
    return DType::bf16;
  if (isa<Float8E4M3FNType>(t))
    return DType::f8e4m3;
  if (isa<Float8E5M2Type>(t))
    return DType::f8e5m2;
  if (t.isSignlessInteger(32))
    return DType::i32;
  if (t.isSignlessInteger(64))
    return DType::i64;
  if (t.isSignlessInteger(1))
    return DType::i1;
  return std::nullopt;
}

Type mlir::lpc::ref::mlirTypeOf(DType t, MLIRContext *ctx) {
  switch (t) {
  case DType::f32:
    return Float32Type::get(ctx);
  case DType::f16:
    return Float16Type::get(ctx);
  case DType::bf16:
    return BFloat16Type::get(ctx);
  case DType::f8e4m3:
    return Float8E4M3FNType::get(ctx);
  case DType::f8e5m2:
    return Float8E5M2Type::get(ctx);
  case DType::i32:
    return IntegerType::get(ctx, 32);
  case DType::i64:
    return IntegerType::get(ctx, 64);
  case DType::i1:
    return IntegerType::get(ctx, 1);
  }
  llvm_unreachable("unknown DType");
}

llvm::StringRef mlir::lpc::ref::dtypeName(DType t) {
  switch (t) {
  case DType::f32:
    return "f32";
  case DType::f16:
    return "f16";
  case DType::bf16:
    return "bf16";
  case DType::f8e4m3:
    return "f8E4M3FN";
  case DType::f8e5m2:
    return "f8E5M2";
  case DType::i32:
    return "i32";
  case DType::i64:
    return "i64";
  case DType::i1:
    return "i1";
  }
  llvm_unreachable("unknown DType");
}

std::optional<DType> mlir::lpc::ref::parseDType(llvm::StringRef name) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f8e4m3,
                  DType::f8e5m2, DType::i32, DType::i64, DType::i1})
    if (dtypeName(t) == name)
      return t;
  return std::nullopt;
}

bool mlir::lpc::ref::isFloat(DType t) {
  return t != DType::i32 && t != DType::i64 && t != DType::i1;
}

unsigned mlir::lpc::ref::bitWidth(DType t) {
  switch (t) {
  case DType::f32:
  case DType::i32:
    return 32;
  case DType::f16:
  case DType::bf16:
    return 16;
  case DType::f8e4m3:
  case DType::f8e5m2:
    return 8;
  case DType::i64:
    return 64;
  case DType::i1:
    return 1;
  }
  llvm_unreachable("unknown DType");
}

static const llvm::fltSemantics &semanticsOf(DType t) {
  switch (t) {
  case DType::f32:
    return llvm::APFloat::IEEEsingle();
  case DType::f16:
    return llvm::APFloat::IEEEhalf();
  case DType::bf16:
    return llvm::APFloat::BFloat();
  case DType::f8e4m3:
    return llvm::APFloat::Float8E4M3FN();
  case DType::f8e5m2:
    return llvm::APFloat::Float8E5M2();
  default:
    llvm_unreachable("not a float DType");
  }
}

static double toDouble(llvm::APFloat f) {
  bool losesInfo = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return f.convertToDouble();
}

double mlir::lpc::ref::maxFinite(DType t) {
  return toDouble(llvm::APFloat::getLargest(semanticsOf(t)));
}

double mlir::lpc::ref::spacing(double v, DType t) {
  const llvm::fltSemantics &sem = semanticsOf(t);
  int minExp = llvm::APFloat::semanticsMinExponent(sem);
  int precision = static_cast<int>(llvm::APFloat::semanticsPrecision(sem));
  int e = v != 0 && std::isfinite(v) ? std::ilogb(v) : minExp;
  return std::ldexp(1.0, std::max(e, minExp) - (precision - 1));
}

/// `v` in the float format `t`, rounded to nearest even, with saturation as
/// documented at roundToFormat.
static llvm::APFloat convertFloat(double v, DType t, bool saturate) {
  const llvm::fltSemantics &sem = semanticsOf(t);
  llvm::APFloat f(v);
  bool losesInfo = false;
  // Overflow gives inf, or NaN in formats without inf (f8E4M3FN).
  f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  if (!saturate || std::isnan(v))
    return f;
  // Saturation clamps overflow and +-inf alike (PTX cvt.rn.satfinite).
  if (!f.isFinite())
    return llvm::APFloat::getLargest(sem, /*Negative=*/std::signbit(v));
  return f;
}

double mlir::lpc::ref::roundToFormat(double v, DType t, bool saturate) {
  switch (t) {
  case DType::i1:
    return v != 0.0 ? 1.0 : 0.0;
  case DType::i32:
  case DType::i64:
    return std::nearbyint(v);
  default:
    return toDouble(convertFloat(v, t, saturate));
  }
}

uint64_t mlir::lpc::ref::toBits(double v, DType t, bool saturate) {
  if (!isFloat(t)) {
    uint64_t bits = static_cast<uint64_t>(
        static_cast<int64_t>(roundToFormat(v, t, saturate)));
    unsigned w = bitWidth(t);
    return w == 64 ? bits : bits & ((uint64_t(1) << w) - 1);
  }
  return convertFloat(v, t, saturate).bitcastToAPInt().getZExtValue();
}

double mlir::lpc::ref::fromBits(uint64_t bits, DType t) {
  unsigned w = bitWidth(t);
  if (!isFloat(t)) {
    llvm::APInt value(w, w == 64 ? bits : bits & ((uint64_t(1) << w) - 1));
    return t == DType::i1 ? static_cast<double>(value.getZExtValue())
                          : static_cast<double>(value.getSExtValue());
  }
  llvm::APInt value(w, bits & (w == 64 ? ~uint64_t(0)
                                       : (uint64_t(1) << w) - 1));
  return toDouble(llvm::APFloat(semanticsOf(t), value));
}
