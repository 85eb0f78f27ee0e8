func.func @pin_not_precision_attr(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.precision' must be a #lpc.precision<...> attribute, got "fp32"}}
  %0 = lpc.relu %a {lpc.precision = "fp32"} : tensor<4xf32>
  return
}
