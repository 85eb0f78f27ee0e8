//===- LpcPrecisionOps.td - casts, FP8 and loss scaling ----*- tablegen -*-===//
//
// Included by LpcOps.td (one op list, one generated file); verifiers in
// dialects/LpcOps.cpp, folders in dialects/LpcFolds.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_PRECISION_OPS_TD
#define LPC_PRECISION_OPS_TD

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

#endif // LPC_PRECISION_OPS_TD
