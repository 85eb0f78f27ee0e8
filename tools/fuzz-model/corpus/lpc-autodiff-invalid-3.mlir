func.func @unused() -> tensor<f32> {
  %t = lpc.input "t" targets : tensor<2x4xf32>
  %w = lpc.param "w" ones : tensor<2x4xf32>
  // expected-warning @+1 {{lpc-autodiff: parameter 'dead' does not affect the loss; its gradient is zero}}
  %d = lpc.param "dead" ones : tensor<3xf32>
  %l = lpc.mse_loss %w, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}
