func.func @dequantize_shape(%a: tensor<4x8xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.dequantize' op changes the shape from 'tensor<4x8xf8E4M3FN>' to 'tensor<32xf32>'}}
  %0 = lpc.dequantize %a, %s : tensor<4x8xf8E4M3FN> to tensor<32xf32>
  return
}
