// ODS type constraint: the step is a 0-d i32, i64 or f32 tensor.
func.func @adamw_step_type(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<1xi64>) {
  // expected-error @+1 {{'lpc.adamw' op operand #4 must be 0D tensor of 32-bit signless integer or 64-bit signless integer or 32-bit float values, but got 'tensor<1xi64>'}}
  %0:3 = lpc.adamw %p, %p, %p, %p step(%t : tensor<1xi64>) lr(%lr) : tensor<4xf32>
  return
}
