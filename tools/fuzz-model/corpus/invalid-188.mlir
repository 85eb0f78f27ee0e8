func.func @attention_mask(%q: tensor<2x4x8xf32>, %m: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'lpc.attention' op mask must be [Sq, Skv] = [4, 4] (shared by every batch and head), got 'tensor<2x4x4xf32>'}}
  %o, %l = lpc.attention %q, %q, %q mask %m : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}
