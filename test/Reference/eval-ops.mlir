// The reference evaluator on small functions whose results are known by hand.
// f32 values print as the shortest decimal that rounds back to them in f32
// (an f32 0.59 prints "0.59", although it is 0.5899999737...); values of the
// narrower formats print exactly.
//
// RUN: lpc-eval %s --function=matmul --print=full | FileCheck %s --check-prefix=MATMUL
// RUN: lpc-eval %s --function=matmul_bf16 --print=full | FileCheck %s --check-prefix=MATMUL-BF16
// RUN: lpc-eval %s --function=softmax --print=full | FileCheck %s --check-prefix=SOFTMAX
// RUN: lpc-eval %s --function=layernorm --print=full | FileCheck %s --check-prefix=LAYERNORM
// RUN: lpc-eval %s --function=cross_entropy --print=full | FileCheck %s --check-prefix=XENT
// RUN: lpc-eval %s --function=gelu --print=full | FileCheck %s --check-prefix=GELU
// RUN: lpc-eval %s --function=cast_bf16_ties --print=full | FileCheck %s --check-prefix=CAST-BF16
// RUN: lpc-eval %s --function=cast_fp8 --print=full | FileCheck %s --check-prefix=CAST-FP8
// RUN: lpc-eval %s --function=quantize --print=full | FileCheck %s --check-prefix=QUANT
// RUN: lpc-eval %s --function=adamw --print=full | FileCheck %s --check-prefix=ADAMW
// RUN: lpc-eval %s --function=sgd --print=full | FileCheck %s --check-prefix=SGD
// RUN: lpc-eval %s --function=clip --print=full | FileCheck %s --check-prefix=CLIP
// RUN: lpc-eval %s --function=dropout --print=full | FileCheck %s --check-prefix=DROPOUT
// RUN: lpc-eval %s --function=dropout --print=full --step=1 | FileCheck %s --check-prefix=DROPOUT-STEP1
// RUN: lpc-eval %s --function=embedding_grad --print=full | FileCheck %s --check-prefix=EMBGRAD
// RUN: lpc-eval %s --function=data_movement --print=full | FileCheck %s --check-prefix=MOVE
// RUN: lpc-eval %s --function=reductions --print=full | FileCheck %s --check-prefix=REDUCE
// RUN: lpc-eval %s --function=grads --print=full | FileCheck %s --check-prefix=GRADS
// RUN: lpc-eval %s --function=loss_scaling --print=full | FileCheck %s --check-prefix=LOSS-SCALE
// RUN: lpc-eval %s --function=lr_schedule --print=full | FileCheck %s --check-prefix=LR
// RUN: lpc-eval %s --function=fp8_scaling --print=full | FileCheck %s --check-prefix=FP8-SCALE
// RUN: lpc-eval %s --function=loss_scale_update --print=full | FileCheck %s --check-prefix=LS-UPDATE
// RUN: lpc-eval %s --function=matmul --print=json | FileCheck %s --check-prefix=JSON

// [[1,2],[3,4]] x [[5,6],[7,8]]; with transpose_b, transpose_a, and batched
// with a shared rank-2 rhs.
// MATMUL:      result #0: tensor<2x2xf32>
// MATMUL-NEXT:   {{\[}}[19, 22], [43, 50]]
// MATMUL-NEXT: result #1: tensor<2x2xf32>
// MATMUL-NEXT:   {{\[}}[17, 23], [39, 53]]
// MATMUL-NEXT: result #2: tensor<2x2xf32>
// MATMUL-NEXT:   {{\[}}[26, 30], [38, 44]]
// MATMUL-NEXT: result #3: tensor<2x1x2xf32>
// MATMUL-NEXT:   {{\[}}{{\[}}[19, 22]], {{\[}}[43, 50]]]
func.func @matmul() -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1x2xf32>) {
  %a = lpc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = lpc.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %0 = lpc.matmul %a, %b : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %1 = lpc.matmul %a, %b {transpose_b} : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %2 = lpc.matmul %a, %b {transpose_a} : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %a3 = lpc.reshape %a : tensor<2x2xf32> -> tensor<2x1x2xf32>
  %3 = lpc.matmul %a3, %b : tensor<2x1x2xf32>, tensor<2x2xf32> -> tensor<2x1x2xf32>
  return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1x2xf32>
}

// bf16 operands, sum accumulated exactly and rounded once: 1 + 3 * 2^-8 is the
// tie between 1 + 2^-7 (odd) and 1 + 2^-6 (even): 1.015625. Rounding each
// partial sum instead would give 1 + 2^-8 -> 1, then 1 + 2^-7 = 1.0078125.
// MATMUL-BF16:      result #0: tensor<1x1xbf16>
// MATMUL-BF16-NEXT:   {{\[}}[1.015625]]
func.func @matmul_bf16() -> tensor<1x1xbf16> {
  %a = lpc.constant dense<[[1.0, 0.00390625, 0.0078125]]> : tensor<1x3xbf16>
  %b = lpc.constant dense<1.0> : tensor<3x1xbf16>
  %0 = lpc.matmul %a, %b : tensor<1x3xbf16>, tensor<3x1xbf16> -> tensor<1x1xbf16>
  return %0 : tensor<1x1xbf16>
}

// softmax([1, 2, 3]) = e^x / (e + e^2 + e^3); log_softmax = x - 3.40760596;
// along axis 0 of a 2x2 tensor; a fully masked row (all -inf) gives NaN.
// SOFTMAX:      result #0: tensor<3xf32>
// SOFTMAX-NEXT:   [0.09003057, 0.24472848, 0.66524094]
// SOFTMAX-NEXT: result #1: tensor<3xf32>
// SOFTMAX-NEXT:   [-2.407606, -1.407606, -0.40760598]
// SOFTMAX-NEXT: result #2: tensor<2x2xf32>
// SOFTMAX-NEXT:   {{\[}}[0.5, 0.26894143], [0.5, 0.7310586]]
// SOFTMAX-NEXT: result #3: tensor<1x2xf32>
// SOFTMAX-NEXT:   {{\[}}[{{-?}}nan, {{-?}}nan]]
func.func @softmax() -> (tensor<3xf32>, tensor<3xf32>, tensor<2x2xf32>, tensor<1x2xf32>) {
  %x = lpc.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = lpc.softmax %x : tensor<3xf32>
  %1 = lpc.log_softmax %x : tensor<3xf32>
  %y = lpc.constant dense<[[1.0, 1.0], [1.0, 2.0]]> : tensor<2x2xf32>
  %2 = lpc.softmax %y {axis = 0 : i64} : tensor<2x2xf32>
  %m = lpc.constant dense<0xFF800000> : tensor<1x2xf32>
  %3 = lpc.softmax %m : tensor<1x2xf32>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<2x2xf32>, tensor<1x2xf32>
}

// x = [1, 2, 3, 4]: mean 2.5, biased variance 1.25, epsilon 1e-5:
// xhat = (x - 2.5) / sqrt(1.25001) = [-1.341635, -0.4472118, ...];
// y = xhat * [1, 1, 2, 2] + [0, 1, 0, 1]. rmsnorm (eps 1e-6):
// x / sqrt(7.5 + 1e-6) * gamma.
// LAYERNORM:      result #0: tensor<1x4xf32>
// LAYERNORM-NEXT:   {{\[}}[-1.3416355, 0.5527882, 0.8944236, 3.683271]]
// LAYERNORM-NEXT: result #1: tensor<1x4xf32>
// LAYERNORM-NEXT:   {{\[}}[0.36514834, 0.7302967, 2.19089, 2.9211867]]
func.func @layernorm() -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %x = lpc.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %g = lpc.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %b = lpc.constant dense<[0.0, 1.0, 0.0, 1.0]> : tensor<4xf32>
  %0 = lpc.layernorm %x, %g, %b : tensor<1x4xf32>, tensor<4xf32>
  %1 = lpc.rmsnorm %x, %g : tensor<1x4xf32>, tensor<4xf32>
  return %0, %1 : tensor<1x4xf32>, tensor<1x4xf32>
}

// Rows [0, 0] (label 0): ln 2 = 0.6931472; [1, 0] (label 1):
// ln(1 + e) = 1.3132617; [5, 5] ignored (label -100).
// mean = (0.6931472 + 1.3132617) / 2 = 1.0032044; sum = 2.0064089.
// Gradient (mean, seed 1): (softmax - onehot) / 2, ignored row 0.
// XENT:      result #0: tensor<f32>
// XENT-NEXT:   1.0032045
// XENT-NEXT: result #1: tensor<f32>
// XENT-NEXT:   2.006409
// XENT-NEXT: result #2: tensor<3x2xf32>
// XENT-NEXT:   {{\[}}[-0.25, 0.25], [0.3655293, -0.3655293], [0, 0]]
func.func @cross_entropy() -> (tensor<f32>, tensor<f32>, tensor<3x2xf32>) {
  %logits = lpc.constant dense<[[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]]> : tensor<3x2xf32>
  %labels = lpc.constant dense<[0, 1, -100]> : tensor<3xi32>
  %0 = lpc.softmax_cross_entropy %logits, %labels {ignore_index = -100 : i64} : tensor<3x2xf32>, tensor<3xi32>
  %1 = lpc.softmax_cross_entropy %logits, %labels {ignore_index = -100 : i64, reduction = #lpc.reduction<sum>} : tensor<3x2xf32>, tensor<3xi32>
  %seed = lpc.constant dense<1.0> : tensor<f32>
  %2 = lpc.softmax_cross_entropy_grad %seed, %logits, %labels {ignore_index = -100 : i64} : tensor<3x2xf32>, tensor<3xi32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<3x2xf32>
}

// gelu(x) = x Phi(x): Phi(1) = 0.8413447, Phi(-1) = 0.1586553; the tanh form
// at 1: 0.5 (1 + tanh(sqrt(2/pi) 1.044715)) = 0.8411920.
// GELU:      result #0: tensor<4xf32>
// GELU-NEXT:   [-0.15865526, 0, 0.8413448, 1.9544997]
// GELU-NEXT: result #1: tensor<4xf32>
// GELU-NEXT:   [-0.15880801, 0, 0.841192, 1.9545977]
func.func @gelu() -> (tensor<4xf32>, tensor<4xf32>) {
  %x = lpc.constant dense<[-1.0, 0.0, 1.0, 2.0]> : tensor<4xf32>
  %0 = lpc.gelu %x : tensor<4xf32>
  %1 = lpc.gelu %x {approximation = #lpc.gelu_approximation<tanh>} : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// bf16 keeps 8 significant bits: 1 + 2^-8 is the tie between 1 (even) and
// 1 + 2^-7 (odd) -> 1; 1 + 3 * 2^-8 is the tie between 1 + 2^-7 (odd) and
// 1 + 2^-6 (even) -> 1.015625; one f32 ulp above the first tie -> 1.0078125.
// CAST-BF16:      result #0: tensor<3xbf16>
// CAST-BF16-NEXT:   [1, 1.015625, 1.0078125]
func.func @cast_bf16_ties() -> tensor<3xbf16> {
  %x = lpc.constant dense<[1.00390625, 1.01171875, 1.00390637]> : tensor<3xf32>
  %0 = lpc.cast %x : tensor<3xf32> to tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// f8E4M3FN (max 448, no inf): 464 is the tie between 448 (even) and the
// missing 480, so it rounds to 448; beyond it NaN, or 448 with saturate.
// f8E5M2 (max 57344): 61440 is the tie with the missing 65536 -> inf; with
// saturate 57344, and -inf becomes -57344 (PTX cvt.rn.satfinite).
// CAST-FP8:      result #0: tensor<5xf8E4M3FN>
// CAST-FP8-NEXT:   [448, 448, nan, -nan, 0.0625]
// CAST-FP8-NEXT: result #1: tensor<5xf8E4M3FN>
// CAST-FP8-NEXT:   [448, 448, 448, -448, 0.0625]
// CAST-FP8-NEXT: result #2: tensor<4xf8E5M2>
// CAST-FP8-NEXT:   [57344, inf, inf, -inf]
// CAST-FP8-NEXT: result #3: tensor<4xf8E5M2>
// CAST-FP8-NEXT:   [57344, 57344, 57344, -57344]
func.func @cast_fp8() -> (tensor<5xf8E4M3FN>, tensor<5xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xf8E5M2>) {
  %x = lpc.constant dense<[448.0, 464.0, 465.0, -1000.0, 0.0625]> : tensor<5xf32>
  %0 = lpc.cast %x : tensor<5xf32> to tensor<5xf8E4M3FN>
  %1 = lpc.cast %x {saturate} : tensor<5xf32> to tensor<5xf8E4M3FN>
  %y = lpc.constant dense<[60000.0, 61440.0, 1.0e6, 0xFF800000]> : tensor<4xf32>
  %2 = lpc.cast %y : tensor<4xf32> to tensor<4xf8E5M2>
  %3 = lpc.cast %y {saturate} : tensor<4xf32> to tensor<4xf8E5M2>
  return %0, %1, %2, %3 : tensor<5xf8E4M3FN>, tensor<5xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xf8E5M2>
}

// quantize: sat(x * 4) in E4M3 (0.3 * 4 = 1.2 -> 1.25; 200 * 4 -> 448);
// dequantize: q * 0.25; amax; scaled_matmul of the quantized values with
// both scale_invs 0.25 and a bias: [[0.3125, 112]] x [[1], [1]] + 1.
// QUANT:      result #0: tensor<1x2xf8E4M3FN>
// QUANT-NEXT:   {{\[}}[1.25, 448]]
// QUANT-NEXT: result #1: tensor<1x2xf32>
// QUANT-NEXT:   {{\[}}[0.3125, 112]]
// QUANT-NEXT: result #2: tensor<f32>
// QUANT-NEXT:   200
// QUANT-NEXT: result #3: tensor<1x1xf32>
// QUANT-NEXT:   {{\[}}[113.3125]]
func.func @quantize() -> (tensor<1x2xf8E4M3FN>, tensor<1x2xf32>, tensor<f32>, tensor<1x1xf32>) {
  %x = lpc.constant dense<[[0.3, -200.0]]> : tensor<1x2xf32>
  %xa = lpc.constant dense<[[0.3, 200.0]]> : tensor<1x2xf32>
  %scale = lpc.constant dense<4.0> : tensor<f32>
  %inv = lpc.constant dense<0.25> : tensor<f32>
  %q = lpc.quantize %xa, %scale : tensor<1x2xf32> to tensor<1x2xf8E4M3FN>
  %d = lpc.dequantize %q, %inv : tensor<1x2xf8E4M3FN> to tensor<1x2xf32>
  %amax = lpc.amax %x : tensor<1x2xf32>
  %ones = lpc.constant dense<4.0> : tensor<2x1xf8E4M3FN>
  %bias = lpc.constant dense<1.0> : tensor<1xf32>
  %mm = lpc.scaled_matmul %q, %ones scales(%inv, %inv) bias(%bias : tensor<1xf32>) : tensor<1x2xf8E4M3FN>, tensor<2x1xf8E4M3FN> -> tensor<1x1xf32>
  return %q, %d, %amax, %mm : tensor<1x2xf8E4M3FN>, tensor<1x2xf32>, tensor<f32>, tensor<1x1xf32>
}

// AdamW, step 1, lr 0.1, defaults (b1 0.9, b2 0.999, eps 1e-8, wd 0.01):
// m = 0.1 g, v = 0.001 g^2; bias correction gives m^ = g, v^ = g^2, so
// p' = p (1 - 0.001) - 0.1 g / (|g| + 1e-8):
//   1 -> 0.999 - 0.1 = 0.899;  -2 -> -1.998 + 0.1 = -1.898.
// ADAMW:      result #0: tensor<2xf32>
// ADAMW-NEXT:   [0.899, -1.898]
// ADAMW-NEXT: result #1: tensor<2xf32>
// ADAMW-NEXT:   [0.05, -0.025]
// ADAMW-NEXT: result #2: tensor<2xf32>
// ADAMW-NEXT:   [0.00025, 6.25e-05]
func.func @adamw() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %p = lpc.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %g = lpc.constant dense<[0.5, -0.25]> : tensor<2xf32>
  %zero = lpc.constant dense<0.0> : tensor<2xf32>
  %step = lpc.constant dense<1> : tensor<i64>
  %lr = lpc.constant dense<0.1> : tensor<f32>
  %np, %nm, %nv = lpc.adamw %p, %g, %zero, %zero step(%step : tensor<i64>) lr(%lr) : tensor<2xf32>
  return %np, %nm, %nv : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// SGD, lr 0.5, p = [1, 2], g = [0.5, -1], buf = [0.1, 0.2]:
//  momentum 0.9: buf' = 0.9 buf + g = [0.59, -0.82]; p' = p - 0.5 buf'
//    = [0.705, 2.41];
//  nesterov: g + 0.9 buf' = [1.031, -1.738]; p' = [0.4845, 2.869];
//  momentum 0.9, dampening 0.5, weight_decay 0.1: d = g + 0.1 p = [0.6, -0.8],
//    buf' = 0.9 buf + 0.5 d = [0.39, -0.22], p' = [0.805, 2.11];
//  momentum 0: p' = p - 0.5 g = [0.75, 2.5], buffer unchanged.
// SGD:      result #0: tensor<2xf32>
// SGD-NEXT:   [0.70500004, 2.41]
// SGD-NEXT: result #1: tensor<2xf32>
// SGD-NEXT:   [0.59, -0.82]
// SGD-NEXT: result #2: tensor<2xf32>
// SGD-NEXT:   [0.48450002, 2.869]
// SGD-NEXT: result #3: tensor<2xf32>
// SGD-NEXT:   [0.59, -0.82]
// SGD-NEXT: result #4: tensor<2xf32>
// SGD-NEXT:   [0.805, 2.11]
// SGD-NEXT: result #5: tensor<2xf32>
// SGD-NEXT:   [0.39000002, -0.22]
// SGD-NEXT: result #6: tensor<2xf32>
// SGD-NEXT:   [0.75, 2.5]
// SGD-NEXT: result #7: tensor<2xf32>
// SGD-NEXT:   [0.1, 0.2]
func.func @sgd() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %p = lpc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = lpc.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %buf = lpc.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %lr = lpc.constant dense<0.5> : tensor<f32>
  %p0, %b0 = lpc.sgd %p, %g, %buf lr(%lr) {momentum = 0.9 : f64} : tensor<2xf32>
  %p1, %b1 = lpc.sgd %p, %g, %buf lr(%lr) {momentum = 0.9 : f64, nesterov} : tensor<2xf32>
  %p2, %b2 = lpc.sgd %p, %g, %buf lr(%lr) {momentum = 0.9 : f64, dampening = 0.5 : f64, weight_decay = 0.1 : f64} : tensor<2xf32>
  %p3, %b3 = lpc.sgd %p, %g, %buf lr(%lr) : tensor<2xf32>
  return %p0, %b0, %p1, %b1, %p2, %b2, %p3, %b3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// Gradients [3] and [4]: global norm 5. max_norm 1: coefficient
// 1 / (5 + 1e-6) = 0.19999996, so [0.5999999, 0.79999983]. max_norm 10: the
// coefficient clamps to 1 and the gradients are unchanged.
// CLIP:      result #0: tensor<1xf32>
// CLIP-NEXT:   [0.5999999]
// CLIP-NEXT: result #1: tensor<1xf32>
// CLIP-NEXT:   [0.79999983]
// CLIP-NEXT: result #2: tensor<f32>
// CLIP-NEXT:   5
// CLIP-NEXT: result #3: tensor<1xf32>
// CLIP-NEXT:   [3]
// CLIP-NEXT: result #4: tensor<1xf32>
// CLIP-NEXT:   [4]
// CLIP-NEXT: result #5: tensor<f32>
// CLIP-NEXT:   5
func.func @clip() -> (tensor<1xf32>, tensor<1xf32>, tensor<f32>, tensor<1xf32>, tensor<1xf32>, tensor<f32>) {
  %a = lpc.constant dense<[3.0]> : tensor<1xf32>
  %b = lpc.constant dense<[4.0]> : tensor<1xf32>
  %ca, %cb, %n = lpc.clip_by_global_norm %a, %b {max_norm = 1.0 : f64} : tensor<1xf32>, tensor<1xf32>
  %da, %db, %m = lpc.clip_by_global_norm %a, %b {max_norm = 10.0 : f64} : tensor<1xf32>, tensor<1xf32>
  return %ca, %cb, %n, %da, %db, %m : tensor<1xf32>, tensor<1xf32>, tensor<f32>, tensor<1xf32>, tensor<1xf32>, tensor<f32>
}

// Dropout with rate 0.25 on 10000 ones: kept elements become 1/0.75 =
// 1.3333334 (max), dropped ones 0 (min). 0.75 * 1.3333334 rounds to exactly 1
// in f32, so summing 0.75 * dropout(x) counts the kept elements: 7500 +- 43
// (one standard deviation) expected; 7453 at step 0 and 7533 at step 1 (the
// mask depends on the step).
// DROPOUT:      result #0: tensor<f32>
// DROPOUT-NEXT:   7453
// DROPOUT-NEXT: result #1: tensor<f32>
// DROPOUT-NEXT:   1.3333334
// DROPOUT-NEXT: result #2: tensor<f32>
// DROPOUT-NEXT:   0
// DROPOUT-STEP1:      result #0: tensor<f32>
// DROPOUT-STEP1-NEXT:   7533
func.func @dropout() -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %x = lpc.constant dense<1.0> : tensor<100x100xf32>
  %d = lpc.dropout %x {rate = 0.25 : f64, seed = 42 : i64} : tensor<100x100xf32>
  %ones = lpc.scale %d {factor = 0.75 : f64} : tensor<100x100xf32>
  %kept = lpc.reduce_sum %ones {axes = array<i64: 0, 1>} : tensor<100x100xf32> -> tensor<f32>
  %mx = lpc.reduce_max %d {axes = array<i64: 0, 1>} : tensor<100x100xf32> -> tensor<f32>
  %neg = lpc.neg %d : tensor<100x100xf32>
  %negmin = lpc.reduce_max %neg {axes = array<i64: 0, 1>} : tensor<100x100xf32> -> tensor<f32>
  %mn = lpc.neg %negmin : tensor<f32>
  return %kept, %mx, %mn : tensor<f32>, tensor<f32>, tensor<f32>
}

// Ids [1, 3, 1, 1] with gradient rows [1, 2], [3, 4], [5, 6], [7, 8]: row 1
// accumulates [1 + 5 + 7, 2 + 6 + 8] = [13, 16], row 3 gets [3, 4], rows 0
// and 2 stay 0. The forward embedding gathers the rows back.
// EMBGRAD:      result #0: tensor<4x2xf32>
// EMBGRAD-NEXT:   {{\[}}[0, 0], [13, 16], [0, 0], [3, 4]]
// EMBGRAD-NEXT: result #1: tensor<2x2x2xf32>
// EMBGRAD-NEXT:   {{\[}}{{\[}}[13, 16], [3, 4]], {{\[}}[13, 16], [13, 16]]]
// With padding_idx = 1 row 1 gets no gradient; the lookup is unchanged.
// EMBGRAD-NEXT: result #2: tensor<4x2xf32>
// EMBGRAD-NEXT:   {{\[}}[0, 0], [0, 0], [0, 0], [3, 4]]
// EMBGRAD-NEXT: result #3: tensor<2x2x2xf32>
// EMBGRAD-NEXT:   {{\[}}{{\[}}[13, 16], [3, 4]], {{\[}}[13, 16], [13, 16]]]
func.func @embedding_grad() -> (tensor<4x2xf32>, tensor<2x2x2xf32>, tensor<4x2xf32>, tensor<2x2x2xf32>) {
  %g = lpc.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %ids = lpc.constant dense<[1, 3, 1, 1]> : tensor<4xi32>
  %0 = lpc.embedding_grad %g, %ids : tensor<4x2xf32>, tensor<4xi32> -> tensor<4x2xf32>
  %ids2 = lpc.reshape %ids : tensor<4xi32> -> tensor<2x2xi32>
  %1 = lpc.embedding %0, %ids2 : tensor<4x2xf32>, tensor<2x2xi32> -> tensor<2x2x2xf32>
  %2 = lpc.embedding_grad %g, %ids {padding_idx = 1 : i64} : tensor<4x2xf32>, tensor<4xi32> -> tensor<4x2xf32>
  %3 = lpc.embedding %0, %ids2 {padding_idx = 1 : i64} : tensor<4x2xf32>, tensor<2x2xi32> -> tensor<2x2x2xf32>
  return %0, %1, %2, %3 : tensor<4x2xf32>, tensor<2x2x2xf32>, tensor<4x2xf32>, tensor<2x2x2xf32>
}

// x = [[1, 2, 3], [4, 5, 6]]: transpose, broadcast along a new middle dim,
// slice with step 2, concat, causal_mask (Q = 2 queries are the last two of
// K = 3 positions: query i sees keys j <= i + 1), where, slice_grad (scatter
// of [[1, 2]] into row 1, columns 0 and 2), add of a broadcast and bias_add.
// MOVE:      result #0: tensor<3x2xf32>
// MOVE-NEXT:   {{\[}}[1, 4], [2, 5], [3, 6]]
// MOVE-NEXT: result #1: tensor<2x2x3xf32>
// MOVE-NEXT:   {{\[}}{{\[}}[1, 2, 3], [1, 2, 3]], {{\[}}[4, 5, 6], [4, 5, 6]]]
// MOVE-NEXT: result #2: tensor<2x2xf32>
// MOVE-NEXT:   {{\[}}[1, 3], [4, 6]]
// MOVE-NEXT: result #3: tensor<2x4xf32>
// MOVE-NEXT:   {{\[}}[1, 2, 3, 7], [4, 5, 6, 8]]
// MOVE-NEXT: result #4: tensor<2x3xf32>
// MOVE-NEXT:   {{\[}}[1, 2, -inf], [4, 5, 6]]
// MOVE-NEXT: result #5: tensor<2x3xf32>
// MOVE-NEXT:   {{\[}}[1, 0, 3], [0, 5, 0]]
// MOVE-NEXT: result #6: tensor<2x3xf32>
// MOVE-NEXT:   {{\[}}[0, 0, 0], [1, 0, 2]]
// MOVE-NEXT: result #7: tensor<2x3xf32>
// MOVE-NEXT:   {{\[}}[11.5, 12, 12.5], [24.5, 25, 25.5]]
func.func @data_movement() -> (tensor<3x2xf32>, tensor<2x2x3xf32>, tensor<2x2xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %x = lpc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = lpc.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = lpc.broadcast %x dims = [0, 2] : tensor<2x3xf32> -> tensor<2x2x3xf32>
  %2 = lpc.slice %x start = [0, 0] limit = [2, 3] step = [1, 2] : tensor<2x3xf32> -> tensor<2x2xf32>
  %c = lpc.constant dense<[[7.0], [8.0]]> : tensor<2x1xf32>
  %3 = lpc.concat %x, %c axis = 1 : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
  %4 = lpc.causal_mask %x : tensor<2x3xf32>
  %cond = lpc.constant dense<[[true, false, true], [false, true, false]]> : tensor<2x3xi1>
  %zero = lpc.constant dense<0.0> : tensor<2x3xf32>
  %5 = lpc.where %cond, %x, %zero : tensor<2x3xi1>, tensor<2x3xf32>
  %g = lpc.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %6 = lpc.slice_grad %g start = [1, 0] limit = [2, 3] step = [1, 2] : tensor<1x2xf32> -> tensor<2x3xf32>
  %bias = lpc.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %bb = lpc.broadcast %bias dims = [0] : tensor<2xf32> -> tensor<2x3xf32>
  %7 = lpc.add %x, %bb : tensor<2x3xf32>
  %b3 = lpc.constant dense<[0.5, 0.0, -0.5]> : tensor<3xf32>
  %8 = lpc.bias_add %7, %b3 : tensor<2x3xf32>, tensor<3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %8 : tensor<3x2xf32>, tensor<2x2x3xf32>, tensor<2x2xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// x = [[1, 2, 3], [4, 5, 6]]; reduce_max_grad routes [10, 20] to the maxima
// of [[1, 3, 3], [2, 0, 1]] along the rows, splitting the tie: [0, 5, 5].
// mse_loss of [1, 2] vs [0, 4]: (1 + 4) / 2 = 2.5 (sum 5); its gradient
// 2 (p - t) / 2 = [1, -2].
// REDUCE:      result #0: tensor<2xf32>
// REDUCE-NEXT:   [6, 15]
// REDUCE-NEXT: result #1: tensor<1x3xf32>
// REDUCE-NEXT:   {{\[}}[2.5, 3.5, 4.5]]
// REDUCE-NEXT: result #2: tensor<2xf32>
// REDUCE-NEXT:   [3, 6]
// REDUCE-NEXT: result #3: tensor<f32>
// REDUCE-NEXT:   21
// REDUCE-NEXT: result #4: tensor<2x3xf32>
// REDUCE-NEXT:   {{\[}}[0, 5, 5], [20, 0, 0]]
// REDUCE-NEXT: result #5: tensor<f32>
// REDUCE-NEXT:   2.5
// REDUCE-NEXT: result #6: tensor<f32>
// REDUCE-NEXT:   5
// REDUCE-NEXT: result #7: tensor<2xf32>
// REDUCE-NEXT:   [1, -2]
func.func @reductions() -> (tensor<2xf32>, tensor<1x3xf32>, tensor<2xf32>, tensor<f32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>, tensor<2xf32>) {
  %x = lpc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = lpc.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  %1 = lpc.reduce_mean %x {axes = array<i64: 0>, keepdims} : tensor<2x3xf32> -> tensor<1x3xf32>
  %2 = lpc.reduce_max %x {axes = array<i64: -1>} : tensor<2x3xf32> -> tensor<2xf32>
  %3 = lpc.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<f32>
  %t = lpc.constant dense<[[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]]> : tensor<2x3xf32>
  %tm = lpc.reduce_max %t {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  %g = lpc.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %4 = lpc.reduce_max_grad %g, %t, %tm {axes = array<i64: 1>} : tensor<2xf32>, tensor<2x3xf32>
  %p = lpc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %q = lpc.constant dense<[0.0, 4.0]> : tensor<2xf32>
  %5 = lpc.mse_loss %p, %q : tensor<2xf32>
  %6 = lpc.mse_loss %p, %q {reduction = #lpc.reduction<sum>} : tensor<2xf32>
  %one = lpc.constant dense<1.0> : tensor<f32>
  %7 = lpc.mse_loss_grad %one, %p, %q : tensor<2xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2xf32>, tensor<1x3xf32>, tensor<2xf32>, tensor<f32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>, tensor<2xf32>
}

// Backward ops at points where the derivative is known:
//  relu'(x) = x > 0 (0 at 0); tanh' = 1 - y^2; sigmoid' = y (1 - y);
//  silu'(0) = 1/2; gelu'(0) = 1/2 (both forms), gelu'(1) = Phi(1) + phi(1)
//  = 0.8413447 + 0.2419707; tanh form at 1: 1.0829641;
//  softmax_grad at y = [1/2, 1/2], g = [1, 0]: y (g - 1/2) = [1/4, -1/4];
//  log_softmax_grad at y = [0, -inf], g = [1, 1]: g - e^y 2 = [-1, 1].
// GRADS:      result #0: tensor<3xf32>
// GRADS-NEXT:   [0, 0, 3]
// GRADS-NEXT: result #1: tensor<2xf32>
// GRADS-NEXT:   [0.75, 1.5]
// GRADS-NEXT: result #2: tensor<2xf32>
// GRADS-NEXT:   [0.25, 0.75]
// GRADS-NEXT: result #3: tensor<2xf32>
// GRADS-NEXT:   [1, 0.92767054]
// GRADS-NEXT: result #4: tensor<2xf32>
// GRADS-NEXT:   [1, 1.0833155]
// GRADS-NEXT: result #5: tensor<2xf32>
// GRADS-NEXT:   [1, 1.0829641]
// GRADS-NEXT: result #6: tensor<2xf32>
// GRADS-NEXT:   [0.25, -0.25]
// GRADS-NEXT: result #7: tensor<2xf32>
// GRADS-NEXT:   [-1, 1]
func.func @grads() -> (tensor<3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %g3 = lpc.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %x3 = lpc.constant dense<[-1.0, 0.0, 2.0]> : tensor<3xf32>
  %0 = lpc.relu_grad %g3, %x3 : tensor<3xf32>
  %g = lpc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = lpc.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %1 = lpc.tanh_grad %g, %y : tensor<2xf32>
  %g4 = lpc.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %s = lpc.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %2 = lpc.sigmoid_grad %g4, %s : tensor<2xf32>
  %g2 = lpc.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %x = lpc.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %3 = lpc.silu_grad %g2, %x : tensor<2xf32>
  %4 = lpc.gelu_grad %g2, %x : tensor<2xf32>
  %5 = lpc.gelu_grad %g2, %x {approximation = #lpc.gelu_approximation<tanh>} : tensor<2xf32>
  %g10 = lpc.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %half = lpc.constant dense<0.5> : tensor<2xf32>
  %6 = lpc.softmax_grad %g10, %half : tensor<2xf32>
  %ones = lpc.constant dense<1.0> : tensor<2xf32>
  %ly = lpc.constant dense<[0.0, 0xFF800000]> : tensor<2xf32>
  %7 = lpc.log_softmax_grad %ones, %ly : tensor<2xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// loss_scale: 1.5 * 65536 = 98304; unscale multiplies by 1/65536;
// all_finite is false as soon as one input holds inf or NaN.
// LOSS-SCALE:      result #0: tensor<f32>
// LOSS-SCALE-NEXT:   98304
// LOSS-SCALE-NEXT: result #1: tensor<2xf32>
// LOSS-SCALE-NEXT:   [1.5, 1.5258789e-05]
// LOSS-SCALE-NEXT: result #2: tensor<i1>
// LOSS-SCALE-NEXT:   1
// LOSS-SCALE-NEXT: result #3: tensor<i1>
// LOSS-SCALE-NEXT:   0
func.func @loss_scaling() -> (tensor<f32>, tensor<2xf32>, tensor<i1>, tensor<i1>) {
  %loss = lpc.constant dense<1.5> : tensor<f32>
  %scale = lpc.constant dense<65536.0> : tensor<f32>
  %0 = lpc.loss_scale %loss, %scale : tensor<f32>
  %g = lpc.constant dense<[98304.0, 1.0]> : tensor<2xf32>
  %1 = lpc.unscale %g, %scale : tensor<2xf32>
  %2 = lpc.all_finite %0, %1 : tensor<f32>, tensor<2xf32>
  %bad = lpc.constant dense<[1.0, 0x7F800000]> : tensor<2xf32>
  %3 = lpc.all_finite %0, %bad : tensor<f32>, tensor<2xf32>
  return %0, %1, %2, %3 : tensor<f32>, tensor<2xf32>, tensor<i1>, tensor<i1>
}

// base_lr 1e-3, min_lr 1e-5, warm-up 10, total 100:
//  step 5 (warm-up): 1e-3 * 5 / 10 = 5e-4 for every kind;
//  step 55 (half-way): cosine and linear both give 1e-5 + 0.99e-3 / 2 = 5.05e-4;
//  step 32: p = 22/90: cosine 1e-5 + 0.99e-3 * (1 + cos(pi 22/90)) / 2,
//  linear 1e-5 + 0.99e-3 * 68/90 = 7.58e-4; step 200: min_lr;
//  constant after warm-up: base_lr.
// LR:      result #0: tensor<f32>
// LR-NEXT:   5e-04
// LR-NEXT: result #1: tensor<f32>
// LR-NEXT:   0.000505
// LR-NEXT: result #2: tensor<f32>
// LR-NEXT:   0.000505
// LR-NEXT: result #3: tensor<f32>
// LR-NEXT:   0.0008610732
// LR-NEXT: result #4: tensor<f32>
// LR-NEXT:   0.000758
// LR-NEXT: result #5: tensor<f32>
// LR-NEXT:   1e-05
// LR-NEXT: result #6: tensor<f32>
// LR-NEXT:   0.001
func.func @lr_schedule() -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %s5 = lpc.constant dense<5> : tensor<i64>
  %s55 = lpc.constant dense<55> : tensor<i64>
  %s32 = lpc.constant dense<32> : tensor<i32>
  %s200 = lpc.constant dense<200> : tensor<i64>
  %0 = lpc.lr_schedule %s5 cosine {base_lr = 1.0e-3 : f64, min_lr = 1.0e-5 : f64, warmup_steps = 10 : i64, total_steps = 100 : i64} : tensor<i64>
  %1 = lpc.lr_schedule %s55 cosine {base_lr = 1.0e-3 : f64, min_lr = 1.0e-5 : f64, warmup_steps = 10 : i64, total_steps = 100 : i64} : tensor<i64>
  %2 = lpc.lr_schedule %s55 linear {base_lr = 1.0e-3 : f64, min_lr = 1.0e-5 : f64, warmup_steps = 10 : i64, total_steps = 100 : i64} : tensor<i64>
  %3 = lpc.lr_schedule %s32 cosine {base_lr = 1.0e-3 : f64, min_lr = 1.0e-5 : f64, warmup_steps = 10 : i64, total_steps = 100 : i64} : tensor<i32>
  %4 = lpc.lr_schedule %s32 linear {base_lr = 1.0e-3 : f64, min_lr = 1.0e-5 : f64, warmup_steps = 10 : i64, total_steps = 100 : i64} : tensor<i32>
  %5 = lpc.lr_schedule %s200 cosine {base_lr = 1.0e-3 : f64, min_lr = 1.0e-5 : f64, warmup_steps = 10 : i64, total_steps = 100 : i64} : tensor<i64>
  %6 = lpc.lr_schedule %s55 constant {base_lr = 1.0e-3 : f64, warmup_steps = 10 : i64} : tensor<i64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// amax history [1, 5, 2, 9] (most recent first) after pushing 3: [3, 1, 5, 2]
// (9 drops out); scaling amax: max 5, most_recent 3; a NaN amax propagates.
// fp8_compute_scale (Transformer Engine): 448 / 2 = 224 (E4M3), / 2^1 with
// margin 1 = 112, 57344 / 2 = 28672 (E5M2); amax 0 or inf keeps the old
// scale (1); with interval 2 only step 1 (the 2nd update) recomputes; a
// scale that overflows f32 (448 / 1e-45) becomes FLT_MAX.
// FP8-SCALE:      result #0: tensor<4xf32>
// FP8-SCALE-NEXT:   [3, 1, 5, 2]
// FP8-SCALE-NEXT: result #1: tensor<f32>
// FP8-SCALE-NEXT:   5
// FP8-SCALE-NEXT: result #2: tensor<4xf32>
// FP8-SCALE-NEXT:   [3, 1, 5, 2]
// FP8-SCALE-NEXT: result #3: tensor<f32>
// FP8-SCALE-NEXT:   3
// FP8-SCALE-NEXT: result #4: tensor<f32>
// FP8-SCALE-NEXT:   {{-?}}nan
// FP8-SCALE-NEXT: result #5: tensor<f32>
// FP8-SCALE-NEXT:   224
// FP8-SCALE-NEXT: result #6: tensor<f32>
// FP8-SCALE-NEXT:   112
// FP8-SCALE-NEXT: result #7: tensor<f32>
// FP8-SCALE-NEXT:   28672
// FP8-SCALE-NEXT: result #8: tensor<f32>
// FP8-SCALE-NEXT:   1
// FP8-SCALE-NEXT: result #9: tensor<f32>
// FP8-SCALE-NEXT:   1
// FP8-SCALE-NEXT: result #10: tensor<f32>
// FP8-SCALE-NEXT:   1
// FP8-SCALE-NEXT: result #11: tensor<f32>
// FP8-SCALE-NEXT:   224
// FP8-SCALE-NEXT: result #12: tensor<f32>
// FP8-SCALE-NEXT:   3.4028235e+38
func.func @fp8_scaling() -> (tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %h = lpc.constant dense<[1.0, 5.0, 2.0, 9.0]> : tensor<4xf32>
  %a3 = lpc.constant dense<3.0> : tensor<f32>
  %h0, %m0 = lpc.amax_history_push %h, %a3 : tensor<4xf32>
  %h1, %m1 = lpc.amax_history_push %h, %a3 {algo = #lpc.amax_algo<most_recent>} : tensor<4xf32>
  %nan = lpc.constant dense<0x7FC00000> : tensor<f32>
  %h2, %m2 = lpc.amax_history_push %h, %nan : tensor<4xf32>
  %a2 = lpc.constant dense<2.0> : tensor<f32>
  %one = lpc.constant dense<1.0> : tensor<f32>
  %s0 = lpc.constant dense<0> : tensor<i64>
  %s1 = lpc.constant dense<1> : tensor<i64>
  %0 = lpc.fp8_compute_scale %a2, %one, %s0 {format = #lpc.precision<fp8_e4m3>} : tensor<i64>
  %1 = lpc.fp8_compute_scale %a2, %one, %s0 {format = #lpc.precision<fp8_e4m3>, margin = 1 : i64} : tensor<i64>
  %2 = lpc.fp8_compute_scale %a2, %one, %s0 {format = #lpc.precision<fp8_e5m2>} : tensor<i64>
  %zero = lpc.constant dense<0.0> : tensor<f32>
  %3 = lpc.fp8_compute_scale %zero, %one, %s0 {format = #lpc.precision<fp8_e4m3>} : tensor<i64>
  %inf = lpc.constant dense<0x7F800000> : tensor<f32>
  %4 = lpc.fp8_compute_scale %inf, %one, %s0 {format = #lpc.precision<fp8_e4m3>} : tensor<i64>
  %5 = lpc.fp8_compute_scale %a2, %one, %s0 {format = #lpc.precision<fp8_e4m3>, interval = 2 : i64} : tensor<i64>
  %6 = lpc.fp8_compute_scale %a2, %one, %s1 {format = #lpc.precision<fp8_e4m3>, interval = 2 : i64} : tensor<i64>
  %tiny = lpc.constant dense<1.0e-45> : tensor<f32>
  %7 = lpc.fp8_compute_scale %tiny, %one, %s0 {format = #lpc.precision<fp8_e4m3>} : tensor<i64>
  return %h0, %m0, %h1, %m1, %m2, %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// GradScaler (growth_interval 3): a clean step counts (65536, tracker 0 -> 1);
// the 3rd clean step grows the scale (-> 131072, tracker 0); an overflow
// backs off (-> 32768, tracker 0); growth that would overflow f32 (2^127 * 2)
// keeps the scale but still resets the tracker.
// LS-UPDATE:      result #0: tensor<f32>
// LS-UPDATE-NEXT:   65536
// LS-UPDATE-NEXT: result #1: tensor<i32>
// LS-UPDATE-NEXT:   1
// LS-UPDATE-NEXT: result #2: tensor<f32>
// LS-UPDATE-NEXT:   131072
// LS-UPDATE-NEXT: result #3: tensor<i32>
// LS-UPDATE-NEXT:   0
// LS-UPDATE-NEXT: result #4: tensor<f32>
// LS-UPDATE-NEXT:   32768
// LS-UPDATE-NEXT: result #5: tensor<i32>
// LS-UPDATE-NEXT:   0
// LS-UPDATE-NEXT: result #6: tensor<f32>
// LS-UPDATE-NEXT:   1.7014118e+38
// LS-UPDATE-NEXT: result #7: tensor<i32>
// LS-UPDATE-NEXT:   0
func.func @loss_scale_update() -> (tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) {
  %scale = lpc.constant dense<65536.0> : tensor<f32>
  %t0 = lpc.constant dense<0> : tensor<i32>
  %t2 = lpc.constant dense<2> : tensor<i32>
  %ok = lpc.constant dense<true> : tensor<i1>
  %bad = lpc.constant dense<false> : tensor<i1>
  %s0, %n0 = lpc.loss_scale_update %scale, %t0, %ok {growth_interval = 3 : i64} : tensor<i32>
  %s1, %n1 = lpc.loss_scale_update %scale, %t2, %ok {growth_interval = 3 : i64} : tensor<i32>
  %s2, %n2 = lpc.loss_scale_update %scale, %t2, %bad {growth_interval = 3 : i64} : tensor<i32>
  %big = lpc.constant dense<1.70141183e+38> : tensor<f32>
  %s3, %n3 = lpc.loss_scale_update %big, %t2, %ok {growth_interval = 3 : i64} : tensor<i32>
  return %s0, %n0, %s1, %n1, %s2, %n2, %s3, %n3 : tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>
}

// --print=json: flat row-major data with the shape.
// JSON:      {
// JSON-NEXT:   "function": "matmul",
// JSON-NEXT:   "results": [
// JSON-NEXT:     {"dtype": "f32", "shape": [2, 2], "data": [19, 22, 43, 50]},
// JSON-NEXT:     {"dtype": "f32", "shape": [2, 2], "data": [17, 23, 39, 53]},
// JSON-NEXT:     {"dtype": "f32", "shape": [2, 2], "data": [26, 30, 38, 44]},
// JSON-NEXT:     {"dtype": "f32", "shape": [2, 1, 2], "data": [19, 22, 43, 50]}
// JSON-NEXT:   ]
// JSON-NEXT: }

// lpc.attention, q = k = I (2x2), v = [[1, 2], [3, 4]], scale 1. Causal:
// row 0 sees key 0 only (o = v0, lse = 1); row 1 scores [0, 1]:
// lse = ln(1 + e) = 1.31326169 (f32 1.3132616), p = [0.2689414, 0.7310586],
// o = [1 + 2 * 0.7310586, 2 + 2 * 0.7310586]. With the mask [[-inf, -inf],
// [0, 0]] instead, row 0 sees no key: o = 0, lse = -inf.
// RUN: lpc-eval %s --function=attention --print=full | FileCheck %s --check-prefix=ATTENTION
// ATTENTION:      result #0: tensor<2x2xf32>
// ATTENTION-NEXT:   {{\[}}[1, 2], [2.4621172, 3.4621172]]
// ATTENTION-NEXT: result #1: tensor<2xf32>
// ATTENTION-NEXT:   [1, 1.3132616]
// ATTENTION-NEXT: result #2: tensor<2x2xf32>
// ATTENTION-NEXT:   {{\[}}[0, 0], [2.4621172, 3.4621172]]
// ATTENTION-NEXT: result #3: tensor<2xf32>
// ATTENTION-NEXT:   [-inf, 1.3132616]
func.func @attention() -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2xf32>) {
  %q = lpc.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %v = lpc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %m = lpc.constant dense<[[0xFF800000, 0xFF800000], [0.0, 0.0]]> : tensor<2x2xf32>
  %o, %l = lpc.attention %q, %q, %v {causal, scale = 1.0 : f64} : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>, tensor<2xf32>
  %o2, %l2 = lpc.attention %q, %q, %v mask %m {scale = 1.0 : f64} : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>, tensor<2xf32>
  return %o, %l, %o2, %l2 : tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2xf32>
}

// lpc.reduce_scatter, lpc.all_gather and lpc.shard over one rank (ranks(1)) give the
// input back, unrounded whatever the wire format (lpc-eval-errors.mlir:
// more ranks are refused).
// RUN: lpc-eval %s --function=sharding_one_rank --print=full | FileCheck %s --check-prefix=SHARDING
// SHARDING:      result #0: tensor<2x2xf32>
// SHARDING-NEXT:   {{\[\[}}1.5, -2.25], [3.0000002, 0.1]]
// SHARDING-NEXT: result #1: tensor<2x2xf32>
// SHARDING-NEXT:   {{\[\[}}1.5, -2.25], [3.0000002, 0.1]]
// SHARDING-NEXT: result #2: tensor<2x2xf32>
// SHARDING-NEXT:   {{\[\[}}1.5, -2.25], [3.0000002, 0.1]]
// SHARDING-NEXT: result #3: tensor<2x2xf32>
// SHARDING-NEXT:   {{\[\[}}1.5, -2.25], [3.0000002, 0.1]]
func.func @sharding_one_rank() -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %g = lpc.constant dense<[[1.5, -2.25], [3.0000002, 0.1]]> : tensor<2x2xf32>
  %0 = lpc.reduce_scatter %g mean ranks(1) {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<2x2xf32> -> tensor<2x2xf32>
  %1 = lpc.reduce_scatter %g max ranks(1) : tensor<2x2xf32> -> tensor<2x2xf32>
  %2 = lpc.all_gather %g ranks(1) {comm_precision = #lpc.precision<bf16>} : tensor<2x2xf32> -> tensor<2x2xf32>
  %3 = lpc.shard %g ranks(1) : tensor<2x2xf32> -> tensor<2x2xf32>
  return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// lpc.all_reduce: the reference is one rank, so sum, mean and max give the
// input back and any_nonfinite tests the input.
// RUN: lpc-eval %s --function=all_reduce --print=full | FileCheck %s --check-prefix=ALL-REDUCE
// ALL-REDUCE:      result #0: tensor<2xf32>
// ALL-REDUCE-NEXT:   [1.5, -2]
// ALL-REDUCE-NEXT: result #1: tensor<2xf32>
// ALL-REDUCE-NEXT:   [1.5, -2]
// ALL-REDUCE-NEXT: result #2: tensor<2xf32>
// ALL-REDUCE-NEXT:   [1.5, -2]
// ALL-REDUCE-NEXT: result #3: tensor<i1>
// ALL-REDUCE-NEXT:   0
// ALL-REDUCE-NEXT: result #4: tensor<i1>
// ALL-REDUCE-NEXT:   1
func.func @all_reduce() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i1>, tensor<i1>) {
  %g = lpc.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %0 = lpc.all_reduce %g sum : tensor<2xf32> -> tensor<2xf32>
  %1 = lpc.all_reduce %g mean : tensor<2xf32> -> tensor<2xf32>
  %2 = lpc.all_reduce %g max : tensor<2xf32> -> tensor<2xf32>
  %3 = lpc.all_reduce %g any_nonfinite : tensor<2xf32> -> tensor<i1>
  %bad = lpc.constant dense<[1.0, 0x7FC00000]> : tensor<2xf32>
  %4 = lpc.all_reduce %bad any_nonfinite : tensor<2xf32> -> tensor<i1>
  return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i1>, tensor<i1>
}

// lpc.compare, IEEE: NaN makes every predicate false but ne; -0 == 0;
// integers compare as signed values.
// RUN: lpc-eval %s --function=compare --print=full | FileCheck %s --check-prefix=CMP
// CMP:      result #0: tensor<4xi1>
// CMP-NEXT:   [1, 0, 0, 0]
// CMP-NEXT: result #1: tensor<4xi1>
// CMP-NEXT:   [1, 1, 0, 1]
// CMP-NEXT: result #2: tensor<4xi1>
// CMP-NEXT:   [0, 0, 0, 0]
// CMP-NEXT: result #3: tensor<4xi1>
// CMP-NEXT:   [0, 1, 0, 1]
// CMP-NEXT: result #4: tensor<4xi1>
// CMP-NEXT:   [0, 1, 0, 1]
// CMP-NEXT: result #5: tensor<4xi1>
// CMP-NEXT:   [1, 0, 1, 0]
// CMP-NEXT: result #6: tensor<3xi1>
// CMP-NEXT:   [0, 0, 1]
func.func @compare() -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<3xi1>) {
  %a = lpc.constant dense<[1.0, 2.0, 0x7FC00000, -0.0]> : tensor<4xf32>
  %b = lpc.constant dense<[2.0, 2.0, 1.0, 0.0]> : tensor<4xf32>
  %0 = lpc.compare lt, %a, %b : tensor<4xf32> -> tensor<4xi1>
  %1 = lpc.compare le, %a, %b : tensor<4xf32> -> tensor<4xi1>
  %2 = lpc.compare gt, %a, %b : tensor<4xf32> -> tensor<4xi1>
  %3 = lpc.compare ge, %a, %b : tensor<4xf32> -> tensor<4xi1>
  %4 = lpc.compare eq, %a, %b : tensor<4xf32> -> tensor<4xi1>
  %5 = lpc.compare ne, %a, %b : tensor<4xf32> -> tensor<4xi1>
  %i = lpc.constant dense<[-3, 5, 7]> : tensor<3xi32>
  %j = lpc.constant dense<[5, 5, -7]> : tensor<3xi32>
  %6 = lpc.compare gt, %i, %j : tensor<3xi32> -> tensor<3xi1>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<3xi1>
}
