func.func @fp8_stats_scale(%a: tensor<4xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{'lpc.fp8_stats' op operand #1 must be 0D tensor of 32-bit float values}}
  %0:2 = "lpc.fp8_stats"(%a, %s) <{format = #lpc.precision<fp8_e4m3>}> : (tensor<4xf32>, tensor<2xf32>) -> (tensor<f32>, tensor<f32>)
  return
}
