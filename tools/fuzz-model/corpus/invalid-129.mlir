func.func @slice_grad_bounds(%g: tensor<2x8xf32>) {
  // expected-error @+1 {{'lpc.slice_grad' op dimension 0: need 0 <= start <= limit <= 4, got [3, 5)}}
  %0 = lpc.slice_grad %g start = [3, 0] limit = [5, 8] step = [1, 1] : tensor<2x8xf32> -> tensor<4x8xf32>
  return
}
