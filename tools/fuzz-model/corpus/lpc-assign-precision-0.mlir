// The painter: matmul always low; follow ops follow; keep-fp32 ops stay
// fp32 and their fp32 output spreads through follow ops; data and
// parameters do not vote.


// FP16 keeps reductions in fp32: fp16's range is too small for sums.




func.func @painter(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>, %y: tensor<8xi32>) -> tensor<f32> {
  %h = lpc.matmul %x, %w : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %hb = lpc.bias_add %h, %b : tensor<8x16xf32>, tensor<16xf32>
  %g = lpc.gelu %hb : tensor<8x16xf32>
  %e = lpc.exp %g : tensor<8x16xf32>
  %s = lpc.add %g, %e : tensor<8x16xf32>
  %r = lpc.relu %s : tensor<8x16xf32>
  %sum = lpc.reduce_sum %g {axes = array<i64: 0>} : tensor<8x16xf32> -> tensor<16xf32>
  %sm = lpc.softmax %r : tensor<8x16xf32>
  %t = lpc.tanh %x : tensor<8x16xf32>
  %sg = lpc.sigmoid %g {lpc.precision = #lpc.precision<fp32>} : tensor<8x16xf32>
  %l = lpc.softmax_cross_entropy %sm, %y : tensor<8x16xf32>, tensor<8xi32>
  return %l : tensor<f32>
}
