// `y - 0` folds to `y`: lpc-jit --op-check returns both as probes, so the
// compiled step returns one buffer twice (lpc-distinct-results).
func.func @model() -> tensor<f32> {
  %w = lpc.param "w" normal {std = 0.2 : f64} : tensor<8x8xf32>
  %x = lpc.input "x" features : tensor<2x8xf32>
  %y = lpc.matmul %x, %w : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %z = lpc.constant dense<0.0> : tensor<2x8xf32>
  %d = lpc.sub %y, %z : tensor<2x8xf32>
  %l = lpc.reduce_mean %d {axes = array<i64: 0, 1>} : tensor<2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
