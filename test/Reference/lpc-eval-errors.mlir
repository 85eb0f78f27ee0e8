// lpc-eval's diagnostics: errors in the model point at file:line:col, bad
// options and files give one clear line; every failure exits non-zero.
//
// RUN: not lpc-eval %s --function=embedding_oob 2>&1 | FileCheck %s --check-prefix=EMB
// RUN: not lpc-eval %s --function=label_oob 2>&1 | FileCheck %s --check-prefix=LABEL
// RUN: not lpc-eval %s --function=unsupported 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OP
// RUN: not lpc-eval %s --function=reduce_scatter_two_ranks 2>&1 | FileCheck %s --check-prefix=RANKS
// RUN: not lpc-eval %s --function=all_gather_two_ranks 2>&1 | FileCheck %s --check-prefix=RANKS-AG
// RUN: not lpc-eval %s --function=shard_two_ranks 2>&1 | FileCheck %s --check-prefix=RANKS-SHARD
// RUN: not lpc-eval %s --function=nope 2>&1 | FileCheck %s --check-prefix=NOFUNC
// RUN: not lpc-eval %S/Inputs/parse-error.mlir 2>&1 | FileCheck %s --check-prefix=PARSE
// RUN: not lpc-eval %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not lpc-eval 2>&1 | FileCheck %s --check-prefix=NOARGS
// RUN: not lpc-eval %s --print=everything 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: not lpc-eval %s --inputs=zeros 2>&1 | FileCheck %s --check-prefix=INPUTS
// RUN: not lpc-eval %s --saturate 2>&1 | FileCheck %s --check-prefix=NOCONVERT
// RUN: not lpc-eval --convert=f64 --bits-table 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not lpc-eval --convert=f32 --bits-table 2>&1 | FileCheck %s --check-prefix=F32TABLE
// RUN: not lpc-eval --convert=f16 %s 2>&1 | FileCheck %s --check-prefix=CONVERT-FILE
// RUN: printf '1.5\n0x1.8p+1\n\nabc\n' | not lpc-eval --convert=f16 2>&1 | FileCheck %s --check-prefix=NUMBER

// EMB: lpc-eval-errors.mlir:[[@LINE+4]]:8: error: reference evaluator: id 7 at position 1 is out of range for a table of 4 rows
func.func @embedding_oob() -> tensor<2x2xf32> {
  %t = lpc.constant dense<1.0> : tensor<4x2xf32>
  %ids = lpc.constant dense<[0, 7]> : tensor<2xi32>
  %0 = lpc.embedding %t, %ids : tensor<4x2xf32>, tensor<2xi32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// LABEL: lpc-eval-errors.mlir:[[@LINE+4]]:8: error: reference evaluator: label -1 at position 1 is out of range for 3 classes
func.func @label_oob() -> tensor<f32> {
  %logits = lpc.constant dense<0.0> : tensor<2x3xf32>
  %labels = lpc.constant dense<[2, -1]> : tensor<2xi64>
  %0 = lpc.softmax_cross_entropy %logits, %labels {ignore_index = -100 : i64} : tensor<2x3xf32>, tensor<2xi64>
  return %0 : tensor<f32>
}

// UNKNOWN-OP: lpc-eval-errors.mlir:[[@LINE+2]]:8: error: reference evaluator: unsupported op 'arith.addf'
func.func @unsupported(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = arith.addf %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// NOFUNC: lpc-eval: no function named 'nope' in '{{.*}}lpc-eval-errors.mlir' (functions: embedding_oob, label_oob, unsupported, reduce_scatter_two_ranks, all_gather_two_ranks, shard_two_ranks)
// PARSE: parse-error.mlir:3:17: error: use of value '%0' expects different type than prior uses
// NOFILE: lpc-eval: cannot open input file '{{.*}}does-not-exist.mlir'
// NOARGS: lpc-eval: no model file given
// PRINT: Cannot find option named 'everything'
// INPUTS: lpc-eval: --inputs: only 'random' is supported, got 'zeros'
// NOCONVERT: lpc-eval: --saturate and --bits-table need --convert=FORMAT
// FORMAT: lpc-eval: --convert: unknown float format 'f64'
// F32TABLE: lpc-eval: --bits-table: f32 has too many bit patterns
// CONVERT-FILE: lpc-eval: --convert reads numbers from stdin; do not give a model file
// NUMBER:      0x3e00
// NUMBER-NEXT: 0x4200
// NUMBER-NEXT: lpc-eval: stdin line 4: cannot parse 'abc' as a number

// RANKS: lpc-eval-errors.mlir:[[@LINE+3]]:8: error: reference evaluator: lpc.reduce_scatter is built for 2 ranks; the reference runs one process (ranks(1))
func.func @reduce_scatter_two_ranks() -> tensor<1xf32> {
  %g = lpc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = lpc.reduce_scatter %g sum ranks(2) : tensor<2xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// RANKS-AG: lpc-eval-errors.mlir:[[@LINE+3]]:8: error: reference evaluator: lpc.all_gather is built for 4 ranks; the reference runs one process (ranks(1))
func.func @all_gather_two_ranks() -> tensor<8xf32> {
  %g = lpc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = lpc.all_gather %g ranks(4) : tensor<2xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// RANKS-SHARD: lpc-eval-errors.mlir:[[@LINE+3]]:8: error: reference evaluator: lpc.shard is built for 2 ranks; the reference runs one process (ranks(1))
func.func @shard_two_ranks() -> tensor<1xf32> {
  %g = lpc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = lpc.shard %g ranks(2) : tensor<2xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}
