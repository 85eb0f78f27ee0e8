func.func @broadcast_size(%a: tensor<3xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op operand dimension 0 (size 3) must be 1 or equal result dimension 1 (size 8)}}
  %0 = lpc.broadcast %a dims = [1] : tensor<3xf32> -> tensor<4x8xf32>
  return
}
