func.func @shard_blocks(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.shard' op dimension 0 of the input (4) must be 3 (ranks) times that of the result (1)}}
  %0 = lpc.shard %g ranks(3) : tensor<4x8xf32> -> tensor<1x8xf32>
  return
}
