// ODS type constraint: the result is f32, bf16 or f16, never FP8.
func.func @scaled_matmul_fp8_result(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x16xf8E4M3FN>'}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x16xf8E4M3FN>
  return
}
