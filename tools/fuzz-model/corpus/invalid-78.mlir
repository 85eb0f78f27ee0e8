// -1 and 1 name the same dimension of a rank-2 tensor.
func.func @reduce_axis_repeated(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.reduce_max' op axis -1 is repeated}}
  // expected-error @+1 {{'lpc.reduce_max' op failed to infer returned types}}
  %0 = lpc.reduce_max %a {axes = array<i64: 1, -1>} : tensor<4x8xf32> -> tensor<4xf32>
  return
}
