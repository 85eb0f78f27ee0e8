func.func @unknown_op_generic(%a: tensor<4xf32>) {
  // expected-error @+1 {{unregistered operation 'lpc.frobnicate' found in dialect ('lpc') that does not allow unknown operations}}
  %0 = "lpc.frobnicate"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
