// ODS trait: elementwise operands have one type (see lpc.broadcast).
func.func @add_shapes(%a: tensor<4xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{'lpc.add' op requires the same type for all operands and results}}
  %0 = "lpc.add"(%a, %b) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  return
}
