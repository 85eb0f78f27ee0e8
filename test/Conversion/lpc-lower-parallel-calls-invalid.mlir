// RUN: lpc-opt %s -split-input-file -verify-diagnostics -lpc-lower-parallel-calls

// lpc-outline-parallel-loops records where the noalias pointers of a body
// are among its lowered parameters; a body lowered some other way (here:
// one parameter fewer) is refused rather than given wrong noalias facts.

// expected-error @+1 {{lpc-lower-parallel-calls: the body has 3 parameters, lpc.parallel_params says 4 : i64}}
llvm.func internal @body(%lo: i64, %hi: i64, %p: !llvm.ptr) attributes {lpc.parallel_body, lpc.parallel_grain = 1 : i64, lpc.parallel_noalias = array<i64: 2>, lpc.parallel_params = 4 : i64} {
  llvm.return
}

// -----

// expected-error @+1 {{lpc-lower-parallel-calls: lpc.parallel_noalias position 2 is not a pointer parameter}}
llvm.func internal @body(%lo: i64, %hi: i64, %x: f32) attributes {lpc.parallel_body, lpc.parallel_grain = 1 : i64, lpc.parallel_noalias = array<i64: 2>, lpc.parallel_params = 3 : i64} {
  llvm.return
}

// -----

// expected-error @+1 {{lpc-lower-parallel-calls: a parallel body must take (i64 lo, i64 hi, captures...) and return nothing}}
llvm.func internal @body(%lo: i32, %hi: i64) attributes {lpc.parallel_body} {
  llvm.return
}
