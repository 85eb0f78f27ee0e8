func.func @scaled_matmul_acc_type(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op accumulation type must be f32, got 'f16'}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) {acc_type = f16} : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x16xf32>
  return
}
