// ODS type constraint: scales are 0-d f32 tensors.
func.func @scaled_matmul_scale_rank(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op operand #2 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = "lpc.scaled_matmul"(%a, %b, %s, %s) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>} : (tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16xf32>
  return
}
