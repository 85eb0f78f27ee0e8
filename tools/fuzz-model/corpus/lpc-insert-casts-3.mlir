// FP8 GEMMs are left for lpc-fp8-scaling: operands in their original types.

func.func @fp8_left_alone(%x: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %h = lpc.matmul %x, %w {lpc.assigned = #lpc.precision<bf16>} : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %a = lpc.gelu %h {lpc.assigned = #lpc.precision<bf16>} : tensor<32x32xf32>
  %o = lpc.matmul %a, %w {lpc.assigned = #lpc.precision<bf16>, lpc.fp8 = [#lpc.precision<fp8_e4m3>, #lpc.precision<fp8_e4m3>]} : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  return %o : tensor<32x32xf32>
}
