// ODS type constraint: the step is an integer.
func.func @lr_schedule_float_step(%t: tensor<f32>) {
  // expected-error @+1 {{'lpc.lr_schedule' op operand #0 must be 0D tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<f32>'}}
  %0 = lpc.lr_schedule %t constant {base_lr = 1.0e-3 : f64} : tensor<f32>
  return
}
