//===- LpcAttentionOps.td - fused attention ops ---------------*- tablegen -*-===//
//
// Included by LpcOps.td (one op list, one generated file); verifiers in
// dialects/LpcOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_ATTENTION_OPS_TD
#define LPC_ATTENTION_OPS_TD

def Lpc_AttentionOp : Lpc_Op<"attention", [Pure, AlwaysLowPrecision]> {
  let summary = "fused scaled dot-product attention (flash attention)";
  let description = [{
    `query` is `[batch..., Sq, D]`, `key` `[batch..., Skv, D]`, `value`
    `[batch..., Skv, Dv]` (the same leading dims, e.g. `[B, heads]`). With
    `s_ij = scale * query_i . key_j` (`scale` defaults to `1 / sqrt(D)`),
    plus `mask_ij` when the optional additive f32 `mask [Sq, Skv]` is
    given (0 keeps, -inf removes; shared by every batch and head), and
    `s_ij = -inf` for `j > i + (Skv - Sq)` with `causal` (a query sees
    itself and the past, as `lpc.causal_mask`):

    - `lse_i = log(sum_j exp(s_ij))` (f32, `[batch..., Sq]`; -inf for a row
      that sees no key),
    - `result_i = sum_j exp(s_ij - lse_i) * value_j` (`[batch..., Sq, Dv]`,
      0 for a row that sees no key).

    This is `torch.nn.functional.scaled_dot_product_attention` without
    dropout. The reference computes in double and rounds `result` to its
    type once; compiled code accumulates and normalizes in f32 (on the CPU a
    tiled online softmax that never forms the `Sq x Skv` scores, on the GPU
    cuDNN's fused flash attention), so it agrees within a rounding of the
    result type; with bf16 operands the probabilities are also rounded to
    bf16 before they multiply `value` (and, in the gradient, the score
    gradients before they multiply `query` and `key`), as cuDNN,
    FlashAttention-2 and lpc's unfused bf16 attention do: each term of those
    sums within 2^-8 of itself. `lse` is what the backward (`lpc.attention_grad`) needs to
    recompute the probabilities: nothing of size `Sq x Skv` is saved.

    Precision class: always low (like a GEMM): `query`, `key`, `value` and
    `result` take the policy's low type (bf16 in the fp8 policy: attention
    does not run in FP8), `mask` and `lse` stay f32.

    ```mlir
    // %q, %k, %v: tensor<2x4x16x8xf32>
    %o, %lse = lpc.attention %q, %k, %v {causal}
        : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
          -> tensor<2x4x16x8xf32>, tensor<2x4x16xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$query, Lpc_FloatTensor:$key,
                   Lpc_FloatTensor:$value, Optional<Lpc_F32Tensor>:$mask,
                   UnitAttr:$causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs Lpc_FloatTensor:$result, Lpc_F32Tensor:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? attr-dict `:` type($query)
    `,` type($key) `,` type($value) (`,` type($mask)^)? `->` type($result)
    `,` type($lse)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `scale`, or 1 / sqrt(D) when absent.
    double getScaleValue();
  }];
}

def Lpc_AttentionGradOp : Lpc_Op<"attention_grad", [Pure,
    AlwaysLowPrecision, AllTypesMatch<["query", "grad_query"]>,
    AllTypesMatch<["key", "grad_key"]>, AllTypesMatch<["value", "grad_value"]>]> {
  let summary = "gradients of lpc.attention w.r.t. query, key and value";
  let description = [{
    `grad` is the gradient of the attention's `result`; `result` and `lse`
    are the forward's. The probabilities are recomputed from `query`, `key`
    and `lse` (`p_ij = exp(s_ij - lse_i)`); with `D_i = grad_i . result_i`
    and `ds_ij = p_ij (grad_i . value_j - D_i)`: `grad_value_j = sum_i p_ij
    grad_i`, `grad_query_i = scale * sum_j ds_ij key_j`, `grad_key_j =
    scale * sum_i ds_ij query_i`. `causal`, `scale` and `mask` are the
    forward's. Same precision class and types as `lpc.attention`.

    ```mlir
    // %g, %q, %k, %v, %o: tensor<2x4x16x8xf32>, %lse: tensor<2x4x16xf32>
    %dq, %dk, %dv = lpc.attention_grad %g, %q, %k, %v, %o, %lse {causal}
        : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
          tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$grad, Lpc_FloatTensor:$query,
                   Lpc_FloatTensor:$key, Lpc_FloatTensor:$value,
                   Lpc_FloatTensor:$result, Lpc_F32Tensor:$lse,
                   Optional<Lpc_F32Tensor>:$mask, UnitAttr:$causal,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs Lpc_FloatTensor:$grad_query, Lpc_FloatTensor:$grad_key,
                      Lpc_FloatTensor:$grad_value);
  let assemblyFormat = [{
    $grad `,` $query `,` $key `,` $value `,` $result `,` $lse
    (`mask` $mask^)? attr-dict `:` type($grad) `,` type($query) `,`
    type($key) `,` type($value) `,` type($result) `,` type($lse)
    (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `scale`, or 1 / sqrt(D) when absent.
    double getScaleValue();
  }];
}

#endif // LPC_ATTENTION_OPS_TD
