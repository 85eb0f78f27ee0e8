// Gradient check of every vector-Jacobian rule of lpc-autodiff: each function
// is a tiny model around one op; lpc-gradcheck compares the autodiff
// gradients with central finite differences of the forward function, both
// evaluated in double precision on random (nonzero) parameters and inputs.
// RUN: lpc-gradcheck %s --max-elements=0 | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: [[N:[0-9]+]] of [[N]] models passed

func.func @matmul() -> tensor<f32> {
  %a = lpc.param "a" zeros : tensor<3x4xf32>
  %b = lpc.param "b" zeros : tensor<4x5xf32>
  %t = lpc.input "t" targets : tensor<3x5xf32>
  %y = lpc.matmul %a, %b : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  %l = lpc.mse_loss %y, %t : tensor<3x5xf32>
  return %l : tensor<f32>
}
func.func @matmul_ta() -> tensor<f32> {
  %a = lpc.param "a" zeros : tensor<4x3xf32>
  %b = lpc.param "b" zeros : tensor<4x5xf32>
  %t = lpc.input "t" targets : tensor<3x5xf32>
  %y = lpc.matmul %a, %b {transpose_a} : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  %l = lpc.mse_loss %y, %t : tensor<3x5xf32>
  return %l : tensor<f32>
}
func.func @matmul_tb() -> tensor<f32> {
  %a = lpc.param "a" zeros : tensor<3x4xf32>
  %b = lpc.param "b" zeros : tensor<5x4xf32>
  %t = lpc.input "t" targets : tensor<3x5xf32>
  %y = lpc.matmul %a, %b {transpose_b} : tensor<3x4xf32>, tensor<5x4xf32> -> tensor<3x5xf32>
  %l = lpc.mse_loss %y, %t : tensor<3x5xf32>
  return %l : tensor<f32>
}
func.func @matmul_ta_tb() -> tensor<f32> {
  %a = lpc.param "a" zeros : tensor<4x3xf32>
  %b = lpc.param "b" zeros : tensor<5x4xf32>
  %t = lpc.input "t" targets : tensor<3x5xf32>
  %y = lpc.matmul %a, %b {transpose_a, transpose_b} : tensor<4x3xf32>, tensor<5x4xf32> -> tensor<3x5xf32>
  %l = lpc.mse_loss %y, %t : tensor<3x5xf32>
  return %l : tensor<f32>
}
func.func @matmul_batched() -> tensor<f32> {
  %a = lpc.param "a" zeros : tensor<2x3x4xf32>
  %b = lpc.param "b" zeros : tensor<2x5x4xf32>
  %t = lpc.input "t" targets : tensor<2x3x5xf32>
  %y = lpc.matmul %a, %b {transpose_b} : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
  %l = lpc.mse_loss %y, %t : tensor<2x3x5xf32>
  return %l : tensor<f32>
}
func.func @matmul_broadcast_rhs() -> tensor<f32> {
  %a = lpc.param "a" zeros : tensor<2x3x4xf32>
  %b = lpc.param "b" zeros : tensor<4x5xf32>
  %t = lpc.input "t" targets : tensor<2x3x5xf32>
  %y = lpc.matmul %a, %b : tensor<2x3x4xf32>, tensor<4x5xf32> -> tensor<2x3x5xf32>
  %l = lpc.mse_loss %y, %t : tensor<2x3x5xf32>
  return %l : tensor<f32>
}
func.func @matmul_broadcast_rhs_ta_tb() -> tensor<f32> {
  %a = lpc.param "a" zeros : tensor<2x4x3xf32>
  %b = lpc.param "b" zeros : tensor<5x4xf32>
  %t = lpc.input "t" targets : tensor<2x3x5xf32>
  %y = lpc.matmul %a, %b {transpose_a, transpose_b} : tensor<2x4x3xf32>, tensor<5x4xf32> -> tensor<2x3x5xf32>
  %l = lpc.mse_loss %y, %t : tensor<2x3x5xf32>
  return %l : tensor<f32>
}
func.func @arith() -> tensor<f32> {
  %a = lpc.param "a" zeros : tensor<2x3xf32>
  %b = lpc.param "b" zeros : tensor<2x3xf32>
  %c = lpc.param "c" zeros : tensor<2x3xf32>
  %t = lpc.input "t" targets : tensor<2x3xf32>
  %s = lpc.add %a, %b : tensor<2x3xf32>
  %d = lpc.sub %s, %c : tensor<2x3xf32>
  %m = lpc.mul %d, %a : tensor<2x3xf32>
  %e = lpc.exp %c : tensor<2x3xf32>
  %q = lpc.div %m, %e : tensor<2x3xf32>
  %n = lpc.neg %q : tensor<2x3xf32>
  %k = lpc.scale %n {factor = 0.75 : f64} : tensor<2x3xf32>
  %l = lpc.mse_loss %k, %t : tensor<2x3xf32>
  return %l : tensor<f32>
}
func.func @div_both() -> tensor<f32> {
  %a = lpc.param "a" zeros : tensor<2x3xf32>
  %b = lpc.param "b" zeros : tensor<2x3xf32>
  %t = lpc.input "t" targets : tensor<2x3xf32>
  %e = lpc.exp %b : tensor<2x3xf32>
  %q = lpc.div %a, %e : tensor<2x3xf32>
  %l = lpc.mse_loss %q, %t : tensor<2x3xf32>
  return %l : tensor<f32>
}
func.func @bias_add() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<2x3x4xf32>
  %b = lpc.param "b" zeros : tensor<4xf32>
  %t = lpc.input "t" targets : tensor<2x3x4xf32>
  %y = lpc.bias_add %x, %b : tensor<2x3x4xf32>, tensor<4xf32>
  %l = lpc.mse_loss %y, %t : tensor<2x3x4xf32>
  return %l : tensor<f32>
}
func.func @activations() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<3x4xf32>
  %t = lpc.input "t" targets : tensor<3x4xf32>
  %r = lpc.relu %x : tensor<3x4xf32>
  %g = lpc.gelu %x : tensor<3x4xf32>
  %gt = lpc.gelu %x {approximation = #lpc.gelu_approximation<tanh>} : tensor<3x4xf32>
  %s = lpc.silu %x : tensor<3x4xf32>
  %th = lpc.tanh %x : tensor<3x4xf32>
  %sg = lpc.sigmoid %x : tensor<3x4xf32>
  %a1 = lpc.add %r, %g : tensor<3x4xf32>
  %a2 = lpc.mul %a1, %gt : tensor<3x4xf32>
  %a3 = lpc.add %a2, %s : tensor<3x4xf32>
  %a4 = lpc.mul %a3, %th : tensor<3x4xf32>
  %a5 = lpc.add %a4, %sg : tensor<3x4xf32>
  %l = lpc.mse_loss %a5, %t : tensor<3x4xf32>
  return %l : tensor<f32>
}
func.func @log1p_expm1() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<3x4xf32>
  %t = lpc.input "t" targets : tensor<3x4xf32>
  %e = lpc.exp %x : tensor<3x4xf32>
  %lp = lpc.log1p %e : tensor<3x4xf32>
  %em = lpc.expm1 %x : tensor<3x4xf32>
  %s = lpc.add %lp, %em : tensor<3x4xf32>
  %l = lpc.mse_loss %s, %t : tensor<3x4xf32>
  return %l : tensor<f32>
}
func.func @sin_cos_erf() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<3x4xf32>
  %t = lpc.input "t" targets : tensor<3x4xf32>
  %s = lpc.sin %x : tensor<3x4xf32>
  %c = lpc.cos %s : tensor<3x4xf32>
  %e = lpc.erf %x : tensor<3x4xf32>
  %a = lpc.add %c, %e : tensor<3x4xf32>
  %m = lpc.mul %a, %s : tensor<3x4xf32>
  %l = lpc.mse_loss %m, %t : tensor<3x4xf32>
  return %l : tensor<f32>
}
func.func @compare_where() -> tensor<f32> {
  // leaky_relu and a clamp from lpc.compare + lpc.where: the gradient
  // flows through the selected piece only.
  %x = lpc.param "x" zeros : tensor<3x4xf32>
  %t = lpc.input "t" targets : tensor<3x4xf32>
  %zero = lpc.constant dense<0.0> : tensor<3x4xf32>
  %pos = lpc.compare gt, %x, %zero : tensor<3x4xf32> -> tensor<3x4xi1>
  %leak = lpc.scale %x {factor = 0.1 : f64} : tensor<3x4xf32>
  %a = lpc.where %pos, %x, %leak : tensor<3x4xi1>, tensor<3x4xf32>
  %hi = lpc.constant dense<0.3> : tensor<3x4xf32>
  %above = lpc.compare ge, %a, %hi : tensor<3x4xf32> -> tensor<3x4xi1>
  %c = lpc.where %above, %hi, %a : tensor<3x4xi1>, tensor<3x4xf32>
  %l = lpc.mse_loss %c, %t : tensor<3x4xf32>
  return %l : tensor<f32>
}
func.func @transcendental() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<3x4xf32>
  %t = lpc.input "t" targets : tensor<3x4xf32>
  %e = lpc.exp %x : tensor<3x4xf32>
  %lg = lpc.log %e : tensor<3x4xf32>
  %sq = lpc.sqrt %e : tensor<3x4xf32>
  %rs = lpc.rsqrt %e : tensor<3x4xf32>
  %p2 = lpc.pow %x {exponent = 2.0 : f64} : tensor<3x4xf32>
  %p15 = lpc.pow %e {exponent = 1.5 : f64} : tensor<3x4xf32>
  %a1 = lpc.mul %lg, %sq : tensor<3x4xf32>
  %a2 = lpc.add %a1, %rs : tensor<3x4xf32>
  %a3 = lpc.add %a2, %p2 : tensor<3x4xf32>
  %a4 = lpc.sub %a3, %p15 : tensor<3x4xf32>
  %l = lpc.mse_loss %a4, %t : tensor<3x4xf32>
  return %l : tensor<f32>
}
func.func @layernorm() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<3x5xf32>
  %g = lpc.param "gamma" zeros : tensor<5xf32>
  %b = lpc.param "beta" zeros : tensor<5xf32>
  %t = lpc.input "t" targets : tensor<3x5xf32>
  %y = lpc.layernorm %x, %g, %b : tensor<3x5xf32>, tensor<5xf32>
  %l = lpc.mse_loss %y, %t : tensor<3x5xf32>
  return %l : tensor<f32>
}
func.func @rmsnorm() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<3x5xf32>
  %g = lpc.param "gamma" zeros : tensor<5xf32>
  %t = lpc.input "t" targets : tensor<3x5xf32>
  %y = lpc.rmsnorm %x, %g {epsilon = 1.0e-5 : f64} : tensor<3x5xf32>, tensor<5xf32>
  %l = lpc.mse_loss %y, %t : tensor<3x5xf32>
  return %l : tensor<f32>
}
func.func @softmax() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<3x5xf32>
  %t = lpc.input "t" targets : tensor<3x5xf32>
  %s = lpc.softmax %x : tensor<3x5xf32>
  %s0 = lpc.softmax %x {axis = 0 : i64} : tensor<3x5xf32>
  %ls = lpc.log_softmax %x : tensor<3x5xf32>
  %a = lpc.add %s, %s0 : tensor<3x5xf32>
  %b = lpc.mul %a, %ls : tensor<3x5xf32>
  %l = lpc.mse_loss %b, %t : tensor<3x5xf32>
  return %l : tensor<f32>
}
func.func @reductions() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<2x3x4xf32>
  %t = lpc.input "t" targets : tensor<2x4xf32>
  %t2 = lpc.input "t2" targets : tensor<2x1x4xf32>
  %s = lpc.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %m = lpc.reduce_mean %x {axes = array<i64: -2>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %mx = lpc.reduce_max %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %a = lpc.mul %s, %mx : tensor<2x4xf32>
  %l1 = lpc.mse_loss %a, %t : tensor<2x4xf32>
  %l2 = lpc.mse_loss %m, %t2 : tensor<2x1x4xf32>
  %l = lpc.add %l1, %l2 : tensor<f32>
  return %l : tensor<f32>
}
func.func @reduce_all() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<2x3xf32>
  %s = lpc.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<f32>
  %m = lpc.reduce_mean %x {axes = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<f32>
  %p = lpc.mul %s, %m : tensor<f32>
  return %p : tensor<f32>
}
func.func @data_movement() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<2x3x4xf32>
  %y = lpc.param "y" zeros : tensor<2x2x4xf32>
  %v = lpc.param "v" zeros : tensor<1x4xf32>
  %t = lpc.input "t" targets : tensor<4x2x2xf32>
  %c = lpc.concat %x, %y axis = 1 : tensor<2x3x4xf32>, tensor<2x2x4xf32> -> tensor<2x5x4xf32>
  %b = lpc.broadcast %v dims = [1, 2] : tensor<1x4xf32> -> tensor<2x5x4xf32>
  %s = lpc.add %c, %b : tensor<2x5x4xf32>
  %sl = lpc.slice %s start = [0, 1, 0] limit = [2, 5, 4] step = [1, 2, 1] : tensor<2x5x4xf32> -> tensor<2x2x4xf32>
  %tr = lpc.transpose %sl [2, 0, 1] : tensor<2x2x4xf32> -> tensor<4x2x2xf32>
  %r = lpc.reshape %tr : tensor<4x2x2xf32> -> tensor<16xf32>
  %r2 = lpc.reshape %r : tensor<16xf32> -> tensor<4x2x2xf32>
  %l = lpc.mse_loss %r2, %t : tensor<4x2x2xf32>
  return %l : tensor<f32>
}
func.func @embedding() -> tensor<f32> {
  %tok = lpc.input "tokens" tokens : tensor<2x6xi32>
  %e = lpc.param "table" zeros : tensor<5x3xf32>
  %t = lpc.input "t" targets : tensor<2x6x3xf32>
  %h = lpc.embedding %e, %tok : tensor<5x3xf32>, tensor<2x6xi32> -> tensor<2x6x3xf32>
  %l = lpc.mse_loss %h, %t : tensor<2x6x3xf32>
  return %l : tensor<f32>
}
func.func @attention_mask() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<2x3x4xf32>
  %t = lpc.input "t" targets : tensor<2x3x4xf32>
  %m = lpc.causal_mask %x : tensor<2x3x4xf32>
  %s = lpc.softmax %m : tensor<2x3x4xf32>
  %l = lpc.mse_loss %s, %t : tensor<2x3x4xf32>
  return %l : tensor<f32>
}
func.func @where() -> tensor<f32> {
  %c = lpc.constant dense<[[true, false, true, true], [false, false, true, false], [true, false, false, true]]> : tensor<3x4xi1>
  %a = lpc.param "a" zeros : tensor<3x4xf32>
  %b = lpc.param "b" zeros : tensor<3x4xf32>
  %t = lpc.input "t" targets : tensor<3x4xf32>
  %w = lpc.where %c, %a, %b : tensor<3x4xi1>, tensor<3x4xf32>
  %l = lpc.mse_loss %w, %t : tensor<3x4xf32>
  return %l : tensor<f32>
}
func.func @dropout() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<4x8xf32>
  %t = lpc.input "t" targets : tensor<4x8xf32>
  %d = lpc.dropout %x {rate = 0.3 : f64, seed = 7 : i64} : tensor<4x8xf32>
  %l = lpc.mse_loss %d, %t : tensor<4x8xf32>
  return %l : tensor<f32>
}
func.func @cross_entropy() -> tensor<f32> {
  %x = lpc.param "logits" zeros : tensor<2x3x5xf32>
  %y = lpc.input "labels" labels : tensor<2x3xi32>
  %l = lpc.softmax_cross_entropy %x, %y : tensor<2x3x5xf32>, tensor<2x3xi32>
  return %l : tensor<f32>
}
func.func @cross_entropy_sum_ignore() -> tensor<f32> {
  %x = lpc.param "logits" zeros : tensor<4x5xf32>
  %y = lpc.constant dense<[1, -100, 4, 0]> : tensor<4xi32>
  %l = lpc.softmax_cross_entropy %x, %y {reduction = #lpc.reduction<sum>, ignore_index = -100 : i64} : tensor<4x5xf32>, tensor<4xi32>
  return %l : tensor<f32>
}
func.func @mse_both() -> tensor<f32> {
  %p = lpc.param "p" zeros : tensor<3x2xf32>
  %q = lpc.param "q" zeros : tensor<3x2xf32>
  %l = lpc.mse_loss %p, %q {reduction = #lpc.reduction<sum>} : tensor<3x2xf32>
  return %l : tensor<f32>
}
// lpc.attention: every element of query, key and value, causal (Sq = Skv),
// with an additive mask and fewer queries than keys (one key masked off for
// one row), and without either, more queries than keys, an explicit scale
// and D != Dv.
func.func @attention_causal() -> tensor<f32> {
  %q = lpc.param "q" zeros : tensor<2x3x5x4xf32>
  %k = lpc.param "k" zeros : tensor<2x3x5x4xf32>
  %v = lpc.param "v" zeros : tensor<2x3x5x4xf32>
  %t = lpc.input "t" targets : tensor<2x3x5x4xf32>
  %o, %lse = lpc.attention %q, %k, %v {causal} : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32> -> tensor<2x3x5x4xf32>, tensor<2x3x5xf32>
  %l = lpc.mse_loss %o, %t : tensor<2x3x5x4xf32>
  return %l : tensor<f32>
}
func.func @attention_additive_mask() -> tensor<f32> {
  %q = lpc.param "q" zeros : tensor<2x3x4xf32>
  %k = lpc.param "k" zeros : tensor<2x5x4xf32>
  %v = lpc.param "v" zeros : tensor<2x5x3xf32>
  %m = lpc.constant dense<[[0.0, 0.5, -1.0, 0.0, 0.25], [0.0, 0xFF800000, 0.0, 1.0, 0.0], [0.3, 0.0, 0.0, 0.0, -0.5]]> : tensor<3x5xf32>
  %t = lpc.input "t" targets : tensor<2x3x3xf32>
  %o, %lse = lpc.attention %q, %k, %v mask %m {causal} : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x3xf32>, tensor<3x5xf32> -> tensor<2x3x3xf32>, tensor<2x3xf32>
  %l = lpc.mse_loss %o, %t : tensor<2x3x3xf32>
  return %l : tensor<f32>
}
func.func @attention_scale() -> tensor<f32> {
  %q = lpc.param "q" zeros : tensor<6x3xf32>
  %k = lpc.param "k" zeros : tensor<4x3xf32>
  %v = lpc.param "v" zeros : tensor<4x2xf32>
  %t = lpc.input "t" targets : tensor<6x2xf32>
  %o, %lse = lpc.attention %q, %k, %v {scale = 0.7 : f64} : tensor<6x3xf32>, tensor<4x3xf32>, tensor<4x2xf32> -> tensor<6x2xf32>, tensor<6xf32>
  %l = lpc.mse_loss %o, %t : tensor<6x2xf32>
  return %l : tensor<f32>
}
// lpc.grouped_matmul: rows in any order, a group with no rows (2), rows of
// no group (-1, 4: outside [0, 4)); both layouts of the matrices. Every
// element of x and of the experts' matrices.
func.func @grouped_matmul() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<7x3xf32>
  %w = lpc.param "w" zeros : tensor<4x3x5xf32>
  %g = lpc.constant dense<[1, 0, 1, 3, -1, 0, 4]> : tensor<7xi32>
  %t = lpc.input "t" targets : tensor<7x5xf32>
  %y = lpc.grouped_matmul %x, %w, %g : tensor<7x3xf32>, tensor<4x3x5xf32>, tensor<7xi32> -> tensor<7x5xf32>
  %l = lpc.mse_loss %y, %t : tensor<7x5xf32>
  return %l : tensor<f32>
}
func.func @grouped_matmul_tb() -> tensor<f32> {
  %x = lpc.param "x" zeros : tensor<7x3xf32>
  %w = lpc.param "w" zeros : tensor<4x5x3xf32>
  %g = lpc.constant dense<[3, 3, 0, 1, 0, -1, 1]> : tensor<7xi32>
  %t = lpc.input "t" targets : tensor<7x5xf32>
  %y = lpc.grouped_matmul %x, %w, %g {transpose_b} : tensor<7x3xf32>, tensor<4x5x3xf32>, tensor<7xi32> -> tensor<7x5xf32>
  %l = lpc.mse_loss %y, %t : tensor<7x5xf32>
  return %l : tensor<f32>
}
