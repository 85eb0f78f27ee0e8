func.func @broadcast_dims_negative(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op dims[0] = -1 is out of range for result 'tensor<4x8xf32>'}}
  %0 = lpc.broadcast %a dims = [-1] : tensor<8xf32> -> tensor<4x8xf32>
  return
}
