func.func @slice_past_end(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.slice' op dimension 1: need 0 <= start <= limit <= 8, got [0, 9)}}
  // expected-error @+1 {{'lpc.slice' op failed to infer returned types}}
  %0 = lpc.slice %a start = [0, 0] limit = [4, 9] step = [1, 1] : tensor<4x8xf32> -> tensor<4x9xf32>
  return
}
