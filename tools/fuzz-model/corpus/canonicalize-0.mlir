// Folders and canonicalization patterns of LpcFolds.cpp. Every rewrite must
// be exact (bit-identical for every input); the negative cases check that
// rounding rewrites do not happen.

func.func @neg_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.neg %x : tensor<4xf32>
  %1 = lpc.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
