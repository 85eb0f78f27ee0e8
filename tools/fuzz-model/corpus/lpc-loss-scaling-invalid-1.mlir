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
