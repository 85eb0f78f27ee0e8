// Dropout: the train step applies the same mask (same seed, same step) in
// the forward and the backward pass; the eval function runs without it.

func.func @net() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %y = lpc.input "y" labels : tensor<2xi32>
  %w = lpc.param "w" xavier_uniform : tensor<4x3xf32>
  %h = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %d = lpc.dropout %h {rate = 0.25 : f64, seed = 7 : i64} : tensor<2x3xf32>
  %l = lpc.softmax_cross_entropy %d, %y : tensor<2x3xf32>, tensor<2xi32>
  return %l : tensor<f32>
}
