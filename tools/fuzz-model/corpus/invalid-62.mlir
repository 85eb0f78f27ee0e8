func.func @gelu_unknown_approximation(%a: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::lpc::GeluApproximation to be one of: erf, tanh}}
  // expected-error @+1 {{failed to parse Lpc_GeluApproximationAttr parameter 'value' which is to be a `::mlir::lpc::GeluApproximation`}}
  %0 = lpc.gelu %a {approximation = #lpc.gelu_approximation<sigmoid>} : tensor<4xf32>
  return
}
