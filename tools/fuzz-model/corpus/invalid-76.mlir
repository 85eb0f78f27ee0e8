//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

func.func @reduce_no_axes(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.reduce_sum' op needs at least one axis to reduce}}
  // expected-error @+1 {{'lpc.reduce_sum' op failed to infer returned types}}
  %0 = lpc.reduce_sum %a {axes = array<i64>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
