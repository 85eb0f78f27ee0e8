//===- LpcGroupedOps.td - grouped (mixture-of-experts) GEMMs -*- tablegen -*-===//
//
// Included by LpcOps.td; verifiers in dialects/LpcGroupedOps.cpp.
//
// A grouped GEMM multiplies each row of its input by the matrix of the group
// the row belongs to: a mixture-of-experts layer's experts, each token
// routed to its own. The group of each row is data (an i32 per row), the
// shapes are not, so a static training graph holds it.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_GROUPED_OPS_TD
#define LPC_GROUPED_OPS_TD

def Lpc_I32Tensor : RankedTensorOf<[I32]>;

def Lpc_GroupedMatmulOp : Lpc_Op<"grouped_matmul", [Pure, AlwaysLowPrecision,
    AllElementTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "rows times the matrix of their group (mixture-of-experts GEMM)";
  let description = [{
    `lhs` is `[R, K]`, `rhs` holds one matrix per group, `[G, K, N]`
    (`[G, N, K]` with `transpose_b`), `groups` is `[R]` i32. Row `r` of the
    result (`[R, N]`) is `lhs[r] x op(rhs[groups[r]])`; a row whose group
    is outside `[0, G)` is 0 (it belongs to no group, as the tail of
    PyTorch's `grouped_mm` beyond its last offset). Products accumulate in
    FP32 as `lpc.matmul`'s.

    `groups` may come in any order: on the CPU each group's rows are
    gathered into one GEMM and its results scattered back (read and written
    in place where a group's rows already follow each other), so a mixture
    of experts needs no sort of its tokens in the graph.

    Precision class: always low (like a GEMM; bf16 in the fp8 policy);
    `groups` is an integer and keeps its type. The gradient w.r.t. `lhs`
    is a grouped GEMM with `rhs` transposed, w.r.t. `rhs`
    `lpc.grouped_matmul_weight_grad`; `groups` has none.

    ```mlir
    // %x: tensor<6x8xf32>, %w: tensor<3x8x5xf32>, %g: tensor<6xi32>
    %y = lpc.grouped_matmul %x, %w, %g
        : tensor<6x8xf32>, tensor<3x8x5xf32>, tensor<6xi32> -> tensor<6x5xf32>
    ```
  }];
  let arguments = (ins Lpc_WideFloatTensor:$lhs, Lpc_WideFloatTensor:$rhs,
                   Lpc_I32Tensor:$groups, UnitAttr:$transpose_b);
  let results = (outs Lpc_WideFloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $groups attr-dict `:` type($lhs) `,` type($rhs) `,`
    type($groups) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Lpc_GroupedMatmulWeightGradOp : Lpc_Op<"grouped_matmul_weight_grad", [
    Pure, AlwaysLowPrecision, AllElementTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "per-group sums of row outer products (a grouped GEMM's weight gradient)";
  let description = [{
    `lhs` is `[R, K]`, `rhs` `[R, N]`, `groups` `[R]` i32; the result is
    `[G, K, N]` (G from its type) with `result[g] = sum over the rows r of
    group g of lhs[r]^T x rhs[r]`: `lhs^T x rhs` of each group's rows. A
    group with no rows gets 0; rows outside `[0, G)` add to none. This is
    the gradient of `lpc.grouped_matmul` w.r.t. its matrices (with `lhs`
    the input and `rhs` the result's gradient; swapped for `transpose_b`).

    ```mlir
    // %x: tensor<6x8xf32>, %dy: tensor<6x5xf32>, %g: tensor<6xi32>
    %dw = lpc.grouped_matmul_weight_grad %x, %dy, %g
        : tensor<6x8xf32>, tensor<6x5xf32>, tensor<6xi32> -> tensor<3x8x5xf32>
    ```
  }];
  let arguments = (ins Lpc_WideFloatTensor:$lhs, Lpc_WideFloatTensor:$rhs,
                   Lpc_I32Tensor:$groups);
  let results = (outs Lpc_WideFloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $groups attr-dict `:` type($lhs) `,` type($rhs) `,`
    type($groups) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // LPC_GROUPED_OPS_TD
