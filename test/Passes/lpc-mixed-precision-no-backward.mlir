// A model whose loss depends on no parameter gets no backward pass from
// lpc-autodiff; under fp16 (dynamic loss scaling) the pipeline then says what
// is wrong in the user's terms (found by fuzz-model: it used to say only that
// the step had no lpc.grad_seed). bf16 trains it (the parameter only decays).
// RUN: not lpc-opt %s --pass-pipeline='builtin.module(lpc-autodiff,lpc-mixed-precision{policy=fp16})' -o %t.mlir 2>&1 | FileCheck %s
// RUN: not test -e %t.mlir
// RUN: lpc-opt %s --pass-pipeline='builtin.module(lpc-autodiff,lpc-mixed-precision{policy=bf16})' 2>&1 | FileCheck %s --check-prefix=BF16

// CHECK: warning: lpc-autodiff: parameter 'dead' does not affect the loss; its gradient is zero
// CHECK: error: lpc-loss-scaling: @ridge_train_step updates parameters (lpc.adamw) but has no backward pass to scale (no lpc.grad_seed); lpc-autodiff builds none when the loss depends on no parameter

// BF16: warning: lpc-autodiff: parameter 'dead' does not affect the loss; its gradient is zero
// BF16: func.func @ridge_train_step(
// BF16: lpc.adamw

func.func @ridge() -> tensor<f32> {
  %t = lpc.input "t" targets : tensor<2x4xf32>
  %p = lpc.input "p" features : tensor<2x4xf32>
  %w = lpc.param "dead" ones : tensor<3xf32>
  %l = lpc.mse_loss %p, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}
