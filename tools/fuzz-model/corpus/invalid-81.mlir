func.func @broadcast_dims_count(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op needs one entry in 'dims' per operand dimension (1), got 2}}
  %0 = lpc.broadcast %a dims = [0, 1] : tensor<8xf32> -> tensor<4x8xf32>
  return
}
