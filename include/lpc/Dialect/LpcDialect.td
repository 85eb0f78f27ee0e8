//===- LpcDialect.td - the lpc tensor dialect -----------------*- tablegen -*-===//
//
// The lpc dialect describes models for mixed- and low-precision training:
// value-semantics ops on builtin ranked tensors, the precision ops that the
// precision passes insert, and optimizer ops. The generated reference is
// docs/reference/LpcDialect.md (ninja lpc-docs-update refreshes it).
//
//===----------------------------------------------------------------------===//

#ifndef LPC_DIALECT_TD
#define LPC_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Lpc_Dialect : Dialect {
  let name = "lpc";
  let cppNamespace = "::mlir::lpc";
  let summary = "Tensor dialect for mixed- and low-precision training";
  let description = [{
    Values are builtin ranked tensors with element types f32, f16, bf16,
    f8E4M3FN, f8E5M2 (floating point) and i32/i64 (labels, token ids).
    Every op declares its precision class with a trait (see
    `lpc/Dialect/LpcTraits.h`), listed under "Traits" below:

    - `AlwaysLowPrecision` (matmul-like): runs in the policy's low precision
      with FP32 accumulation;
    - `FollowPrecision` (elementwise, data movement): follows its inputs;
    - `KeepFP32Precision` (exp, log, norms, softmax, reductions, losses):
      numerically sensitive, stays FP32;
    - `BF16RelaxablePrecision` (with KeepFP32: sum, mean): a BF16 policy may
      run it in BF16, which has FP32's exponent range;
    - `FixedPrecision` (structure, precision and optimizer ops): the types
      are exactly what they say.

    Users pin the precision of a compute op with the discardable attribute
    `lpc.precision = #lpc.precision<fp32>`.

    Examples name the types of the values they use in a leading comment
    (`// %x: tensor<4x8xf32>`); the docs test parses every example with
    these as function arguments.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let extraClassDeclaration = [{
    /// Name of the discardable attribute that pins an op's precision.
    static constexpr ::llvm::StringLiteral getPrecisionPinAttrName() {
      return ::llvm::StringLiteral("lpc.precision");
    }
    /// Precision chosen by lpc-assign-precision, and the rule that chose it.
    static constexpr ::llvm::StringLiteral getAssignedAttrName() {
      return ::llvm::StringLiteral("lpc.assigned");
    }
    static constexpr ::llvm::StringLiteral getReasonAttrName() {
      return ::llvm::StringLiteral("lpc.reason");
    }
    /// [lhs, rhs] FP8 formats of a matmul that runs as an FP8 GEMM.
    static constexpr ::llvm::StringLiteral getFP8OperandsAttrName() {
      return ::llvm::StringLiteral("lpc.fp8");
    }
  }];
}

//===----------------------------------------------------------------------===//
// Enums and attributes
//===----------------------------------------------------------------------===//

def Lpc_Precision : I32EnumAttr<"Precision", "numeric precision of an op", [
    I32EnumAttrCase<"fp32", 0>,
    I32EnumAttrCase<"fp16", 1>,
    I32EnumAttrCase<"bf16", 2>,
    I32EnumAttrCase<"fp8_e4m3", 3>,
    I32EnumAttrCase<"fp8_e5m2", 4>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::lpc";
}
def Lpc_PrecisionAttr : EnumAttr<Lpc_Dialect, Lpc_Precision, "precision"> {
  let assemblyFormat = "`<` $value `>`";
}

def Lpc_GemmRole : I32EnumAttr<"GemmRole",
    "role of a GEMM in the training step", [
    I32EnumAttrCase<"fprop", 0>,
    I32EnumAttrCase<"dgrad", 1>,
    I32EnumAttrCase<"wgrad", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::lpc";
}
def Lpc_GemmRoleAttr : EnumAttr<Lpc_Dialect, Lpc_GemmRole, "role"> {
  let assemblyFormat = "`<` $value `>`";
}

def Lpc_InitKind : I32EnumAttr<"InitKind", "parameter initializer", [
    I32EnumAttrCase<"zeros", 0>,
    I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"constant", 2>,
    I32EnumAttrCase<"normal", 3>,
    I32EnumAttrCase<"uniform", 4>,
    I32EnumAttrCase<"xavier_uniform", 5>,
    I32EnumAttrCase<"xavier_normal", 6>,
    I32EnumAttrCase<"kaiming_uniform", 7>,
    I32EnumAttrCase<"kaiming_normal", 8>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::lpc";
}
def Lpc_InitKindAttr : EnumAttr<Lpc_Dialect, Lpc_InitKind, "init">;

def Lpc_InputKind : I32EnumAttr<"InputKind", "kind of a data input", [
    I32EnumAttrCase<"features", 0>,
    I32EnumAttrCase<"targets", 1>,
    I32EnumAttrCase<"labels", 2>,
    I32EnumAttrCase<"tokens", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::lpc";
}
def Lpc_InputKindAttr : EnumAttr<Lpc_Dialect, Lpc_InputKind, "input_kind">;

def Lpc_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "GELU form", [
    I32EnumAttrCase<"erf", 0>,
    I32EnumAttrCase<"tanh", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::lpc";
}
def Lpc_GeluApproximationAttr
    : EnumAttr<Lpc_Dialect, Lpc_GeluApproximation, "gelu_approximation"> {
  let assemblyFormat = "`<` $value `>`";
}

def Lpc_LossReduction : I32EnumAttr<"LossReduction",
    "how a loss reduces over the batch", [
    I32EnumAttrCase<"mean", 0>,
    I32EnumAttrCase<"sum", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::lpc";
}
def Lpc_LossReductionAttr
    : EnumAttr<Lpc_Dialect, Lpc_LossReduction, "reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

def Lpc_LrScheduleKind : I32EnumAttr<"LrScheduleKind",
    "learning-rate schedule", [
    I32EnumAttrCase<"constant", 0>,
    I32EnumAttrCase<"linear", 1>,
    I32EnumAttrCase<"cosine", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::lpc";
}
def Lpc_LrScheduleKindAttr
    : EnumAttr<Lpc_Dialect, Lpc_LrScheduleKind, "lr_schedule_kind">;

def Lpc_AmaxComputeAlgo : I32EnumAttr<"AmaxComputeAlgo",
    "how the scaling amax comes from the amax history", [
    I32EnumAttrCase<"max", 0>,
    I32EnumAttrCase<"most_recent", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::lpc";
}
def Lpc_AmaxComputeAlgoAttr
    : EnumAttr<Lpc_Dialect, Lpc_AmaxComputeAlgo, "amax_algo"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Precision-class traits (C++ side in LpcTraits.h)
//===----------------------------------------------------------------------===//

class Lpc_PrecisionTrait<string name>
    : NativeOpTrait<name, [], [{}], [{}]> {
  let cppNamespace = "::mlir::lpc::OpTrait";
}
// Matmul-like: always runs in the policy's low precision, FP32 accumulation.
def AlwaysLowPrecision : Lpc_PrecisionTrait<"AlwaysLowPrecision">;
// Elementwise / data movement: follows the precision of its inputs.
def FollowPrecision : Lpc_PrecisionTrait<"FollowPrecision">;
// Numerically sensitive (exp, log, norms, softmax, reductions, losses).
def KeepFP32Precision : Lpc_PrecisionTrait<"KeepFP32Precision">;
// KeepFP32 ops that a BF16 policy may run in BF16 (FP32's exponent range).
def BF16RelaxablePrecision : Lpc_PrecisionTrait<"BF16RelaxablePrecision">;
// Structure, precision and optimizer ops: types are exactly as written.
def FixedPrecision : Lpc_PrecisionTrait<"FixedPrecision">;

#endif // LPC_DIALECT_TD
