// --lpc-precision-report: per function, one row per compute op and GEMM
// (role, class, chosen precision, reason), GEMM counts per role and
// precision, FP8 fallbacks, and memory under the chosen precisions against an
// all-FP32 run; a table (or JSON) on stderr or in the `output` file. The IR is
// not changed. Hand-written post-pipeline IR (FP8 and loss-scaler state, a
// bare forward model) is in lpc-precision-report-state.mlir.
//
// The model below: x 32x64, fc1 64->32 (relu), fc2 32->10, cross-entropy.
// Bytes, worked by hand (AdamW train step):
//   parameters      fc1.weight 2048 + fc1.bias 32 + fc2.weight 320 + fc2.bias
//                   10 = 2410 floats = 9640 B, FP32 masters under every policy
//   optimizer state exp_avg + exp_avg_sq = 2 x 9640 = 19280 B
//   checkpoint      19280 + 9640 + the i64 step (8) = 28928 B
//   gradients       fp32: 9640. bf16 / fp8: fc1.weight 4096 (bf16 wgrad) +
//                   fc1.bias 64 (bf16 reduce_sum, relaxed) + fc2.weight 640
//                   (bf16 wgrad) + fc2.bias 40 (fp32: the reduce_sum of the
//                   fp32 cross-entropy gradient) = 4840. fp16: fc1.bias's
//                   reduce_sum is not relaxed: 128 -> 4904
//   largest act.    fc1's 32x32 GEMM output: 2048 (bf16/fp16), 4096 (fp32)
//   saved for bwd   fc1's bias_add 32x32 (relu_grad) + relu 32x32 (fc2 wgrad)
//                   + fc2's bias_add 32x10 (cross-entropy grad) = 2368 values:
//                   4736 B in 16-bit, 9472 B in fp32 (the image feeds fc1's
//                   wgrad but is data, not an activation)

// bf16: the whole table, alignment checked exactly.
// RUN: lpc-opt %s --lpc-autodiff --lpc-assign-precision=policy=bf16 --lpc-precision-report \
// RUN:   -o %t.bf16.mlir 2>&1 | FileCheck %s --check-prefix=BF16 --strict-whitespace --match-full-lines
// The IR is unchanged: byte-identical to the same pipeline without the report.
// RUN: lpc-opt %s --lpc-autodiff --lpc-assign-precision=policy=bf16 -o %t.bf16.plain.mlir
// RUN: diff %t.bf16.plain.mlir %t.bf16.mlir
// RUN: lpc-opt %s --lpc-autodiff --lpc-assign-precision=policy=bf16 --lpc-precision-report 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=IR

// fp8 with fp8-min-mnk=0: fc1's GEMMs run in FP8, the 10-class head falls back.
// RUN: lpc-opt %s --lpc-autodiff '--lpc-assign-precision=policy=fp8 fp8-min-mnk=0' \
// RUN:   --lpc-precision-report -o %t.fp8.mlir 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: lpc-opt %s --lpc-autodiff '--lpc-assign-precision=policy=fp8 fp8-min-mnk=0' -o %t.fp8.plain.mlir
// RUN: diff %t.fp8.plain.mlir %t.fp8.mlir
// With the default fp8-min-mnk (128^3) every GEMM here is too small.
// RUN: lpc-opt %s --lpc-autodiff --lpc-assign-precision=policy=fp8 --lpc-precision-report \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP8MIN
// fp16 and no (all fp32).
// RUN: lpc-opt %s --lpc-autodiff --lpc-assign-precision=policy=fp16 --lpc-precision-report \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP16
// RUN: lpc-opt %s --lpc-autodiff --lpc-assign-precision=policy=no --lpc-precision-report \
// RUN:   -o %t.no.mlir 2>&1 | FileCheck %s --check-prefix=NO
// RUN: lpc-opt %s --lpc-autodiff --lpc-assign-precision=policy=no -o %t.no.plain.mlir
// RUN: diff %t.no.plain.mlir %t.no.mlir

// After lpc-insert-casts the types carry the precisions: same totals, casts
// counted. After lpc-fp8-scaling the FP8 GEMMs are lpc.scaled_matmul and
// the FP8 state appears: 3 tensors (image, fc1.weight, fc1's output
// gradient) x (f32 scale + 16-entry f32 history) = 3 x 68 = 204 B.
// RUN: lpc-opt %s --lpc-autodiff --lpc-assign-precision=policy=bf16 --lpc-insert-casts \
// RUN:   --lpc-precision-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=CASTS
// RUN: lpc-opt %s --lpc-autodiff '--lpc-assign-precision=policy=fp8 fp8-min-mnk=0' --lpc-insert-casts \
// RUN:   --lpc-fp8-scaling=amax-history-len=16 --lpc-precision-report -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SCALED
// fp16 with loss scaling: gradients are seen through lpc.unscale and the
// casts (the same 4904 B); the scaler's state is not in an fp32 run.
// RUN: lpc-opt %s --lpc-autodiff --lpc-assign-precision=policy=fp16 --lpc-insert-casts \
// RUN:   --lpc-loss-scaling --lpc-precision-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOSSSCALE

// JSON, through the flag and through a pass pipeline, with the same content.
// RUN: lpc-opt %s --lpc-autodiff '--lpc-assign-precision=policy=fp8 fp8-min-mnk=0' \
// RUN:   --lpc-precision-report=json=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: lpc-opt %s --pass-pipeline='builtin.module(lpc-autodiff,lpc-assign-precision{policy=fp8 fp8-min-mnk=0},lpc-precision-report{json=true})' \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON

// output=FILE writes the report there and nothing to stderr.
// RUN: rm -f %t.txt %t.json
// RUN: lpc-opt %s --lpc-autodiff --lpc-assign-precision=policy=bf16 --lpc-precision-report=output=%t.txt \
// RUN:   -o /dev/null 2>%t.err
// RUN: count 0 < %t.err
// RUN: FileCheck %s --check-prefix=BF16 --strict-whitespace --match-full-lines < %t.txt
// RUN: lpc-opt %s --lpc-autodiff '--lpc-assign-precision=policy=fp8 fp8-min-mnk=0' \
// RUN:   '--lpc-precision-report=json=true output=%t.json' -o /dev/null 2>%t.err
// RUN: count 0 < %t.err
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// An output file that cannot be written is an error; an unknown option too.
// RUN: not lpc-opt %s --lpc-precision-report=output=%t.missing-dir/report.txt -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOUT
// RUN: not lpc-opt %s --lpc-precision-report=jsn=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADOPT

// The examples, at full size.
// RUN: lpc-opt %examples/mlp.mlir --lpc-autodiff --lpc-assign-precision=policy=fp8 --lpc-insert-casts \
// RUN:   --lpc-precision-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXMLP
// RUN: lpc-opt %examples/gpt.mlir --lpc-autodiff --lpc-assign-precision=policy=bf16 --lpc-insert-casts \
// RUN:   --lpc-precision-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXGPT

// The forward model is reported too (lpc-autodiff keeps it).
// BF16:precision report @mlp
// BF16-NEXT:  op                         location  role   class       precision  reason
// BF16-NEXT:  lpc.matmul                 fc1       fprop  always-low  bf16       always-low: bf16 with fp32 accumulation
// BF16-NEXT:  lpc.bias_add               fc1       -      follow      bf16       follow: inputs are bf16
// BF16-NEXT:  lpc.relu                   fc1       -      follow      bf16       follow: inputs are bf16
// BF16-NEXT:  lpc.matmul                 fc2       fprop  always-low  bf16       always-low: bf16 with fp32 accumulation
// BF16-NEXT:  lpc.bias_add               fc2       -      follow      bf16       follow: inputs are bf16
// BF16-NEXT:  lpc.softmax_cross_entropy  loss      -      keep-fp32   fp32       keep-fp32
// BF16-NEXT:  not listed: 2 lpc.input, 4 lpc.param
// BF16-NEXT:  GEMMs   fp32   bf16   fp16    fp8  total
// BF16-NEXT:  fprop      0      2      0      0      2
// BF16-NEXT:  dgrad      0      0      0      0      0
// BF16-NEXT:  wgrad      0      0      0      0      0
// BF16-NEXT:  total      0      2      0      0      2
// BF16-NEXT:  memory                                   as chosen               if all fp32
// BF16-NEXT:    parameters                      9640    9.41 KiB          9640    9.41 KiB
// BF16-NEXT:    gradients                          0         0 B             0         0 B
// BF16-NEXT:    optimizer state                    0         0 B             0         0 B
// BF16-NEXT:    fp8 state                          0         0 B             0         0 B
// BF16-NEXT:    loss-scaler state                  0         0 B             0         0 B
// BF16-NEXT:    checkpoint state                9640    9.41 KiB          9640    9.41 KiB
// BF16-NEXT:    largest activation              2048    2.00 KiB          4096    4.00 KiB  lpc.matmul at fc1 (32x32xbf16)
// BF16-NEXT:    saved for backward                 0         0 B             0         0 B
// BF16-NEXT:precision report @mlp_train_step
// BF16-NEXT:  op                              location        role   class       precision  reason
// BF16-NEXT:  lpc.matmul                      fc1             fprop  always-low  bf16       always-low: bf16 with fp32 accumulation
// BF16-NEXT:  lpc.bias_add                    fc1             -      follow      bf16       follow: inputs are bf16
// BF16-NEXT:  lpc.relu                        fc1             -      follow      bf16       follow: inputs are bf16
// BF16-NEXT:  lpc.matmul                      fc2             fprop  always-low  bf16       always-low: bf16 with fp32 accumulation
// BF16-NEXT:  lpc.bias_add                    fc2             -      follow      bf16       follow: inputs are bf16
// BF16-NEXT:  lpc.softmax_cross_entropy       loss            -      keep-fp32   fp32       keep-fp32
// BF16-NEXT:  lpc.softmax_cross_entropy_grad  backward(loss)  -      keep-fp32   fp32       keep-fp32
// BF16-NEXT:  lpc.reduce_sum                  backward(fc2)   -      keep-fp32   fp32       keep-fp32
// BF16-NEXT:  lpc.matmul                      backward(fc2)   dgrad  always-low  bf16       always-low: bf16 with fp32 accumulation
// BF16-NEXT:  lpc.matmul                      backward(fc2)   wgrad  always-low  bf16       always-low: bf16 with fp32 accumulation
// BF16-NEXT:  lpc.relu_grad                   backward(fc1)   -      follow      bf16       follow: inputs are bf16
// BF16-NEXT:  lpc.reduce_sum                  backward(fc1)   -      keep-fp32   bf16       bf16 relaxes sum/mean (bf16 has fp32's range)
// BF16-NEXT:  lpc.matmul                      backward(fc1)   wgrad  always-low  bf16       always-low: bf16 with fp32 accumulation
// The step counter's add has no assigned precision: its type is shown.
// BF16-NEXT:  lpc.add                         optimizer       -      follow      i64
// BF16-NEXT:  not listed: 4 lpc.adamw, 2 lpc.constant, 1 lpc.grad_seed
// BF16-NEXT:  GEMMs   fp32   bf16   fp16    fp8  total
// BF16-NEXT:  fprop      0      2      0      0      2
// BF16-NEXT:  dgrad      0      1      0      0      1
// BF16-NEXT:  wgrad      0      2      0      0      2
// BF16-NEXT:  total      0      5      0      0      5
// BF16-NEXT:  memory                                   as chosen               if all fp32
// BF16-NEXT:    parameters                      9640    9.41 KiB          9640    9.41 KiB
// BF16-NEXT:    gradients                       4840    4.73 KiB          9640    9.41 KiB
// BF16-NEXT:    optimizer state                19280   18.83 KiB         19280   18.83 KiB
// BF16-NEXT:    fp8 state                          0         0 B             0         0 B
// BF16-NEXT:    loss-scaler state                  0         0 B             0         0 B
// BF16-NEXT:    checkpoint state               28928   28.25 KiB         28928   28.25 KiB
// BF16-NEXT:    largest activation              2048    2.00 KiB          4096    4.00 KiB  lpc.matmul at fc1 (32x32xbf16)
// BF16-NEXT:    saved for backward              4736    4.62 KiB          9472    9.25 KiB
// BF16-NOT:{{.}}

// IR-NOT: precision report
// IR-LABEL: func.func @mlp()
// IR: lpc.matmul {{.*}}lpc.assigned = #lpc.precision<bf16>
// IR-LABEL: func.func @mlp_train_step(

// FP8-LABEL: precision report @mlp_train_step
// FP8:      lpc.matmul  fc1  fprop  always-low  fp8 E4M3xE4M3  fp8 fprop GEMM (E4M3 x E4M3), bf16 output
// FP8:      lpc.matmul  fc2  fprop  always-low  bf16  fp8 fallback to bf16: K = 32, N = 10 not both multiples of 16
// FP8:      lpc.matmul  backward(fc2)  dgrad  always-low  bf16  fp8 fallback to bf16: K = 10, N = 32 not both multiples of 16
// FP8-NEXT: lpc.matmul  backward(fc2)  wgrad  always-low  bf16  fp8 fallback to bf16: K = 32, N = 10 not both multiples of 16
// FP8:      lpc.matmul  backward(fc1)  wgrad  always-low  fp8 E4M3xE5M2  fp8 wgrad GEMM (E4M3 x E5M2), bf16 output
// FP8:      GEMMs fp32 bf16 fp16 fp8 total
// FP8-NEXT: fprop    0    1    0   1     2
// FP8-NEXT: dgrad    0    1    0   0     1
// FP8-NEXT: wgrad    0    1    0   1     2
// FP8-NEXT: total    0    3    0   2     5
// FP8-NEXT: fp8 fallbacks:
// FP8-NEXT:   fprop lpc.matmul at fc2: fp8 fallback to bf16: K = 32, N = 10 not both multiples of 16
// FP8-NEXT:   dgrad lpc.matmul at backward(fc2): fp8 fallback to bf16: K = 10, N = 32 not both multiples of 16
// FP8-NEXT:   wgrad lpc.matmul at backward(fc2): fp8 fallback to bf16: K = 32, N = 10 not both multiples of 16
// FP8-NEXT: memory
// FP8-NEXT:   parameters          9640 {{.*}}  9640
// FP8-NEXT:   gradients           4840 {{.*}}  9640
// FP8-NEXT:   optimizer state    19280 {{.*}} 19280
// FP8-NEXT:   fp8 state              0 {{.*}}     0
// FP8-NEXT:   loss-scaler state      0 {{.*}}     0
// FP8-NEXT:   checkpoint state   28928 {{.*}} 28928
// FP8-NEXT:   largest activation  2048 {{.*}}  4096 {{.*}} lpc.matmul at fc1 (32x32xbf16)
// FP8-NEXT:   saved for backward  4736 {{.*}}  9472

// FP8MIN-LABEL: precision report @mlp_train_step
// FP8MIN:      lpc.matmul  fc1  fprop  always-low  bf16  fp8 fallback to bf16: M*N*K = 65536 < fp8-min-mnk = 2097152
// FP8MIN:      total 0 5 0 0 5
// FP8MIN-NEXT: fp8 fallbacks:
// FP8MIN-NEXT:   fprop lpc.matmul at fc1: fp8 fallback to bf16: M*N*K = 65536 < fp8-min-mnk = 2097152
// FP8MIN-NEXT:   fprop lpc.matmul at fc2: fp8 fallback to bf16: K = 32, N = 10 not both multiples of 16
// FP8MIN-NEXT:   dgrad lpc.matmul at backward(fc2):
// FP8MIN-NEXT:   wgrad lpc.matmul at backward(fc2):
// FP8MIN-NEXT:   wgrad lpc.matmul at backward(fc1): fp8 fallback to bf16: M*N*K = 65536 < fp8-min-mnk = 2097152
// FP8MIN-NEXT: memory

// FP16-LABEL: precision report @mlp_train_step
// FP16:      lpc.matmul  fc1  fprop  always-low  fp16  always-low: fp16 with fp32 accumulation
// FP16:      lpc.reduce_sum  backward(fc1)  -  keep-fp32  fp32  keep-fp32
// FP16:      total 0 0 5 0 5
// FP16-NOT:  fp8 fallbacks
// FP16:      gradients 4904 {{.*}} 9640
// FP16:      largest activation 2048 {{.*}} 4096 {{.*}} lpc.matmul at fc1 (32x32xf16)
// FP16-NEXT: saved for backward 4736 {{.*}} 9472

// NO-LABEL: precision report @mlp_train_step
// NO:      lpc.matmul  fc1  fprop  always-low  fp32  policy no: fp32
// NO:      total 5 0 0 0 5
// NO:      parameters  9640 {{.*}} 9640
// NO-NEXT: gradients   9640 {{.*}} 9640
// NO:      largest activation 4096 {{.*}} 4096 {{.*}} lpc.matmul at fc1 (32x32xf32)
// NO-NEXT: saved for backward 9472 {{.*}} 9472

// CASTS-LABEL: precision report @mlp_train_step
// CASTS:      lpc.matmul  fc1  fprop  always-low  bf16
// CASTS:      not listed: 4 lpc.adamw, 10 lpc.cast, 2 lpc.constant, 1 lpc.grad_seed
// CASTS:      gradients           4840 {{.*}}  9640
// CASTS:      largest activation  2048 {{.*}}  4096 {{.*}} lpc.matmul at fc1 (32x32xbf16)
// CASTS-NEXT: saved for backward  4736 {{.*}}  9472

// SCALED-LABEL: precision report @mlp_train_step
// SCALED:      lpc.scaled_matmul  fc1  fprop  fixed  fp8 E4M3xE4M3  fp8 fprop GEMM (E4M3 x E4M3), bf16 output
// SCALED:      lpc.scaled_matmul  backward(fc1)  wgrad  fixed  fp8 E4M3xE5M2
// SCALED:      total 0 3 0 2 5
// SCALED:      gradients           4840 {{.*}}  9640
// SCALED:      fp8 state            204 {{.*}}     0
// SCALED-NEXT: loss-scaler state      0 {{.*}}     0
// SCALED-NEXT: checkpoint state   29132 {{.*}} 28928

// LOSSSCALE-LABEL: precision report @mlp_train_step
// LOSSSCALE:      lpc.matmul  fc1  fprop  always-low  fp16
// LOSSSCALE:      total 0 0 5 0 5
// LOSSSCALE:      gradients           4904 {{.*}}  9640
// LOSSSCALE:      loss-scaler state {{[1-9][0-9]*}} {{.*}} 0 0 B
// LOSSSCALE:      saved for backward  4736 {{.*}}  9472

// JSON:      [
// JSON-NEXT:   {
// JSON-NEXT:     "fp8_fallbacks": [
// JSON-NEXT:       {
// JSON-NEXT:         "location": "fc2",
// JSON-NEXT:         "op": "lpc.matmul",
// JSON-NEXT:         "reason": "fp8 fallback to bf16: K = 32, N = 10 not both multiples of 16",
// JSON-NEXT:         "role": "fprop"
// JSON-NEXT:       }
// JSON-NEXT:     ],
// JSON-NEXT:     "function": "mlp",
// JSON:          "function": "mlp_train_step",
// JSON-NEXT:     "gemms": {
// JSON-NEXT:       "dgrad": {
// JSON-NEXT:         "bf16": 1,
// JSON-NEXT:         "fp16": 0,
// JSON-NEXT:         "fp32": 0,
// JSON-NEXT:         "fp8": 0,
// JSON-NEXT:         "total": 1
// JSON-NEXT:       },
// JSON-NEXT:       "fprop": {
// JSON-NEXT:         "bf16": 1,
// JSON-NEXT:         "fp16": 0,
// JSON-NEXT:         "fp32": 0,
// JSON-NEXT:         "fp8": 1,
// JSON-NEXT:         "total": 2
// JSON-NEXT:       },
// JSON-NEXT:       "total": {
// JSON-NEXT:         "bf16": 3,
// JSON-NEXT:         "fp16": 0,
// JSON-NEXT:         "fp32": 0,
// JSON-NEXT:         "fp8": 2,
// JSON-NEXT:         "total": 5
// JSON-NEXT:       },
// JSON-NEXT:       "wgrad": {
// JSON-NEXT:         "bf16": 1,
// JSON-NEXT:         "fp16": 0,
// JSON-NEXT:         "fp32": 0,
// JSON-NEXT:         "fp8": 1,
// JSON-NEXT:         "total": 2
// JSON-NEXT:       }
// JSON-NEXT:     },
// JSON-NEXT:     "memory": {
// JSON-NEXT:       "checkpoint_state": {
// JSON-NEXT:         "all_fp32": 28928,
// JSON-NEXT:         "chosen": 28928
// JSON-NEXT:       },
// JSON-NEXT:       "fp8_state": {
// JSON-NEXT:         "all_fp32": 0,
// JSON-NEXT:         "chosen": 0
// JSON-NEXT:       },
// JSON-NEXT:       "gradients": {
// JSON-NEXT:         "all_fp32": 9640,
// JSON-NEXT:         "chosen": 4840
// JSON-NEXT:       },
// JSON-NEXT:       "largest_activation": {
// JSON-NEXT:         "all_fp32": 4096,
// JSON-NEXT:         "chosen": 2048,
// JSON-NEXT:         "location": "fc1",
// JSON-NEXT:         "op": "lpc.matmul",
// JSON-NEXT:         "type": "32x32xbf16"
// JSON-NEXT:       },
// JSON-NEXT:       "loss_scaler_state": {
// JSON-NEXT:         "all_fp32": 0,
// JSON-NEXT:         "chosen": 0
// JSON-NEXT:       },
// JSON-NEXT:       "optimizer_state": {
// JSON-NEXT:         "all_fp32": 19280,
// JSON-NEXT:         "chosen": 19280
// JSON-NEXT:       },
// JSON-NEXT:       "parameters": {
// JSON-NEXT:         "all_fp32": 9640,
// JSON-NEXT:         "chosen": 9640
// JSON-NEXT:       },
// JSON-NEXT:       "saved_activations": {
// JSON-NEXT:         "all_fp32": 9472,
// JSON-NEXT:         "chosen": 4736
// JSON-NEXT:       }
// JSON-NEXT:     },
// JSON-NEXT:     "ops": [
// JSON-NEXT:       {
// JSON-NEXT:         "class": "always-low",
// JSON-NEXT:         "location": "fc1",
// JSON-NEXT:         "op": "lpc.matmul",
// JSON-NEXT:         "precision": "fp8 E4M3xE4M3",
// JSON-NEXT:         "reason": "fp8 fprop GEMM (E4M3 x E4M3), bf16 output",
// JSON-NEXT:         "role": "fprop"
// JSON-NEXT:       },
// JSON-NEXT:       {
// JSON-NEXT:         "class": "follow",
// JSON-NEXT:         "location": "fc1",
// JSON-NEXT:         "op": "lpc.bias_add",
// JSON-NEXT:         "precision": "bf16",
// JSON-NEXT:         "reason": "follow: inputs are bf16"
// JSON-NEXT:       },
// Rows without a role or a reason have no such key.
// JSON:            "location": "optimizer",
// JSON-NEXT:       "op": "lpc.add",
// JSON-NEXT:       "precision": "i64"
// JSON-NEXT:     }
// JSON-NEXT:   ],
// JSON-NEXT:   "other_ops": {
// JSON-NEXT:     "lpc.adamw": 4,
// JSON-NEXT:     "lpc.constant": 2,
// JSON-NEXT:     "lpc.grad_seed": 1
// JSON-NEXT:   }
// JSON-NEXT: }
// JSON-NEXT: ]
// JSON-NOT: {{.}}

// BADOUT: error: lpc-precision-report: cannot write '{{.*}}missing-dir{{/|\\}}report.txt'

// BADOPT: no such option jsn

// examples/mlp.mlir (784-1024-1024-10, batch 256, AdamW) under fp8: fc1 and
// fc2 in FP8, the 10-class head falls back. Parameters 1863690 floats.
// EXMLP-LABEL: precision report @mlp_train_step
// EXMLP:      total 0 3 0 5 8
// EXMLP:      fprop lpc.matmul at fc3: fp8 fallback to bf16: K = 1024, N = 10 not both multiples of 16
// EXMLP:      parameters       7454760 {{.*}}  7454760
// EXMLP-NEXT: gradients        3727400 {{.*}}  7454760
// EXMLP-NEXT: optimizer state 14909520 {{.*}} 14909520
// EXMLP:      largest activation 524288 {{.*}} 1048576 {{.*}} (256x1024xbf16)

// examples/gpt.mlir (2 layers, d_model 128, tied head, 437760 parameters)
// under bf16: every GEMM in bf16; the attention softmax (16x4x64x64) stays
// fp32 and is the largest activation (1 MiB; the first of the tensors that
// size: the MLP's 16x64x512 in bf16 ties). In fp32 the MLP's 16x64x512 is
// the largest: each column is the largest tensor under its precisions.
// EXGPT-LABEL: precision report @gpt_train_step
// EXGPT:      lpc.softmax  h.0.attn  -  keep-fp32  fp32  keep-fp32
// EXGPT:      total 0 39 0 0 39
// EXGPT:      parameters       1751040 {{.*}} 1751040
// EXGPT:      optimizer state  3502080 {{.*}} 3502080
// EXGPT:      largest activation 1048576 {{.*}} 2097152 {{.*}} lpc.softmax at h.0.attn (16x4x64x64xf32)

module {
  func.func @mlp() -> tensor<f32> {
    %x = lpc.input "image" features : tensor<32x64xf32> loc("image")
    %y = lpc.input "label" labels : tensor<32xi32> loc("label")
    %w1 = lpc.param "fc1.weight" kaiming_uniform : tensor<64x32xf32> loc("fc1")
    %b1 = lpc.param "fc1.bias" zeros : tensor<32xf32> loc("fc1")
    %w2 = lpc.param "fc2.weight" xavier_uniform : tensor<32x10xf32> loc("fc2")
    %b2 = lpc.param "fc2.bias" zeros : tensor<10xf32> loc("fc2")
    %h = lpc.matmul %x, %w1 : tensor<32x64xf32>, tensor<64x32xf32> -> tensor<32x32xf32> loc("fc1")
    %h1 = lpc.bias_add %h, %b1 : tensor<32x32xf32>, tensor<32xf32> loc("fc1")
    %a = lpc.relu %h1 : tensor<32x32xf32> loc("fc1")
    %o = lpc.matmul %a, %w2 : tensor<32x32xf32>, tensor<32x10xf32> -> tensor<32x10xf32> loc("fc2")
    %o1 = lpc.bias_add %o, %b2 : tensor<32x10xf32>, tensor<10xf32> loc("fc2")
    %l = lpc.softmax_cross_entropy %o1, %y : tensor<32x10xf32>, tensor<32xi32> loc("loss")
    return %l : tensor<f32> loc("loss")
  }
}
