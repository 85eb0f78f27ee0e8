func.func @slice_grad_element_type(%g: tensor<2x8xf32>) {
  // expected-error @+1 {{'lpc.slice_grad' op element type changes from 'f32' to 'bf16'}}
  %0 = lpc.slice_grad %g start = [0, 0] limit = [2, 8] step = [1, 1] : tensor<2x8xf32> -> tensor<4x8xbf16>
  return
}
