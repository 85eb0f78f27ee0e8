func.func @lr_schedule_negative_steps(%t: tensor<i64>) {
  // expected-error @+1 {{'lpc.lr_schedule' op warmup_steps and total_steps must be >= 0}}
  %0 = lpc.lr_schedule %t constant {base_lr = 1.0e-3 : f64, warmup_steps = -1 : i64} : tensor<i64>
  return
}
