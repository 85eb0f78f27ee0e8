// The forward model (kept for evaluation) has no state: current scaling.

// Delayed scaling: a scale (initialized to 1) and an amax history per FP8
// tensor, named after the weight, its input and its output gradient.
// Then, per FP8 tensor, the fractions this step's quantization saturated
// and flushed to zero.
// The step quantizes with the scale of earlier steps, records its amax and
// returns the next scale. The GEMMs' scale inverses come first: they need
// nothing of this step.
// fc2's weight is quantized once for fprop and dgrad; its gradient once for
// dgrad and wgrad; dgrad and wgrad accumulate without fast_accum.


// reduce-amax (data parallelism): in the train step every amax is the max
// over the ranks before it enters the history, all of them in one
// collective at the end of the step (delayed scaling: nothing else reads
// them), each history update after it; the forward model, which one rank
// evaluates alone, has no collective.



func.func @net() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<32x32xf32>
  %t = lpc.input "t" targets : tensor<32x32xf32>
  %w1 = lpc.param "fc1.weight" xavier_uniform : tensor<32x32xf32>
  %w2 = lpc.param "fc2.weight" xavier_uniform : tensor<32x32xf32>
  %h = lpc.matmul %x, %w1 : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %a = lpc.gelu %h : tensor<32x32xf32>
  %o = lpc.matmul %a, %w2 : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %l = lpc.mse_loss %o, %t : tensor<32x32xf32>
  return %l : tensor<f32>
}
