// The default axis (-1) of a 0-d tensor is out of range.
func.func @softmax_scalar(%a: tensor<f32>) {
  // expected-error @+1 {{'lpc.softmax' op axis -1 is out of range for 'tensor<f32>' (valid: 0 to -1)}}
  %0 = lpc.softmax %a : tensor<f32>
  return
}
