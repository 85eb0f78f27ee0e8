// A linear regression (y = x W + b, mean squared error) for the optimizer
// trajectory check: its gradients are simple enough to write by hand.
func.func @linreg() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<6x4xf32>
  %t = lpc.input "t" targets : tensor<6x3xf32>
  %w = lpc.param "w" zeros : tensor<4x3xf32>
  %b = lpc.param "b" zeros : tensor<3xf32>
  %h = lpc.matmul %x, %w : tensor<6x4xf32>, tensor<4x3xf32> -> tensor<6x3xf32>
  %y = lpc.bias_add %h, %b : tensor<6x3xf32>, tensor<3xf32>
  %l = lpc.mse_loss %y, %t : tensor<6x3xf32>
  return %l : tensor<f32>
}
