func.func @concat_negative_axis(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.concat' op axis -3 is out of range for 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %a axis = -3 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
  return
}
