// keepdims keeps the reduced dimension as size 1.
func.func @reduce_keepdims_type(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.reduce_sum' op inferred type(s) 'tensor<4x1xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{'lpc.reduce_sum' op failed to infer returned types}}
  %0 = lpc.reduce_sum %a {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4xf32>
  return
}
