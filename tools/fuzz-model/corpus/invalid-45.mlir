//===----------------------------------------------------------------------===//
// lpc.scaled_matmul
//===----------------------------------------------------------------------===//

func.func @scaled_matmul_e5m2_e5m2(%a: tensor<4x8xf8E5M2>, %b: tensor<8x16xf8E5M2>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op E5M2 x E5M2 is not supported (FP8 tensor cores and cuBLASLt reject it); quantize one operand to E4M3}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) : tensor<4x8xf8E5M2>, tensor<8x16xf8E5M2> -> tensor<4x16xf32>
  return
}
