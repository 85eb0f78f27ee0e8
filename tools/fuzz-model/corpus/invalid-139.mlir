// ODS type constraint: the scale inverse is a 0-d f32 tensor.
func.func @dequantize_scale_type(%a: tensor<4x8xf8E4M3FN>, %s: tensor<bf16>) {
  // expected-error @+1 {{'lpc.dequantize' op operand #1 must be 0D tensor of 32-bit float values, but got 'tensor<bf16>'}}
  %0 = "lpc.dequantize"(%a, %s) : (tensor<4x8xf8E4M3FN>, tensor<bf16>) -> tensor<4x8xf32>
  return
}
