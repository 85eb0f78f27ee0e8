func.func @pin_param() {
  // expected-error @+1 {{'lpc.precision' cannot pin 'lpc.param': its precision is fixed by its types}}
  %0 = lpc.param "w" zeros {lpc.precision = #lpc.precision<bf16>} : tensor<4xf32>
  return
}
