func.func @dropout_rate_negative(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.dropout' op rate must be in [0, 1), got -1.000000e-01}}
  %0 = lpc.dropout %a {rate = -0.1 : f64, seed = 0 : i64} : tensor<8xf32>
  return
}
