// The shape checks of lpc.matmul apply, without the type inference error.
func.func @scaled_matmul_contraction(%a: tensor<4x8xf8E4M3FN>, %b: tensor<16x8xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{contraction dimensions differ: lhs 'tensor<4x8xf8E4M3FN>' has K = 8 but rhs 'tensor<16x8xf8E4M3FN>' has K = 16}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) : tensor<4x8xf8E4M3FN>, tensor<16x8xf8E4M3FN> -> tensor<4x8xf32>
  return
}
