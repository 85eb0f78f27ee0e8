// Already loss-scaled, and the seed's mark was lost since (merged with an
// equal constant by -canonicalize): left unchanged, in every mode, without
// the "no backward seed" error.



func.func @scaled_ridge_train_step(%arg0: tensor<8xf32> {lpc.name = "w", lpc.state = "param"}, %arg1: tensor<8xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, %arg2: tensor<i64> {lpc.state = "step"}, %arg3: tensor<f32> {lpc.init = 6.553600e+04 : f64, lpc.state = "loss_scale"}, %arg4: tensor<i64> {lpc.state = "loss_scale_growth_tracker"}) -> (tensor<8xf32> {lpc.name = "w", lpc.state = "param"}, tensor<8xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.state = "loss_scale"}, tensor<i64> {lpc.state = "loss_scale_growth_tracker"}, tensor<f32> {lpc.metric = "loss"}, tensor<f32> {lpc.metric = "loss_scale"}, tensor<i1> {lpc.metric = "skipped"}) {
  %0 = lpc.pow %arg0 {exponent = 2.000000e+00 : f64} : tensor<8xf32>
  %1 = lpc.reduce_mean %0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %2 = lpc.constant dense<1.000000e+00> : tensor<f32>
  %3 = lpc.loss_scale %2, %arg3 : tensor<f32>
  %4 = lpc.reshape %3 : tensor<f32> -> tensor<1xf32>
  %5 = lpc.broadcast %4 dims = [0] : tensor<1xf32> -> tensor<8xf32>
  %6 = lpc.scale %5 {factor = 1.250000e-01 : f64} : tensor<8xf32>
  %7 = lpc.scale %arg0 {factor = 2.000000e+00 : f64} : tensor<8xf32>
  %8 = lpc.mul %6, %7 : tensor<8xf32>
  %9 = lpc.constant dense<1> : tensor<i64>
  %10 = lpc.add %arg2, %9 : tensor<i64>
  %11 = lpc.constant dense<1.000000e-03> : tensor<f32>
  %12 = lpc.unscale %8, %arg3 : tensor<8xf32>
  %new_param, %new_momentum_buffer = lpc.sgd %arg0, %12, %arg1 lr(%11) {weight_decay = 1.000000e-02 : f64} : tensor<8xf32>
  %13 = lpc.all_finite %12 : tensor<8xf32>
  %14 = lpc.broadcast %13 dims = [] : tensor<i1> -> tensor<8xi1>
  %15 = lpc.where %14, %new_param, %arg0 : tensor<8xi1>, tensor<8xf32>
  %16 = lpc.where %14, %new_momentum_buffer, %arg1 : tensor<8xi1>, tensor<8xf32>
  %17 = lpc.where %13, %10, %arg2 : tensor<i1>, tensor<i64>
  %new_scale, %new_growth_tracker = lpc.loss_scale_update %arg3, %arg4, %13 : tensor<i64>
  %18 = lpc.constant dense<false> : tensor<i1>
  %19 = lpc.constant dense<true> : tensor<i1>
  %20 = lpc.where %13, %18, %19 : tensor<i1>, tensor<i1>
  return %15, %16, %17, %new_scale, %new_growth_tracker, %1, %arg3, %20 : tensor<8xf32>, tensor<8xf32>, tensor<i64>, tensor<f32>, tensor<i64>, tensor<f32>, tensor<f32>, tensor<i1>
}

// The example MLP under the fp16 policy (AdamW): six f32 gradients (cast
// from fp16 where their GEMM ran in fp16), each unscaled before its update
// and all checked; 6 x 3 optimizer results and the step selected.
