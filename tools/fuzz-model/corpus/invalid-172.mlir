func.func @pin_non_lpc_op(%a: f32) {
  // expected-error @+1 {{'lpc.precision' applies only to lpc compute ops, not 'arith.addf'}}
  %0 = arith.addf %a, %a {lpc.precision = #lpc.precision<fp16>} : f32
  return
}
