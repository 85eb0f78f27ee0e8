func.func @slice_bounds(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.slice' op dimension 0: need 0 <= start <= limit <= 4, got [3, 2)}}
  // expected-error @+1 {{'lpc.slice' op failed to infer returned types}}
  %0 = lpc.slice %a start = [3, 0] limit = [2, 8] step = [1, 1] : tensor<4x8xf32> -> tensor<0x8xf32>
  return
}
