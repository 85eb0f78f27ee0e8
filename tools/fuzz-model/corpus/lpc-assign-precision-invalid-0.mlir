func.func @loss_pin(%x: tensor<4x3xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  // expected-error @+1 {{lpc-assign-precision: losses run in fp32; cannot pin 'lpc.softmax_cross_entropy' to bf16}}
  %l = lpc.softmax_cross_entropy %x, %y {lpc.precision = #lpc.precision<bf16>} : tensor<4x3xf32>, tensor<4xi32>
  return %l : tensor<f32>
}
