//===- LpcCollectiveOps.td - collectives across ranks ---------*- tablegen -*-===//
//
// Included by LpcOps.td (one op list, one generated file); verifiers in
// dialects/LpcOps.cpp, the CPU lowering in
// dialects/CollectiveBufferization.cpp, the runtime in runtime/comm.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_COLLECTIVE_OPS_TD
#define LPC_COLLECTIVE_OPS_TD

def Lpc_AllReduceKind : I32EnumAttr<"AllReduceKind",
    "how lpc.all_reduce combines the ranks' values", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>,
    I32EnumAttrCase<"any_nonfinite", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::lpc";
}
def Lpc_AllReduceKindAttr
    : EnumAttr<Lpc_Dialect, Lpc_AllReduceKind, "all_reduce_kind">;

def Lpc_AllReduceOp : Lpc_Op<"all_reduce", [Pure, KeepFP32Precision]> {
  let summary = "combines an f32 tensor over the ranks of a data-parallel run";
  let description = [{
    Every rank of the run (MPI_COMM_WORLD under `mpirun`) passes its own
    `input`; every rank gets the same `result`:

    - `sum`: the element-wise sum over ranks; `mean`: that sum divided by
      the rank count; `max`: the element-wise maximum (same type as
      `input`);
    - `any_nonfinite`: a `tensor<i1>` that is true when any element of any
      rank's `input` is NaN or infinite (the found-inf test of dynamic loss
      scaling, agreed by every rank).

    `comm_precision` is the precision of the data on the wire; only `fp32`
    is implemented (the verifier refuses the others for now), and the
    reduction accumulates in f32.

    With one process (a plain `lpc-run`, and the reference evaluator, which
    is one rank) the result is the input for `sum`, `mean` and `max`, and
    the non-finite test of the input for `any_nonfinite`.

    It is `Pure`: every rank runs the same compiled step, so whatever a pass
    does with it (CSE, dead-code removal, motion) happens on every rank
    alike and the ranks still meet at the same collectives in the same
    order. `lpc-data-parallel` puts it between the backward and the
    optimizer; `lpc-autodiff` has no gradient rule for it.

    Precision class: keeps FP32.

    ```mlir
    // %g: tensor<4x8xf32>
    %m = lpc.all_reduce %g mean : tensor<4x8xf32> -> tensor<4x8xf32>
    %bad = lpc.all_reduce %g any_nonfinite : tensor<4x8xf32> -> tensor<i1>
    ```
  }];
  let arguments = (ins Lpc_F32Tensor:$input, Lpc_AllReduceKindAttr:$kind,
                   DefaultValuedAttr<Lpc_PrecisionAttr,
                                     "::mlir::lpc::Precision::fp32">:$comm_precision);
  let results = (outs Lpc_Tensor:$result);
  let assemblyFormat = [{
    $input `` $kind attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // LPC_COLLECTIVE_OPS_TD
