func.func @all_gather_rank(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.all_gather' op the input 'tensor<4x8xf32>' must have the rank of the result 'tensor<8x8x1xf32>'}}
  %0 = lpc.all_gather %g ranks(2) : tensor<4x8xf32> -> tensor<8x8x1xf32>
  return
}
