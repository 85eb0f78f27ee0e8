func.func @slice_grad_step(%g: tensor<2x8xf32>) {
  // expected-error @+1 {{'lpc.slice_grad' op step[0] must be >= 1, got -1}}
  %0 = lpc.slice_grad %g start = [0, 0] limit = [2, 8] step = [-1, 1] : tensor<2x8xf32> -> tensor<4x8xf32>
  return
}
