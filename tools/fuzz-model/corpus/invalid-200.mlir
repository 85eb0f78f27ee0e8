func.func @reduce_scatter_dims(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op the result 'tensor<2x7xf32>' must match the input 'tensor<4x8xf32>' in dimension 1}}
  %0 = lpc.reduce_scatter %g sum ranks(2) : tensor<4x8xf32> -> tensor<2x7xf32>
  return
}
