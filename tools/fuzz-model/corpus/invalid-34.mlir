//===----------------------------------------------------------------------===//
// lpc.matmul (shape inference shared with lpc.scaled_matmul)
//===----------------------------------------------------------------------===//

func.func @matmul_rank1(%a: tensor<4xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+2 {{operands must have rank >= 2, got 'tensor<4xf32>' and 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<4xf32>, tensor<4x8xf32> -> tensor<8xf32>
  return
}
