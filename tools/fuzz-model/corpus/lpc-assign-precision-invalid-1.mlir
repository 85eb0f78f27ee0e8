func.func @fp8_pin(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{lpc-assign-precision: fp8 pins are not supported; pin bf16/fp16/fp32 and use policy=fp8 for FP8 GEMMs}}
  %h = lpc.matmul %x, %w {lpc.precision = #lpc.precision<fp8_e4m3>} : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  return %h : tensor<4x16xf32>
}
