func.func @slice_step(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.slice' op step[1] must be >= 1, got 0}}
  // expected-error @+1 {{'lpc.slice' op failed to infer returned types}}
  %0 = lpc.slice %a start = [0, 0] limit = [4, 8] step = [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
