func.func @lr_schedule_cosine_default_steps(%t: tensor<i32>) {
  // expected-error @+1 {{'lpc.lr_schedule' op 'cosine' decay needs total_steps > warmup_steps, got 0 <= 0}}
  %0 = lpc.lr_schedule %t cosine {base_lr = 1.0e-3 : f64} : tensor<i32>
  return
}
