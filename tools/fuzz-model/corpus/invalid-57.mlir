// ODS type constraint: unranked tensors are not lpc values.
func.func @relu_unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{'lpc.relu' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<*xf32>'}}
  %0 = "lpc.relu"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return
}
