func.func @softmax_axis(%a: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'lpc.softmax' op axis 3 is out of range for 'tensor<2x4x8xf32>' (valid: -3 to 2)}}
  %0 = lpc.softmax %a {axis = 3 : i64} : tensor<2x4x8xf32>
  return
}
