// RUN: lpc-opt %s -split-input-file -lpc-to-linalg | FileCheck %s
// RUN: lpc-opt %s -split-input-file -lpc-to-linalg=fp8-hardware-cvt | FileCheck %s --check-prefix=HW

// Elementwise ops compute in f32 and round once: bf16 operands are
// extended in the body, the result truncated.
// CHECK-LABEL: func.func @gelu_bf16
// CHECK-NOT: lpc.gelu
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK: %[[X:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK: math.erf
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: linalg.yield %[[R]] : bf16
func.func @gelu_bf16(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %y = lpc.gelu %x : tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// A GEMM accumulates in f32 (a filled f32 accumulator, a reduction loop),
// is marked for the GEMM library, and is rounded to bf16 afterwards.
// CHECK-LABEL: func.func @gemm_bf16
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<4x8xbf16>, tensor<16x8xbf16>) outs(%[[ACC]] : tensor<4x16xf32>) attrs =  {lpc_gemm = array<i1: false, true>}
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @gemm_bf16(%a: tensor<4x8xbf16>, %b: tensor<16x8xbf16>) -> tensor<4x16xbf16> {
  %y = lpc.matmul %a, %b {transpose_b} : tensor<4x8xbf16>, tensor<16x8xbf16> -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----

// FP8 conversions are integer code, not arith.truncf to f8 (which has no
// CPU lowering): a bitcast to i32, rounding by integer addition, select on
// overflow / NaN, truncation to i8 and a bitcast to the fp8 type.
// CHECK-LABEL: func.func @quantize
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: math.roundeven
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK-NOT: arith.truncf %{{.*}} to f8E4M3FN
func.func @quantize(%x: tensor<8xf32>, %s: tensor<f32>) -> tensor<8xf8E4M3FN> {
  %q = lpc.quantize %x, %s : tensor<8xf32> to tensor<8xf8E4M3FN>
  return %q : tensor<8xf8E4M3FN>
}

// -----

// With fp8-hardware-cvt (lpc-gpu-codegen from sm_89 on) the conversions
// stay arith ops for lpc-fp8-to-nvvm: truncf (overflow: NaN / inf), truncf
// of a clamp to +-max for saturating casts and quantization, extf.
// CHECK-LABEL: func.func @fp8_conversions
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: return
// HW-LABEL: func.func @fp8_conversions
// HW-DAG: %[[MAX8:.*]] = arith.constant 4.480000e+02 : f32
// HW-DAG: %[[MIN8:.*]] = arith.constant -4.480000e+02 : f32
// HW-DAG: %[[MAX5:.*]] = arith.constant 5.734400e+04 : f32
// HW-DAG: %[[MIN5:.*]] = arith.constant -5.734400e+04 : f32
// HW: ^bb0(%[[A:.*]]: f32, %{{.*}}: f8E5M2):
// HW-NEXT: %[[R:.*]] = arith.truncf %[[A]] : f32 to f8E5M2
// HW-NEXT: linalg.yield %[[R]]
// HW: ^bb0(%[[B:.*]]: f32, %{{.*}}: f8E5M2):
// HW-NEXT: %[[LO:.*]] = arith.maximumf %[[B]], %[[MIN5]] : f32
// HW-NEXT: %[[HI:.*]] = arith.minimumf %[[LO]], %[[MAX5]] : f32
// HW-NEXT: %[[R:.*]] = arith.truncf %[[HI]] : f32 to f8E5M2
// HW: arith.mulf
// HW-NEXT: %[[LO:.*]] = arith.maximumf %{{.*}}, %[[MIN8]] : f32
// HW-NEXT: %[[HI:.*]] = arith.minimumf %[[LO]], %[[MAX8]] : f32
// HW-NEXT: arith.truncf %[[HI]] : f32 to f8E4M3FN
// HW: ^bb0(%[[Q:.*]]: f8E4M3FN, %{{.*}}: f32):
// HW-NEXT: arith.extf %[[Q]] : f8E4M3FN to f32
// HW-NOT: arith.bitcast
// HW: return
func.func @fp8_conversions(%x: tensor<8xf32>, %s: tensor<f32>) -> (tensor<8xf8E5M2>, tensor<8xf8E5M2>, tensor<8xf32>) {
  %a = lpc.cast %x : tensor<8xf32> to tensor<8xf8E5M2>
  %b = lpc.cast %x {saturate} : tensor<8xf32> to tensor<8xf8E5M2>
  %q = lpc.quantize %x, %s : tensor<8xf32> to tensor<8xf8E4M3FN>
  %d = lpc.dequantize %q, %s : tensor<8xf8E4M3FN> to tensor<8xf32>
  return %a, %b, %d : tensor<8xf8E5M2>, tensor<8xf8E5M2>, tensor<8xf32>
}

// -----

// Models are not executable: left alone.
// CHECK-LABEL: func.func @model
// CHECK: lpc.param
// CHECK: lpc.matmul
func.func @model() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %t = lpc.input "t" targets : tensor<2x4xf32>
  %w = lpc.param "w" ones : tensor<4x4xf32>
  %h = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %l = lpc.mse_loss %h, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}

// -----

// Reshapes that only split or only merge dimensions stay views after
// bufferization (expand/collapse_shape, strided layouts allowed); others are
// tensor.reshape (identity layouts, a copy when the input is strided).
// CHECK-LABEL: func.func @reshapes
// CHECK: tensor.extract_slice
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [2, 4, 2, 3] : tensor<2x4x6xf32> into tensor<2x4x2x3xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x4x6xf32> into tensor<8x6xf32>
// CHECK: tensor.reshape %{{.*}}(%{{.*}}) : (tensor<2x4x6xf32>, tensor<2xi64>) -> tensor<4x12xf32>
func.func @reshapes(%x: tensor<2x4x18xf32>) -> (tensor<2x4x2x3xf32>, tensor<8x6xf32>, tensor<4x12xf32>) {
  %s = lpc.slice %x start = [0, 0, 6] limit = [2, 4, 12] step = [1, 1, 1] : tensor<2x4x18xf32> -> tensor<2x4x6xf32>
  %0 = lpc.reshape %s : tensor<2x4x6xf32> -> tensor<2x4x2x3xf32>
  %1 = lpc.reshape %s : tensor<2x4x6xf32> -> tensor<8x6xf32>
  %2 = lpc.reshape %s : tensor<2x4x6xf32> -> tensor<4x12xf32>
  return %0, %1, %2 : tensor<2x4x2x3xf32>, tensor<8x6xf32>, tensor<4x12xf32>
}
