// Round trip of every lpc op through the custom and the generic form.

//===----------------------------------------------------------------------===//
// Model structure
//===----------------------------------------------------------------------===//

func.func @params() {
  %0 = lpc.param "w.zeros" zeros : tensor<4x8xf32>
  %1 = lpc.param "w.ones" ones : tensor<8xf32>
  %2 = lpc.param "w.const" constant {value = 0.5 : f64} : tensor<8xf32>
  %3 = lpc.param "w.normal" normal : tensor<4x8xf32>
  %4 = lpc.param "w.normal2" normal {std = 0.02 : f64, mean = 0.1 : f64} : tensor<4x8xf32>
  %5 = lpc.param "w.uniform" uniform : tensor<4x8xf32>
  %6 = lpc.param "w.uniform2" uniform {low = -0.5 : f64, high = 0.25 : f64} : tensor<4x8xf32>
  %7 = lpc.param "w.xu" xavier_uniform : tensor<4x8xf32>
  %8 = lpc.param "w.xn" xavier_normal {gain = 2.0 : f64} : tensor<4x8xf32>
  %9 = lpc.param "w.ku" kaiming_uniform {gain = 1.4142135623730951 : f64} : tensor<4x8x3xf32>
  %10 = lpc.param "w.kn" kaiming_normal : tensor<4x8xf32>
  %11 = lpc.param "scalar" ones : tensor<f32>
  return
}

// Parameter names are unique per function, not per module.
func.func @params_same_names_elsewhere() {
  %0 = lpc.param "w.zeros" zeros : tensor<2xf32>
  return
}

func.func @inputs() {
  %0 = lpc.input "x" features : tensor<16x784xf32>
  %1 = lpc.input "y" targets : tensor<16x10xbf16>
  %2 = lpc.input "l" labels : tensor<16xi32>
  %3 = lpc.input "t" tokens : tensor<16x128xi64>
  %4 = lpc.input "h" features : tensor<16x8xf8E4M3FN>
  return
}

func.func @constants() -> (tensor<4xf32>, tensor<2x2xbf16>, tensor<3xi32>, tensor<2xi1>, tensor<f32>) {
  %0 = lpc.constant dense<1.0> : tensor<4xf32>
  %1 = lpc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xbf16>
  %2 = lpc.constant {tag} dense<[1, 2, 3]> : tensor<3xi32>
  %3 = lpc.constant dense<[true, false]> : tensor<2xi1>
  %4 = lpc.constant dense<-0.25> : tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<2x2xbf16>, tensor<3xi32>, tensor<2xi1>, tensor<f32>
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

func.func @matmuls(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>, %at: tensor<8x4xbf16>, %bt: tensor<16x8xbf16>,
                   %ba: tensor<2x4x8xf32>, %bb: tensor<2x8x16xf32>, %w: tensor<8x16xf32>,
                   %e: tensor<4x8xf8E4M3FN>, %f: tensor<8x16xf8E4M3FN>, %bw: tensor<2x16x8xf16>, %bx: tensor<2x8x4xf16>)
    -> (tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<2x4x16xf32>,
        tensor<2x4x16xf32>, tensor<4x16xf8E4M3FN>, tensor<4x16xbf16>, tensor<2x4x16xf16>) {
  %0 = lpc.matmul %a, %b : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
  %1 = lpc.matmul %at, %b {transpose_a} : tensor<8x4xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
  %2 = lpc.matmul %a, %bt {transpose_b} : tensor<4x8xbf16>, tensor<16x8xbf16> -> tensor<4x16xbf16>
  %3 = lpc.matmul %at, %bt {transpose_a, transpose_b, role = #lpc.role<dgrad>} : tensor<8x4xbf16>, tensor<16x8xbf16> -> tensor<4x16xbf16>
  // Batched, and batched with a shared rank-2 rhs.
  %4 = lpc.matmul %ba, %bb : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  %5 = lpc.matmul %ba, %w {role = #lpc.role<fprop>} : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  %6 = lpc.matmul %e, %f {role = #lpc.role<wgrad>} : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x16xf8E4M3FN>
  // The user precision pin on a compute op.
  %7 = lpc.matmul %a, %b {lpc.precision = #lpc.precision<fp32>} : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
  // Batched, both operands transposed.
  %8 = lpc.matmul %bx, %bw {transpose_a, transpose_b} : tensor<2x8x4xf16>, tensor<2x16x8xf16> -> tensor<2x4x16xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<2x4x16xf32>,
        tensor<2x4x16xf32>, tensor<4x16xf8E4M3FN>, tensor<4x16xbf16>, tensor<2x4x16xf16>
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

func.func @elementwise(%x: tensor<4x8xf16>, %y: tensor<4x8xf16>, %b: tensor<8xf16>)
    -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>) {
  %0 = lpc.add %x, %y : tensor<4x8xf16>
  %1 = lpc.sub %x, %y : tensor<4x8xf16>
  %2 = lpc.mul %x, %y : tensor<4x8xf16>
  %3 = lpc.div %x, %y : tensor<4x8xf16>
  %4 = lpc.bias_add %x, %b : tensor<4x8xf16>, tensor<8xf16>
  %5 = lpc.neg %x : tensor<4x8xf16>
  %6 = lpc.relu %x : tensor<4x8xf16>
  // The default approximation (erf) is not printed.
  %7 = lpc.gelu %x : tensor<4x8xf16>
  %8 = lpc.gelu %x {approximation = #lpc.gelu_approximation<tanh>} : tensor<4x8xf16>
  %9 = lpc.gelu %x {approximation = #lpc.gelu_approximation<erf>} : tensor<4x8xf16>
  %10 = lpc.silu %x : tensor<4x8xf16>
  %11 = lpc.tanh %x : tensor<4x8xf16>
  %12 = lpc.sigmoid %x : tensor<4x8xf16>
  %13 = lpc.exp %x : tensor<4x8xf16>
  %14 = lpc.log %x : tensor<4x8xf16>
  %15 = lpc.sqrt %x : tensor<4x8xf16>
  %16 = lpc.rsqrt %x : tensor<4x8xf16>
  %17 = lpc.pow %x {exponent = 2.0 : f64} : tensor<4x8xf16>
  %18 = lpc.scale %x {factor = 0.125 : f64} : tensor<4x8xf16>
  // Precision pins on Follow and KeepFP32 ops.
  %19 = lpc.add %x, %y {lpc.precision = #lpc.precision<bf16>} : tensor<4x8xf16>
  %20 = lpc.exp %x {lpc.precision = #lpc.precision<fp16>} : tensor<4x8xf16>
  %21 = lpc.relu %x {lpc.precision = #lpc.precision<fp8_e5m2>} : tensor<4x8xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21
      : tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>
}

// Elementwise ops on every float element type.
func.func @element_types(%a: tensor<2xf32>, %b: tensor<2xbf16>, %c: tensor<2xf8E4M3FN>, %d: tensor<2xf8E5M2>)
    -> (tensor<2xf32>, tensor<2xbf16>, tensor<2xf8E4M3FN>, tensor<2xf8E5M2>) {
  %0 = lpc.mul %a, %a : tensor<2xf32>
  %1 = lpc.sub %b, %b : tensor<2xbf16>
  %2 = lpc.add %c, %c : tensor<2xf8E4M3FN>
  %3 = lpc.relu %d : tensor<2xf8E5M2>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xbf16>, tensor<2xf8E4M3FN>, tensor<2xf8E5M2>
}

//===----------------------------------------------------------------------===//
// Normalization, softmax, reductions
//===----------------------------------------------------------------------===//

func.func @norms(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %bt: tensor<8xf32>)
    -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>,
        tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<1x4x1xf32>,
        tensor<2x8xf32>, tensor<f32>, tensor<2x4x1xf32>, tensor<4x8xf32>) {
  // Default epsilons (1e-5 for layernorm, 1e-6 for rmsnorm) are not printed.
  %0 = lpc.layernorm %x, %g, %bt : tensor<2x4x8xf32>, tensor<8xf32>
  %1 = lpc.layernorm %x, %g, %bt {epsilon = 1.0e-6 : f64} : tensor<2x4x8xf32>, tensor<8xf32>
  %2 = lpc.rmsnorm %x, %g : tensor<2x4x8xf32>, tensor<8xf32>
  %3 = lpc.rmsnorm %x, %g {epsilon = 1.0e-5 : f64} : tensor<2x4x8xf32>, tensor<8xf32>
  // The default axis (-1) is not printed.
  %4 = lpc.softmax %x : tensor<2x4x8xf32>
  %5 = lpc.softmax %x {axis = 1 : i64} : tensor<2x4x8xf32>
  %6 = lpc.log_softmax %x {axis = -1 : i64} : tensor<2x4x8xf32>
  %7 = lpc.log_softmax %x {axis = -2 : i64} : tensor<2x4x8xf32>
  %8 = lpc.reduce_sum %x {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %9 = lpc.reduce_sum %x {axes = array<i64: 0, -1>, keepdims} : tensor<2x4x8xf32> -> tensor<1x4x1xf32>
  %10 = lpc.reduce_mean %x {axes = array<i64: 1>} : tensor<2x4x8xf32> -> tensor<2x8xf32>
  %11 = lpc.reduce_mean %x {axes = array<i64: 2, 0, 1>} : tensor<2x4x8xf32> -> tensor<f32>
  %12 = lpc.reduce_max %x {axes = array<i64: -1>, keepdims} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  %13 = lpc.reduce_max %x {axes = array<i64: 0>} : tensor<2x4x8xf32> -> tensor<4x8xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>,
        tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<1x4x1xf32>,
        tensor<2x8xf32>, tensor<f32>, tensor<2x4x1xf32>, tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

func.func @movement(%x: tensor<8xf32>, %m: tensor<4x1xbf16>, %t: tensor<2x3x4xf16>, %i: tensor<6xi32>,
                    %tab: tensor<100x16xbf16>, %ids: tensor<2x5xi64>, %s: tensor<2x4x6xf32>,
                    %c: tensor<4x8xi1>, %u: tensor<4x8xf32>, %v: tensor<4x8xf32>, %ci: tensor<4x8xi1>)
    -> (tensor<4x8xf32>, tensor<4x6xbf16>, tensor<2x3x6xi32>, tensor<6x4xf16>, tensor<2x3xi32>,
        tensor<4x2x3xf16>, tensor<2x2x2xf16>, tensor<3xi32>, tensor<2x6x4xf16>, tensor<18xi32>,
        tensor<2x5x16xbf16>, tensor<6x16xbf16>, tensor<2x4x6xf32>, tensor<2x4x6xf32>, tensor<4x8xf32>,
        tensor<4x8xi1>, tensor<4x8xf32>, tensor<3x2x4xf16>) {
  %0 = lpc.broadcast %x dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %1 = lpc.broadcast %m dims = [0, 1] : tensor<4x1xbf16> -> tensor<4x6xbf16>
  %2 = lpc.broadcast %i dims = [2] : tensor<6xi32> -> tensor<2x3x6xi32>
  %3 = lpc.reshape %t : tensor<2x3x4xf16> -> tensor<6x4xf16>
  %4 = lpc.reshape %i : tensor<6xi32> -> tensor<2x3xi32>
  %5 = lpc.transpose %t [2, 0, 1] : tensor<2x3x4xf16> -> tensor<4x2x3xf16>
  %6 = lpc.slice %t start = [0, 1, 0] limit = [2, 3, 4] step = [1, 1, 2] : tensor<2x3x4xf16> -> tensor<2x2x2xf16>
  %7 = lpc.slice %i start = [1] limit = [6] step = [2] : tensor<6xi32> -> tensor<3xi32>
  %8 = lpc.concat %t, %t axis = 1 : tensor<2x3x4xf16>, tensor<2x3x4xf16> -> tensor<2x6x4xf16>
  %9 = lpc.concat %i, %i, %i axis = -1 : tensor<6xi32>, tensor<6xi32>, tensor<6xi32> -> tensor<18xi32>
  %10 = lpc.embedding %tab, %ids : tensor<100x16xbf16>, tensor<2x5xi64> -> tensor<2x5x16xbf16>
  %11 = lpc.embedding %tab, %i : tensor<100x16xbf16>, tensor<6xi32> -> tensor<6x16xbf16>
  // The default fill (-inf) is not printed.
  %12 = lpc.causal_mask %s : tensor<2x4x6xf32>
  %13 = lpc.causal_mask %s {fill = -1.0e4 : f64} : tensor<2x4x6xf32>
  %14 = lpc.where %c, %u, %v : tensor<4x8xi1>, tensor<4x8xf32>
  %15 = lpc.where %ci, %c, %c : tensor<4x8xi1>, tensor<4x8xi1>
  %16 = lpc.dropout %u {rate = 0.1 : f64, seed = 42 : i64} : tensor<4x8xf32>
  %17 = lpc.transpose %t [1, 0, 2] : tensor<2x3x4xf16> -> tensor<3x2x4xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17
      : tensor<4x8xf32>, tensor<4x6xbf16>, tensor<2x3x6xi32>, tensor<6x4xf16>, tensor<2x3xi32>,
        tensor<4x2x3xf16>, tensor<2x2x2xf16>, tensor<3xi32>, tensor<2x6x4xf16>, tensor<18xi32>,
        tensor<2x5x16xbf16>, tensor<6x16xbf16>, tensor<2x4x6xf32>, tensor<2x4x6xf32>, tensor<4x8xf32>,
        tensor<4x8xi1>, tensor<4x8xf32>, tensor<3x2x4xf16>
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

func.func @losses(%lg: tensor<16x10xf32>, %lb: tensor<16xi32>, %lg3: tensor<2x8x50xbf16>, %lb3: tensor<2x8xi64>,
                  %p: tensor<16x1xf32>, %q: tensor<16x1xf32>, %ph: tensor<4xf16>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  // The default reduction (mean) is not printed.
  %0 = lpc.softmax_cross_entropy %lg, %lb : tensor<16x10xf32>, tensor<16xi32>
  %1 = lpc.softmax_cross_entropy %lg, %lb {reduction = #lpc.reduction<sum>} : tensor<16x10xf32>, tensor<16xi32>
  // 3-D logits ([batch, seq, vocab]) with an ignore index.
  %2 = lpc.softmax_cross_entropy %lg3, %lb3 {ignore_index = -100 : i64, reduction = #lpc.reduction<mean>} : tensor<2x8x50xbf16>, tensor<2x8xi64>
  // An ignore index past the class count is allowed too.
  %3 = lpc.softmax_cross_entropy %lg, %lb {ignore_index = 10 : i64, reduction = #lpc.reduction<sum>} : tensor<16x10xf32>, tensor<16xi32>
  %4 = lpc.mse_loss %p, %q : tensor<16x1xf32>
  %5 = lpc.mse_loss %p, %q {reduction = #lpc.reduction<sum>} : tensor<16x1xf32>
  %6 = lpc.mse_loss %ph, %ph {lpc.precision = #lpc.precision<fp32>} : tensor<4xf16>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

func.func @backward(%g: tensor<4x8xf32>, %x: tensor<4x8xf32>, %gm: tensor<8xf32>, %l: tensor<f32>,
                    %lb: tensor<4xi32>, %rm: tensor<4xf32>, %ids: tensor<2x2xi64>, %eg: tensor<2x2x8xf32>) {
  %0 = lpc.relu_grad %g, %x : tensor<4x8xf32>
  %1 = lpc.gelu_grad %g, %x : tensor<4x8xf32>
  %2 = lpc.gelu_grad %g, %x {approximation = #lpc.gelu_approximation<tanh>} : tensor<4x8xf32>
  %3 = lpc.silu_grad %g, %x : tensor<4x8xf32>
  %4 = lpc.tanh_grad %g, %x : tensor<4x8xf32>
  %5 = lpc.sigmoid_grad %g, %x : tensor<4x8xf32>
  %6 = lpc.softmax_grad %g, %x : tensor<4x8xf32>
  %7 = lpc.log_softmax_grad %g, %x {axis = 0 : i64} : tensor<4x8xf32>
  %8:3 = lpc.layernorm_grad %g, %x, %gm : tensor<4x8xf32>, tensor<8xf32>
  %9:2 = lpc.rmsnorm_grad %g, %x, %gm {epsilon = 1.0e-5 : f64} : tensor<4x8xf32>, tensor<8xf32>
  %10 = lpc.softmax_cross_entropy_grad %l, %x, %lb {ignore_index = -1 : i64} : tensor<4x8xf32>, tensor<4xi32>
  %11 = lpc.mse_loss_grad %l, %x, %g {reduction = #lpc.reduction<sum>} : tensor<4x8xf32>
  %12 = lpc.embedding_grad %eg, %ids : tensor<2x2x8xf32>, tensor<2x2xi64> -> tensor<100x8xf32>
  %13 = lpc.reduce_max_grad %rm, %x, %rm {axes = array<i64: 1>} : tensor<4xf32>, tensor<4x8xf32>
  %14 = lpc.slice_grad %g start = [0, 0] limit = [4, 15] step = [1, 2] : tensor<4x8xf32> -> tensor<4x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Precision ops
//===----------------------------------------------------------------------===//

func.func @precision(%x: tensor<4x8xf32>, %h: tensor<4x8xbf16>, %s: tensor<f32>, %q: tensor<4x8xf8E4M3FN>,
                     %r: tensor<8x16xf8E5M2>, %rt: tensor<16x8xf8E4M3FN>, %b: tensor<16xbf16>,
                     %t: tensor<8x4xf8E5M2>, %s2: tensor<f32>)
    -> (tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xf8E4M3FN>, tensor<4x8xf8E5M2>, tensor<4x8xf8E4M3FN>,
        tensor<4x8xf8E5M2>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<f32>, tensor<f32>, tensor<4x16xbf16>,
        tensor<4x16xbf16>, tensor<4x16xf32>, tensor<4x16xf16>, tensor<f32>, tensor<4x8xf32>, tensor<i1>,
        tensor<4x8xf8E4M3FN>, tensor<4x8xbf16>) {
  %0 = lpc.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
  %1 = lpc.cast %h : tensor<4x8xbf16> to tensor<4x8xf32>
  %2 = lpc.cast %x {saturate} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  %3 = lpc.cast %h {saturate} : tensor<4x8xbf16> to tensor<4x8xf8E5M2>
  %4 = lpc.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  %5 = lpc.quantize %h, %s : tensor<4x8xbf16> to tensor<4x8xf8E5M2>
  %6 = lpc.dequantize %q, %s : tensor<4x8xf8E4M3FN> to tensor<4x8xf32>
  %7 = lpc.dequantize %5, %s : tensor<4x8xf8E5M2> to tensor<4x8xf16>
  %8 = lpc.amax %x : tensor<4x8xf32>
  %9 = lpc.amax %q : tensor<4x8xf8E4M3FN>
  // E4M3 x E5M2, no bias, default acc_type.
  %10 = lpc.scaled_matmul %q, %r scales(%s, %s2) : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E5M2> -> tensor<4x16xbf16>
  // E4M3 x E4M3 with bias, fast_accum, transpose_b.
  %11 = lpc.scaled_matmul %q, %rt scales(%s, %s) bias(%b : tensor<16xbf16>) {fast_accum, transpose_b, role = #lpc.role<fprop>} : tensor<4x8xf8E4M3FN>, tensor<16x8xf8E4M3FN> -> tensor<4x16xbf16>
  // An explicit acc_type = f32 is the default and is not printed.
  %12 = lpc.scaled_matmul %q, %rt scales(%s, %s) {transpose_b, acc_type = f32, role = #lpc.role<dgrad>} : tensor<4x8xf8E4M3FN>, tensor<16x8xf8E4M3FN> -> tensor<4x16xf32>
  // E5M2 x E4M3 (gradient x weight), transpose_a.
  %13 = lpc.scaled_matmul %t, %rt scales(%s2, %s) {transpose_a, transpose_b, role = #lpc.role<wgrad>} : tensor<8x4xf8E5M2>, tensor<16x8xf8E4M3FN> -> tensor<4x16xf16>
  %14 = lpc.loss_scale %s2, %s : tensor<f32>
  %15 = lpc.unscale %x, %s : tensor<4x8xf32>
  %16 = lpc.all_finite %x, %h, %q : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf8E4M3FN>
  %17 = lpc.loss_scale %q, %s : tensor<4x8xf8E4M3FN>
  %18 = lpc.unscale %h, %s : tensor<4x8xbf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18
      : tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xf8E4M3FN>, tensor<4x8xf8E5M2>, tensor<4x8xf8E4M3FN>,
        tensor<4x8xf8E5M2>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<f32>, tensor<f32>, tensor<4x16xbf16>,
        tensor<4x16xbf16>, tensor<4x16xf32>, tensor<4x16xf16>, tensor<f32>, tensor<4x8xf32>, tensor<i1>,
        tensor<4x8xf8E4M3FN>, tensor<4x8xbf16>
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

func.func @optim(%p: tensor<4x8xf32>, %g: tensor<4x8xf32>, %m: tensor<4x8xf32>, %v: tensor<4x8xf32>,
                 %lr: tensor<f32>, %step: tensor<i64>, %stepf: tensor<f32>, %b: tensor<8xf32>, %stepi: tensor<i32>) {
  // Defaults (momentum, dampening, weight_decay = 0) are not printed.
  %0:2 = lpc.sgd %p, %g, %m lr(%lr) : tensor<4x8xf32>
  %1:2 = lpc.sgd %p, %g, %m lr(%lr) {momentum = 0.9 : f64, dampening = 0.0 : f64, weight_decay = 1.0e-4 : f64, nesterov} : tensor<4x8xf32>
  %2:2 = lpc.sgd %p, %g, %m lr(%lr) {momentum = 1.0 : f64, dampening = 1.0 : f64} : tensor<4x8xf32>
  // Defaults (0.9, 0.999, 1e-8, 0.01) are not printed.
  %3:3 = lpc.adamw %p, %g, %m, %v step(%step : tensor<i64>) lr(%lr) : tensor<4x8xf32>
  %4:3 = lpc.adamw %p, %g, %m, %v step(%stepf : tensor<f32>) lr(%lr) {beta1 = 0.8 : f64, beta2 = 0.95 : f64, eps = 1.0e-6 : f64, weight_decay = 0.1 : f64} : tensor<4x8xf32>
  %5:3 = lpc.adamw %p, %g, %m, %v step(%stepi : tensor<i32>) lr(%lr) {beta1 = 0.0 : f64, weight_decay = 0.0 : f64} : tensor<4x8xf32>
  %6:3 = lpc.clip_by_global_norm %g, %b {max_norm = 1.0 : f64} : tensor<4x8xf32>, tensor<8xf32>
  %7:2 = lpc.clip_by_global_norm %g {max_norm = 0.5 : f64} : tensor<4x8xf32>
  // Defaults (warmup_steps = total_steps = 0, min_lr = 0) are not printed.
  %8 = lpc.lr_schedule %step constant {base_lr = 1.0e-3 : f64} : tensor<i64>
  %9 = lpc.lr_schedule %stepi linear {base_lr = 1.0e-2 : f64, total_steps = 100 : i64} : tensor<i32>
  %10 = lpc.lr_schedule %step cosine {base_lr = 1.0e-3 : f64, warmup_steps = 10 : i64, total_steps = 100 : i64, min_lr = 1.0e-5 : f64} : tensor<i64>
  // Integer lpc.add (the step counter).
  %11 = lpc.add %step, %step : tensor<i64>
  return
}

// Precision pins on ops in nested regions and on every precision class of
// compute op (AlwaysLow, Follow, KeepFP32).
func.func @pins_in_regions(%c: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> tensor<4xf32> {
    %0 = lpc.softmax %x {lpc.precision = #lpc.precision<bf16>} : tensor<4xf32>
    scf.yield %0 : tensor<4xf32>
  } else {
    %1 = lpc.reduce_sum %x {axes = array<i64: 0>, keepdims, lpc.precision = #lpc.precision<fp32>} : tensor<4xf32> -> tensor<1xf32>
    %2 = lpc.broadcast %1 dims = [0] {lpc.precision = #lpc.precision<fp16>} : tensor<1xf32> -> tensor<4xf32>
    scf.yield %2 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// Dynamic sizes along the concatenation axis give a dynamic result size.
func.func @concat_dynamic(%a: tensor<?x8xf32>, %b: tensor<2x8xf32>) -> (tensor<?x8xf32>, tensor<2x16xf32>) {
  %0 = lpc.concat %a, %b axis = 0 : tensor<?x8xf32>, tensor<2x8xf32> -> tensor<?x8xf32>
  %1 = lpc.concat %b, %b axis = 1 : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x16xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<2x16xf32>
}

func.func @fp8_stats(%x: tensor<4x8xbf16>, %s: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0, %1 = lpc.fp8_stats %x, %s {format = #lpc.precision<fp8_e5m2>} : tensor<4x8xbf16>
  return %0, %1 : tensor<f32>, tensor<f32>
}

func.func @attention(%q: tensor<2x4x16x8xbf16>, %k: tensor<2x4x12x8xbf16>,
                     %v: tensor<2x4x12x6xbf16>, %m: tensor<16x12xf32>)
    -> (tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>) {
  %o, %l = lpc.attention %q, %k, %v {causal} : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16> -> tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>
  %o2, %l2 = lpc.attention %q, %k, %v mask %m {scale = 0.25 : f64} : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>, tensor<16x12xf32> -> tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>
  %dq, %dk, %dv = lpc.attention_grad %o, %q, %k, %v, %o, %l mask %m {causal} : tensor<2x4x16x6xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>, tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>, tensor<16x12xf32>
  return %dq, %dk, %dv : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>
}

func.func @all_reduce(%g: tensor<4x8xf32>, %s: tensor<f32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i1>, tensor<f32>, tensor<4x8xf32>) {
  %0 = lpc.all_reduce %g mean : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = lpc.all_reduce %g sum {comm_precision = #lpc.precision<fp32>} : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = lpc.all_reduce %s max : tensor<f32> -> tensor<f32>
  %3 = lpc.all_reduce %g any_nonfinite : tensor<4x8xf32> -> tensor<i1>
  %4 = lpc.all_reduce %s mean {lpc.assigned = #lpc.precision<fp32>} : tensor<f32> -> tensor<f32>
  %5 = lpc.all_reduce %g mean {comm_precision = #lpc.precision<fp8_e5m2>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i1>, tensor<f32>, tensor<4x8xf32>
}
