// RUN: lpc-opt %s -lpc-autodiff -lpc-assign-precision="policy=fp8 fp8-min-mnk=0" -lpc-insert-casts -lpc-fp8-scaling="amax-history-len=16" | FileCheck %s
// RUN: lpc-opt %s -lpc-autodiff -lpc-assign-precision="policy=fp8 fp8-min-mnk=0" -lpc-insert-casts -lpc-fp8-scaling="amax-history-len=8 margin=2 interval=4 amax-compute-algo=most_recent fast-accum=fprop,dgrad" | FileCheck %s --check-prefix=OPTS
// RUN: lpc-opt %s -lpc-autodiff -lpc-assign-precision="policy=fp8 fp8-min-mnk=0" -lpc-insert-casts -lpc-fp8-scaling="scaling=current" | FileCheck %s --check-prefix=CURRENT
// RUN: lpc-opt %s -lpc-autodiff -lpc-assign-precision="policy=fp8 fp8-min-mnk=0" -lpc-insert-casts -lpc-fp8-scaling="scaling=current reduce-amax=true" | FileCheck %s --check-prefix=CURRENT-REDUCE
// RUN: lpc-opt %s -lpc-autodiff -lpc-assign-precision="policy=bf16" -lpc-insert-casts -lpc-fp8-scaling | FileCheck %s --check-prefix=NOFP8
// RUN: lpc-opt %s -lpc-autodiff -lpc-assign-precision="policy=fp8 fp8-min-mnk=0" -lpc-insert-casts -lpc-fp8-scaling="amax-history-len=16 reduce-amax=true" | FileCheck %s --check-prefix=REDUCE
// RUN: not lpc-opt %s -lpc-fp8-scaling=scaling=late 2>&1 | FileCheck %s --check-prefix=ERR1
// RUN: not lpc-opt %s -lpc-fp8-scaling=amax-compute-algo=mean 2>&1 | FileCheck %s --check-prefix=ERR2
// RUN: not lpc-opt %s -lpc-fp8-scaling=amax-history-len=0 2>&1 | FileCheck %s --check-prefix=ERR3

// The forward model (kept for evaluation) has no state: current scaling.
// CHECK-LABEL: func.func @net()
// CHECK: %[[A:.*]] = lpc.amax %{{.*}} : tensor<32x32xf32>
// CHECK: %[[S:.*]] = lpc.fp8_compute_scale %[[A]], %{{.*}}, %{{.*}} {format = #lpc.precision<fp8_e4m3>} : tensor<i64>
// CHECK: lpc.quantize %{{.*}}, %[[S]]
// CHECK: lpc.scaled_matmul

// Delayed scaling: a scale (initialized to 1) and an amax history per FP8
// tensor, named after the weight, its input and its output gradient.
// CHECK-LABEL: func.func @net_train_step(
// CHECK-SAME: %[[WARG:arg[0-9]+]]: tensor<32x32xf32> {lpc.name = "fc1.weight", lpc.state = "param"}
// CHECK-SAME: %[[STEP:arg[0-9]+]]: tensor<i64> {lpc.state = "step"}
// CHECK-SAME: %[[XS:arg[0-9]+]]: tensor<f32> {lpc.init = 1.000000e+00 : f64, lpc.name = "fc1.weight.input", lpc.state = "fp8_scale"}
// CHECK-SAME: %[[XH:arg[0-9]+]]: tensor<16xf32> {lpc.name = "fc1.weight.input", lpc.state = "fp8_amax_history"}
// CHECK-SAME: %[[WS:arg[0-9]+]]: tensor<f32> {lpc.init = 1.000000e+00 : f64, lpc.name = "fc1.weight", lpc.state = "fp8_scale"}
// CHECK-SAME: {lpc.name = "fc1.weight", lpc.state = "fp8_amax_history"}
// CHECK-SAME: lpc.init = 1.000000e+00 : f64, lpc.name = "fc2.weight.input", lpc.state = "fp8_scale"}
// CHECK-SAME: lpc.init = 1.000000e+00 : f64, lpc.name = "fc2.weight", lpc.state = "fp8_scale"}
// CHECK-SAME: lpc.init = 1.000000e+00 : f64, lpc.name = "fc2.weight.grad_output", lpc.state = "fp8_scale"}
// CHECK-SAME: lpc.init = 1.000000e+00 : f64, lpc.name = "fc1.weight.grad_output", lpc.state = "fp8_scale"}
// CHECK-SAME: {lpc.input = "x"}
// CHECK-SAME: -> (
// CHECK-SAME: tensor<f32> {lpc.name = "fc1.weight.input", lpc.state = "fp8_scale"}, tensor<16xf32> {lpc.name = "fc1.weight.input", lpc.state = "fp8_amax_history"}
// CHECK-SAME: tensor<f32> {lpc.metric = "loss"},
// Then, per FP8 tensor, the fractions this step's quantization saturated
// and flushed to zero.
// CHECK-SAME: tensor<f32> {lpc.metric = "fp8_saturated", lpc.name = "fc1.weight.input"}, tensor<f32> {lpc.metric = "fp8_underflow", lpc.name = "fc1.weight.input"}
// CHECK-SAME: tensor<f32> {lpc.metric = "fp8_underflow", lpc.name = "fc1.weight.grad_output"})
// The step quantizes with the scale of earlier steps, records its amax and
// returns the next scale. The GEMMs' scale inverses come first: they need
// nothing of this step.
// CHECK: %[[WINV:.*]] = lpc.div %{{.*}}, %[[WS]] : tensor<f32>
// CHECK: %[[WA:.*]] = lpc.amax %[[WARG]] : tensor<32x32xf32>
// CHECK: %[[WH:.*]], %[[WSA:.*]] = lpc.amax_history_push %{{.*}}, %[[WA]] : tensor<16xf32>
// CHECK: %[[WNEXT:.*]] = lpc.fp8_compute_scale %[[WSA]], %[[WS]], %[[STEP]] {format = #lpc.precision<fp8_e4m3>} : tensor<i64>
// CHECK: lpc.fp8_stats %[[WARG]], %[[WS]] {format = #lpc.precision<fp8_e4m3>} : tensor<32x32xf32>
// CHECK: %[[WQ:.*]] = lpc.quantize %[[WARG]], %[[WS]] : tensor<32x32xf32> to tensor<32x32xf8E4M3FN>
// CHECK: lpc.scaled_matmul %{{.*}}, %[[WQ]] scales(%{{.*}}, %[[WINV]]) {fast_accum, {{.*}}role = #lpc.role<fprop>}
// fc2's weight is quantized once for fprop and dgrad; its gradient once for
// dgrad and wgrad; dgrad and wgrad accumulate without fast_accum.
// CHECK: %[[W2Q:.*]] = lpc.quantize %arg1, %{{.*}} : tensor<32x32xf32> to tensor<32x32xf8E4M3FN>
// CHECK: %[[DQ:.*]] = lpc.quantize %{{.*}} : tensor<32x32x{{.*}}> to tensor<32x32xf8E5M2>
// CHECK: lpc.scaled_matmul %[[DQ]], %[[W2Q]] scales({{.*}}) {lpc.reason = "fp8 dgrad GEMM (E5M2 x E4M3), bf16 output", role = #lpc.role<dgrad>, transpose_b} : tensor<32x32xf8E5M2>, tensor<32x32xf8E4M3FN> -> tensor<32x32xbf16>
// CHECK: lpc.scaled_matmul %{{.*}}, %[[DQ]] scales({{.*}}) {lpc.reason = "fp8 wgrad GEMM (E4M3 x E5M2), bf16 output", role = #lpc.role<wgrad>, transpose_a}
// CHECK-NOT: lpc.quantize %arg1
// CHECK: return {{.*}}%[[WNEXT]], %[[WH]]

// OPTS-LABEL: func.func @net_train_step(
// OPTS-SAME: tensor<8xf32> {lpc.name = "fc1.weight", lpc.state = "fp8_amax_history"}
// OPTS: lpc.amax_history_push {{.*}} {algo = #lpc.amax_algo<most_recent>} : tensor<8xf32>
// OPTS: lpc.fp8_compute_scale {{.*}} {format = #lpc.precision<fp8_e4m3>, interval = 4 : i64, margin = 2 : i64}
// OPTS: lpc.scaled_matmul {{.*}}{fast_accum, {{.*}}role = #lpc.role<dgrad>

// reduce-amax (data parallelism): in the train step every amax but the
// weights' is the max over the ranks before it enters the history, all of
// them in one collective at the end of the step (delayed scaling: nothing
// else reads them), each history update after it. The weights are the same
// on every rank, so their amaxes go into their histories as they are. The
// forward model, which one rank evaluates alone, has no collective.
// REDUCE-LABEL: func.func @net()
// REDUCE-NOT: lpc.all_reduce
// REDUCE-LABEL: func.func @net_train_step(
// REDUCE-SAME: %[[W1:[^:]*]]: tensor<32x32xf32> {lpc.name = "fc1.weight", lpc.state = "param"}
// REDUCE-SAME: %[[W1H:[^:]*]]: tensor<16xf32> {lpc.name = "fc1.weight", lpc.state = "fp8_amax_history"}
// REDUCE-SAME: %[[X:[^:]*]]: tensor<32x32xf32> {lpc.input = "x"}
// REDUCE: %[[A:.*]] = lpc.amax %[[X]] : tensor<32x32xf32>
// REDUCE-NOT: lpc.all_reduce
// REDUCE: %[[AW:.*]] = lpc.amax %[[W1]] : tensor<32x32xf32>
// REDUCE-NEXT: lpc.amax_history_push %[[W1H]], %[[AW]]
// REDUCE-NOT: lpc.all_reduce
// REDUCE: %[[A1:.*]] = lpc.reshape %[[A]] : tensor<f32> -> tensor<1xf32>
// REDUCE: %[[V:.*]] = lpc.concat %[[A1]], {{.*}} axis = 0 : {{.*}} -> tensor<4xf32>
// REDUCE-NEXT: %[[R:.*]] = lpc.all_reduce %[[V]] max : tensor<4xf32> -> tensor<4xf32>
// REDUCE-NOT: lpc.all_reduce
// REDUCE-NEXT: %[[S:.*]] = lpc.slice %[[R]] start = [0] limit = [1] step = [1]
// REDUCE-NEXT: %[[G:.*]] = lpc.reshape %[[S]] : tensor<1xf32> -> tensor<f32>
// REDUCE-NEXT: lpc.amax_history_push %{{.*}}, %[[G]]
// REDUCE-COUNT-3: lpc.amax_history_push
// REDUCE-NOT: lpc.all_reduce

// CURRENT-LABEL: func.func @net_train_step(
// CURRENT-NOT: fp8_scale
// CURRENT-NOT: amax_history
// CURRENT: lpc.scaled_matmul

// Current scaling with reduce-amax: each activation's and output
// gradient's amax is reduced where its cast needs it (4 collectives); the
// weights' are not (the same on every rank).
// CURRENT-REDUCE-LABEL: func.func @net_train_step(
// CURRENT-REDUCE-SAME: %[[W1:[^:]*]]: tensor<32x32xf32> {lpc.name = "fc1.weight", lpc.state = "param"}
// CURRENT-REDUCE-SAME: %[[W2:[^:]*]]: tensor<32x32xf32> {lpc.name = "fc2.weight", lpc.state = "param"}
// CURRENT-REDUCE-SAME: %[[X:[^:]*]]: tensor<32x32xf32> {lpc.input = "x"}
// CURRENT-REDUCE: %[[AX:.*]] = lpc.amax %[[X]]
// CURRENT-REDUCE-NEXT: lpc.all_reduce %[[AX]] max : tensor<f32> -> tensor<f32>
// CURRENT-REDUCE: %[[AW1:.*]] = lpc.amax %[[W1]]
// CURRENT-REDUCE-NOT: lpc.all_reduce %[[AW1]]
// CURRENT-REDUCE: lpc.all_reduce
// CURRENT-REDUCE: %[[AW2:.*]] = lpc.amax %[[W2]]
// CURRENT-REDUCE-NOT: lpc.all_reduce %[[AW2]]
// CURRENT-REDUCE-COUNT-2: lpc.all_reduce {{.*}} max : tensor<f32> -> tensor<f32>
// CURRENT-REDUCE-NOT: lpc.all_reduce {{.*}} max

// NOFP8-NOT: lpc.scaled_matmul
// NOFP8-NOT: fp8_scale

// ERR1: error: lpc-fp8-scaling: unknown scaling 'late' (expected delayed or current)
// ERR2: error: lpc-fp8-scaling: unknown amax-compute-algo 'mean' (expected max or most_recent)
// ERR3: error: lpc-fp8-scaling: need margin >= 0, interval >= 1 and amax-history-len >= 1
func.func @net() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<32x32xf32>
  %t = lpc.input "t" targets : tensor<32x32xf32>
  %w1 = lpc.param "fc1.weight" xavier_uniform : tensor<32x32xf32>
  %w2 = lpc.param "fc2.weight" xavier_uniform : tensor<32x32xf32>
  %h = lpc.matmul %x, %w1 : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %a = lpc.gelu %h : tensor<32x32xf32>
  %o = lpc.matmul %a, %w2 : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %l = lpc.mse_loss %o, %t : tensor<32x32xf32>
  return %l : tensor<f32>
}
