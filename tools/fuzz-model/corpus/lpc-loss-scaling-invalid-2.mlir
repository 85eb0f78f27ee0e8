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
