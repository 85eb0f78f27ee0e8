// lpc.reduce_scatter, lpc.all_gather and lpc.shard on the CPU
// (dialects/CollectiveBufferization.cpp: calls of runtime/comm's
// lpc_rt_reduce_scatter_f32, lpc_rt_all_gather_f32 and lpc_rt_shard_f32). In one process,
// one rank: ranks(1) gives the input back, unrounded whatever the wire
// format, as the reference evaluator says; a strided input (a transpose's
// result, copied first). Several ranks: runtime/comm-mpi checks the entry
// points on 3 ranks.
// RUN: lpc-jit %s --function=sharding --exact --input-std=3 | FileCheck %s
// RUN: lpc-jit %s --function=sharding --exact --input-std=3 --seed=7 | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: all results match the reference evaluator
// The calls the CPU code generation makes, with the kind, wire format and
// rank count as constants.
// RUN: lpc-opt %s --lpc-cpu-codegen | FileCheck %s --check-prefix=CALLS
// CALLS-DAG: llvm.func @_mlir_ciface_lpc_rt_reduce_scatter_f32(!llvm.ptr, !llvm.ptr, i64, i64, i64)
// CALLS-DAG: llvm.func @_mlir_ciface_lpc_rt_all_gather_f32(!llvm.ptr, !llvm.ptr, i64, i64)
// CALLS-DAG: llvm.func @_mlir_ciface_lpc_rt_shard_f32(!llvm.ptr, !llvm.ptr, i64)
// A step built for 2 ranks stops a run of one, naming both counts (the
// runtime checks before it communicates).
// RUN: not lpc-jit %s --function=two_ranks 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: lpc: error: rank 0: the train step's lpc.reduce_scatter is built for 2 ranks, but this run has 1

func.func @sharding(%a: tensor<4x6xf32>, %c: tensor<3x5x7xf32>)
    -> (tensor<4x6xf32>, tensor<6x4xf32>, tensor<3x5x7xf32>, tensor<3x5x7xf32>, tensor<6x4xf32>) {
  %0 = lpc.reduce_scatter %a mean ranks(1) {comm_precision = #lpc.precision<bf16>} : tensor<4x6xf32> -> tensor<4x6xf32>
  %t = lpc.transpose %a [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %1 = lpc.reduce_scatter %t max ranks(1) : tensor<6x4xf32> -> tensor<6x4xf32>
  %e = lpc.neg %c : tensor<3x5x7xf32>
  %2 = lpc.all_gather %e ranks(1) {comm_precision = #lpc.precision<fp8_e5m2>} : tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  %3 = lpc.all_gather %c ranks(1) : tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  %4 = lpc.shard %t ranks(1) : tensor<6x4xf32> -> tensor<6x4xf32>
  return %0, %1, %2, %3, %4 : tensor<4x6xf32>, tensor<6x4xf32>, tensor<3x5x7xf32>, tensor<3x5x7xf32>, tensor<6x4xf32>
}

func.func @two_ranks(%a: tensor<4x6xf32>) -> tensor<2x6xf32> {
  %0 = lpc.reduce_scatter %a sum ranks(2) : tensor<4x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}
