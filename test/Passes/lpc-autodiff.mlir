// RUN: lpc-opt %s -split-input-file -lpc-autodiff | FileCheck %s
// RUN: lpc-opt %s -split-input-file -lpc-autodiff="optimizer=sgd momentum=0.9 nesterov=true weight-decay=0" | FileCheck %s --check-prefix=SGD
// RUN: lpc-opt %s -split-input-file -lpc-autodiff="optimizer=none" | FileCheck %s --check-prefix=GRAD
// RUN: lpc-opt %s -split-input-file -lpc-autodiff="clip-grad-norm=1.0 lr-schedule=cosine warmup-steps=10 total-steps=100 min-lr=1e-5" | FileCheck %s --check-prefix=SCHED
// RUN: lpc-opt %s -split-input-file -lpc-autodiff="lr-schedule=input" | FileCheck %s --check-prefix=LRIN
// RUN: lpc-opt %s -split-input-file -lpc-autodiff="eval=true" | FileCheck %s --check-prefix=EVAL

// A linear layer: state threaded through, one update per parameter, roles.

// CHECK-LABEL: func.func @linear()
// CHECK-LABEL: func.func @linear_train_step(
// CHECK-SAME: %{{.*}}: tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}
// CHECK-SAME: %{{.*}}: tensor<3xf32> {lpc.name = "b", lpc.state = "param"}
// CHECK-SAME: {lpc.name = "w", lpc.state = "exp_avg"}
// CHECK-SAME: {lpc.name = "b", lpc.state = "exp_avg"}
// CHECK-SAME: {lpc.name = "w", lpc.state = "exp_avg_sq"}
// CHECK-SAME: {lpc.name = "b", lpc.state = "exp_avg_sq"}
// CHECK-SAME: %[[STEP:arg[0-9]+]]: tensor<i64> {lpc.state = "step"}
// CHECK-SAME: %[[X:arg[0-9]+]]: tensor<2x4xf32> {lpc.input = "x"}
// CHECK-SAME: %[[Y:arg[0-9]+]]: tensor<2xi32> {lpc.input = "y"}
// CHECK-SAME: -> (tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}
// CHECK-SAME: tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.metric = "loss"})
// CHECK-NOT: lpc.param
// CHECK-NOT: lpc.input
// CHECK: lpc.matmul %[[X]], %{{.*}} {role = #lpc.role<fprop>}
// CHECK: %[[LOSS:.*]] = lpc.softmax_cross_entropy
// CHECK: %[[SEED:.*]] = lpc.grad_seed : tensor<f32>
// CHECK: %[[DZ:.*]] = lpc.softmax_cross_entropy_grad %[[SEED]]
// CHECK: %[[DB:.*]] = lpc.reduce_sum %[[DZ]] {axes = array<i64: 0>}
// The input is data: no dgrad GEMM for it.
// CHECK-NOT: role<dgrad>
// CHECK: %[[DW:.*]] = lpc.matmul %[[X]], %[[DZ]] {role = #lpc.role<wgrad>, transpose_a}
// CHECK: %[[NSTEP:.*]] = lpc.add %[[STEP]]
// CHECK-COUNT-2: lpc.adamw
// CHECK-NOT: lpc.adamw
// CHECK: return {{.*}}%[[NSTEP]], %[[LOSS]]

// SGD-LABEL: func.func @linear_train_step(
// SGD-SAME: {lpc.name = "w", lpc.state = "momentum_buffer"}
// SGD-NOT: exp_avg
// SGD-COUNT-2: lpc.sgd {{.*}}momentum = 9.000000e-01 : f64, nesterov

// GRAD-LABEL: func.func @linear_grad(
// GRAD-NOT: lpc.state = "step"
// GRAD-SAME: -> (tensor<f32> {lpc.metric = "loss"}, tensor<4x3xf32> {lpc.name = "w", lpc.state = "grad"}, tensor<3xf32> {lpc.name = "b", lpc.state = "grad"})
// GRAD-NOT: lpc.adamw

// SCHED-LABEL: func.func @linear_train_step(
// SCHED-SAME: tensor<f32> {lpc.metric = "loss"}, tensor<f32> {lpc.metric = "grad_norm"})
// SCHED: %[[C:.*]]:2, %[[NORM:.*]] = lpc.clip_by_global_norm {{.*}} {max_norm = 1.000000e+00 : f64}
// SCHED: %[[LR:.*]] = lpc.lr_schedule %{{.*}} cosine {base_lr = 1.000000e-03 : f64, min_lr = 1.000000e-05 : f64, total_steps = 100 : i64, warmup_steps = 10 : i64}
// SCHED: lpc.adamw {{.*}}%[[C]]#0{{.*}} lr(%[[LR]])
// SCHED: return {{.*}}, %[[NORM]] : {{.*}}

// LRIN-LABEL: func.func @linear_train_step(
// LRIN-SAME: %[[LRARG:arg[0-9]+]]: tensor<f32> {lpc.input = "lr"}
// LRIN: lpc.adamw {{.*}} lr(%[[LRARG]])
// EVAL-LABEL: func.func @linear_eval(
// EVAL-SAME: %[[EW:arg[0-9]+]]: tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}, %[[EB:arg[0-9]+]]: tensor<3xf32> {lpc.name = "b", lpc.state = "param"}, %[[EX:arg[0-9]+]]: tensor<2x4xf32> {lpc.input = "x"}, %[[EY:arg[0-9]+]]: tensor<2xi32> {lpc.input = "y"})
// EVAL-SAME: -> (tensor<f32> {lpc.metric = "loss"}, tensor<2x3xf32> {lpc.metric = "logits"})
// EVAL: %[[H:.*]] = lpc.matmul %[[EX]], %[[EW]]
// EVAL: %[[Z:.*]] = lpc.bias_add %[[H]], %[[EB]]
// EVAL: %[[L:.*]] = lpc.softmax_cross_entropy %[[Z]], %[[EY]]
// EVAL-NOT: lpc.grad_seed
// EVAL: return %[[L]], %[[Z]]
func.func @linear() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %y = lpc.input "y" labels : tensor<2xi32>
  %w = lpc.param "w" xavier_uniform : tensor<4x3xf32>
  %b = lpc.param "b" zeros : tensor<3xf32>
  %h = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = lpc.bias_add %h, %b : tensor<2x3xf32>, tensor<3xf32>
  %l = lpc.softmax_cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32>
  return %l : tensor<f32>
}

// -----

// Two layers: the hidden activation gets a dgrad GEMM; a value used twice
// accumulates its gradient with lpc.add.

// CHECK-LABEL: func.func @two_layer_train_step(
// CHECK: lpc.matmul {{.*}}role = #lpc.role<fprop>
// CHECK: lpc.matmul {{.*}}role = #lpc.role<fprop>
// CHECK: %[[D:.*]] = lpc.mse_loss_grad
// CHECK: %[[DG:.*]] = lpc.matmul %[[D]], %{{.*}} {role = #lpc.role<dgrad>, transpose_b}
// CHECK: %[[ACC:.*]] = lpc.add %[[D]], %[[DG]]
// CHECK: lpc.matmul %{{.*}}, %[[D]] {role = #lpc.role<wgrad>, transpose_a}
// CHECK: lpc.relu_grad %[[ACC]]
// CHECK: lpc.matmul {{.*}}role = #lpc.role<wgrad>, transpose_a
func.func @two_layer() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %t = lpc.input "t" targets : tensor<2x4xf32>
  %w1 = lpc.param "w1" kaiming_uniform : tensor<4x4xf32>
  %w2 = lpc.param "w2" kaiming_uniform : tensor<4x4xf32>
  %h = lpc.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %r = lpc.relu %h : tensor<2x4xf32>
  %o = lpc.matmul %r, %w2 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %s = lpc.add %o, %r : tensor<2x4xf32>
  %l = lpc.mse_loss %s, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}

// -----

// Tied weights read through transpose_b: the head GEMM's weight gradient is
// a wgrad with the operands swapped; the embedding gets a scatter-add.

// CHECK-LABEL: func.func @tied_train_step(
// CHECK: lpc.matmul {{.*}}role = #lpc.role<dgrad>
// CHECK-SAME: -> tensor<2x3x8xf32>
// CHECK: %[[HW:.*]] = lpc.matmul {{.*}}role = #lpc.role<wgrad>, transpose_a
// CHECK-SAME: -> tensor<16x8xf32>
// CHECK: %[[EW:.*]] = lpc.embedding_grad
// CHECK-SAME: -> tensor<16x8xf32>
// CHECK: lpc.add %[[HW]], %[[EW]]
func.func @tied() -> tensor<f32> {
  %tok = lpc.input "tokens" tokens : tensor<2x3xi32>
  %tgt = lpc.input "targets" labels : tensor<2x3xi32>
  %e = lpc.param "wte" normal {std = 0.02 : f64} : tensor<16x8xf32>
  %h = lpc.embedding %e, %tok : tensor<16x8xf32>, tensor<2x3xi32> -> tensor<2x3x8xf32>
  %logits = lpc.matmul %h, %e {transpose_b} : tensor<2x3x8xf32>, tensor<16x8xf32> -> tensor<2x3x16xf32>
  %l = lpc.softmax_cross_entropy %logits, %tgt : tensor<2x3x16xf32>, tensor<2x3xi32>
  return %l : tensor<f32>
}

// -----

// A tensor split into slices that tile one axis (a fused qkv projection):
// the slices' gradients are concatenated, not each scattered into zeros and
// summed. Slices that do not tile the axis keep slice_grad + add.

// CHECK-LABEL: func.func @split_train_step(
// CHECK-NOT: lpc.slice_grad
// CHECK: lpc.concat %{{.*}}, %{{.*}}, %{{.*}} axis = 1 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x12xf32>
// CHECK-NOT: lpc.slice_grad
// CHECK: return
func.func @split() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %t = lpc.input "t" targets : tensor<2x4xf32>
  %w = lpc.param "w" kaiming_uniform : tensor<4x12xf32>
  %qkv = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x12xf32> -> tensor<2x12xf32>
  %q = lpc.slice %qkv start = [0, 0] limit = [2, 4] step = [1, 1] : tensor<2x12xf32> -> tensor<2x4xf32>
  %k = lpc.slice %qkv start = [0, 4] limit = [2, 8] step = [1, 1] : tensor<2x12xf32> -> tensor<2x4xf32>
  %v = lpc.slice %qkv start = [0, 8] limit = [2, 12] step = [1, 1] : tensor<2x12xf32> -> tensor<2x4xf32>
  %a = lpc.mul %q, %k : tensor<2x4xf32>
  %b = lpc.add %a, %v : tensor<2x4xf32>
  %l = lpc.mse_loss %b, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @partial_train_step(
// CHECK-COUNT-2: lpc.slice_grad
// CHECK-NOT: lpc.concat
// CHECK: return
func.func @partial() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %t = lpc.input "t" targets : tensor<2x4xf32>
  %w = lpc.param "w" kaiming_uniform : tensor<4x12xf32>
  %qkv = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x12xf32> -> tensor<2x12xf32>
  %q = lpc.slice %qkv start = [0, 0] limit = [2, 4] step = [1, 1] : tensor<2x12xf32> -> tensor<2x4xf32>
  %v = lpc.slice %qkv start = [0, 8] limit = [2, 12] step = [1, 1] : tensor<2x12xf32> -> tensor<2x4xf32>
  %b = lpc.add %q, %v : tensor<2x4xf32>
  %l = lpc.mse_loss %b, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}
