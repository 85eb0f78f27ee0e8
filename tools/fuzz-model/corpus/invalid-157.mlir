func.func @lr_schedule_min_above_base(%t: tensor<i64>) {
  // expected-error @+1 {{'lpc.lr_schedule' op needs 0 <= min_lr <= base_lr, got min_lr = 1.000000e-02, base_lr = 1.000000e-03}}
  %0 = lpc.lr_schedule %t cosine {base_lr = 1.0e-3 : f64, min_lr = 1.0e-2 : f64, total_steps = 10 : i64} : tensor<i64>
  return
}
