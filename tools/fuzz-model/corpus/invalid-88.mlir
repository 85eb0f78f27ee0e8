func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'lpc.reshape' op element count changes: 'tensor<2x3xf32>' has 6 elements, 'tensor<7xf32>' has 7}}
  %0 = lpc.reshape %a : tensor<2x3xf32> -> tensor<7xf32>
  return
}
