func.func @slice_entries(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.slice' op start, limit and step need 2 entries each}}
  // expected-error @+1 {{'lpc.slice' op failed to infer returned types}}
  %0 = lpc.slice %a start = [0] limit = [4, 8] step = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
