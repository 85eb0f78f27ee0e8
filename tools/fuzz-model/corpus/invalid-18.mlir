func.func @param_fan_rank0() {
  // expected-error @+1 {{'lpc.param' op 'kaiming_uniform' needs a tensor of rank >= 2 (fan-in, fan-out), got 'tensor<f32>'}}
  %0 = lpc.param "w" kaiming_uniform : tensor<f32>
  return
}
