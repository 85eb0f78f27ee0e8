// Two layers: the hidden activation gets a dgrad GEMM; a value used twice
// accumulates its gradient with lpc.add.

func.func @two_layer() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %t = lpc.input "t" targets : tensor<2x4xf32>
  %w1 = lpc.param "w1" kaiming_uniform : tensor<4x4xf32>
  %w2 = lpc.param "w2" kaiming_uniform : tensor<4x4xf32>
  %h = lpc.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %r = lpc.relu %h : tensor<2x4xf32>
  %o = lpc.matmul %r, %w2 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %s = lpc.add %o, %r : tensor<2x4xf32>
  %l = lpc.mse_loss %s, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}
