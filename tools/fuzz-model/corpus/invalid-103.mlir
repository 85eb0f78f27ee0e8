func.func @concat_other_dim(%a: tensor<4x8xf32>, %b: tensor<4x7xf32>) {
  // expected-error @+2 {{'lpc.concat' op input 1 ('tensor<4x7xf32>') differs from input 0 ('tensor<4x8xf32>') in dimension 1, which is not the concatenation axis}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %b axis = 0 : tensor<4x8xf32>, tensor<4x7xf32> -> tensor<8x8xf32>
  return
}
