// ODS type constraint: quantize produces FP8.
func.func @quantize_to_bf16(%a: tensor<4x8xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.quantize' op result #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<4x8xbf16>'}}
  %0 = lpc.quantize %a, %s : tensor<4x8xf32> to tensor<4x8xbf16>
  return
}
