func.func @concat_element_type(%a: tensor<4x8xf32>, %b: tensor<4x8xbf16>) {
  // expected-error @+2 {{'lpc.concat' op input 2 ('tensor<4x8xbf16>') differs in rank or element type from input 0 ('tensor<4x8xf32>')}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %a, %b axis = 0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xbf16> -> tensor<12x8xf32>
  return
}
