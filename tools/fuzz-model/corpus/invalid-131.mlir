func.func @slice_grad_shape(%g: tensor<2x8xf32>) {
  // expected-error @+1 {{'lpc.slice_grad' op grad 'tensor<2x8xf32>' does not match the slice of 'tensor<4x8xf32>' ('tensor<1x8xf32>')}}
  %0 = lpc.slice_grad %g start = [0, 0] limit = [2, 8] step = [2, 1] : tensor<2x8xf32> -> tensor<4x8xf32>
  return
}
