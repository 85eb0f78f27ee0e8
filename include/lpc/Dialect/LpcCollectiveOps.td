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

    `comm_precision` is the precision of the data on the wire. `fp32`
    (every kind) is MPI_Allreduce on floats. `bf16`, `fp16`, `fp8_e4m3` and
    `fp8_e5m2` are for `mean` only, and run as a reduce-scatter then an
    all-gather of the narrow values, with the sum accumulated in f32 in
    rank order (so every rank gets the same bits):

    1. each rank rounds its `input` to the wire format (round to nearest,
       ties to even). FP8 first multiplies by one scale shared by the whole
       tensor (a bucket of gradients, as MS-AMP scales it): the power of
       two `s = 2^floor(log2(fmax / amax))` (at most 2^126), `amax` the
       largest magnitude over every rank's input (one f32 MPI_Allreduce
       with max; `s = 1` when it is 0), `fmax` 448 (E4M3) or 57344 (E5M2),
       the encode saturating; a power of two, so that unscaling is exact;
    2. rank r adds the r-th 1/N of every rank's values in f32, rank 0 first,
       divides by N and rounds that mean to the wire format;
    3. the rounded means are gathered on every rank and widened to f32 (FP8:
       divided by `s`).

    A non-finite element anywhere makes the whole FP8 result NaN (its amax
    is not finite), and a bf16/fp16 one stays non-finite, so the found-inf
    test of dynamic loss scaling that follows still sees it.

    A `bf16` or `f16` `input` is the GPU's form of a narrow
    `comm_precision` (lpc-native-wire-collectives writes it from an f32
    input, between two casts, and NCCL runs it): the values travel and
    reduce in their own type, in the collective library's order, each
    partial result rounded to the type (not the f32 rank-order sums above).
    `comm_precision` must name that type. The CPU runtime takes f32 inputs
    only.

    With one process (a plain `lpc-run`, and the reference evaluator, which
    is one rank) the result is the input for `sum`, `mean` and `max`, and
    the non-finite test of the input for `any_nonfinite`: nothing goes on a
    wire, so nothing is rounded, whatever `comm_precision` says.

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
    // %bucket: tensor<1024xf32> (a bucket of gradients, sent as BF16)
    %b = lpc.all_reduce %bucket mean {comm_precision = #lpc.precision<bf16>}
        : tensor<1024xf32> -> tensor<1024xf32>
    ```
  }];
  let arguments = (ins Lpc_WideFloatTensor:$input, Lpc_AllReduceKindAttr:$kind,
                   DefaultValuedAttr<Lpc_PrecisionAttr,
                                     "::mlir::lpc::Precision::fp32">:$comm_precision);
  let results = (outs Lpc_Tensor:$result);
  let assemblyFormat = [{
    $input `` $kind attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Lpc_ReduceScatterOp
    : Lpc_Op<"reduce_scatter", [Pure, KeepFP32Precision]> {
  let summary = "reduces an f32 tensor over the ranks and keeps this rank's "
                "block of rows";
  let description = [{
    The first half of an all-reduce, the gradient step of ZeRO-1 optimizer
    sharding. The step is built for `ranks` ranks (N): dimension 0 of
    `input` is N times that of `result`, and the run must have exactly N
    ranks (the runtime stops one that has another count, naming both).
    Every rank passes its own `input`; rank r gets rows `[r K, (r+1) K)`
    (K = the result's dimension 0) of the element-wise `sum`, `mean` (sum
    divided by N) or `max` over ranks.

    The sums are taken in rank order (rank 0 first) in f32, so a run gives
    the same bits every time; in fp32 with two ranks they are the bits of
    `lpc.all_reduce`'s rows.

    `comm_precision` is the format on the wire: `fp32` for every kind;
    `bf16`, `fp16`, `fp8_e4m3` or `fp8_e5m2` for `mean` only, as in
    `lpc.all_reduce`: each rank rounds its input to the format (FP8 after
    multiplying by the power of two `s = 2^floor(log2(fmax / amax))`, at
    most 2^126, from the largest magnitude over every rank's whole input;
    `s = 1` when that is 0), rank r adds its block of every rank's rounded
    values in f32 in rank order, divides by N and by `s` (exact: a power of
    two). The result stays on the rank, so the mean is not rounded again. A
    non-finite element anywhere makes the whole FP8 result NaN; in bf16 and
    fp16 it stays non-finite.

    A `bf16` or `f16` `input` is the GPU's form of a narrow
    `comm_precision` (lpc-native-wire-collectives writes it from an f32
    input, between two casts, and NCCL runs it): the values travel and
    reduce in their own type, in the collective library's order, each
    partial result rounded to the type (not the f32 rank-order sums above).
    `comm_precision` must name that type. The CPU runtime takes f32 inputs
    only.

    With `ranks = 1` (one process; the reference evaluator is one rank)
    the result is the input: nothing goes on a wire, so nothing is rounded.
    The reference evaluator refuses `ranks > 1`.

    Precision class: keeps FP32. No gradient rule: collectives belong after
    the backward.

    ```mlir
    // %bucket: tensor<1024xf32>, a bucket of gradients on each of 4 ranks
    %mine = lpc.reduce_scatter %bucket mean ranks(4)
        {comm_precision = #lpc.precision<bf16>}
        : tensor<1024xf32> -> tensor<256xf32>
    ```
  }];
  let arguments = (ins Lpc_WideFloatTensor:$input, Lpc_AllReduceKindAttr:$kind,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ranks,
                   DefaultValuedAttr<Lpc_PrecisionAttr,
                                     "::mlir::lpc::Precision::fp32">:$comm_precision);
  let results = (outs Lpc_WideFloatTensor:$result);
  let assemblyFormat = [{
    $input $kind `ranks` `(` $ranks `)` attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Lpc_AllGatherOp : Lpc_Op<"all_gather", [Pure, KeepFP32Precision]> {
  let summary = "concatenates every rank's f32 tensor along dimension 0";
  let description = [{
    The second half of an all-reduce, the parameter step of ZeRO-1
    optimizer sharding. The step is built for `ranks` ranks (N): dimension
    0 of `result` is N times that of `input`, and the run must have exactly
    N ranks. Every rank passes its own `input` (K rows); every rank gets
    the same `result`, whose rows `[r K, (r+1) K)` are rank r's input.

    `comm_precision` is the format on the wire. `fp32` moves the values
    unchanged. `bf16`, `fp16`, `fp8_e4m3` and `fp8_e5m2` round every
    rank's values to the format (round to nearest, ties to even) before
    they travel, this rank's own rows included, so that every rank holds
    the same bits; FP8 first multiplies by one power of two shared by the
    ranks, `s = 2^floor(log2(fmax / amax))` (at most 2^126) from the largest
    magnitude over every rank's input (`s = 1` when that is 0), and divides
    by it after (exactly). A non-finite element anywhere makes the whole
    FP8 result NaN; in bf16 and fp16 it stays non-finite.

    A `bf16`, `f16`, `f8E4M3FN` or `f8E5M2` `input` is the GPU's form of a
    narrow `comm_precision` (lpc-native-wire-collectives writes it): the
    values travel as they are, bytes copied, and `comm_precision` must name
    their type. The CPU runtime moves them the same way.

    With `ranks = 1` the result is the input, unrounded. The reference
    evaluator refuses `ranks > 1`.

    Precision class: keeps FP32. No gradient rule.

    ```mlir
    // %shard: tensor<256xf32>, this rank's quarter of the parameters
    %all = lpc.all_gather %shard ranks(4) : tensor<256xf32> -> tensor<1024xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ranks,
                   DefaultValuedAttr<Lpc_PrecisionAttr,
                                     "::mlir::lpc::Precision::fp32">:$comm_precision);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `ranks` `(` $ranks `)` attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Lpc_AllToAllOp : Lpc_Op<"all_to_all", [Pure, FixedPrecision,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "exchanges blocks of rows between the ranks (the moving "
                "half of a reduce-scatter)";
  let description = [{
    The step is built for `ranks` ranks (N): dimension 0 of `input` is a
    multiple of N, K = dimension 0 / N, and the run must have exactly N
    ranks (the runtime stops one that has another count, naming both).
    Every rank passes its own `input`; on rank r, rows `[j K, (j+1) K)` of
    the result are rows `[r K, (r+1) K)` of rank j's input. Nothing is
    computed: the values travel as they are, in their own type (bytes
    copied).

    It is how the GPU moves an FP8 wire format (lpc-native-wire-collectives
    writes it): each rank sends block r of its scaled FP8 gradients to rank
    r, which adds what it received in f32 in rank order, as the CPU
    runtime's FP8 reduce-scatter does. NCCL has no FP8 sum that accumulates
    in f32, so the sum is the compiled step's and only bytes travel.

    With `ranks = 1` the result is the input. The reference evaluator
    refuses `ranks > 1` (it is one process).

    Precision class: fixed (it moves what it is given). No gradient rule.

    ```mlir
    // %q: tensor<2x512xf8E4M3FN>, this rank's two blocks of FP8 values
    %r = lpc.all_to_all %q ranks(2) : tensor<2x512xf8E4M3FN>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ranks);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `ranks` `(` $ranks `)` attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Lpc_WireScaleOp : Lpc_Op<"wire_scale", [Pure, FixedPrecision]> {
  let summary = "the power-of-two scale of an FP8 wire format from a "
                "bucket's amax";
  let description = [{
    `s = 2^min(floor(log2(fmax / amax)), 126)`, `fmax` 448 (`format` E4M3)
    or 57344 (E5M2): the scale that puts the largest magnitude of a bucket
    of gradients in the format's top binade, as the CPU runtime's FP8 wire
    computes it (see `lpc.all_reduce`); a power of two, so that unscaling is
    exact. `s = 1` when `amax` is 0; NaN when `amax` is NaN or infinite
    (the caller's whole result then turns NaN, which the found-inf test of
    dynamic loss scaling sees). `floor(log2(.))` is exact: taken from the
    exponent of the f32 quotient and corrected by one where its rounding
    crossed a power of two (amax * s is exact).

    lpc-native-wire-collectives writes it, on an amax already reduced with
    max over the ranks, so that every rank scales by the same power of two.

    Precision class: fixed. No gradient rule.

    ```mlir
    // %amax: tensor<f32>, the largest |gradient| over every rank
    %s = lpc.wire_scale %amax {format = #lpc.precision<fp8_e4m3>}
    ```
  }];
  let arguments = (ins Lpc_F32Scalar:$amax, Lpc_PrecisionAttr:$format);
  let results = (outs Lpc_F32Scalar:$scale);
  let assemblyFormat = "$amax attr-dict";
  let hasVerifier = 1;
}

def Lpc_ShardOp : Lpc_Op<"shard", [Pure, KeepFP32Precision]> {
  let summary = "this rank's block of rows of an f32 tensor every rank holds";
  let description = [{
    The parameter side of ZeRO-1 optimizer sharding: every rank holds the
    same parameters and updates only its block of them. The step is built
    for `ranks` ranks (N): dimension 0 of `input` is N times that of
    `result`, and the run must have exactly N ranks (the runtime stops one
    that has another count, naming both). Rank r gets rows `[r K, (r+1) K)`
    (K = the result's dimension 0) of its own `input`: a local copy,
    nothing goes on a wire.

    With `ranks = 1` the result is the input. The reference evaluator
    refuses `ranks > 1` (it is one process).

    Precision class: keeps FP32. No gradient rule.

    ```mlir
    // %flat: tensor<1024xf32>, a parameter's elements on each of 4 ranks
    %mine = lpc.shard %flat ranks(4) : tensor<1024xf32> -> tensor<256xf32>
    ```
  }];
  let arguments = (ins Lpc_F32Tensor:$input,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ranks);
  let results = (outs Lpc_F32Tensor:$result);
  let assemblyFormat = [{
    $input `ranks` `(` $ranks `)` attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

#endif // LPC_COLLECTIVE_OPS_TD
