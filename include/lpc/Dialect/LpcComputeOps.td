//===- LpcComputeOps.td - elementwise, norms, reductions, data movement *- tablegen -*-===//
//
// Included by LpcOps.td (one op list, one generated file); verifiers in
// dialects/LpcOps.cpp, folders in dialects/LpcFolds.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_COMPUTE_OPS_TD
#define LPC_COMPUTE_OPS_TD

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
    Also of integer tensors (wrapping).

    ```mlir
    // %x, %y: tensor<4x8xf32>
    %z = lpc.sub %x, %y : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_NumTensor:$lhs, Lpc_NumTensor:$rhs);
  let results = (outs Lpc_NumTensor:$result);
}
def Lpc_MulOp : Lpc_BinaryOp<"mul", [Commutative]> {
  let summary = "elementwise multiplication";
  let description = [{
    Also of integer tensors (wrapping: position ids computed from a
    padding mask).

    ```mlir
    // %x, %y: tensor<4x8xf16>, %i, %j: tensor<4x8xi32>
    %z = lpc.mul %x, %y : tensor<4x8xf16>
    %k = lpc.mul %i, %j : tensor<4x8xi32>
    ```
  }];
  let arguments = (ins Lpc_NumTensor:$lhs, Lpc_NumTensor:$rhs);
  let results = (outs Lpc_NumTensor:$result);
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
def Lpc_Log1pOp : Lpc_UnaryOp<"log1p", [KeepFP32Precision]> {
  let summary = "elementwise log(1 + x), accurate where x is tiny";
  let description = [{
    `log(1 + x)` without rounding `1 + x` first, which loses the low bits
    of a small `x` (softplus: `log1p(exp(x))`, as PyTorch computes it).

    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.log1p %x : tensor<4x8xf32>
    ```
  }];
}

def Lpc_Expm1Op : Lpc_UnaryOp<"expm1", [KeepFP32Precision]> {
  let summary = "elementwise exp(x) - 1, accurate where x is tiny";
  let description = [{
    `exp(x) - 1` without the cancellation of the subtraction near 0 (ELU's
    negative branch, as PyTorch computes it).

    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.expm1 %x : tensor<4x8xf32>
    ```
  }];
}

def Lpc_SinOp : Lpc_UnaryOp<"sin", [KeepFP32Precision]> {
  let summary = "elementwise sine (radians)";
  let description = [{
    Sinusoidal embeddings of a computed value (a diffusion model's timestep,
    rotary angles of computed positions). In f32: an argument of a few
    hundred radians in bf16 would have no digits of its phase left.

    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.sin %x : tensor<4x8xf32>
    ```
  }];
}

def Lpc_CosOp : Lpc_UnaryOp<"cos", [KeepFP32Precision]> {
  let summary = "elementwise cosine (radians)";
  let description = [{
    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.cos %x : tensor<4x8xf32>
    ```
  }];
}

def Lpc_ErfOp : Lpc_UnaryOp<"erf", [KeepFP32Precision]> {
  let summary = "elementwise error function";
  let description = [{
    `2 / sqrt(pi) * integral of exp(-t^2) from 0 to x` (GELU written out
    with erf is one `lpc.gelu` in lpc-import; this is erf used otherwise).

    ```mlir
    // %x: tensor<4x8xf32>
    %y = lpc.erf %x : tensor<4x8xf32>
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

    `padding_idx` (optional, a row of the table) is PyTorch's
    `nn.Embedding(padding_idx=...)`: the lookup is unchanged, but that row
    gets no gradient (`lpc.embedding_grad` leaves it zero), so training
    never moves it.

    ```mlir
    // %wte: tensor<256x64xf32>, %ids: tensor<8x32xi32>
    %h = lpc.embedding %wte, %ids : tensor<256x64xf32>, tensor<8x32xi32>
        -> tensor<8x32x64xf32>
    %p = lpc.embedding %wte, %ids {padding_idx = 0 : i64}
        : tensor<256x64xf32>, tensor<8x32xi32> -> tensor<8x32x64xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$table, Lpc_IntTensor:$indices,
                   OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$padding_idx);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` type($table) `,` type($indices)
    `->` type($result)
  }];
  let hasVerifier = 1;
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

def Lpc_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "how lpc.compare relates its operands", [
    I32EnumAttrCase<"lt", 0>,
    I32EnumAttrCase<"le", 1>,
    I32EnumAttrCase<"gt", 2>,
    I32EnumAttrCase<"ge", 3>,
    I32EnumAttrCase<"eq", 4>,
    I32EnumAttrCase<"ne", 5>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::lpc";
}
def Lpc_ComparePredicateAttr
    : EnumAttr<Lpc_Dialect, Lpc_ComparePredicate, "compare_predicate">;

def Lpc_CompareOp : Lpc_Op<"compare", [Pure, FollowPrecision,
    AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "elementwise comparison: a boolean tensor for lpc.where";
  let description = [{
    `lhs <predicate> rhs` per element, as PyTorch's `lt`/`le`/`gt`/`ge`/
    `eq`/`ne`: floats compare as IEEE values (a NaN operand makes every
    predicate false except `ne`, which it makes true), integers as signed
    values. With `lpc.where` it expresses the piecewise functions the
    PyTorch importer meets (clamp, hardtanh, leaky_relu, elu, softplus,
    maximum/minimum) and masks computed from the inputs.

    The result is a boolean, so it has no gradient: the gradient of a
    piecewise function flows through the `lpc.where` that selects a piece.
    Floats compare in the precision the operands follow (a bf16 tensor
    against a threshold compares in bf16, as PyTorch does).

    ```mlir
    // %x, %zero, %leak: tensor<4x8xf32>
    %pos = lpc.compare gt, %x, %zero : tensor<4x8xf32> -> tensor<4x8xi1>
    %y = lpc.where %pos, %x, %leak : tensor<4x8xi1>, tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_ComparePredicateAttr:$predicate,
                   Lpc_NumTensor:$lhs, Lpc_NumTensor:$rhs);
  let results = (outs Lpc_BoolTensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Lpc_ConvertOp : Lpc_Op<"convert", [Pure, FixedPrecision]> {
  let summary = "converts between integers, booleans and f32";
  let description = [{
    PyTorch's `.float()`, `.int()`, `.long()` and `.bool()` between integer
    and float tensors (lpc.cast converts between float formats): an integer
    becomes the nearest f32 (exact up to 2^24), an f32 becomes an integer
    by truncation toward zero (as PyTorch; the value must fit the integer
    type), a boolean becomes 0 or 1, and a number becomes a boolean by
    `!= 0`; between i32 and i64 the value is kept (i64 to i32 keeps the low
    32 bits). The integer side has no gradient: a value converted to an
    integer is not differentiated through.

    ```mlir
    // %t: tensor<8xi32>, %m: tensor<8x16xi1>
    %tf = lpc.convert %t : tensor<8xi32> to tensor<8xf32>
    %mi = lpc.convert %m : tensor<8x16xi1> to tensor<8x16xi32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, I1, I32, I64]>:$input);
  let results = (outs RankedTensorOf<[F32, I1, I32, I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
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

#endif // LPC_COMPUTE_OPS_TD
