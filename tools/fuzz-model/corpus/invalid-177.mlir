func.func @fp8_stats_format(%a: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.fp8_stats' op format must be fp8_e4m3 or fp8_e5m2, got bf16}}
  %0, %1 = lpc.fp8_stats %a, %s {format = #lpc.precision<bf16>} : tensor<4xf32>
  return
}
