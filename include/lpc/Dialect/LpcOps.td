//===- LpcOps.td - lpc ops ------------------------------------*- tablegen -*-===//
//
// Verifiers live in dialects/LpcOps.cpp, folders and canonicalization
// patterns in dialects/LpcFolds.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_OPS_TD
#define LPC_OPS_TD

include "lpc/Dialect/LpcDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Lpc_FloatElement : AnyTypeOf<[F32, F16, BF16, F8E4M3FN, F8E5M2]>;
def Lpc_FP8Element : AnyTypeOf<[F8E4M3FN, F8E5M2]>;
def Lpc_IntElement : AnyTypeOf<[I32, I64]>;

def Lpc_FloatTensor : RankedTensorOf<[F32, F16, BF16, F8E4M3FN, F8E5M2]>;
def Lpc_FP8Tensor : RankedTensorOf<[F8E4M3FN, F8E5M2]>;
def Lpc_WideFloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Lpc_F32Tensor : RankedTensorOf<[F32]>;
def Lpc_IntTensor : RankedTensorOf<[I32, I64]>;
def Lpc_BoolTensor : RankedTensorOf<[I1]>;
def Lpc_NumTensor : RankedTensorOf<[F32, F16, BF16, F8E4M3FN, F8E5M2, I32, I64]>;
def Lpc_Tensor : RankedTensorOf<[F32, F16, BF16, F8E4M3FN, F8E5M2, I32, I64, I1]>;
def Lpc_F32Scalar : 0DTensorOf<[F32]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getF32Type())";
}
def Lpc_StepScalar : 0DTensorOf<[I32, I64, F32]>;
def Lpc_BoolScalar : 0DTensorOf<[I1]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI1Type())";
}

class Lpc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Lpc_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Model structure
//===----------------------------------------------------------------------===//

def Lpc_ParamOp : Lpc_Op<"param", [FixedPrecision]> {
  let summary = "a trainable parameter (FP32 master) with its initializer";
  let description = [{
    Declares a trainable parameter. `name` is unique within the function and
    names the tensor in checkpoints. The initializer takes optional values:
    `normal` uses `std` (default 1.0) and `mean` (default 0.0), `uniform`
    uses `low`/`high` (default -1, 1), `constant` uses `value`, and the
    xavier/kaiming forms use `gain` (default 1.0) with fan-in/fan-out taken
    from the first two dims as (in, out).

    ```mlir
    %w = lpc.param "fc1.weight" xavier_uniform : tensor<784x1024xf32>
    %e = lpc.param "wte" normal {std = 0.02 : f64} : tensor<256x128xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Lpc_InitKindAttr:$init,
                   OptionalAttr<F64Attr>:$std, OptionalAttr<F64Attr>:$mean,
                   OptionalAttr<F64Attr>:$low, OptionalAttr<F64Attr>:$high,
                   OptionalAttr<F64Attr>:$value, OptionalAttr<F64Attr>:$gain);
  let results = (outs Lpc_F32Tensor:$result);
  let assemblyFormat = "$name `` $init attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Lpc_InputOp : Lpc_Op<"input", [FixedPrecision]> {
  let summary = "a data input of the model (one batch)";
  let description = [{
    `features` and `targets` are floating point; `labels` and `tokens` are
    integer. The leading dimension is the batch.

    ```mlir
    %x = lpc.input "image" features : tensor<256x784xf32>
    %y = lpc.input "label" labels : tensor<256xi32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Lpc_InputKindAttr:$kind);
  let results = (outs Lpc_Tensor:$result);
  let assemblyFormat = "$name `` $kind attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Lpc_ConstantOp : Lpc_Op<"constant", [ConstantLike, Pure, FixedPrecision]> {
  let summary = "a constant tensor";
  let description = [{
    ```mlir
    %c = lpc.constant dense<1.0> : tensor<4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Lpc_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasFolder = 1;
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
    build($_builder, $_state, value.getType(), value);
  }]>];
}

//===----------------------------------------------------------------------===//
// Compute: GEMM
//===----------------------------------------------------------------------===//

def Lpc_MatmulOp : Lpc_Op<"matmul", [Pure, AlwaysLowPrecision,
    InferTypeOpAdaptor]> {
  let summary = "(batched) matrix multiply with FP32 accumulation";
  let description = [{
    `lhs` is `[batch..., M, K]` (`[batch..., K, M]` with `transpose_a`),
    `rhs` is `[batch..., K, N]` (`[batch..., N, K]` with `transpose_b`) or a
    rank-2 matrix shared by every batch. Both operands have the same element
    type, the result too; products accumulate in FP32 whatever the operand
    type. `role` (fprop | dgrad | wgrad) is set by lpc-autodiff.

    ```mlir
    // %x: tensor<256x784xf32>, %w: tensor<784x1024xf32>
    %y = lpc.matmul %x, %w : tensor<256x784xf32>, tensor<784x1024xf32>
           -> tensor<256x1024xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$lhs, Lpc_FloatTensor:$rhs,
                   UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                   OptionalAttr<Lpc_GemmRoleAttr>:$role);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Compute: attention (lpc.attention, lpc.attention_grad)
//===----------------------------------------------------------------------===//

include "lpc/Dialect/LpcAttentionOps.td"

//===----------------------------------------------------------------------===//
// Compute: elementwise
//===----------------------------------------------------------------------===//

class Lpc_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Lpc_Op<mnemonic, !listconcat(traits,
        [Pure, SameOperandsAndResultType, FollowPrecision])> {
  let arguments = (ins Lpc_FloatTensor:$lhs, Lpc_FloatTensor:$rhs);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Lpc_AddOp : Lpc_BinaryOp<"add", [Commutative]> {
  let summary = "elementwise addition (same shapes; see lpc.broadcast)";
  let description = [{
    Also adds integer tensors (e.g. the step counter).

    ```mlir
    // %x, %y: tensor<4x8xbf16>, %step, %one: tensor<i64>
    %z = lpc.add %x, %y : tensor<4x8xbf16>
    %next = lpc.add %step, %one : tensor<i64>
    ```
  }];
  let arguments = (ins Lpc_NumTensor:$lhs, Lpc_NumTensor:$rhs);
  let results = (outs Lpc_NumTensor:$result);
}
def Lpc_SubOp : Lpc_BinaryOp<"sub"> {
  let summary = "elementwise subtraction";
  let description = [{
    ```mlir
    // %x, %y: tensor<4x8xf32>
    %z = lpc.sub %x, %y : tensor<4x8xf32>
    ```
  }];
}
def Lpc_MulOp : Lpc_BinaryOp<"mul", [Commutative]> {
  let summary = "elementwise multiplication";
  let description = [{
    ```mlir
    // %x, %y: tensor<4x8xf16>
    %z = lpc.mul %x, %y : tensor<4x8xf16>
    ```
  }];
}
def Lpc_DivOp : Lpc_BinaryOp<"div"> {
  let summary = "elementwise division";
  let description = [{
    ```mlir
    // %x, %y: tensor<4x8xf32>
    %z = lpc.div %x, %y : tensor<4x8xf32>
    ```
  }];
}

def Lpc_BiasAddOp : Lpc_Op<"bias_add", [Pure, FollowPrecision,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "adds a rank-1 bias along the last dimension";
  let description = [{
    ```mlir
    // %x: tensor<4x8xf32>, %b: tensor<8xf32>
    %y = lpc.bias_add %x, %b : tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input, Lpc_FloatTensor:$bias);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $bias attr-dict `:` type($input) `,` type($bias)
  }];
  let hasVerifier = 1;
}

class Lpc_UnaryOp<string mnemonic, list<Trait> traits = []>
    : Lpc_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType])> {
  let arguments = (ins Lpc_FloatTensor:$input);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Lpc_NegOp : Lpc_UnaryOp<"neg", [FollowPrecision]> {
  let summary = "elementwise negation";
  let description = [{
    ```mlir
    // %x: tensor<4x8xbf16>
    %y = lpc.neg %x : tensor<4x8xbf16>
    ```
  }];
  let hasFolder = 1;
}
def Lpc_ReluOp : Lpc_UnaryOp<"relu", [FollowPrecision]> {
  let summary = "max(x, 0)";
  let description = [{
    ```mlir
    // %x: tensor<4x8xbf16>
    %y = lpc.relu %x : tensor<4x8xbf16>
    ```
  }];
}
def Lpc_GeluOp : Lpc_UnaryOp<"gelu", [FollowPrecision]> {
  let summary = "GELU, exact (erf) or tanh approximation";
  let description = [{
    ```mlir
    // %x: tensor<4x8xbf16>
    %y = lpc.gelu %x : tensor<4x8xbf16>
    %t = lpc.gelu %x {approximation = #lpc.gelu_approximation<tanh>} : tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input,
      DefaultValuedAttr<Lpc_GeluApproximationAttr,
                        "::mlir::lpc::GeluApproximation::erf">:$approximation);
}
def Lpc_SiluOp : Lpc_UnaryOp<"silu", [FollowPrecision]> {
  let summary = "x * sigmoid(x)";
  let description = [{
    ```mlir
    // %x: tensor<4x8xbf16>
    %y = lpc.silu %x : tensor<4x8xbf16>
    ```
  }];
}
def Lpc_TanhOp : Lpc_UnaryOp<"tanh", [FollowPrecision]> {
  let summary = "hyperbolic tangent";
  let description = [{
    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.tanh %x : tensor<4x8xf32>
    ```
  }];
}
def Lpc_SigmoidOp : Lpc_UnaryOp<"sigmoid", [FollowPrecision]> {
  let summary = "logistic sigmoid";
  let description = [{
    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.sigmoid %x : tensor<4x8xf32>
    ```
  }];
}
def Lpc_ExpOp : Lpc_UnaryOp<"exp", [KeepFP32Precision]> {
  let summary = "elementwise exponential";
  let description = [{
    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.exp %x : tensor<4x8xf32>
    ```
  }];
}
def Lpc_LogOp : Lpc_UnaryOp<"log", [KeepFP32Precision]> {
  let summary = "elementwise natural logarithm";
  let description = [{
    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.log %x : tensor<4x8xf32>
    ```
  }];
}
def Lpc_SqrtOp : Lpc_UnaryOp<"sqrt", [FollowPrecision]> {
  let summary = "elementwise square root";
  let description = [{
    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.sqrt %x : tensor<4x8xf32>
    ```
  }];
}
def Lpc_RsqrtOp : Lpc_UnaryOp<"rsqrt", [KeepFP32Precision]> {
  let summary = "elementwise 1/sqrt(x)";
  let description = [{
    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.rsqrt %x : tensor<4x8xf32>
    ```
  }];
}
def Lpc_PowOp : Lpc_UnaryOp<"pow", [KeepFP32Precision]> {
  let summary = "x raised to a constant exponent";
  let description = [{
    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.pow %x {exponent = 2.0 : f64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input, F64Attr:$exponent);
  let hasFolder = 1;
}
def Lpc_ScaleOp : Lpc_UnaryOp<"scale", [FollowPrecision]> {
  let summary = "x multiplied by a constant factor";
  let description = [{
    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.scale %x {factor = 0.125 : f64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input, F64Attr:$factor);
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Compute: normalization, softmax, reductions
//===----------------------------------------------------------------------===//

def Lpc_LayerNormOp : Lpc_Op<"layernorm", [Pure, KeepFP32Precision,
    AllTypesMatch<["input", "result"]>, AllTypesMatch<["gamma", "beta"]>]> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    `y = (x - mean) / sqrt(var + epsilon) * gamma + beta` with the biased
    variance over the last dimension; `gamma` and `beta` are rank 1.

    ```mlir
    // %x: tensor<2x4x8xf32>, %gamma, %beta: tensor<8xf32>
    %y = lpc.layernorm %x, %gamma, %beta {epsilon = 1.0e-5 : f64}
        : tensor<2x4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input, Lpc_FloatTensor:$gamma,
                   Lpc_FloatTensor:$beta,
                   DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def Lpc_RmsNormOp : Lpc_Op<"rmsnorm", [Pure, KeepFP32Precision,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "RMS normalization over the last dimension";
  let description = [{
    `y = x / sqrt(mean(x^2) + epsilon) * gamma`.

    ```mlir
    // %x: tensor<2x4x8xf32>, %gamma: tensor<8xf32>
    %y = lpc.rmsnorm %x, %gamma : tensor<2x4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input, Lpc_FloatTensor:$gamma,
                   DefaultValuedAttr<F64Attr, "1e-6">:$epsilon);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

class Lpc_SoftmaxLikeOp<string mnemonic>
    : Lpc_Op<mnemonic, [Pure, KeepFP32Precision, SameOperandsAndResultType]> {
  let arguments = (ins Lpc_FloatTensor:$input,
                   DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}
def Lpc_SoftmaxOp : Lpc_SoftmaxLikeOp<"softmax"> {
  let summary = "numerically stable softmax along an axis";
  let description = [{
    ```mlir
    // %x: tensor<2x4x8xf32>
    %p = lpc.softmax %x : tensor<2x4x8xf32>
    %q = lpc.softmax %x {axis = 1 : i64} : tensor<2x4x8xf32>
    ```
  }];
}
def Lpc_LogSoftmaxOp : Lpc_SoftmaxLikeOp<"log_softmax"> {
  let summary = "numerically stable log-softmax along an axis";
  let description = [{
    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.log_softmax %x {axis = -1 : i64} : tensor<4x8xf32>
    ```
  }];
}

class Lpc_ReduceOp<string mnemonic, list<Trait> traits = []>
    : Lpc_Op<mnemonic, !listconcat(traits, [Pure,
        InferTypeOpAdaptor])> {
  let arguments = (ins Lpc_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                   UnitAttr:$keepdims);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}
def Lpc_ReduceSumOp
    : Lpc_ReduceOp<"reduce_sum", [KeepFP32Precision, BF16RelaxablePrecision]> {
  let summary = "sum along axes";
  let description = [{
    Reduces along `axes` (negative values count from the end; no repeats).
    Without `keepdims` the reduced dimensions are dropped.

    ```mlir
    // %x: tensor<2x4x8xf32>
    %s = lpc.reduce_sum %x {axes = array<i64: 0, -1>, keepdims} : tensor<2x4x8xf32> -> tensor<1x4x1xf32>
    ```
  }];
}
def Lpc_ReduceMeanOp
    : Lpc_ReduceOp<"reduce_mean", [KeepFP32Precision, BF16RelaxablePrecision]> {
  let summary = "mean along axes";
  let description = [{
    Reduces along `axes` (negative values count from the end; no repeats).
    Without `keepdims` the reduced dimensions are dropped.

    ```mlir
    // %x: tensor<2x4x8xf32>
    %m = lpc.reduce_mean %x {axes = array<i64: 1>} : tensor<2x4x8xf32> -> tensor<2x8xf32>
    ```
  }];
}
def Lpc_ReduceMaxOp : Lpc_ReduceOp<"reduce_max", [FollowPrecision]> {
  let summary = "maximum along axes";
  let description = [{
    Reduces along `axes` (negative values count from the end; no repeats).
    Without `keepdims` the reduced dimensions are dropped.

    ```mlir
    // %x: tensor<2x4x8xf32>
    %m = lpc.reduce_max %x {axes = array<i64: -1>, keepdims} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Compute: data movement
//===----------------------------------------------------------------------===//

def Lpc_BroadcastOp : Lpc_Op<"broadcast", [Pure, FollowPrecision]> {
  let summary = "broadcasts into a larger shape";
  let description = [{
    Operand dimension `i` maps to result dimension `dims[i]` (strictly
    increasing); an operand dimension is either 1 or equal to the result's.

    ```mlir
    // %x: tensor<8xf32>
    %b = lpc.broadcast %x dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Lpc_Tensor:$result);
  let assemblyFormat = [{
    $input `dims` `=` $dims attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Lpc_ReshapeOp : Lpc_Op<"reshape", [Pure, FollowPrecision]> {
  let summary = "reshape to a type with the same element count";
  let description = [{
    ```mlir
    // %x: tensor<2x3x4xf16>
    %y = lpc.reshape %x : tensor<2x3x4xf16> -> tensor<6x4xf16>
    ```
  }];
  let arguments = (ins Lpc_Tensor:$input);
  let results = (outs Lpc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Lpc_TransposeOp : Lpc_Op<"transpose", [Pure, FollowPrecision,
    InferTypeOpAdaptor]> {
  let summary = "permutes dimensions: result dim i = input dim permutation[i]";
  let description = [{
    ```mlir
    // %x: tensor<2x3x4xf16>
    %y = lpc.transpose %x [2, 0, 1] : tensor<2x3x4xf16> -> tensor<4x2x3xf16>
    ```
  }];
  let arguments = (ins Lpc_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Lpc_Tensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def Lpc_SliceOp : Lpc_Op<"slice", [Pure, FollowPrecision,
    InferTypeOpAdaptor]> {
  let summary = "strided slice [start, limit) with a step per dimension";
  let description = [{
    ```mlir
    // %x: tensor<2x3x4xf16>
    %s = lpc.slice %x start = [0, 1, 0] limit = [2, 3, 4] step = [1, 1, 2]
        : tensor<2x3x4xf16> -> tensor<2x2x2xf16>
    ```
  }];
  let arguments = (ins Lpc_Tensor:$input, DenseI64ArrayAttr:$start,
                   DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$step);
  let results = (outs Lpc_Tensor:$result);
  let assemblyFormat = [{
    $input `start` `=` $start `limit` `=` $limit `step` `=` $step attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def Lpc_ConcatOp : Lpc_Op<"concat", [Pure, FollowPrecision,
    InferTypeOpAdaptor]> {
  let summary = "concatenates tensors along an axis";
  let description = [{
    ```mlir
    // %a, %b: tensor<2x3x4xf16>
    %c = lpc.concat %a, %b axis = 1 : tensor<2x3x4xf16>, tensor<2x3x4xf16>
        -> tensor<2x6x4xf16>
    ```
  }];
  let arguments = (ins Variadic<Lpc_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Lpc_Tensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasFolder = 1;
}

def Lpc_EmbeddingOp : Lpc_Op<"embedding", [Pure, FollowPrecision,
    InferTypeOpAdaptor]> {
  let summary = "embedding lookup (gather rows of a [V, D] table)";
  let description = [{
    Result shape is `indices.shape ++ [D]`. Out-of-range ids are an error at
    run time.

    ```mlir
    // %wte: tensor<256x64xf32>, %ids: tensor<8x32xi32>
    %h = lpc.embedding %wte, %ids : tensor<256x64xf32>, tensor<8x32xi32>
        -> tensor<8x32x64xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$table, Lpc_IntTensor:$indices);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` type($table) `,` type($indices)
    `->` type($result)
  }];
}

def Lpc_CausalMaskOp : Lpc_Op<"causal_mask", [Pure, FollowPrecision,
    SameOperandsAndResultType]> {
  let summary = "fills attention scores above the diagonal";
  let description = [{
    On the last two dims `[..., Q, K]` (Q <= K), entry (i, j) becomes `fill`
    (default -inf) when `j > i + (K - Q)`: a query sees itself and the past.

    ```mlir
    // %scores: tensor<2x8x8xf32>
    %masked = lpc.causal_mask %scores : tensor<2x8x8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "-std::numeric_limits<double>::infinity()">:$fill);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Lpc_WhereOp : Lpc_Op<"where", [Pure, FollowPrecision,
    AllTypesMatch<["on_true", "on_false", "result"]>]> {
  let summary = "elementwise select: cond ? on_true : on_false";
  let description = [{
    ```mlir
    // %c: tensor<4x8xi1>, %a, %b: tensor<4x8xf32>
    %y = lpc.where %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_BoolTensor:$cond, Lpc_Tensor:$on_true,
                   Lpc_Tensor:$on_false);
  let results = (outs Lpc_Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,`
    type($result)
  }];
  let hasVerifier = 1;
}

def Lpc_DropoutOp : Lpc_Op<"dropout", [Pure, FollowPrecision,
    SameOperandsAndResultType]> {
  let summary = "inverted dropout with a seeded counter-based RNG";
  let description = [{
    Zeroes each element with probability `rate` and scales the rest by
    `1 / (1 - rate)`. The mask is a pure function of (`seed`, step, element
    index), so recomputation in the backward pass sees the same mask.

    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.dropout %x {rate = 0.1 : f64, seed = 42 : i64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input, F64Attr:$rate, I64Attr:$seed);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Lpc_SoftmaxCrossEntropyOp : Lpc_Op<"softmax_cross_entropy", [Pure,
    KeepFP32Precision]> {
  let summary = "fused, numerically stable softmax cross-entropy";
  let description = [{
    `logits` is `[..., C]`, `labels` the integer class ids `[...]`. The
    result is a 0-d f32 tensor: the mean (or sum) over all positions of
    `logsumexp(logits) - logits[label]`. Positions whose label equals
    `ignore_index` do not count.

    ```mlir
    // %logits: tensor<2x8x50xbf16>, %labels: tensor<2x8xi64>
    %loss = lpc.softmax_cross_entropy %logits, %labels {ignore_index = -100 : i64}
        : tensor<2x8x50xbf16>, tensor<2x8xi64>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$logits, Lpc_IntTensor:$labels,
      DefaultValuedAttr<Lpc_LossReductionAttr,
                        "::mlir::lpc::LossReduction::mean">:$reduction,
      OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Lpc_F32Scalar:$loss);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels)
  }];
  let hasVerifier = 1;
}

def Lpc_MseLossOp : Lpc_Op<"mse_loss", [Pure, KeepFP32Precision,
    AllTypesMatch<["prediction", "target"]>]> {
  let summary = "mean (or summed) squared error";
  let description = [{
    ```mlir
    // %pred, %target: tensor<16x1xf32>
    %loss = lpc.mse_loss %pred, %target : tensor<16x1xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$prediction, Lpc_FloatTensor:$target,
      DefaultValuedAttr<Lpc_LossReductionAttr,
                        "::mlir::lpc::LossReduction::mean">:$reduction);
  let results = (outs Lpc_F32Scalar:$loss);
  let assemblyFormat = [{
    $prediction `,` $target attr-dict `:` type($prediction)
  }];
}

def Lpc_GradSeedOp : Lpc_Op<"grad_seed", [Pure, FixedPrecision]> {
  let summary = "the backward pass's seed: d(loss)/d(loss) = 1";
  let description = [{
    A scalar 1.0 that starts reverse-mode differentiation (lpc-autodiff).
    It is an op of its own rather than an `lpc.constant`, so that constant
    folding never merges it with another 1.0 (a learning rate of 1, say):
    lpc-loss-scaling scales exactly its uses, and the precision passes find
    the gradients as the values computed from it.

    ```mlir
    %seed = lpc.grad_seed : tensor<f32>
    ```
  }];
  let results = (outs Lpc_F32Scalar:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Backward ops (emitted by lpc-autodiff)
//
// Fused vector-Jacobian products of the ops whose gradient is not a short
// expression of forward ops. Each takes the incoming gradient `grad` first
// and returns the gradient(s) w.r.t. the forward op's operand(s). They have
// the precision class of their forward op.
//===----------------------------------------------------------------------===//

class Lpc_ActivationGradOp<string mnemonic, string fwd, string from,
                           list<Trait> traits = []>
    : Lpc_Op<mnemonic, !listconcat(traits, [Pure, FollowPrecision,
        SameOperandsAndResultType])> {
  let summary = "gradient of lpc." # fwd # " given its " # from;
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $" # from # " attr-dict `:` type($result)";
}

def Lpc_ReluGradOp : Lpc_ActivationGradOp<"relu_grad", "relu", "input"> {
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_FloatTensor:$input);
  let description = [{
    `grad * (input > 0)`.

    ```mlir
    // %g, %x: tensor<4x8xf32>
    %dx = lpc.relu_grad %g, %x : tensor<4x8xf32>
    ```
  }];
}
def Lpc_GeluGradOp : Lpc_ActivationGradOp<"gelu_grad", "gelu", "input"> {
  let description = [{
    ```mlir
    // %g, %x: tensor<4x8xf32>
    %dx = lpc.gelu_grad %g, %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_FloatTensor:$input,
      DefaultValuedAttr<Lpc_GeluApproximationAttr,
                        "::mlir::lpc::GeluApproximation::erf">:$approximation);
}
def Lpc_SiluGradOp : Lpc_ActivationGradOp<"silu_grad", "silu", "input"> {
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_FloatTensor:$input);
  let description = [{
    `grad * s * (1 + x * (1 - s))` with `s = sigmoid(x)`.

    ```mlir
    // %g, %x: tensor<4x8xf32>
    %dx = lpc.silu_grad %g, %x : tensor<4x8xf32>
    ```
  }];
}
def Lpc_TanhGradOp : Lpc_ActivationGradOp<"tanh_grad", "tanh", "output"> {
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_FloatTensor:$output);
  let description = [{
    `grad * (1 - y^2)` with the forward output `y`.

    ```mlir
    // %g, %y: tensor<4x8xf32>
    %dx = lpc.tanh_grad %g, %y : tensor<4x8xf32>
    ```
  }];
}
def Lpc_SigmoidGradOp
    : Lpc_ActivationGradOp<"sigmoid_grad", "sigmoid", "output"> {
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_FloatTensor:$output);
  let description = [{
    `grad * y * (1 - y)` with the forward output `y`.

    ```mlir
    // %g, %y: tensor<4x8xf32>
    %dx = lpc.sigmoid_grad %g, %y : tensor<4x8xf32>
    ```
  }];
}

class Lpc_SoftmaxGradLikeOp<string mnemonic, string fwd>
    : Lpc_Op<mnemonic, [Pure, KeepFP32Precision, SameOperandsAndResultType]> {
  let summary = "gradient of lpc." # fwd # " given its output";
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_FloatTensor:$output,
                   DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($result)";
  let hasVerifier = 1;
}
def Lpc_SoftmaxGradOp : Lpc_SoftmaxGradLikeOp<"softmax_grad", "softmax"> {
  let description = [{
    `y * (g - sum(g * y, axis))`.

    ```mlir
    // %g, %y: tensor<4x8xf32>
    %dx = lpc.softmax_grad %g, %y : tensor<4x8xf32>
    ```
  }];
}
def Lpc_LogSoftmaxGradOp
    : Lpc_SoftmaxGradLikeOp<"log_softmax_grad", "log_softmax"> {
  let description = [{
    `g - exp(y) * sum(g, axis)`.

    ```mlir
    // %g, %y: tensor<4x8xf32>
    %dx = lpc.log_softmax_grad %g, %y : tensor<4x8xf32>
    ```
  }];
}

def Lpc_LayerNormGradOp : Lpc_Op<"layernorm_grad", [Pure, KeepFP32Precision,
    AllTypesMatch<["grad", "input", "grad_input"]>,
    AllTypesMatch<["gamma", "grad_gamma", "grad_beta"]>]> {
  let summary = "gradients of lpc.layernorm w.r.t. input, gamma and beta";
  let description = [{
    Recomputes mean and variance from `input`.

    ```mlir
    // %g, %x: tensor<2x4x8xf32>, %gamma: tensor<8xf32>
    %dx, %dgamma, %dbeta = lpc.layernorm_grad %g, %x, %gamma
        : tensor<2x4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_FloatTensor:$input,
                   Lpc_FloatTensor:$gamma,
                   DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs Lpc_FloatTensor:$grad_input,
                      Lpc_FloatTensor:$grad_gamma, Lpc_FloatTensor:$grad_beta);
  let assemblyFormat = [{
    $grad `,` $input `,` $gamma attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def Lpc_RmsNormGradOp : Lpc_Op<"rmsnorm_grad", [Pure, KeepFP32Precision,
    AllTypesMatch<["grad", "input", "grad_input"]>,
    AllTypesMatch<["gamma", "grad_gamma"]>]> {
  let summary = "gradients of lpc.rmsnorm w.r.t. input and gamma";
  let description = [{
    ```mlir
    // %g, %x: tensor<2x4x8xf32>, %gamma: tensor<8xf32>
    %dx, %dgamma = lpc.rmsnorm_grad %g, %x, %gamma : tensor<2x4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_FloatTensor:$input,
                   Lpc_FloatTensor:$gamma,
                   DefaultValuedAttr<F64Attr, "1e-6">:$epsilon);
  let results = (outs Lpc_FloatTensor:$grad_input,
                      Lpc_FloatTensor:$grad_gamma);
  let assemblyFormat = [{
    $grad `,` $input `,` $gamma attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def Lpc_SoftmaxCrossEntropyGradOp : Lpc_Op<"softmax_cross_entropy_grad", [
    Pure, KeepFP32Precision, AllTypesMatch<["logits", "result"]>]> {
  let summary = "gradient of lpc.softmax_cross_entropy w.r.t. the logits";
  let description = [{
    `grad * (softmax(logits) - onehot(labels)) / n` (n = counted positions
    for `mean`, 1 for `sum`); ignored positions get 0.

    ```mlir
    // %g: tensor<f32>, %logits: tensor<16x10xf32>, %labels: tensor<16xi32>
    %dlogits = lpc.softmax_cross_entropy_grad %g, %logits, %labels
        : tensor<16x10xf32>, tensor<16xi32>
    ```
  }];
  let arguments = (ins Lpc_F32Scalar:$grad, Lpc_FloatTensor:$logits,
      Lpc_IntTensor:$labels,
      DefaultValuedAttr<Lpc_LossReductionAttr,
                        "::mlir::lpc::LossReduction::mean">:$reduction,
      OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $labels attr-dict `:` type($logits) `,`
    type($labels)
  }];
  let hasVerifier = 1;
}

def Lpc_MseLossGradOp : Lpc_Op<"mse_loss_grad", [Pure, KeepFP32Precision,
    AllTypesMatch<["prediction", "target", "result"]>]> {
  let summary = "gradient of lpc.mse_loss w.r.t. the prediction";
  let description = [{
    `grad * 2 (prediction - target) / n` (n = 1 for sum).

    ```mlir
    // %g: tensor<f32>, %pred, %target: tensor<16x1xf32>
    %dpred = lpc.mse_loss_grad %g, %pred, %target : tensor<16x1xf32>
    ```
  }];
  let arguments = (ins Lpc_F32Scalar:$grad, Lpc_FloatTensor:$prediction,
      Lpc_FloatTensor:$target,
      DefaultValuedAttr<Lpc_LossReductionAttr,
                        "::mlir::lpc::LossReduction::mean">:$reduction);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $prediction `,` $target attr-dict `:` type($prediction)
  }];
}

def Lpc_EmbeddingGradOp : Lpc_Op<"embedding_grad", [Pure, FollowPrecision]> {
  let summary = "gradient of lpc.embedding w.r.t. the table (scatter-add)";
  let description = [{
    Adds each row of `grad` ([indices..., D]) into row `indices[...]` of a
    zero [V, D] table; repeated ids accumulate.

    ```mlir
    // %g: tensor<8x32x64xf32>, %ids: tensor<8x32xi32>
    %dwte = lpc.embedding_grad %g, %ids : tensor<8x32x64xf32>, tensor<8x32xi32>
        -> tensor<256x64xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_IntTensor:$indices);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $indices attr-dict `:` type($grad) `,` type($indices) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Lpc_ReduceMaxGradOp : Lpc_Op<"reduce_max_grad", [Pure, FollowPrecision,
    AllTypesMatch<["input", "result"]>, AllTypesMatch<["grad", "output"]>]> {
  let summary = "gradient of lpc.reduce_max w.r.t. its input";
  let description = [{
    Routes `grad` to the positions equal to the maximum (`output`); ties
    share it evenly, as PyTorch's amax does.

    ```mlir
    // %g, %m: tensor<4xf32>, %x: tensor<4x8xf32>
    %dx = lpc.reduce_max_grad %g, %x, %m {axes = array<i64: 1>} : tensor<4xf32>, tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_FloatTensor:$input,
                   Lpc_FloatTensor:$output, DenseI64ArrayAttr:$axes,
                   UnitAttr:$keepdims);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input `,` $output attr-dict `:` type($grad) `,` type($input)
  }];
  let hasVerifier = 1;
}

def Lpc_SliceGradOp : Lpc_Op<"slice_grad", [Pure, FollowPrecision]> {
  let summary = "gradient of lpc.slice: scatters into zeros of the input shape";
  let description = [{
    ```mlir
    // %g: tensor<4x8xf32>
    %dx = lpc.slice_grad %g start = [0, 0] limit = [4, 15] step = [1, 2]
        : tensor<4x8xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$grad, DenseI64ArrayAttr:$start,
                   DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$step);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `start` `=` $start `limit` `=` $limit `step` `=` $step attr-dict
    `:` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Precision ops (inserted by the precision passes)
//===----------------------------------------------------------------------===//

def Lpc_CastOp : Lpc_Op<"cast", [Pure, FixedPrecision]> {
  let summary = "converts between float formats (round to nearest even)";
  let description = [{
    Values out of range become inf (or NaN for f8E4M3FN, which has no inf);
    with `saturate` (fp8 results only) they, and +-inf, clamp to the largest
    finite value (PTX `cvt.rn.satfinite`). NaN stays NaN.

    ```mlir
    // %x: tensor<4x8xf32>
    %h = lpc.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
    %q = lpc.cast %x {saturate} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input, UnitAttr:$saturate);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Lpc_QuantizeOp : Lpc_Op<"quantize", [Pure, FixedPrecision]> {
  let summary = "FP8 quantization: sat(f32(x * scale))";
  let description = [{
    The product is rounded to f32, then to the fp8 format with saturation
    (overflow and +-inf become +-max, NaN stays NaN).

    ```mlir
    // %x: tensor<4x8xbf16>, %scale: tensor<f32>
    %q = lpc.quantize %x, %scale : tensor<4x8xbf16> to tensor<4x8xf8E4M3FN>
    ```
  }];
  let arguments = (ins Lpc_WideFloatTensor:$input, Lpc_F32Scalar:$scale);
  let results = (outs Lpc_FP8Tensor:$result);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` type($input) `to` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Lpc_DequantizeOp : Lpc_Op<"dequantize", [Pure, FixedPrecision]> {
  let summary = "FP8 dequantization: q * scale_inv";
  let description = [{
    ```mlir
    // %q: tensor<4x8xf8E4M3FN>, %scale_inv: tensor<f32>
    %x = lpc.dequantize %q, %scale_inv : tensor<4x8xf8E4M3FN> to tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_FP8Tensor:$input, Lpc_F32Scalar:$scale_inv);
  let results = (outs Lpc_WideFloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale_inv attr-dict `:` type($input) `to` type($result)
  }];
  let hasVerifier = 1;
}

def Lpc_AmaxOp : Lpc_Op<"amax", [Pure, FixedPrecision]> {
  let summary = "max |x| over the whole tensor, as a 0-d f32 tensor";
  let description = [{
    NaN in the input gives NaN.

    ```mlir
    // %x: tensor<4x8xbf16>
    %a = lpc.amax %x : tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input);
  let results = (outs Lpc_F32Scalar:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Lpc_FP8StatsOp : Lpc_Op<"fp8_stats", [Pure, FixedPrecision]> {
  let summary = "fractions of a tensor that saturate / underflow in FP8";
  let description = [{
    For the quantization `lpc.quantize %input, %scale` to `format`, with
    v = f32(x * scale): `saturated` is the fraction of elements with
    |v| > the format's max (they become +-max), `underflow` the fraction of
    non-zero x that round to zero (|v| <= half the smallest subnormal).
    NaN counts as neither. Both are 0-d f32, over all elements.

    ```mlir
    // %x: tensor<4x8xbf16>, %scale: tensor<f32>
    %saturated, %underflow = lpc.fp8_stats %x, %scale
        {format = #lpc.precision<fp8_e4m3>} : tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Lpc_WideFloatTensor:$input, Lpc_F32Scalar:$scale,
                   Lpc_PrecisionAttr:$format);
  let results = (outs Lpc_F32Scalar:$saturated, Lpc_F32Scalar:$underflow);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Lpc_ScaledMatmulOp : Lpc_Op<"scaled_matmul", [Pure, FixedPrecision]> {
  let summary = "FP8 GEMM: (lhs * lhs_scale_inv) x (rhs * rhs_scale_inv)";
  let description = [{
    Operands are FP8 (E4M3 x E4M3, E4M3 x E5M2 or E5M2 x E4M3; never
    E5M2 x E5M2), shapes as in `lpc.matmul`. Products accumulate in
    `acc_type` (f32); `fast_accum` allows the tensor cores' faster, less
    precise accumulation (fprop), without it partial sums are promoted to
    FP32 (dgrad, wgrad). The optional `bias` (rank 1, last dim) is added
    in the epilogue. The result is f32, bf16 or f16.

    ```mlir
    // %a: tensor<4x8xf8E4M3FN>, %bt: tensor<16x8xf8E4M3FN>, %sa, %sb: tensor<f32>,
    // %bias: tensor<16xbf16>
    %y = lpc.scaled_matmul %a, %bt scales(%sa, %sb) bias(%bias : tensor<16xbf16>)
        {fast_accum, transpose_b, role = #lpc.role<fprop>}
        : tensor<4x8xf8E4M3FN>, tensor<16x8xf8E4M3FN> -> tensor<4x16xbf16>
    ```
  }];
  let arguments = (ins Lpc_FP8Tensor:$lhs, Lpc_FP8Tensor:$rhs,
                   Lpc_F32Scalar:$lhs_scale_inv, Lpc_F32Scalar:$rhs_scale_inv,
                   Optional<Lpc_WideFloatTensor>:$bias,
                   UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                   UnitAttr:$fast_accum,
                   DefaultValuedAttr<TypeAttr, "$_builder.getF32Type()">:$acc_type,
                   OptionalAttr<Lpc_GemmRoleAttr>:$role);
  let results = (outs Lpc_WideFloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `scales` `(` $lhs_scale_inv `,` $rhs_scale_inv `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Lpc_LossScaleOp : Lpc_Op<"loss_scale", [Pure, FixedPrecision,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "multiplies the loss (or its gradient seed) by the loss scale";
  let description = [{
    ```mlir
    // %seed, %scale: tensor<f32>
    %scaled = lpc.loss_scale %seed, %scale : tensor<f32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input, Lpc_F32Scalar:$scale);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale attr-dict `:` type($input)";
}

def Lpc_UnscaleOp : Lpc_Op<"unscale", [Pure, FixedPrecision,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "multiplies a gradient by 1/scale (as GradScaler does)";
  let description = [{
    ```mlir
    // %g: tensor<4x8xf32>, %scale: tensor<f32>
    %g1 = lpc.unscale %g, %scale : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input, Lpc_F32Scalar:$scale);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale attr-dict `:` type($input)";
}

def Lpc_AllFiniteOp : Lpc_Op<"all_finite", [Pure, FixedPrecision,
    InferTypeOpAdaptor]> {
  let summary = "true when no element of any input is inf or NaN";
  let description = [{
    ```mlir
    // %gw: tensor<4x8xf32>, %gb: tensor<8xf32>
    %ok = lpc.all_finite %gw, %gb : tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Variadic<Lpc_FloatTensor>:$inputs);
  let results = (outs 0DTensorOf<[I1]>:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

def Lpc_AmaxHistoryPushOp : Lpc_Op<"amax_history_push", [Pure,
    FixedPrecision, AllTypesMatch<["history", "new_history"]>]> {
  let summary = "records this step's amax in an FP8 amax history";
  let description = [{
    `history` holds the amaxes of the last L steps, most recent first.
    `new_history = [amax, history[0], ..., history[L-2]]`, and `scale_amax`
    is `max(new_history)` (`max`) or `amax` (`most_recent`): the window of
    L amaxes including this step's, as Transformer Engine's delayed scaling
    (its ring buffer holds the same values in another order). NaN
    propagates.

    ```mlir
    // %history: tensor<16xf32>, %amax: tensor<f32>
    %history1, %scale_amax = lpc.amax_history_push %history, %amax
        {algo = #lpc.amax_algo<max>} : tensor<16xf32>
    ```
  }];
  let arguments = (ins 1DTensorOf<[F32]>:$history, Lpc_F32Scalar:$amax,
      DefaultValuedAttr<Lpc_AmaxComputeAlgoAttr,
                        "::mlir::lpc::AmaxComputeAlgo::max">:$algo);
  let results = (outs 1DTensorOf<[F32]>:$new_history,
                      Lpc_F32Scalar:$scale_amax);
  let assemblyFormat = "$history `,` $amax attr-dict `:` type($history)";
}

def Lpc_FP8ComputeScaleOp : Lpc_Op<"fp8_compute_scale", [Pure,
    FixedPrecision]> {
  let summary = "FP8 scaling factor from an amax (Transformer Engine formula)";
  let description = [{
    When `(step + 1) % interval == 0` (step = finished updates before this
    one): `s = (fp8_max / amax) / 2^margin` in f32, where fp8_max is 448
    (E4M3) or 57344 (E5M2); if `amax` is 0 or not finite the previous
    `scale` is kept; an infinite `s` becomes FLT_MAX. Otherwise `scale`.

    ```mlir
    // %amax, %scale: tensor<f32>, %step: tensor<i64>
    %scale1 = lpc.fp8_compute_scale %amax, %scale, %step
        {format = #lpc.precision<fp8_e4m3>, margin = 0 : i64, interval = 1 : i64} : tensor<i64>
    ```
  }];
  let arguments = (ins Lpc_F32Scalar:$amax, Lpc_F32Scalar:$scale,
                   0DTensorOf<[I32, I64]>:$step, Lpc_PrecisionAttr:$format,
                   DefaultValuedAttr<I64Attr, "0">:$margin,
                   DefaultValuedAttr<I64Attr, "1">:$interval);
  let results = (outs Lpc_F32Scalar:$new_scale);
  let assemblyFormat = [{
    $amax `,` $scale `,` $step attr-dict `:` type($step)
  }];
  let hasVerifier = 1;
}

def Lpc_LossScaleUpdateOp : Lpc_Op<"loss_scale_update", [Pure,
    FixedPrecision, AllTypesMatch<["growth_tracker", "new_growth_tracker"]>]> {
  let summary = "dynamic loss-scale update (PyTorch GradScaler semantics)";
  let description = [{
    If not `finite`: `scale *= backoff_factor`, tracker = 0. Else tracker
    + 1; when it reaches `growth_interval`, `scale *= growth_factor` (only
    if the product is finite) and tracker = 0. As
    `torch._amp_update_scale_`.

    ```mlir
    // %scale: tensor<f32>, %tracker: tensor<i64>, %finite: tensor<i1>
    %scale1, %tracker1 = lpc.loss_scale_update %scale, %tracker, %finite
        {growth_interval = 2000 : i64} : tensor<i64>
    ```
  }];
  let arguments = (ins Lpc_F32Scalar:$scale,
                   0DTensorOf<[I32, I64]>:$growth_tracker,
                   Lpc_BoolScalar:$finite,
                   DefaultValuedAttr<F64Attr, "2.0">:$growth_factor,
                   DefaultValuedAttr<F64Attr, "0.5">:$backoff_factor,
                   DefaultValuedAttr<I64Attr, "2000">:$growth_interval);
  let results = (outs Lpc_F32Scalar:$new_scale,
                      0DTensorOf<[I32, I64]>:$new_growth_tracker);
  let assemblyFormat = [{
    $scale `,` $growth_tracker `,` $finite attr-dict `:` type($growth_tracker)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

def Lpc_SgdOp : Lpc_Op<"sgd", [Pure, FixedPrecision,
    AllTypesMatch<["param", "grad", "momentum_buffer", "new_param",
                   "new_momentum_buffer"]>]> {
  let summary = "SGD update with momentum (PyTorch semantics)";
  let description = [{
    `g = grad + weight_decay * p; buf = momentum * buf + (1 - dampening) * g;
    g = nesterov ? g + momentum * buf : buf; p = p - lr * g`. With
    `momentum = 0` the buffer passes through unchanged. The buffer starts
    at zero, so the first step matches PyTorch (which starts it at `g`)
    when dampening is 0, lpc-autodiff's setting.

    ```mlir
    // %p, %g, %buf: tensor<4x8xf32>, %lr: tensor<f32>
    %p1, %buf1 = lpc.sgd %p, %g, %buf lr(%lr) {momentum = 0.9 : f64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_F32Tensor:$param, Lpc_F32Tensor:$grad,
                   Lpc_F32Tensor:$momentum_buffer, Lpc_F32Scalar:$lr,
                   DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                   DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   UnitAttr:$nesterov);
  let results = (outs Lpc_F32Tensor:$new_param,
                      Lpc_F32Tensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer `lr` `(` $lr `)` attr-dict
    `:` type($param)
  }];
  let hasVerifier = 1;
}

def Lpc_AdamWOp : Lpc_Op<"adamw", [Pure, FixedPrecision,
    AllTypesMatch<["param", "grad", "exp_avg", "exp_avg_sq", "new_param",
                   "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "AdamW update: bias correction, decoupled weight decay";
  let description = [{
    PyTorch's AdamW with step `t` (the step count after this update, >= 1):
    `p = p * (1 - lr * wd); m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
    p = p - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)`.

    ```mlir
    // %p, %g, %m, %v: tensor<4x8xf32>, %step: tensor<i64>, %lr: tensor<f32>
    %p1, %m1, %v1 = lpc.adamw %p, %g, %m, %v step(%step : tensor<i64>) lr(%lr)
        {weight_decay = 0.1 : f64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_F32Tensor:$param, Lpc_F32Tensor:$grad,
                   Lpc_F32Tensor:$exp_avg, Lpc_F32Tensor:$exp_avg_sq,
                   Lpc_StepScalar:$step, Lpc_F32Scalar:$lr,
                   DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                   DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                   DefaultValuedAttr<F64Attr, "1e-8">:$eps,
                   DefaultValuedAttr<F64Attr, "0.01">:$weight_decay);
  let results = (outs Lpc_F32Tensor:$new_param, Lpc_F32Tensor:$new_exp_avg,
                      Lpc_F32Tensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `step` `(` $step `:`
    type($step) `)` `lr` `(` $lr `)` attr-dict `:` type($param)
  }];
  let hasVerifier = 1;
}

def Lpc_LrScheduleOp : Lpc_Op<"lr_schedule", [Pure, FixedPrecision]> {
  let summary = "learning rate at a step (0-based count of finished updates)";
  let description = [{
    With `f = step / max(1, warmup_steps)` during warm-up (as Hugging Face's
    schedules: the first update of a warm-up runs with lr 0):
    - `constant`: `base_lr` (times `f` during warm-up);
    - `linear`: warm-up, then linear decay to `min_lr` at `total_steps`;
    - `cosine`: warm-up, then `min_lr + (base_lr - min_lr) * 0.5 *
      (1 + cos(pi * p))` with `p = (step - warmup) / max(1, total - warmup)`
      clamped to [0, 1].

    ```mlir
    // %step: tensor<i64>
    %lr = lpc.lr_schedule %step cosine {base_lr = 1.0e-3 : f64, warmup_steps = 10 : i64,
        total_steps = 100 : i64, min_lr = 1.0e-5 : f64} : tensor<i64>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I32, I64]>:$step,
                   Lpc_LrScheduleKindAttr:$kind, F64Attr:$base_lr,
                   DefaultValuedAttr<I64Attr, "0">:$warmup_steps,
                   DefaultValuedAttr<I64Attr, "0">:$total_steps,
                   DefaultValuedAttr<F64Attr, "0.0">:$min_lr);
  let results = (outs Lpc_F32Scalar:$lr);
  let assemblyFormat = "$step `` $kind attr-dict `:` type($step)";
  let hasVerifier = 1;
}

def Lpc_ClipByGlobalNormOp : Lpc_Op<"clip_by_global_norm", [Pure,
    FixedPrecision, InferTypeOpAdaptor]> {
  let summary = "scales gradients so that their global L2 norm <= max_norm";
  let description = [{
    As torch.nn.utils.clip_grad_norm_: `norm = sqrt(sum_i |g_i|^2)`,
    `g_i *= min(1, max_norm / (norm + 1e-6))`. Also returns the norm
    (before clipping).

    ```mlir
    // %gw: tensor<4x8xf32>, %gb: tensor<8xf32>
    %cw, %cb, %norm = lpc.clip_by_global_norm %gw, %gb {max_norm = 1.0 : f64}
        : tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Variadic<Lpc_F32Tensor>:$grads, F64Attr:$max_norm);
  let results = (outs Variadic<Lpc_F32Tensor>:$clipped, Lpc_F32Scalar:$norm);
  let assemblyFormat = "$grads attr-dict `:` type($grads)";
  let hasVerifier = 1;
}

#endif // LPC_OPS_TD
