func.func @param_fan_rank1() {
  // expected-error @+1 {{'lpc.param' op 'xavier_uniform' needs a tensor of rank >= 2 (fan-in, fan-out), got 'tensor<8xf32>'}}
  %0 = lpc.param "w" xavier_uniform : tensor<8xf32>
  return
}
