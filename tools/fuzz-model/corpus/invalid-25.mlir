func.func @input_tokens_bool() {
  // expected-error @+1 {{'lpc.input' op 'tokens' inputs must have an integer element type (i32 or i64), got 'tensor<4x8xi1>'}}
  %0 = lpc.input "t" tokens : tensor<4x8xi1>
  return
}
