// The attributes lpc-outline-parallel-loops puts on the bodies it outlines.
// expected-error @+1 {{'lpc.parallel_grain' must be an integer attribute on a function}}
func.func private @body(index, index) attributes {lpc.parallel_body, lpc.parallel_grain = "4"}
