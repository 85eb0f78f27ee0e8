func.func @clip_empty() {
  // expected-error @+1 {{'lpc.clip_by_global_norm' op needs at least one gradient}}
  %0 = "lpc.clip_by_global_norm"() <{max_norm = 1.0 : f64}> : () -> tensor<f32>
  return
}
