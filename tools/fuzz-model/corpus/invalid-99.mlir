func.func @concat_axis(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.concat' op axis 2 is out of range for 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %a axis = 2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
  return
}
