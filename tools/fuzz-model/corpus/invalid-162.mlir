func.func @lr_schedule_decay_without_steps(%t: tensor<i64>) {
  // expected-error @+1 {{'lpc.lr_schedule' op 'linear' decay needs total_steps > warmup_steps, got 10 <= 10}}
  %0 = lpc.lr_schedule %t linear {base_lr = 1.0e-3 : f64, warmup_steps = 10 : i64, total_steps = 10 : i64} : tensor<i64>
  return
}
