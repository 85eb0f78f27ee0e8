func.func @dropout_rate_zero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lpc.dropout %x {rate = 0.0 : f64, seed = 7 : i64} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
