func.func @all_reduce_in_forward() -> tensor<f32> {
  %w = lpc.param "w" ones : tensor<f32>
  // expected-error @+1 {{lpc-autodiff: lpc.all_reduce lies between a parameter and the loss; collectives have no gradient rule: they belong after the backward (lpc-data-parallel puts them between the gradients and the optimizer)}}
  %a = lpc.all_reduce %w mean : tensor<f32> -> tensor<f32>
  return %a : tensor<f32>
}
