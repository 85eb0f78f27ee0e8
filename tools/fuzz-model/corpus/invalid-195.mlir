// lpc.reduce_scatter, lpc.all_gather

func.func @reduce_scatter_any_nonfinite(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op kind must be sum, mean or max (any_nonfinite is lpc.all_reduce's)}}
  %0 = lpc.reduce_scatter %g any_nonfinite ranks(2) : tensor<4x8xf32> -> tensor<2x8xf32>
  return
}
