func.func @broadcast_dims_order(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op 'dims' must be strictly increasing}}
  %0 = lpc.broadcast %a dims = [2, 1] : tensor<4x8xf32> -> tensor<2x8x4xf32>
  return
}
