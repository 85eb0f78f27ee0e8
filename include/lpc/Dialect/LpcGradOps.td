//===- LpcGradOps.td - losses and backward ops -------------*- tablegen -*-===//
//
// Included by LpcOps.td (one op list, one generated file); verifiers in
// dialects/LpcOps.cpp, folders in dialects/LpcFolds.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_GRAD_OPS_TD
#define LPC_GRAD_OPS_TD

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
    zero [V, D] table; repeated ids accumulate. Row `padding_idx` (when
    given, from the lpc.embedding) stays zero.

    ```mlir
    // %g: tensor<8x32x64xf32>, %ids: tensor<8x32xi32>
    %dwte = lpc.embedding_grad %g, %ids : tensor<8x32x64xf32>, tensor<8x32xi32>
        -> tensor<256x64xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_IntTensor:$indices,
                   OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$padding_idx);
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

#endif // LPC_GRAD_OPS_TD
