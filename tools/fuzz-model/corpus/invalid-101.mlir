func.func @concat_rank(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+2 {{'lpc.concat' op input 1 ('tensor<8xf32>') differs in rank or element type from input 0 ('tensor<4x8xf32>')}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %b axis = 0 : tensor<4x8xf32>, tensor<8xf32> -> tensor<5x8xf32>
  return
}
