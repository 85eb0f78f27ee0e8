// lpc.all_reduce on the CPU (dialects/CollectiveBufferization.cpp: calls of
// runtime/comm's lpc_rt_all_reduce_*): in one process, one rank, the result
// is the input for sum, mean and max and the non-finite test for
// any_nonfinite, as the reference evaluator says; inputs of every rank,
// a strided one (a transpose's result, copied first) and a 0-d one.
// RUN: lpc-jit %s --function=all_reduce --exact --input-std=3 | FileCheck %s
// RUN: lpc-jit %s --function=all_reduce --exact --input-std=3 --seed=7 | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: all results match the reference evaluator
// The calls the CPU code generation makes.
// RUN: lpc-opt %s --lpc-cpu-codegen | FileCheck %s --check-prefix=CALLS
// CALLS-DAG: llvm.func @_mlir_ciface_lpc_rt_all_reduce_f32(
// CALLS-DAG: llvm.func @_mlir_ciface_lpc_rt_all_reduce_any_nonfinite_f32(

func.func @all_reduce(%a: tensor<4x8xf32>, %b: tensor<f32>, %c: tensor<3x5x7xf32>)
    -> (tensor<4x8xf32>, tensor<8x4xf32>, tensor<f32>, tensor<3x5x7xf32>, tensor<i1>, tensor<i1>) {
  %0 = lpc.all_reduce %a mean : tensor<4x8xf32> -> tensor<4x8xf32>
  %t = lpc.transpose %a [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %1 = lpc.all_reduce %t sum : tensor<8x4xf32> -> tensor<8x4xf32>
  %2 = lpc.all_reduce %b max : tensor<f32> -> tensor<f32>
  %e = lpc.neg %c : tensor<3x5x7xf32>
  %3 = lpc.all_reduce %e mean : tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  %4 = lpc.all_reduce %c any_nonfinite : tensor<3x5x7xf32> -> tensor<i1>
  %l = lpc.log %c : tensor<3x5x7xf32>
  %5 = lpc.all_reduce %l any_nonfinite : tensor<3x5x7xf32> -> tensor<i1>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<8x4xf32>, tensor<f32>, tensor<3x5x7xf32>, tensor<i1>, tensor<i1>
}
