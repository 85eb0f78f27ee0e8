func.func @log_softmax_grad_axis(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.log_softmax_grad' op axis -3 is out of range for 'tensor<4x8xf32>' (valid: -2 to 1)}}
  %0 = lpc.log_softmax_grad %g, %g {axis = -3 : i64} : tensor<4x8xf32>
  return
}
