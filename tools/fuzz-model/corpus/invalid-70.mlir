func.func @rmsnorm_gamma_rank(%a: tensor<4x8xf32>, %g: tensor<1x8xf32>) {
  // expected-error @+1 {{'lpc.rmsnorm' op gamma must be rank 1 with the input's last dimension (8), got 'tensor<1x8xf32>'}}
  %0 = lpc.rmsnorm %a, %g : tensor<4x8xf32>, tensor<1x8xf32>
  return
}
