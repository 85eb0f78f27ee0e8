func.func @broadcast_dims_range(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op dims[0] = 2 is out of range for result 'tensor<4x8xf32>'}}
  %0 = lpc.broadcast %a dims = [2] : tensor<8xf32> -> tensor<4x8xf32>
  return
}
