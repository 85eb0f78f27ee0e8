// RUN: lpc-opt %s -split-input-file -lpc-loss-scaling | FileCheck %s --check-prefix=DYN
// RUN: lpc-opt %s -split-input-file -lpc-loss-scaling="init-scale=1024 growth-factor=4 backoff-factor=0.25 growth-interval=3" | FileCheck %s --check-prefix=OPTS
// RUN: lpc-opt %s -split-input-file -lpc-loss-scaling=mode=static | FileCheck %s --check-prefix=STATIC
// RUN: lpc-opt %s -split-input-file -lpc-loss-scaling="mode=static static-scale=128" | FileCheck %s --check-prefix=STATIC128
// RUN: lpc-opt %s -split-input-file -lpc-loss-scaling=mode=off | FileCheck %s --check-prefix=OFF
// Running it again, with any options, never scales twice.
// RUN: lpc-opt %s -split-input-file -lpc-loss-scaling -lpc-loss-scaling | FileCheck %s --check-prefix=DYN
// RUN: lpc-opt %s -split-input-file -lpc-loss-scaling -lpc-loss-scaling="mode=static init-scale=8" | FileCheck %s --check-prefix=DYN
// RUN: lpc-opt %s -split-input-file -lpc-loss-scaling=mode=static -lpc-loss-scaling | FileCheck %s --check-prefix=STATIC
//
// After the FP16 precision passes, on the example MLP (AdamW; SGD with
// momentum and clipping): grads arrive through lpc.cast and are unscaled in
// f32; the output verifies (lpc-opt verifies after each pass).
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-assign-precision=policy=fp16 -lpc-insert-casts -canonicalize -lpc-loss-scaling -canonicalize | FileCheck %s --check-prefix=MLP
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff="clip-grad-norm=1.0 optimizer=sgd momentum=0.9" -lpc-assign-precision=policy=fp16 -lpc-insert-casts -canonicalize -lpc-loss-scaling -canonicalize | FileCheck %s --check-prefix=MLP-CLIP

// AdamW train step of a linear layer with a scalar parameter %t (as built
// by lpc-autodiff), next to its forward function.

// The forward function has no seed and no optimizer: unchanged.
// DYN-LABEL: func.func @linear() -> tensor<f32>
// DYN-NOT: lpc.loss_scale
// DYN-NOT: lpc.unscale
// DYN: return

// DYN-LABEL: func.func @linear_train_step(
// DYN-SAME: %[[W:arg0]]: tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}
// DYN-SAME: %[[B:arg1]]: tensor<3xf32> {lpc.name = "b", lpc.state = "param"}
// DYN-SAME: %[[T:arg2]]: tensor<f32> {lpc.name = "t", lpc.state = "param"}
// DYN-SAME: %[[MW:arg3]]: tensor<4x3xf32> {lpc.name = "w", lpc.state = "exp_avg"}
// DYN-SAME: %[[MB:arg4]]: tensor<3xf32> {lpc.name = "b", lpc.state = "exp_avg"}
// DYN-SAME: %[[MT:arg5]]: tensor<f32> {lpc.name = "t", lpc.state = "exp_avg"}
// DYN-SAME: %[[VW:arg6]]: tensor<4x3xf32> {lpc.name = "w", lpc.state = "exp_avg_sq"}
// DYN-SAME: %[[VB:arg7]]: tensor<3xf32> {lpc.name = "b", lpc.state = "exp_avg_sq"}
// DYN-SAME: %[[VT:arg8]]: tensor<f32> {lpc.name = "t", lpc.state = "exp_avg_sq"}
// DYN-SAME: %[[STEP:arg9]]: tensor<i64> {lpc.state = "step"}
// DYN-SAME: %[[S:arg10]]: tensor<f32> {lpc.init = 6.553600e+04 : f64, lpc.state = "loss_scale"}
// DYN-SAME: %[[TR:arg11]]: tensor<i64> {lpc.state = "loss_scale_growth_tracker"}
// DYN-SAME: %[[X:arg12]]: tensor<2x4xf32> {lpc.input = "x"}
// DYN-SAME: %[[Y:arg13]]: tensor<2xi32> {lpc.input = "y"})
// DYN-SAME: -> (tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}
// DYN-SAME: tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.state = "loss_scale"}, tensor<i64> {lpc.state = "loss_scale_growth_tracker"}, tensor<f32> {lpc.metric = "loss"}, tensor<f32> {lpc.metric = "loss_scale"}, tensor<i1> {lpc.metric = "skipped"})
// The loss is not scaled, only the seed of the backward pass.
// DYN: %[[LOSS:.*]] = lpc.softmax_cross_entropy %{{.*}}, %[[Y]]
// DYN-NEXT: %[[SEED:.*]] = lpc.grad_seed : tensor<f32>
// DYN-NEXT: %[[SSEED:.*]] = lpc.loss_scale %[[SEED]], %[[S]] : tensor<f32>
// DYN-NEXT: lpc.softmax_cross_entropy_grad %[[SSEED]],
// DYN-NOT: %[[SEED]]
// DYN-NOT: lpc.loss_scale
// DYN: %[[GT:.*]] = lpc.reduce_sum {{.*}} -> tensor<f32>
// DYN: %[[GB:.*]] = lpc.reduce_sum {{.*}} -> tensor<3xf32>
// DYN: %[[GW:.*]] = lpc.matmul {{.*}}role = #lpc.role<wgrad>
// DYN: %[[NSTEP:.*]] = lpc.add %[[STEP]],
// Each gradient is unscaled right before its optimizer op.
// DYN: %[[UW:.*]] = lpc.unscale %[[GW]], %[[S]] : tensor<4x3xf32>
// DYN-NEXT: %[[PW:.*]], %[[EW:.*]], %[[QW:.*]] = lpc.adamw %[[W]], %[[UW]], %[[MW]], %[[VW]] step(%[[NSTEP]] : tensor<i64>)
// DYN-NEXT: %[[UB:.*]] = lpc.unscale %[[GB]], %[[S]] : tensor<3xf32>
// DYN-NEXT: %[[PB:.*]], %[[EB:.*]], %[[QB:.*]] = lpc.adamw %[[B]], %[[UB]], %[[MB]], %[[VB]] step(%[[NSTEP]] : tensor<i64>)
// DYN-NEXT: %[[UT:.*]] = lpc.unscale %[[GT]], %[[S]] : tensor<f32>
// DYN-NEXT: %[[PT:.*]], %[[ET:.*]], %[[QT:.*]] = lpc.adamw %[[T]], %[[UT]], %[[MT]], %[[VT]] step(%[[NSTEP]] : tensor<i64>)
// All unscaled gradients are checked.
// DYN-NEXT: %[[OK:.*]] = lpc.all_finite %[[UW]], %[[UB]], %[[UT]] : tensor<4x3xf32>, tensor<3xf32>, tensor<f32>
// Every optimizer result keeps its old value when a gradient is not finite.
// DYN-NEXT: %[[OKW:.*]] = lpc.broadcast %[[OK]] dims = [] : tensor<i1> -> tensor<4x3xi1>
// DYN-NEXT: %[[RPW:.*]] = lpc.where %[[OKW]], %[[PW]], %[[W]] : tensor<4x3xi1>, tensor<4x3xf32>
// DYN-NEXT: %[[REW:.*]] = lpc.where %[[OKW]], %[[EW]], %[[MW]] : tensor<4x3xi1>, tensor<4x3xf32>
// DYN-NEXT: %[[RQW:.*]] = lpc.where %[[OKW]], %[[QW]], %[[VW]] : tensor<4x3xi1>, tensor<4x3xf32>
// DYN-NEXT: %[[OKB:.*]] = lpc.broadcast %[[OK]] dims = [] : tensor<i1> -> tensor<3xi1>
// DYN-NEXT: %[[RPB:.*]] = lpc.where %[[OKB]], %[[PB]], %[[B]] : tensor<3xi1>, tensor<3xf32>
// DYN-NEXT: %[[REB:.*]] = lpc.where %[[OKB]], %[[EB]], %[[MB]] : tensor<3xi1>, tensor<3xf32>
// DYN-NEXT: %[[RQB:.*]] = lpc.where %[[OKB]], %[[QB]], %[[VB]] : tensor<3xi1>, tensor<3xf32>
// A 0-d state needs no broadcast.
// DYN-NEXT: %[[RPT:.*]] = lpc.where %[[OK]], %[[PT]], %[[T]] : tensor<i1>, tensor<f32>
// DYN-NEXT: %[[RET:.*]] = lpc.where %[[OK]], %[[ET]], %[[MT]] : tensor<i1>, tensor<f32>
// DYN-NEXT: %[[RQT:.*]] = lpc.where %[[OK]], %[[QT]], %[[VT]] : tensor<i1>, tensor<f32>
// The step counter advances only when the update is applied.
// DYN-NEXT: %[[RSTEP:.*]] = lpc.where %[[OK]], %[[NSTEP]], %[[STEP]] : tensor<i1>, tensor<i64>
// Default GradScaler factors (elided defaults: 2.0, 0.5, 2000).
// DYN-NEXT: %[[NS:.*]], %[[NTR:.*]] = lpc.loss_scale_update %[[S]], %[[TR]], %[[OK]] : tensor<i64>
// DYN-NEXT: %[[F:.*]] = lpc.constant dense<false> : tensor<i1>
// DYN-NEXT: %[[TRUE:.*]] = lpc.constant dense<true> : tensor<i1>
// DYN-NEXT: %[[SKIP:.*]] = lpc.where %[[OK]], %[[F]], %[[TRUE]] : tensor<i1>, tensor<i1>
// DYN-NEXT: return %[[RPW]], %[[RPB]], %[[RPT]], %[[REW]], %[[REB]], %[[RET]], %[[RQW]], %[[RQB]], %[[RQT]], %[[RSTEP]], %[[NS]], %[[NTR]], %[[LOSS]], %[[S]], %[[SKIP]] :

// OPTS-LABEL: func.func @linear_train_step(
// OPTS-SAME: {lpc.init = 1.024000e+03 : f64, lpc.state = "loss_scale"}
// OPTS: lpc.loss_scale_update {{.*}} {backoff_factor = 2.500000e-01 : f64, growth_factor = 4.000000e+00 : f64, growth_interval = 3 : i64} : tensor<i64>

// Static: a constant scale, no state, no check, no skipping, no metric.
// STATIC-LABEL: func.func @linear_train_step(
// STATIC-NOT: loss_scale
// STATIC-SAME: %arg9: tensor<i64> {lpc.state = "step"}, %arg10: tensor<2x4xf32> {lpc.input = "x"}
// STATIC-SAME: -> (
// STATIC-NOT: loss_scale
// STATIC-SAME: tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.metric = "loss"}) {
// STATIC: %[[SEED:.*]] = lpc.grad_seed : tensor<f32>
// STATIC-NEXT: %[[S:.*]] = lpc.constant dense<1.024000e+03> : tensor<f32>
// STATIC-NEXT: %[[SSEED:.*]] = lpc.loss_scale %[[SEED]], %[[S]] : tensor<f32>
// STATIC-NEXT: lpc.softmax_cross_entropy_grad %[[SSEED]],
// STATIC: %[[NSTEP:.*]] = lpc.add %arg9
// STATIC: %[[U0:.*]] = lpc.unscale %{{.*}}, %[[S]] : tensor<4x3xf32>
// STATIC-NEXT: %[[P0:.*]], %{{.*}}, %{{.*}} = lpc.adamw %arg0, %[[U0]],
// STATIC-NEXT: %[[U1:.*]] = lpc.unscale %{{.*}}, %[[S]] : tensor<3xf32>
// STATIC-NEXT: lpc.adamw %arg1, %[[U1]],
// STATIC-NEXT: %[[U2:.*]] = lpc.unscale %{{.*}}, %[[S]] : tensor<f32>
// STATIC-NEXT: lpc.adamw %arg2, %[[U2]],
// STATIC-NEXT: return %[[P0]], {{.*}}, %[[NSTEP]], %{{.*}} :
// STATIC-NOT: lpc.all_finite
// STATIC-NOT: lpc.where
// STATIC-NOT: lpc.loss_scale_update

// STATIC128-LABEL: func.func @linear_train_step(
// STATIC128: %[[S:.*]] = lpc.constant dense<1.280000e+02> : tensor<f32>
// STATIC128-NEXT: lpc.loss_scale %{{.*}}, %[[S]]
// STATIC128-COUNT-3: lpc.unscale %{{.*}}, %[[S]]

// OFF-LABEL: func.func @linear_train_step(
// OFF-SAME: %arg9: tensor<i64> {lpc.state = "step"}, %arg10: tensor<2x4xf32> {lpc.input = "x"}, %arg11: tensor<2xi32> {lpc.input = "y"})
// OFF-SAME: tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.metric = "loss"}) {
// OFF-NOT: lpc.loss_scale
// OFF-NOT: lpc.unscale
// OFF-NOT: lpc.all_finite
// OFF-NOT: lpc.where
// OFF: return

func.func @linear() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %y = lpc.input "y" labels : tensor<2xi32>
  %w = lpc.param "w" xavier_uniform : tensor<4x3xf32>
  %b = lpc.param "b" zeros : tensor<3xf32>
  %t = lpc.param "t" constant {value = 1.0 : f64} : tensor<f32>
  %h = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = lpc.bias_add %h, %b : tensor<2x3xf32>, tensor<3xf32>
  %tb = lpc.broadcast %t dims = [] : tensor<f32> -> tensor<2x3xf32>
  %s = lpc.mul %z, %tb : tensor<2x3xf32>
  %l = lpc.softmax_cross_entropy %s, %y : tensor<2x3xf32>, tensor<2xi32>
  return %l : tensor<f32>
}
func.func @linear_train_step(%arg0: tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}, %arg1: tensor<3xf32> {lpc.name = "b", lpc.state = "param"}, %arg2: tensor<f32> {lpc.name = "t", lpc.state = "param"}, %arg3: tensor<4x3xf32> {lpc.name = "w", lpc.state = "exp_avg"}, %arg4: tensor<3xf32> {lpc.name = "b", lpc.state = "exp_avg"}, %arg5: tensor<f32> {lpc.name = "t", lpc.state = "exp_avg"}, %arg6: tensor<4x3xf32> {lpc.name = "w", lpc.state = "exp_avg_sq"}, %arg7: tensor<3xf32> {lpc.name = "b", lpc.state = "exp_avg_sq"}, %arg8: tensor<f32> {lpc.name = "t", lpc.state = "exp_avg_sq"}, %arg9: tensor<i64> {lpc.state = "step"}, %arg10: tensor<2x4xf32> {lpc.input = "x"}, %arg11: tensor<2xi32> {lpc.input = "y"})
    -> (tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}, tensor<3xf32> {lpc.name = "b", lpc.state = "param"}, tensor<f32> {lpc.name = "t", lpc.state = "param"}, tensor<4x3xf32> {lpc.name = "w", lpc.state = "exp_avg"}, tensor<3xf32> {lpc.name = "b", lpc.state = "exp_avg"}, tensor<f32> {lpc.name = "t", lpc.state = "exp_avg"}, tensor<4x3xf32> {lpc.name = "w", lpc.state = "exp_avg_sq"}, tensor<3xf32> {lpc.name = "b", lpc.state = "exp_avg_sq"}, tensor<f32> {lpc.name = "t", lpc.state = "exp_avg_sq"}, tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.metric = "loss"}) {
  %0 = lpc.matmul %arg10, %arg0 {role = #lpc.role<fprop>} : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %1 = lpc.bias_add %0, %arg1 : tensor<2x3xf32>, tensor<3xf32>
  %2 = lpc.broadcast %arg2 dims = [] : tensor<f32> -> tensor<2x3xf32>
  %3 = lpc.mul %1, %2 : tensor<2x3xf32>
  %4 = lpc.softmax_cross_entropy %3, %arg11 : tensor<2x3xf32>, tensor<2xi32>
  %5 = lpc.grad_seed : tensor<f32>
  %6 = lpc.softmax_cross_entropy_grad %5, %3, %arg11 : tensor<2x3xf32>, tensor<2xi32>
  %7 = lpc.mul %6, %2 : tensor<2x3xf32>
  %8 = lpc.mul %6, %1 : tensor<2x3xf32>
  %9 = lpc.reduce_sum %8 {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<f32>
  %10 = lpc.reduce_sum %7 {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>
  %11 = lpc.matmul %arg10, %7 {role = #lpc.role<wgrad>, transpose_a} : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %12 = lpc.constant dense<1> : tensor<i64>
  %13 = lpc.add %arg9, %12 : tensor<i64>
  %14 = lpc.constant dense<1.000000e-03> : tensor<f32>
  %new_param, %new_exp_avg, %new_exp_avg_sq = lpc.adamw %arg0, %11, %arg3, %arg6 step(%13 : tensor<i64>) lr(%14) : tensor<4x3xf32>
  %new_param_0, %new_exp_avg_1, %new_exp_avg_sq_2 = lpc.adamw %arg1, %10, %arg4, %arg7 step(%13 : tensor<i64>) lr(%14) : tensor<3xf32>
  %new_param_3, %new_exp_avg_4, %new_exp_avg_sq_5 = lpc.adamw %arg2, %9, %arg5, %arg8 step(%13 : tensor<i64>) lr(%14) : tensor<f32>
  return %new_param, %new_param_0, %new_param_3, %new_exp_avg, %new_exp_avg_1, %new_exp_avg_4, %new_exp_avg_sq, %new_exp_avg_sq_2, %new_exp_avg_sq_5, %13, %4 : tensor<4x3xf32>, tensor<3xf32>, tensor<f32>, tensor<4x3xf32>, tensor<3xf32>, tensor<f32>, tensor<4x3xf32>, tensor<3xf32>, tensor<f32>, tensor<i64>, tensor<f32>
}

// -----

// SGD with momentum and clipping, after the FP16 precision passes (grads in
// fp16 cast to f32), learning rate as an input: the clip's operands are
// unscaled (the norm and the clipping see true gradients), in f32 after
// the casts; the new state goes before the lr input.

// DYN-LABEL: func.func @sgd_clip_train_step(
// DYN-SAME: %[[W:arg0]]: tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}
// DYN-SAME: %[[B:arg1]]: tensor<3xf32> {lpc.name = "b", lpc.state = "param"}
// DYN-SAME: %[[BW:arg2]]: tensor<4x3xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}
// DYN-SAME: %[[BB:arg3]]: tensor<3xf32> {lpc.name = "b", lpc.state = "momentum_buffer"}
// DYN-SAME: %[[STEP:arg4]]: tensor<i64> {lpc.state = "step"}
// DYN-SAME: %[[S:arg5]]: tensor<f32> {lpc.init = 6.553600e+04 : f64, lpc.state = "loss_scale"}
// DYN-SAME: %[[TR:arg6]]: tensor<i64> {lpc.state = "loss_scale_growth_tracker"}
// DYN-SAME: %[[LR:arg7]]: tensor<f32> {lpc.input = "lr"}
// DYN-SAME: tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.state = "loss_scale"}, tensor<i64> {lpc.state = "loss_scale_growth_tracker"}, tensor<f32> {lpc.metric = "loss"}, tensor<f32> {lpc.metric = "grad_norm"}, tensor<f32> {lpc.metric = "loss_scale"}, tensor<i1> {lpc.metric = "skipped"})
// DYN: %[[SEED:.*]] = lpc.grad_seed
// DYN-NEXT: %[[SSEED:.*]] = lpc.loss_scale %[[SEED]], %[[S]] : tensor<f32>
// DYN: lpc.softmax_cross_entropy_grad %[[SSEED]],
// DYN: %[[GB:.*]] = lpc.reduce_sum
// DYN: %[[GW16:.*]] = lpc.matmul {{.*}}wgrad{{.*}} -> tensor<4x3xf16>
// DYN-NEXT: %[[GW:.*]] = lpc.cast %[[GW16]] : tensor<4x3xf16> to tensor<4x3xf32>
// DYN-NEXT: %[[UW:.*]] = lpc.unscale %[[GW]], %[[S]] : tensor<4x3xf32>
// DYN-NEXT: %[[UB:.*]] = lpc.unscale %[[GB]], %[[S]] : tensor<3xf32>
// DYN-NEXT: %[[CL:.*]]:2, %[[NORM:.*]] = lpc.clip_by_global_norm %[[UW]], %[[UB]] {max_norm = 1.000000e+00 : f64}
// DYN-NEXT: %[[NSTEP:.*]] = lpc.add %[[STEP]],
// The optimizer reads the clipped (already unscaled) gradients.
// DYN-NEXT: %[[PW:.*]], %[[NBW:.*]] = lpc.sgd %[[W]], %[[CL]]#0, %[[BW]] lr(%[[LR]])
// DYN-NEXT: %[[PB:.*]], %[[NBB:.*]] = lpc.sgd %[[B]], %[[CL]]#1, %[[BB]] lr(%[[LR]])
// DYN-NEXT: %[[OK:.*]] = lpc.all_finite %[[UW]], %[[UB]] : tensor<4x3xf32>, tensor<3xf32>
// DYN-NEXT: %[[OKW:.*]] = lpc.broadcast %[[OK]] dims = [] : tensor<i1> -> tensor<4x3xi1>
// DYN-NEXT: %[[RPW:.*]] = lpc.where %[[OKW]], %[[PW]], %[[W]]
// DYN-NEXT: %[[RBW:.*]] = lpc.where %[[OKW]], %[[NBW]], %[[BW]]
// DYN-NEXT: %[[OKB:.*]] = lpc.broadcast %[[OK]] dims = [] : tensor<i1> -> tensor<3xi1>
// DYN-NEXT: %[[RPB:.*]] = lpc.where %[[OKB]], %[[PB]], %[[B]]
// DYN-NEXT: %[[RBB:.*]] = lpc.where %[[OKB]], %[[NBB]], %[[BB]]
// DYN-NEXT: %[[RSTEP:.*]] = lpc.where %[[OK]], %[[NSTEP]], %[[STEP]] : tensor<i1>, tensor<i64>
// DYN-NEXT: %[[NS:.*]], %[[NTR:.*]] = lpc.loss_scale_update %[[S]], %[[TR]], %[[OK]] : tensor<i64>
// DYN: %[[SKIP:.*]] = lpc.where %[[OK]],
// DYN-NEXT: return %[[RPW]], %[[RPB]], %[[RBW]], %[[RBB]], %[[RSTEP]], %[[NS]], %[[NTR]], %{{.*}}, %[[NORM]], %[[S]], %[[SKIP]] :

// STATIC-LABEL: func.func @sgd_clip_train_step(
// STATIC: %[[S:.*]] = lpc.constant dense<1.024000e+03> : tensor<f32>
// STATIC: %[[UW:.*]] = lpc.unscale %{{.*}}, %[[S]] : tensor<4x3xf32>
// STATIC-NEXT: %[[UB:.*]] = lpc.unscale %{{.*}}, %[[S]] : tensor<3xf32>
// STATIC-NEXT: lpc.clip_by_global_norm %[[UW]], %[[UB]]
// STATIC-NOT: lpc.where

// OFF-LABEL: func.func @sgd_clip_train_step(
// OFF-NOT: lpc.unscale
// OFF: lpc.clip_by_global_norm %{{.*}}, %{{.*}} {max_norm

func.func @sgd_clip_train_step(%arg0: tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}, %arg1: tensor<3xf32> {lpc.name = "b", lpc.state = "param"}, %arg2: tensor<4x3xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, %arg3: tensor<3xf32> {lpc.name = "b", lpc.state = "momentum_buffer"}, %arg4: tensor<i64> {lpc.state = "step"}, %arg5: tensor<f32> {lpc.input = "lr"}, %arg6: tensor<2x4xf32> {lpc.input = "x"}, %arg7: tensor<2xi32> {lpc.input = "y"})
    -> (tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}, tensor<3xf32> {lpc.name = "b", lpc.state = "param"}, tensor<4x3xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, tensor<3xf32> {lpc.name = "b", lpc.state = "momentum_buffer"}, tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.metric = "loss"}, tensor<f32> {lpc.metric = "grad_norm"}) {
  %0 = lpc.constant dense<1> : tensor<i64>
  %1 = lpc.grad_seed : tensor<f32>
  %2 = lpc.cast %arg1 : tensor<3xf32> to tensor<3xf16>
  %3 = lpc.cast %arg0 : tensor<4x3xf32> to tensor<4x3xf16>
  %4 = lpc.cast %arg6 : tensor<2x4xf32> to tensor<2x4xf16>
  %5 = lpc.matmul %4, %3 {lpc.assigned = #lpc.precision<fp16>, role = #lpc.role<fprop>} : tensor<2x4xf16>, tensor<4x3xf16> -> tensor<2x3xf16>
  %6 = lpc.bias_add %5, %2 {lpc.assigned = #lpc.precision<fp16>} : tensor<2x3xf16>, tensor<3xf16>
  %7 = lpc.cast %6 : tensor<2x3xf16> to tensor<2x3xf32>
  %8 = lpc.softmax_cross_entropy %7, %arg7 {lpc.assigned = #lpc.precision<fp32>} : tensor<2x3xf32>, tensor<2xi32>
  %9 = lpc.softmax_cross_entropy_grad %1, %7, %arg7 {lpc.assigned = #lpc.precision<fp32>} : tensor<2x3xf32>, tensor<2xi32>
  %10 = lpc.cast %9 : tensor<2x3xf32> to tensor<2x3xf16>
  %11 = lpc.reduce_sum %9 {axes = array<i64: 0>, lpc.assigned = #lpc.precision<fp32>} : tensor<2x3xf32> -> tensor<3xf32>
  %12 = lpc.matmul %4, %10 {lpc.assigned = #lpc.precision<fp16>, role = #lpc.role<wgrad>, transpose_a} : tensor<2x4xf16>, tensor<2x3xf16> -> tensor<4x3xf16>
  %13 = lpc.cast %12 : tensor<4x3xf16> to tensor<4x3xf32>
  %clipped:2, %norm = lpc.clip_by_global_norm %13, %11 {max_norm = 1.000000e+00 : f64} : tensor<4x3xf32>, tensor<3xf32>
  %14 = lpc.add %arg4, %0 : tensor<i64>
  %new_param, %new_momentum_buffer = lpc.sgd %arg0, %clipped#0, %arg2 lr(%arg5) {momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-02 : f64} : tensor<4x3xf32>
  %new_param_0, %new_momentum_buffer_1 = lpc.sgd %arg1, %clipped#1, %arg3 lr(%arg5) {momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-02 : f64} : tensor<3xf32>
  return %new_param, %new_param_0, %new_momentum_buffer, %new_momentum_buffer_1, %14, %8, %norm : tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<i64>, tensor<f32>, tensor<f32>
}

// -----

// A train step without data inputs (the state goes last), and a
// gradient-only function (lpc-autodiff optimizer=none): it has no state, so
// its seed is scaled by a constant (init-scale, or static-scale) and its
// returned gradients are unscaled.

// DYN-LABEL: func.func @ridge_train_step(
// DYN-SAME: %arg2: tensor<i64> {lpc.state = "step"}, %arg3: tensor<f32> {lpc.init = 6.553600e+04 : f64, lpc.state = "loss_scale"}, %arg4: tensor<i64> {lpc.state = "loss_scale_growth_tracker"})
// DYN-SAME: -> (tensor<8xf32> {lpc.name = "w", lpc.state = "param"}, tensor<8xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.state = "loss_scale"}, tensor<i64> {lpc.state = "loss_scale_growth_tracker"}, tensor<f32> {lpc.metric = "loss"}, tensor<f32> {lpc.metric = "loss_scale"}, tensor<i1> {lpc.metric = "skipped"})
// DYN: lpc.loss_scale %{{.*}}, %arg3
// DYN: lpc.unscale %{{.*}}, %arg3 : tensor<8xf32>
// DYN-NEXT: lpc.sgd
// DYN: lpc.loss_scale_update %arg3, %arg4,

// DYN-LABEL: func.func @ridge_grad(
// DYN-SAME: %arg0: tensor<8xf32> {lpc.name = "w", lpc.state = "param"}) -> (tensor<f32> {lpc.metric = "loss"}, tensor<8xf32> {lpc.name = "w", lpc.state = "grad"}) {
// DYN: %[[SEED:.*]] = lpc.grad_seed : tensor<f32>
// DYN-NEXT: %[[S:.*]] = lpc.constant dense<6.553600e+04> : tensor<f32>
// DYN-NEXT: %[[SS:.*]] = lpc.loss_scale %[[SEED]], %[[S]] : tensor<f32>
// DYN-NEXT: lpc.reshape %[[SS]]
// DYN: %[[G:.*]] = lpc.unscale %{{.*}}, %[[S]] : tensor<8xf32>
// DYN-NEXT: return %{{.*}}, %[[G]]
// DYN-NOT: lpc.loss_scale_update

// STATIC-LABEL: func.func @ridge_grad(
// STATIC: lpc.constant dense<1.024000e+03> : tensor<f32>
// STATIC: lpc.unscale
// STATIC: return

func.func @ridge_train_step(%arg0: tensor<8xf32> {lpc.name = "w", lpc.state = "param"}, %arg1: tensor<8xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, %arg2: tensor<i64> {lpc.state = "step"})
    -> (tensor<8xf32> {lpc.name = "w", lpc.state = "param"}, tensor<8xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.metric = "loss"}) {
  %0 = lpc.pow %arg0 {exponent = 2.000000e+00 : f64} : tensor<8xf32>
  %1 = lpc.reduce_mean %0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %2 = lpc.grad_seed : tensor<f32>
  %3 = lpc.reshape %2 : tensor<f32> -> tensor<1xf32>
  %4 = lpc.broadcast %3 dims = [0] : tensor<1xf32> -> tensor<8xf32>
  %5 = lpc.scale %4 {factor = 1.250000e-01 : f64} : tensor<8xf32>
  %6 = lpc.scale %arg0 {factor = 2.000000e+00 : f64} : tensor<8xf32>
  %7 = lpc.mul %5, %6 : tensor<8xf32>
  %8 = lpc.constant dense<1> : tensor<i64>
  %9 = lpc.add %arg2, %8 : tensor<i64>
  %10 = lpc.constant dense<1.000000e-03> : tensor<f32>
  %new_param, %new_momentum_buffer = lpc.sgd %arg0, %7, %arg1 lr(%10) {weight_decay = 1.000000e-02 : f64} : tensor<8xf32>
  return %new_param, %new_momentum_buffer, %9, %1 : tensor<8xf32>, tensor<8xf32>, tensor<i64>, tensor<f32>
}
func.func @ridge_grad(%arg0: tensor<8xf32> {lpc.name = "w", lpc.state = "param"}) -> (tensor<f32> {lpc.metric = "loss"}, tensor<8xf32> {lpc.name = "w", lpc.state = "grad"}) {
  %0 = lpc.pow %arg0 {exponent = 2.000000e+00 : f64} : tensor<8xf32>
  %1 = lpc.reduce_mean %0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %2 = lpc.grad_seed : tensor<f32>
  %3 = lpc.reshape %2 : tensor<f32> -> tensor<1xf32>
  %4 = lpc.broadcast %3 dims = [0] : tensor<1xf32> -> tensor<8xf32>
  %5 = lpc.scale %4 {factor = 1.250000e-01 : f64} : tensor<8xf32>
  %6 = lpc.scale %arg0 {factor = 2.000000e+00 : f64} : tensor<8xf32>
  %7 = lpc.mul %5, %6 : tensor<8xf32>
  return %1, %7 : tensor<f32>, tensor<8xf32>
}

// -----

// Already loss-scaled, and the seed's mark was lost since (merged with an
// equal constant by -canonicalize): left unchanged, in every mode, without
// the "no backward pass to scale" error.

// DYN-LABEL: func.func @scaled_ridge_train_step(
// DYN-SAME: %arg3: tensor<f32> {lpc.init = 6.553600e+04 : f64, lpc.state = "loss_scale"}, %arg4: tensor<i64> {lpc.state = "loss_scale_growth_tracker"}) ->
// DYN-SAME: tensor<f32> {lpc.metric = "loss_scale"}, tensor<i1> {lpc.metric = "skipped"}) {
// DYN: %[[S:.*]] = lpc.loss_scale %{{.*}}, %arg3
// DYN-NOT: lpc.loss_scale %[[S]]
// DYN: lpc.unscale %{{.*}}, %arg3
// DYN-NOT: lpc.unscale
// DYN: lpc.loss_scale_update
// DYN-NOT: lpc.loss_scale_update
// DYN: return

// STATIC-LABEL: func.func @scaled_ridge_train_step(
// STATIC-COUNT-1: lpc.unscale
// STATIC-NOT: lpc.unscale
// STATIC-NOT: lpc.constant dense<1.024000e+03>

func.func @scaled_ridge_train_step(%arg0: tensor<8xf32> {lpc.name = "w", lpc.state = "param"}, %arg1: tensor<8xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, %arg2: tensor<i64> {lpc.state = "step"}, %arg3: tensor<f32> {lpc.init = 6.553600e+04 : f64, lpc.state = "loss_scale"}, %arg4: tensor<i64> {lpc.state = "loss_scale_growth_tracker"}) -> (tensor<8xf32> {lpc.name = "w", lpc.state = "param"}, tensor<8xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.state = "loss_scale"}, tensor<i64> {lpc.state = "loss_scale_growth_tracker"}, tensor<f32> {lpc.metric = "loss"}, tensor<f32> {lpc.metric = "loss_scale"}, tensor<i1> {lpc.metric = "skipped"}) {
  %0 = lpc.pow %arg0 {exponent = 2.000000e+00 : f64} : tensor<8xf32>
  %1 = lpc.reduce_mean %0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %2 = lpc.constant dense<1.000000e+00> : tensor<f32>
  %3 = lpc.loss_scale %2, %arg3 : tensor<f32>
  %4 = lpc.reshape %3 : tensor<f32> -> tensor<1xf32>
  %5 = lpc.broadcast %4 dims = [0] : tensor<1xf32> -> tensor<8xf32>
  %6 = lpc.scale %5 {factor = 1.250000e-01 : f64} : tensor<8xf32>
  %7 = lpc.scale %arg0 {factor = 2.000000e+00 : f64} : tensor<8xf32>
  %8 = lpc.mul %6, %7 : tensor<8xf32>
  %9 = lpc.constant dense<1> : tensor<i64>
  %10 = lpc.add %arg2, %9 : tensor<i64>
  %11 = lpc.constant dense<1.000000e-03> : tensor<f32>
  %12 = lpc.unscale %8, %arg3 : tensor<8xf32>
  %new_param, %new_momentum_buffer = lpc.sgd %arg0, %12, %arg1 lr(%11) {weight_decay = 1.000000e-02 : f64} : tensor<8xf32>
  %13 = lpc.all_finite %12 : tensor<8xf32>
  %14 = lpc.broadcast %13 dims = [] : tensor<i1> -> tensor<8xi1>
  %15 = lpc.where %14, %new_param, %arg0 : tensor<8xi1>, tensor<8xf32>
  %16 = lpc.where %14, %new_momentum_buffer, %arg1 : tensor<8xi1>, tensor<8xf32>
  %17 = lpc.where %13, %10, %arg2 : tensor<i1>, tensor<i64>
  %new_scale, %new_growth_tracker = lpc.loss_scale_update %arg3, %arg4, %13 : tensor<i64>
  %18 = lpc.constant dense<false> : tensor<i1>
  %19 = lpc.constant dense<true> : tensor<i1>
  %20 = lpc.where %13, %18, %19 : tensor<i1>, tensor<i1>
  return %15, %16, %17, %new_scale, %new_growth_tracker, %1, %arg3, %20 : tensor<8xf32>, tensor<8xf32>, tensor<i64>, tensor<f32>, tensor<i64>, tensor<f32>, tensor<f32>, tensor<i1>
}

// The example MLP under the fp16 policy (AdamW): six f32 gradients (cast
// from fp16 where their GEMM ran in fp16), each unscaled before its update
// and all checked; 6 x 3 optimizer results and the step selected.
// MLP-LABEL: func.func @mlp_train_step(
// MLP-SAME: %[[STEP:arg18]]: tensor<i64> {lpc.state = "step"}, %[[S:arg19]]: tensor<f32> {lpc.init = 6.553600e+04 : f64, lpc.state = "loss_scale"}, %[[TR:arg20]]: tensor<i64> {lpc.state = "loss_scale_growth_tracker"}, %{{.*}}: tensor<256x784xf32> {lpc.input = "image"}
// MLP: %[[SEED:.*]] = lpc.grad_seed
// MLP-NEXT: lpc.loss_scale %[[SEED]], %[[S]]
// MLP: %[[G:.*]] = lpc.cast %{{.*}} : tensor<784x1024xf16> to tensor<784x1024xf32>
// MLP: %[[U0:.*]] = lpc.unscale %[[G]], %[[S]] : tensor<784x1024xf32>
// MLP-NEXT: lpc.adamw %arg0, %[[U0]],
// MLP-COUNT-5: lpc.unscale
// MLP: %[[OK:.*]] = lpc.all_finite %[[U0]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}} : tensor<784x1024xf32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>, tensor<1024x10xf32>, tensor<10xf32>
// MLP-COUNT-18: lpc.where %{{.*}}, %new_
// MLP-NEXT: lpc.where %[[OK]], %{{.*}}, %[[STEP]] : tensor<i1>, tensor<i64>
// MLP-NEXT: lpc.loss_scale_update %[[S]], %[[TR]], %[[OK]]
// MLP-NOT: lpc.unscale

// MLP-CLIP-LABEL: func.func @mlp_train_step(
// MLP-CLIP-COUNT-6: lpc.unscale
// MLP-CLIP-NEXT: lpc.clip_by_global_norm
// MLP-CLIP: lpc.all_finite
// MLP-CLIP-COUNT-12: lpc.where %{{.*}}, %new_
// MLP-CLIP-NEXT: lpc.where {{.*}} : tensor<i1>, tensor<i64>
// MLP-CLIP: return {{.*}} : {{.*}}, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i1>
