func.func @all_gather_blocks(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.all_gather' op dimension 0 of the result (12) must be 2 (ranks) times that of the input (4)}}
  %0 = lpc.all_gather %g ranks(2) : tensor<4x8xf32> -> tensor<12x8xf32>
  return
}
