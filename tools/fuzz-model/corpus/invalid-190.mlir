func.func @attention_grad_type(%g: tensor<4x8xbf16>, %q: tensor<4x8xf32>, %l: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.attention_grad' op grad must have the type of result, got 'tensor<4x8xbf16>' and 'tensor<4x8xf32>'}}
  %dq, %dk, %dv = lpc.attention_grad %g, %q, %q, %q, %q, %l : tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  return
}
