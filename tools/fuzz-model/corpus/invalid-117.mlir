func.func @sce_ignore_index(%l: tensor<16x10xf32>, %y: tensor<16xi32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op ignore_index 3 is a valid class id (0..9); use a negative value such as -100}}
  %0 = lpc.softmax_cross_entropy %l, %y {ignore_index = 3 : i64} : tensor<16x10xf32>, tensor<16xi32>
  return
}
