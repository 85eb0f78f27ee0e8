func.func @reduce_scatter_zero_ranks(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op attribute 'ranks' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %0 = lpc.reduce_scatter %g sum ranks(0) : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
