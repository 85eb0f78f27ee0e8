func.func @input_labels_float() {
  // expected-error @+1 {{'lpc.input' op 'labels' inputs must have an integer element type (i32 or i64), got 'tensor<4xf32>'}}
  %0 = lpc.input "y" labels : tensor<4xf32>
  return
}
