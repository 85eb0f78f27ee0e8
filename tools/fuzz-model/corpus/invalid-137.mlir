// ODS type constraint: quantize reads f32, f16 or bf16, not FP8.
func.func @quantize_from_fp8(%a: tensor<4x8xf8E5M2>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.quantize' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xf8E5M2>'}}
  %0 = lpc.quantize %a, %s : tensor<4x8xf8E5M2> to tensor<4x8xf8E4M3FN>
  return
}
