// A mask (decomposed under every policy: cuDNN's step takes none), Sq < Skv,
// lse used: the broadcast mask is added, lse is the row logsumexp.
func.func @mask_lse(%q: tensor<3x8xf32>, %k: tensor<5x8xf32>, %m: tensor<3x5xf32>) -> (tensor<3x8xf32>, tensor<3xf32>) {
  %o, %l = lpc.attention %q, %k, %k mask %m {causal, scale = 0.5 : f64} : tensor<3x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>, tensor<3x5xf32> -> tensor<3x8xf32>, tensor<3xf32>
  return %o, %l : tensor<3x8xf32>, tensor<3xf32>
}
