// Params and inputs are not pure: they stay even when unused.
func.func @params_stay() {
  %0 = lpc.param "w" zeros : tensor<4xf32>
  %1 = lpc.input "x" features : tensor<2x4xf32>
  return
}
