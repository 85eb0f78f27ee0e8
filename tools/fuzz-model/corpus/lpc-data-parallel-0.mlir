// lpc-data-parallel: every gradient that reaches the optimizer, and the loss
// metric, is averaged over the ranks with lpc.all_reduce (mean): gradients in
// buckets in the chosen communication precision, the loss in fp32.
// One collective per gradient (bucket-mb=0):
// Running it twice changes nothing more.
// Functions that are not train steps (the model, optimizer=none's gradients)
// are left alone.
// Buckets (the default 25 MiB holds both gradients) in bf16, before the clip;
// running it twice changes nothing more.
// The MLP's 6 gradients (the backward defines fc3's first) in buckets of
// 1 MiB: fc3's bias and weight and fc2's bias (45 KB) fill one; fc2's 4 MiB
// weight is one of its own, so is fc1's bias (the next would overflow it),
// then fc1's weight; `fp8` is E4M3.
// The mixed-precision passes keep the reductions and the bucket copies in f32
// (the gradients arrive through casts under bf16); under fp16 the reduced
// gradients are unscaled and checked after the reduction, so every rank
// skips alike.
// The precision report's communication section: each collective's payload
// on the wire against fp32 (FP8 adds the 4-byte amax of its scale).

// Bad options.

func.func @lin() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %t = lpc.input "t" targets : tensor<2x3xf32>
  %w = lpc.param "w" ones : tensor<4x3xf32>
  %b = lpc.param "b" zeros : tensor<3xf32>
  %y = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = lpc.bias_add %y, %b : tensor<2x3xf32>, tensor<3xf32>
  %l = lpc.mse_loss %z, %t : tensor<2x3xf32>
  return %l : tensor<f32>
}

// The model itself: no collective.

// Clipping sees the averaged gradients; the optimizer takes the clipped ones.
