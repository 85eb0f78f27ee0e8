// The concatenated size of a dynamic dimension is dynamic.
func.func @concat_dynamic(%a: tensor<?x8xf32>, %b: tensor<2x8xf32>) {
  // expected-error @+2 {{'lpc.concat' op inferred type(s) 'tensor<?x8xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %b axis = 0 : tensor<?x8xf32>, tensor<2x8xf32> -> tensor<4x8xf32>
  return
}
