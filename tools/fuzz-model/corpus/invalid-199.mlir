func.func @reduce_scatter_scalar(%g: tensor<f32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op needs a input of rank >= 1 (its dimension 0 is split between the ranks), got 'tensor<f32>'}}
  %0 = lpc.reduce_scatter %g sum ranks(1) : tensor<f32> -> tensor<f32>
  return
}
