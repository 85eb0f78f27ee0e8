// lpc.compare with lpc.where: the piecewise functions the PyTorch importer
// builds from them (leaky_relu, a clamp to [-0.5, 0.4], elu with expm1 fed
// 0 where x > 0), softplus (log1p of exp) and a mask computed from integer
// labels. Trained on the
// CPU: every result of every step against the reference evaluator
// (lpc-jit), with the GPU pipeline's loop passes too, and in bf16 op by op
// (a bf16 compare of a bf16 tensor against a bf16 threshold).
// RUN: lpc-jit %s --steps=3 --autodiff="optimizer=sgd lr=0.05" | FileCheck %s
// RUN: lpc-jit %s --steps=3 --gpu-loop-passes --autodiff="optimizer=sgd lr=0.05" | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: all results match the reference evaluator
// RUN: lpc-jit %s --steps=2 --autodiff="optimizer=adamw lr=0.01" --pipeline="lpc-mixed-precision{policy=bf16}" --op-check | FileCheck %s --check-prefix=OPS
// OPS-NOT: WRONG
// OPS: every op matches the reference evaluator within half a spacing and the slack
//
// The comparison has no gradient: lpc-autodiff sends the gradient through
// the where that selects each piece, never into the compare.
// RUN: lpc-opt %s -lpc-autodiff=optimizer=sgd | FileCheck %s --check-prefix=GRAD
// GRAD-COUNT-4: lpc.compare
// GRAD-NOT: lpc.compare
// GRAD: return
//
// The GPU pipeline compiles it (the kernels assemble with ptxas; bf16, sm_90).
// REQUIRES: ptxas
// RUN: lpc-opt %s --lpc-autodiff --lpc-mixed-precision="policy=bf16" --symbol-privatize="exclude=piecewise_train_step" --symbol-dce | lpc-opt --lpc-gpu-codegen -o %t.gpu.mlir
// RUN: %python %S/Inputs/check_ptx.py %t.gpu.mlir %ptxas sm_90 | FileCheck %s --check-prefix=PTX
// PTX: target sm_90

func.func @piecewise() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<6x10xf32>
  %lab = lpc.input "lab" labels : tensor<6xi32>
  %t = lpc.input "t" targets : tensor<6x12xf32>
  %w = lpc.param "w" normal : tensor<10x12xf32>
  %h0 = lpc.matmul %x, %w : tensor<6x10xf32>, tensor<10x12xf32> -> tensor<6x12xf32>
  %h = lpc.scale %h0 {factor = 3.0 : f64} : tensor<6x12xf32>
  %zero = lpc.constant dense<0.0> : tensor<6x12xf32>
  // leaky_relu(h, 0.1)
  %pos = lpc.compare gt, %h, %zero : tensor<6x12xf32> -> tensor<6x12xi1>
  %leak = lpc.scale %h {factor = 0.1 : f64} : tensor<6x12xf32>
  %a = lpc.where %pos, %h, %leak : tensor<6x12xi1>, tensor<6x12xf32>
  // clamp(h, -0.5, 0.4)
  %lo = lpc.constant dense<-0.5> : tensor<6x12xf32>
  %hi = lpc.constant dense<0.4> : tensor<6x12xf32>
  %below = lpc.compare lt, %h, %lo : tensor<6x12xf32> -> tensor<6x12xi1>
  %c0 = lpc.where %below, %lo, %h : tensor<6x12xi1>, tensor<6x12xf32>
  %above = lpc.compare gt, %c0, %hi : tensor<6x12xf32> -> tensor<6x12xi1>
  %c = lpc.where %above, %hi, %c0 : tensor<6x12xi1>, tensor<6x12xf32>
  // elu(h): expm1(where(h > 0, 0, h)) where h <= 0
  %neg = lpc.where %pos, %zero, %h : tensor<6x12xi1>, tensor<6x12xf32>
  %em1 = lpc.expm1 %neg : tensor<6x12xf32>
  %elu = lpc.where %pos, %h, %em1 : tensor<6x12xi1>, tensor<6x12xf32>
  // softplus(h) = log1p(exp(h))
  %eh = lpc.exp %h : tensor<6x12xf32>
  %sp = lpc.log1p %eh : tensor<6x12xf32>
  %s0 = lpc.add %a, %c : tensor<6x12xf32>
  %s1 = lpc.add %s0, %elu : tensor<6x12xf32>
  %s = lpc.add %s1, %sp : tensor<6x12xf32>
  // Rows whose label is below 5 keep their values; the others are zero
  // (lpc-jit draws labels from [0, 10)).
  %five = lpc.constant dense<5> : tensor<6xi32>
  %keep = lpc.compare lt, %lab, %five : tensor<6xi32> -> tensor<6xi1>
  %keepb = lpc.broadcast %keep dims = [0] : tensor<6xi1> -> tensor<6x12xi1>
  %m = lpc.where %keepb, %s, %zero : tensor<6x12xi1>, tensor<6x12xf32>
  %l = lpc.mse_loss %m, %t : tensor<6x12xf32>
  return %l : tensor<f32>
}
