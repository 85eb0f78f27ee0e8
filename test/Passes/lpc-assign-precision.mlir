// RUN: lpc-opt %s -split-input-file -lpc-assign-precision=policy=bf16 | FileCheck %s --check-prefix=BF16
// RUN: lpc-opt %s -split-input-file -lpc-assign-precision=policy=fp16 | FileCheck %s --check-prefix=FP16
// RUN: lpc-opt %s -split-input-file -lpc-assign-precision=policy=no | FileCheck %s --check-prefix=NO
// RUN: lpc-opt %s -split-input-file -lpc-assign-precision="policy=bf16 relax-bf16-reductions=false" | FileCheck %s --check-prefix=STRICT
// RUN: lpc-opt %s -split-input-file -lpc-assign-precision="policy=bf16 keep-fp32=lpc.gelu" | FileCheck %s --check-prefix=KEEP
// RUN: lpc-opt %s -split-input-file -lpc-assign-precision="policy=bf16 always-low=lpc.exp follow=lpc.softmax" | FileCheck %s --check-prefix=MOVE

// The painter: matmul always low; follow ops follow; keep-fp32 ops stay
// fp32 and their fp32 output spreads through follow ops; data and
// parameters do not vote.

// BF16-LABEL: func.func @painter
// BF16: lpc.matmul {{.*}}lpc.assigned = #lpc.precision<bf16>, lpc.reason = "always-low: bf16 with fp32 accumulation"
// BF16: lpc.bias_add {{.*}}lpc.assigned = #lpc.precision<bf16>, lpc.reason = "follow: inputs are bf16"
// BF16: lpc.gelu {{.*}}lpc.assigned = #lpc.precision<bf16>, lpc.reason = "follow: inputs are bf16"
// BF16: lpc.exp {{.*}}lpc.assigned = #lpc.precision<fp32>, lpc.reason = "keep-fp32"
// BF16: lpc.add {{.*}}lpc.assigned = #lpc.precision<fp32>, lpc.reason = "follow: an input is fp32"
// BF16: lpc.relu {{.*}}lpc.assigned = #lpc.precision<fp32>, lpc.reason = "follow: an input is fp32"
// BF16: lpc.reduce_sum {{.*}}lpc.assigned = #lpc.precision<bf16>, lpc.reason = "bf16 relaxes sum/mean (bf16 has fp32's range)"
// BF16: lpc.softmax {{.*}}lpc.assigned = #lpc.precision<fp32>, lpc.reason = "keep-fp32"
// BF16: lpc.tanh {{.*}}lpc.assigned = #lpc.precision<fp32>, lpc.reason = "follow: no computed input (params, data, constants)"
// BF16: lpc.sigmoid {{.*}}lpc.assigned = #lpc.precision<fp32>, lpc.precision = #lpc.precision<fp32>, lpc.reason = "pinned by lpc.precision"
// BF16: lpc.softmax_cross_entropy {{.*}}lpc.assigned = #lpc.precision<fp32>, lpc.reason = "keep-fp32"

// FP16-LABEL: func.func @painter
// FP16: lpc.matmul {{.*}}lpc.assigned = #lpc.precision<fp16>
// FP16: lpc.gelu {{.*}}lpc.assigned = #lpc.precision<fp16>
// FP16 keeps reductions in fp32: fp16's range is too small for sums.
// FP16: lpc.reduce_sum {{.*}}lpc.assigned = #lpc.precision<fp32>, lpc.reason = "keep-fp32"

// NO-LABEL: func.func @painter
// NO-NOT: #lpc.precision<bf16>
// NO-NOT: #lpc.precision<fp16>
// NO: lpc.matmul {{.*}}lpc.assigned = #lpc.precision<fp32>, lpc.reason = "policy no: fp32"

// STRICT-LABEL: func.func @painter
// STRICT: lpc.reduce_sum {{.*}}lpc.assigned = #lpc.precision<fp32>, lpc.reason = "keep-fp32"

// KEEP-LABEL: func.func @painter
// KEEP: lpc.gelu {{.*}}lpc.assigned = #lpc.precision<fp32>, lpc.reason = "keep-fp32"

// MOVE-LABEL: func.func @painter
// MOVE: lpc.exp {{.*}}lpc.assigned = #lpc.precision<bf16>, lpc.reason = "always-low: bf16 with fp32 accumulation"
// MOVE: lpc.softmax {{.*}}lpc.assigned = #lpc.precision<bf16>, lpc.reason = "follow: inputs are bf16"
func.func @painter(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>, %y: tensor<8xi32>) -> tensor<f32> {
  %h = lpc.matmul %x, %w : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %hb = lpc.bias_add %h, %b : tensor<8x16xf32>, tensor<16xf32>
  %g = lpc.gelu %hb : tensor<8x16xf32>
  %e = lpc.exp %g : tensor<8x16xf32>
  %s = lpc.add %g, %e : tensor<8x16xf32>
  %r = lpc.relu %s : tensor<8x16xf32>
  %sum = lpc.reduce_sum %g {axes = array<i64: 0>} : tensor<8x16xf32> -> tensor<16xf32>
  %sm = lpc.softmax %r : tensor<8x16xf32>
  %t = lpc.tanh %x : tensor<8x16xf32>
  %sg = lpc.sigmoid %g {lpc.precision = #lpc.precision<fp32>} : tensor<8x16xf32>
  %l = lpc.softmax_cross_entropy %sm, %y : tensor<8x16xf32>, tensor<8xi32>
  return %l : tensor<f32>
}

// -----

// Integer ops (the step counter) and ops of other dialects get nothing.
// BF16-LABEL: func.func @ints
// BF16: lpc.add %arg0, %arg0 : tensor<i64>
// BF16-NOT: lpc.assigned
func.func @ints(%s: tensor<i64>) -> tensor<i64> {
  %n = lpc.add %s, %s : tensor<i64>
  return %n : tensor<i64>
}
