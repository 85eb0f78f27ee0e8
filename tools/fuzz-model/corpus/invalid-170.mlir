func.func @pin_fixed_op(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.precision' cannot pin 'lpc.cast': its precision is fixed by its types}}
  %0 = lpc.cast %a {lpc.precision = #lpc.precision<fp32>} : tensor<4xf32> to tensor<4xbf16>
  return
}
