func.func @causal_mask_queries(%a: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'lpc.causal_mask' op needs queries <= keys in the last two dimensions, got 8 > 4}}
  %0 = lpc.causal_mask %a : tensor<2x8x4xf32>
  return
}
