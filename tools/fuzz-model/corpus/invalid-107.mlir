func.func @causal_mask_rank(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.causal_mask' op needs rank >= 2 ([..., queries, keys]), got 'tensor<8xf32>'}}
  %0 = lpc.causal_mask %a : tensor<8xf32>
  return
}
