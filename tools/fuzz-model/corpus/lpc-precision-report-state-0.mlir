// --lpc-precision-report on IR written by hand: a train step in the shape the
// whole pipeline gives (FP8 GEMMs as lpc.scaled_matmul fed by lpc.quantize,
// FP8 scaling state, a dynamic loss scaler, clipping), a bare forward model
// that no precision pass has seen, and a function without compute ops. The
// pipeline-driven cases are in lpc-precision-report.mlir.
//
// @step, by hand:
//   parameters         w 16x16 f32                                 = 1024 B
//   optimizer state    momentum_buffer 16x16 f32                   = 1024 B
//   fp8 state          scale (4) + 16-entry f32 amax history (64)  =   68 B (0 in fp32)
//   loss-scaler state  f32 scale (4) + i32 growth tracker (4)      =    8 B (0 in fp32)
//   checkpoint         1024 + 1024 + 68 + 8 + i64 step 8 = 2132 B; fp32: 2056
//   gradients          sgd <- clip <- unscale <- cast <- the bf16 16x16 wgrad
//   largest act.       the fprop GEMM's 32x16 bf16 output: 1024 B (2048)
//   saved for bwd      the fprop output read by relu_grad (1024 B) + the FP8
//                      copy of the relu output read by the wgrad GEMM (512 B)
//                      = 1536 B; fp32: 2 x 2048 = 4096. The FP8 copy of the
//                      input x is data, not an activation; scalars (the
//                      scale_inv) are not counted.

// Without compute ops there is nothing to report: no table, an empty JSON array.

// The scale_inv (a follow op without an assigned precision): its type.
// A bare forward model: precisions from the types, no reasons, the params
// from lpc.param; a fused location lists its names.



module {
  // The shape of a train step after the whole pipeline (FP8 scaling and loss
  // scaling), written by hand: the report reads it as it is.
  func.func @step(
      %w: tensor<16x16xf32> {lpc.state = "param", lpc.name = "w"},
      %m: tensor<16x16xf32> {lpc.state = "momentum_buffer", lpc.name = "w"},
      %ws: tensor<f32> {lpc.state = "fp8_scale", lpc.name = "w"},
      %wh: tensor<16xf32> {lpc.state = "fp8_amax_history", lpc.name = "w"},
      %ls: tensor<f32> {lpc.state = "loss_scale"},
      %gt: tensor<i32> {lpc.state = "loss_scale_growth_tracker"},
      %step: tensor<i64> {lpc.state = "step"},
      %x: tensor<32x16xf32> {lpc.input = "x"})
      -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<f32>, tensor<16xf32>,
          tensor<f32>, tensor<i32>, tensor<f32>) {
    %one = lpc.constant dense<1.0> : tensor<f32> loc("fc")
    %si = lpc.div %one, %ws : tensor<f32> loc("fc")
    %xq = lpc.quantize %x, %ws : tensor<32x16xf32> to tensor<32x16xf8E4M3FN> loc("fc")
    %wq = lpc.quantize %w, %ws : tensor<16x16xf32> to tensor<16x16xf8E4M3FN> loc("fc")
    %h = lpc.scaled_matmul %xq, %wq scales(%si, %si) {fast_accum, role = #lpc.role<fprop>, lpc.reason = "fp8 fprop GEMM (E4M3 x E4M3), bf16 output"} : tensor<32x16xf8E4M3FN>, tensor<16x16xf8E4M3FN> -> tensor<32x16xbf16> loc("fc")
    %a = lpc.relu %h {lpc.assigned = #lpc.precision<bf16>, lpc.reason = "follow: inputs are bf16"} : tensor<32x16xbf16> loc("act")
    %af = lpc.cast %a : tensor<32x16xbf16> to tensor<32x16xf32> loc("act")
    %l = lpc.reduce_sum %af {axes = array<i64: 0, 1>, lpc.assigned = #lpc.precision<fp32>, lpc.reason = "keep-fp32"} : tensor<32x16xf32> -> tensor<f32> loc("loss")
    %seed = lpc.grad_seed : tensor<f32> loc("loss")
    %sseed = lpc.loss_scale %seed, %ls : tensor<f32> loc("loss")
    %g = lpc.broadcast %sseed dims = [] : tensor<f32> -> tensor<32x16xf32> loc("backward"("loss"))
    %gb = lpc.cast %g : tensor<32x16xf32> to tensor<32x16xbf16> loc("backward"("loss"))
    %gr = lpc.relu_grad %gb, %h : tensor<32x16xbf16> loc("backward"("act"))
    %gq = lpc.quantize %gr, %si : tensor<32x16xbf16> to tensor<32x16xf8E5M2> loc("backward"("fc"))
    %aq = lpc.quantize %a, %ws : tensor<32x16xbf16> to tensor<32x16xf8E4M3FN> loc("fc")
    %dw = lpc.scaled_matmul %aq, %gq scales(%si, %si) {transpose_a, role = #lpc.role<wgrad>} : tensor<32x16xf8E4M3FN>, tensor<32x16xf8E5M2> -> tensor<16x16xbf16> loc("backward"("fc"))
    %dwf = lpc.cast %dw : tensor<16x16xbf16> to tensor<16x16xf32> loc("backward"("fc"))
    %dwu = lpc.unscale %dwf, %ls : tensor<16x16xf32> loc("loss_scaling")
    %ok = lpc.all_finite %dwu : tensor<16x16xf32> loc("loss_scaling")
    %clipped, %norm = lpc.clip_by_global_norm %dwu {max_norm = 1.0 : f64} : tensor<16x16xf32> loc("optimizer")
    %lr = lpc.constant dense<0.1> : tensor<f32> loc("optimizer")
    %nw, %nm = lpc.sgd %w, %clipped, %m lr(%lr) {momentum = 0.9 : f64} : tensor<16x16xf32> loc("w")
    %nls, %ngt = lpc.loss_scale_update %ls, %gt, %ok : tensor<i32> loc("loss_scaling")
    return %nw, %nm, %ws, %wh, %nls, %ngt, %l : tensor<16x16xf32>, tensor<16x16xf32>, tensor<f32>, tensor<16xf32>, tensor<f32>, tensor<i32>, tensor<f32>
  }

  // A bare forward model, no pipeline: precisions are the types, no reasons.
  func.func @forward() -> tensor<f32> {
    %x = lpc.input "x" features : tensor<8x16xbf16> loc("x")
    %y = lpc.input "y" targets : tensor<8x4xf32> loc("y")
    %w = lpc.param "w" xavier_uniform : tensor<16x4xf32> loc("fc")
    %wc = lpc.cast %w : tensor<16x4xf32> to tensor<16x4xbf16> loc("fc")
    %h = lpc.matmul %x, %wc : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16> loc("fc")
    %hf = lpc.cast %h : tensor<8x4xbf16> to tensor<8x4xf32> loc("fc")
    %s = lpc.tanh %hf : tensor<8x4xf32> loc(fused["act", "fc"])
    %l = lpc.mse_loss %s, %y : tensor<8x4xf32> loc("loss")
    return %l : tensor<f32>
  }
  // No compute op: not reported.
  func.func @plumbing(%x: tensor<4xf32>) -> tensor<4xbf16> {
    %c = lpc.cast %x : tensor<4xf32> to tensor<4xbf16>
    return %c : tensor<4xbf16>
  }
}
