// ODS type constraint: optimizer state is FP32.
func.func @sgd_bf16(%p: tensor<4xbf16>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op operand #0 must be ranked tensor of 32-bit float values, but got 'tensor<4xbf16>'}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) : tensor<4xbf16>
  return
}
