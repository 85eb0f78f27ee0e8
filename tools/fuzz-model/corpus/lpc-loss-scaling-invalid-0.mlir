// mode=off checks nothing and changes nothing.



// An optimizer update without a backward seed: the gradient did not come
// from lpc-autodiff, and there is nothing to scale.
func.func @no_seed(%w: tensor<4xf32> {lpc.state = "param", lpc.name = "w"},
                   %m: tensor<4xf32> {lpc.state = "momentum_buffer", lpc.name = "w"},
                   %g: tensor<4xf32> {lpc.input = "grad"})
    -> (tensor<4xf32> {lpc.state = "param", lpc.name = "w"},
        tensor<4xf32> {lpc.state = "momentum_buffer", lpc.name = "w"}) {
  %lr = lpc.constant dense<0.1> : tensor<f32>
  // expected-error @+1 {{lpc-loss-scaling: @no_seed updates parameters (lpc.sgd) but has no backward seed (lpc.grad_seed, made by lpc-autodiff): its gradients cannot be scaled}}
  %p, %b = lpc.sgd %w, %g, %m lr(%lr) : tensor<4xf32>
  return %p, %b : tensor<4xf32>, tensor<4xf32>
}
