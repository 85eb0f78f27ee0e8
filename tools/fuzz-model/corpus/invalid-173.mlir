// expected-error @+1 {{'lpc.precision' applies only to lpc compute ops, not 'func.func'}}
func.func @pin_on_function() attributes {lpc.precision = #lpc.precision<bf16>} {
  return
}
