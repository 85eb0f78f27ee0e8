// expected-error @+1 {{'lpc.parallel_noalias' must be an i64 array attribute on a function}}
func.func private @body(index, index) attributes {lpc.parallel_body, lpc.parallel_noalias = [3]}
