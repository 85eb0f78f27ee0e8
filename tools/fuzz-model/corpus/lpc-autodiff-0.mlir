// A linear layer: state threaded through, one update per parameter, roles.

// The input is data: no dgrad GEMM for it.




func.func @linear() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %y = lpc.input "y" labels : tensor<2xi32>
  %w = lpc.param "w" xavier_uniform : tensor<4x3xf32>
  %b = lpc.param "b" zeros : tensor<3xf32>
  %h = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = lpc.bias_add %h, %b : tensor<2x3xf32>, tensor<3xf32>
  %l = lpc.softmax_cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32>
  return %l : tensor<f32>
}
