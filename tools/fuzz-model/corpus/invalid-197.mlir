func.func @reduce_scatter_blocks(%g: tensor<5x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op dimension 0 of the input (5) must be 2 (ranks) times that of the result (2)}}
  %0 = lpc.reduce_scatter %g sum ranks(2) : tensor<5x8xf32> -> tensor<2x8xf32>
  return
}
