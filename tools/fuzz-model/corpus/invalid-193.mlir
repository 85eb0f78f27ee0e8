func.func @all_reduce_any_nonfinite_type(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.all_reduce' op any_nonfinite gives a tensor<i1>, got 'tensor<4x8xf32>'}}
  %0 = lpc.all_reduce %g any_nonfinite : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
