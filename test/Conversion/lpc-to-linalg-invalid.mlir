// RUN: lpc-opt %s -split-input-file -verify-diagnostics --lpc-to-linalg

// Forward-only ops that lpc-autodiff resolves have no lowering of their own.
func.func @stop(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{lpc-to-linalg: 'lpc.stop_gradient' is resolved by lpc-autodiff, which must run first}}
  %s = lpc.stop_gradient %x : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @select(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{lpc-to-linalg: 'lpc.train_or_eval' is resolved by lpc-autodiff, which must run first}}
  %s = lpc.train_or_eval %x, %y : tensor<4xf32>
  return %s : tensor<4xf32>
}
