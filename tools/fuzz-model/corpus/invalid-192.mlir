func.func @all_reduce_type(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.all_reduce' op mean gives the input's type 'tensor<4x8xf32>', got 'tensor<8x4xf32>'}}
  %0 = lpc.all_reduce %g mean : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}
