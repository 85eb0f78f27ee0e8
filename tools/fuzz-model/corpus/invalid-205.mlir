func.func @shard_dims(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.shard' op the result 'tensor<2x4xf32>' must match the input 'tensor<4x8xf32>' in dimension 1}}
  %0 = lpc.shard %g ranks(2) : tensor<4x8xf32> -> tensor<2x4xf32>
  return
}
