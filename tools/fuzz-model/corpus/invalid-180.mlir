//===----------------------------------------------------------------------===//
// lpc.attention, lpc.attention_grad
//===----------------------------------------------------------------------===//

func.func @attention_rank(%q: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.attention' op query must have rank >= 2 ([batch..., Sq, D]), got 'tensor<8xf32>'}}
  %o, %l = lpc.attention %q, %q, %q : tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>, tensor<f32>
  return
}
