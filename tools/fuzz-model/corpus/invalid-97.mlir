func.func @slice_result(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.slice' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x2xf32>'}}
  // expected-error @+1 {{'lpc.slice' op failed to infer returned types}}
  %0 = lpc.slice %a start = [0, 0] limit = [4, 8] step = [1, 3] : tensor<4x8xf32> -> tensor<4x2xf32>
  return
}
