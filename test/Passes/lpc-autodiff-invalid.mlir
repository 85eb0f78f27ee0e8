// RUN: lpc-opt %s -split-input-file -lpc-autodiff -verify-diagnostics
// RUN: not lpc-opt %s -split-input-file -lpc-autodiff="optimizer=lion" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not lpc-opt %s -split-input-file -lpc-autodiff="function=nope" 2>&1 | FileCheck %s --check-prefix=FN

// OPT: error: lpc-autodiff: unknown optimizer 'lion' (expected sgd, adamw or none)
// FN: error: lpc-autodiff: no function named 'nope'

func.func @no_rule() -> tensor<f32> {
  %w = lpc.param "w" ones : tensor<4xf32>
  // expected-error @+1 {{lpc-autodiff: no gradient rule for 'lpc.amax', which lies between a parameter and the loss}}
  %a = lpc.amax %w : tensor<4xf32>
  return %a : tensor<f32>
}

// -----

func.func @all_reduce_in_forward() -> tensor<f32> {
  %w = lpc.param "w" ones : tensor<f32>
  // expected-error @+1 {{lpc-autodiff: lpc.all_reduce lies between a parameter and the loss; collectives have no gradient rule: they belong after the backward (lpc-data-parallel puts them between the gradients and the optimizer)}}
  %a = lpc.all_reduce %w mean : tensor<f32> -> tensor<f32>
  return %a : tensor<f32>
}

// -----

func.func @all_gather_in_forward() -> tensor<f32> {
  %w = lpc.param "w" ones : tensor<2xf32>
  // expected-error @+1 {{lpc-autodiff: lpc.all_gather lies between a parameter and the loss; collectives have no gradient rule}}
  %a = lpc.all_gather %w ranks(2) : tensor<2xf32> -> tensor<4xf32>
  %l = lpc.reduce_sum %a {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @not_scalar() -> tensor<4xf32> {
  %w = lpc.param "w" ones : tensor<4xf32>
  // expected-error @+1 {{lpc-autodiff: @not_scalar must return one scalar loss of type 'tensor<f32>', got 'tensor<4xf32>'}}
  return %w : tensor<4xf32>
}

// -----

func.func @unused() -> tensor<f32> {
  %t = lpc.input "t" targets : tensor<2x4xf32>
  %w = lpc.param "w" ones : tensor<2x4xf32>
  // expected-warning @+1 {{lpc-autodiff: parameter 'dead' does not affect the loss; its gradient is zero}}
  %d = lpc.param "dead" ones : tensor<3xf32>
  %l = lpc.mse_loss %w, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}

// -----

// Integer paths and data inputs are not differentiated: no error here.
func.func @integer_path() -> tensor<f32> {
  %tok = lpc.input "tokens" tokens : tensor<2x3xi32>
  %tgt = lpc.input "targets" labels : tensor<2x3xi32>
  %e = lpc.param "wte" normal {std = 0.02 : f64} : tensor<16x8xf32>
  %h = lpc.embedding %e, %tok : tensor<16x8xf32>, tensor<2x3xi32> -> tensor<2x3x8xf32>
  %m = lpc.amax %h : tensor<2x3x8xf32>
  %logits = lpc.matmul %h, %e {transpose_b} : tensor<2x3x8xf32>, tensor<16x8xf32> -> tensor<2x3x16xf32>
  %l = lpc.softmax_cross_entropy %logits, %tgt : tensor<2x3x16xf32>, tensor<2x3xi32>
  return %l : tensor<f32>
}
