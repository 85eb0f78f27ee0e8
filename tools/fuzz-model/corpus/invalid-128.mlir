func.func @slice_grad_entries(%g: tensor<2x8xf32>) {
  // expected-error @+1 {{'lpc.slice_grad' op start, limit and step need 2 entries each}}
  %0 = lpc.slice_grad %g start = [0, 0] limit = [2, 8] step = [1] : tensor<2x8xf32> -> tensor<4x8xf32>
  return
}
