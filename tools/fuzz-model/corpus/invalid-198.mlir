func.func @reduce_scatter_huge_ranks(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op dimension 0 of the input (4) must be 9223372036854775807 (ranks) times that of the result (4611686018427387904)}}
  %0 = lpc.reduce_scatter %g sum ranks(9223372036854775807) : tensor<4x8xf32> -> tensor<4611686018427387904x8xf32>
  return
}
