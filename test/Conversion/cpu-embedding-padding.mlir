// lpc.embedding with padding_idx (PyTorch's nn.Embedding(padding_idx=...)):
// the lookup is unchanged and the padding row gets no gradient. Trained on
// the CPU (lpc-jit: every result of every step against the reference
// evaluator, which skips that row), with the GPU pipeline's loop passes too
// (the scatter-add with its columns in parallel); the random ids cover all
// 5 rows, the padding row included (test/Reference/eval-ops.mlir checks
// that the reference leaves that row's gradient zero).
// RUN: lpc-jit %s --steps=3 --autodiff="optimizer=sgd lr=0.5" | FileCheck %s
// RUN: lpc-jit %s --steps=3 --gpu-loop-passes --autodiff="optimizer=sgd lr=0.5" | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: all results match the reference evaluator
// lpc-autodiff carries the attribute to the gradient.
// RUN: lpc-opt %s -lpc-autodiff=optimizer=sgd | FileCheck %s --check-prefix=GRAD
// GRAD: lpc.embedding %{{.*}}, %{{.*}} {padding_idx = 2 : i64}
// GRAD: lpc.embedding_grad %{{.*}}, %{{.*}} {padding_idx = 2 : i64} : tensor<4x6x8xf32>, tensor<4x6xi32> -> tensor<5x8xf32>

func.func @emb() -> tensor<f32> {
  %ids = lpc.input "ids" tokens : tensor<4x6xi32>
  %t = lpc.input "t" targets : tensor<4x6x8xf32>
  %w = lpc.param "wte" normal : tensor<5x8xf32>
  %h = lpc.embedding %w, %ids {padding_idx = 2 : i64} : tensor<5x8xf32>, tensor<4x6xi32> -> tensor<4x6x8xf32>
  %l = lpc.mse_loss %h, %t : tensor<4x6x8xf32>
  return %l : tensor<f32>
}
