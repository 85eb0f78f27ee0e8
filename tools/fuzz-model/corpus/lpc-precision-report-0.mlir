// --lpc-precision-report: per function, one row per compute op and GEMM
// (role, class, chosen precision, reason), GEMM counts per role and
// precision, FP8 fallbacks, and memory under the chosen precisions against an
// all-FP32 run; a table (or JSON) on stderr or in the `output` file. The IR is
// not changed. Hand-written post-pipeline IR (FP8 and loss-scaler state, a
// bare forward model) is in lpc-precision-report-state.mlir.
//
// The model below: x 32x64, fc1 64->32 (relu), fc2 32->10, cross-entropy.
// Bytes, worked by hand (AdamW train step):
//   parameters      fc1.weight 2048 + fc1.bias 32 + fc2.weight 320 + fc2.bias
//                   10 = 2410 floats = 9640 B, FP32 masters under every policy
//   optimizer state exp_avg + exp_avg_sq = 2 x 9640 = 19280 B
//   checkpoint      19280 + 9640 + the i64 step (8) = 28928 B
//   gradients       fp32: 9640. bf16 / fp8: fc1.weight 4096 (bf16 wgrad) +
//                   fc1.bias 64 (bf16 reduce_sum, relaxed) + fc2.weight 640
//                   (bf16 wgrad) + fc2.bias 40 (fp32: the reduce_sum of the
//                   fp32 cross-entropy gradient) = 4840. fp16: fc1.bias's
//                   reduce_sum is not relaxed: 128 -> 4904
//   largest act.    fc1's 32x32 GEMM output: 2048 (bf16/fp16), 4096 (fp32)
//   saved for bwd   fc1's bias_add 32x32 (relu_grad) + relu 32x32 (fc2 wgrad)
//                   + fc2's bias_add 32x10 (cross-entropy grad) = 2368 values:
//                   4736 B in 16-bit, 9472 B in fp32 (the image feeds fc1's
//                   wgrad but is data, not an activation)

// bf16: the whole table, alignment checked exactly.
// The IR is unchanged: byte-identical to the same pipeline without the report.

// fp8 with fp8-min-mnk=0: fc1's GEMMs run in FP8, the 10-class head falls back.
// With the default fp8-min-mnk (128^3) every GEMM here is too small.
// fp16 and no (all fp32).

// After lpc-insert-casts the types carry the precisions: same totals, casts
// counted. After lpc-fp8-scaling the FP8 GEMMs are lpc.scaled_matmul and
// the FP8 state appears: 3 tensors (image, fc1.weight, fc1's output
// gradient) x (f32 scale + 16-entry f32 history) = 3 x 68 = 204 B.
// fp16 with loss scaling: gradients are seen through lpc.unscale and the
// casts (the same 4904 B); the scaler's state is not in an fp32 run.

// JSON, through the flag and through a pass pipeline, with the same content.

// output=FILE writes the report there and nothing to stderr.
// An output file that cannot be written is an error; an unknown option too.

// The examples, at full size.

// The forward model is reported too (lpc-autodiff keeps it).
// The step counter's add has no assigned precision: its type is shown.









// Rows without a role or a reason have no such key.



// examples/mlp.mlir (784-1024-1024-10, batch 256, AdamW) under fp8: fc1 and
// fc2 in FP8, the 10-class head falls back. Parameters 1863690 floats.

// examples/gpt.mlir (2 layers, d_model 128, tied head, 437760 parameters)
// under bf16: every GEMM in bf16; the attention softmax (16x4x64x64) stays
// fp32 and is the largest activation (1 MiB; the first of the tensors that
// size: the MLP's 16x64x512 in bf16 ties). In fp32 the MLP's 16x64x512 is
// the largest: each column is the largest tensor under its precisions.

module {
  func.func @mlp() -> tensor<f32> {
    %x = lpc.input "image" features : tensor<32x64xf32> loc("image")
    %y = lpc.input "label" labels : tensor<32xi32> loc("label")
    %w1 = lpc.param "fc1.weight" kaiming_uniform : tensor<64x32xf32> loc("fc1")
    %b1 = lpc.param "fc1.bias" zeros : tensor<32xf32> loc("fc1")
    %w2 = lpc.param "fc2.weight" xavier_uniform : tensor<32x10xf32> loc("fc2")
    %b2 = lpc.param "fc2.bias" zeros : tensor<10xf32> loc("fc2")
    %h = lpc.matmul %x, %w1 : tensor<32x64xf32>, tensor<64x32xf32> -> tensor<32x32xf32> loc("fc1")
    %h1 = lpc.bias_add %h, %b1 : tensor<32x32xf32>, tensor<32xf32> loc("fc1")
    %a = lpc.relu %h1 : tensor<32x32xf32> loc("fc1")
    %o = lpc.matmul %a, %w2 : tensor<32x32xf32>, tensor<32x10xf32> -> tensor<32x10xf32> loc("fc2")
    %o1 = lpc.bias_add %o, %b2 : tensor<32x10xf32>, tensor<10xf32> loc("fc2")
    %l = lpc.softmax_cross_entropy %o1, %y : tensor<32x10xf32>, tensor<32xi32> loc("loss")
    return %l : tensor<f32> loc("loss")
  }
}
