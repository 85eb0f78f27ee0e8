func.func @not_scalar() -> tensor<4xf32> {
  %w = lpc.param "w" ones : tensor<4xf32>
  // expected-error @+1 {{lpc-autodiff: @not_scalar must return one scalar loss of type 'tensor<f32>', got 'tensor<4xf32>'}}
  return %w : tensor<4xf32>
}
