func.func @lr_schedule_nan_base(%t: tensor<i64>) {
  // expected-error @+1 {{'lpc.lr_schedule' op needs 0 <= min_lr <= base_lr, got min_lr = 0.000000e+00, base_lr = nan}}
  %0 = lpc.lr_schedule %t constant {base_lr = 0x7FF8000000000000 : f64} : tensor<i64>
  return
}
