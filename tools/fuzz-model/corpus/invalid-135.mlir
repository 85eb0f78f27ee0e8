func.func @quantize_shape(%a: tensor<4x8xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.quantize' op changes the shape from 'tensor<4x8xf32>' to 'tensor<8x4xf8E4M3FN>'}}
  %0 = lpc.quantize %a, %s : tensor<4x8xf32> to tensor<8x4xf8E4M3FN>
  return
}
