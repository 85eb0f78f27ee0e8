// RUN: lpc-opt %s -split-input-file -lpc-loss-scaling -verify-diagnostics
// RUN: lpc-opt %s -split-input-file -lpc-loss-scaling=mode=static -verify-diagnostics
// mode=off checks nothing and changes nothing.
// RUN: lpc-opt %s -split-input-file -lpc-loss-scaling=mode=off | FileCheck %s --check-prefix=OFF
// RUN: not lpc-opt %s -split-input-file -lpc-loss-scaling=mode=always 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not lpc-opt %s -split-input-file -lpc-loss-scaling=init-scale=0 2>&1 | FileCheck %s --check-prefix=INIT
// RUN: not lpc-opt %s -split-input-file -lpc-loss-scaling="mode=static static-scale=1e39" 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: not lpc-opt %s -split-input-file -lpc-loss-scaling=growth-factor=1 2>&1 | FileCheck %s --check-prefix=GROWTH
// RUN: not lpc-opt %s -split-input-file -lpc-loss-scaling=backoff-factor=1 2>&1 | FileCheck %s --check-prefix=BACKOFF
// RUN: not lpc-opt %s -split-input-file -lpc-loss-scaling=growth-interval=0 2>&1 | FileCheck %s --check-prefix=INTERVAL

// MODE: error: lpc-loss-scaling: unknown mode 'always' (expected dynamic, static or off)
// INIT: error: lpc-loss-scaling: init-scale must be positive and finite in f32, got 0
// STATIC: error: lpc-loss-scaling: static-scale must be positive and finite in f32, got 1.000000e+39
// GROWTH: error: lpc-loss-scaling: growth-factor must be > 1, got 1
// BACKOFF: error: lpc-loss-scaling: backoff-factor must be in (0, 1), got 1
// INTERVAL: error: lpc-loss-scaling: growth-interval must be >= 1, got 0

// OFF-LABEL: func.func @no_seed(
// OFF-NOT: lpc.loss_scale
// OFF-NOT: lpc.unscale
// OFF-LABEL: func.func @two_seeds(
// OFF-LABEL: func.func @two_blocks(
// OFF-NOT: lpc.loss_scale

// An optimizer update without a backward seed: the gradient did not come
// from lpc-autodiff, and there is nothing to scale.
func.func @no_seed(%w: tensor<4xf32> {lpc.state = "param", lpc.name = "w"},
                   %m: tensor<4xf32> {lpc.state = "momentum_buffer", lpc.name = "w"},
                   %g: tensor<4xf32> {lpc.input = "grad"})
    -> (tensor<4xf32> {lpc.state = "param", lpc.name = "w"},
        tensor<4xf32> {lpc.state = "momentum_buffer", lpc.name = "w"}) {
  %lr = lpc.constant dense<0.1> : tensor<f32>
  // expected-error @+1 {{lpc-loss-scaling: @no_seed updates parameters (lpc.sgd) but has no backward pass to scale (no lpc.grad_seed); lpc-autodiff builds none when the loss depends on no parameter}}
  %p, %b = lpc.sgd %w, %g, %m lr(%lr) : tensor<4xf32>
  return %p, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @two_seeds(%w: tensor<4xf32> {lpc.state = "param", lpc.name = "w"},
                     %m: tensor<4xf32> {lpc.state = "momentum_buffer", lpc.name = "w"},
                     %t: tensor<4xf32> {lpc.input = "t"})
    -> (tensor<4xf32> {lpc.state = "param", lpc.name = "w"},
        tensor<4xf32> {lpc.state = "momentum_buffer", lpc.name = "w"}) {
  %s0 = lpc.grad_seed : tensor<f32>
  // expected-error @+1 {{lpc-loss-scaling: @two_seeds has more than one backward seed (lpc.grad_seed)}}
  %s1 = lpc.grad_seed : tensor<f32>
  %g0 = lpc.mse_loss_grad %s0, %w, %t : tensor<4xf32>
  %g1 = lpc.mse_loss_grad %s1, %w, %t : tensor<4xf32>
  %g = lpc.add %g0, %g1 : tensor<4xf32>
  %lr = lpc.constant dense<0.1> : tensor<f32>
  %p, %b = lpc.sgd %w, %g, %m lr(%lr) : tensor<4xf32>
  return %p, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{lpc-loss-scaling: the train step @two_blocks must have a single block}}
func.func @two_blocks(%w: tensor<4xf32> {lpc.state = "param", lpc.name = "w"},
                      %m: tensor<4xf32> {lpc.state = "momentum_buffer", lpc.name = "w"},
                      %t: tensor<4xf32> {lpc.input = "t"})
    -> (tensor<4xf32> {lpc.state = "param", lpc.name = "w"},
        tensor<4xf32> {lpc.state = "momentum_buffer", lpc.name = "w"}) {
  %s = lpc.grad_seed : tensor<f32>
  %g = lpc.mse_loss_grad %s, %w, %t : tensor<4xf32>
  %lr = lpc.constant dense<0.1> : tensor<f32>
  %p, %b = lpc.sgd %w, %g, %m lr(%lr) : tensor<4xf32>
  return %p, %b : tensor<4xf32>, tensor<4xf32>
^unreachable:
  return %w, %m : tensor<4xf32>, tensor<4xf32>
}
