func.func @cast_saturate_not_fp8(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.cast' op 'saturate' applies only to fp8 results, not 'bf16'}}
  %0 = lpc.cast %a {saturate} : tensor<4xf32> to tensor<4xbf16>
  return
}
