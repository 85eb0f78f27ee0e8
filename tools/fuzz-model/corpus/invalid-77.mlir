func.func @reduce_axis_range(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.reduce_mean' op axis 2 is out of range for 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'lpc.reduce_mean' op failed to infer returned types}}
  %0 = lpc.reduce_mean %a {axes = array<i64: 2>} : tensor<4x8xf32> -> tensor<4xf32>
  return
}
