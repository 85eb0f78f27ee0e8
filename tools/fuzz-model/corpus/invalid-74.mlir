func.func @log_softmax_axis(%a: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'lpc.log_softmax' op axis -4 is out of range for 'tensor<2x4x8xf32>' (valid: -3 to 2)}}
  %0 = lpc.log_softmax %a {axis = -4 : i64} : tensor<2x4x8xf32>
  return
}
