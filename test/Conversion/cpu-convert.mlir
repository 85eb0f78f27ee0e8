// lpc.convert and integer arithmetic: integer labels to f32, a computed f32
// truncated toward zero to i32 and i64 (negative values with fractions:
// floor would differ), booleans to 0/1 and numbers to booleans by != 0,
// integer multiply and subtract, i64 to i32. Every result of every step of
// the compiled train step against the reference evaluator (lpc-jit), with
// the GPU pipeline's loop passes too.
// RUN: lpc-jit %s --steps=3 --autodiff="optimizer=sgd lr=0.05" | FileCheck %s
// RUN: lpc-jit %s --steps=3 --gpu-loop-passes --autodiff="optimizer=sgd lr=0.05" | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: all results match the reference evaluator
//
// The GPU pipeline compiles it (the kernels assemble with ptxas; sm_90).
// REQUIRES: ptxas
// RUN: lpc-opt %s --lpc-autodiff --symbol-privatize="exclude=conv_train_step" --symbol-dce | lpc-opt --lpc-gpu-codegen -o %t.gpu.mlir
// RUN: %python %S/Inputs/check_ptx.py %t.gpu.mlir %ptxas sm_90 | FileCheck %s --check-prefix=PTX
// PTX: target sm_90

func.func @conv() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<6x10xf32>
  %lab = lpc.input "lab" labels : tensor<6xi32>
  %t = lpc.input "t" targets : tensor<6x12xf32>
  %w = lpc.param "w" normal : tensor<10x12xf32>
  %h0 = lpc.matmul %x, %w : tensor<6x10xf32>, tensor<10x12xf32> -> tensor<6x12xf32>
  %h = lpc.scale %h0 {factor = 3.0 : f64} : tensor<6x12xf32>
  // trunc(h) as i32 and i64, back to f32: h - trunc(h) is the fraction
  %hi = lpc.convert %h : tensor<6x12xf32> to tensor<6x12xi32>
  %hl = lpc.convert %h : tensor<6x12xf32> to tensor<6x12xi64>
  %hl32 = lpc.convert %hl : tensor<6x12xi64> to tensor<6x12xi32>
  %twice = lpc.add %hi, %hl32 : tensor<6x12xi32>
  // booleans: h != 0 (always, here) as 0/1, times the labels, minus trunc
  %nz = lpc.convert %h : tensor<6x12xf32> to tensor<6x12xi1>
  %nzi = lpc.convert %nz : tensor<6x12xi1> to tensor<6x12xi32>
  %labb = lpc.broadcast %lab dims = [0] : tensor<6xi32> -> tensor<6x12xi32>
  %prod = lpc.mul %nzi, %labb : tensor<6x12xi32>
  %diff = lpc.sub %prod, %twice : tensor<6x12xi32>
  %df = lpc.convert %diff : tensor<6x12xi32> to tensor<6x12xf32>
  %small = lpc.scale %df {factor = 0.01 : f64} : tensor<6x12xf32>
  %y = lpc.add %h, %small : tensor<6x12xf32>
  %l = lpc.mse_loss %y, %t : tensor<6x12xf32>
  return %l : tensor<f32>
}
