// Round trip of every lpc op through the custom and the generic form.
// RUN: lpc-opt %s | lpc-opt | FileCheck %s
// RUN: lpc-opt %s --mlir-print-op-generic | lpc-opt | FileCheck %s
// RUN: lpc-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: lpc-opt %s -emit-bytecode | lpc-opt | FileCheck %s

//===----------------------------------------------------------------------===//
// Model structure
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @params()
func.func @params() {
  // CHECK-NEXT: lpc.param "w.zeros" zeros : tensor<4x8xf32>{{$}}
  %0 = lpc.param "w.zeros" zeros : tensor<4x8xf32>
  // CHECK-NEXT: lpc.param "w.ones" ones : tensor<8xf32>{{$}}
  %1 = lpc.param "w.ones" ones : tensor<8xf32>
  // CHECK-NEXT: lpc.param "w.const" constant {value = 5.000000e-01 : f64} : tensor<8xf32>{{$}}
  %2 = lpc.param "w.const" constant {value = 0.5 : f64} : tensor<8xf32>
  // CHECK-NEXT: lpc.param "w.normal" normal : tensor<4x8xf32>{{$}}
  %3 = lpc.param "w.normal" normal : tensor<4x8xf32>
  // CHECK-NEXT: lpc.param "w.normal2" normal {mean = 1.000000e-01 : f64, std = 2.000000e-02 : f64} : tensor<4x8xf32>{{$}}
  %4 = lpc.param "w.normal2" normal {std = 0.02 : f64, mean = 0.1 : f64} : tensor<4x8xf32>
  // CHECK-NEXT: lpc.param "w.uniform" uniform : tensor<4x8xf32>{{$}}
  %5 = lpc.param "w.uniform" uniform : tensor<4x8xf32>
  // CHECK-NEXT: lpc.param "w.uniform2" uniform {high = 2.500000e-01 : f64, low = -5.000000e-01 : f64} : tensor<4x8xf32>{{$}}
  %6 = lpc.param "w.uniform2" uniform {low = -0.5 : f64, high = 0.25 : f64} : tensor<4x8xf32>
  // CHECK-NEXT: lpc.param "w.xu" xavier_uniform : tensor<4x8xf32>{{$}}
  %7 = lpc.param "w.xu" xavier_uniform : tensor<4x8xf32>
  // CHECK-NEXT: lpc.param "w.xn" xavier_normal {gain = 2.000000e+00 : f64} : tensor<4x8xf32>{{$}}
  %8 = lpc.param "w.xn" xavier_normal {gain = 2.0 : f64} : tensor<4x8xf32>
  // CHECK-NEXT: lpc.param "w.ku" kaiming_uniform {gain = 1.4142135623730951 : f64} : tensor<4x8x3xf32>{{$}}
  %9 = lpc.param "w.ku" kaiming_uniform {gain = 1.4142135623730951 : f64} : tensor<4x8x3xf32>
  // CHECK-NEXT: lpc.param "w.kn" kaiming_normal : tensor<4x8xf32>{{$}}
  %10 = lpc.param "w.kn" kaiming_normal : tensor<4x8xf32>
  // CHECK-NEXT: lpc.param "scalar" ones : tensor<f32>{{$}}
  %11 = lpc.param "scalar" ones : tensor<f32>
  // CHECK-NEXT: return
  return
}
// GENERIC-LABEL: sym_name = "params"
// GENERIC: "lpc.param"() <{init = #lpc<init zeros>, name = "w.zeros"}> : () -> tensor<4x8xf32>
// GENERIC: "lpc.param"() <{init = #lpc<init constant>, name = "w.const", value = 5.000000e-01 : f64}> : () -> tensor<8xf32>
// GENERIC: "lpc.param"() <{gain = 2.000000e+00 : f64, init = #lpc<init xavier_normal>, name = "w.xn"}> : () -> tensor<4x8xf32>

// Parameter names are unique per function, not per module.
// CHECK-LABEL: func.func @params_same_names_elsewhere()
func.func @params_same_names_elsewhere() {
  // CHECK-NEXT: lpc.param "w.zeros" zeros : tensor<2xf32>
  %0 = lpc.param "w.zeros" zeros : tensor<2xf32>
  return
}

// CHECK-LABEL: func.func @inputs()
func.func @inputs() {
  // CHECK-NEXT: lpc.input "x" features : tensor<16x784xf32>{{$}}
  %0 = lpc.input "x" features : tensor<16x784xf32>
  // CHECK-NEXT: lpc.input "y" targets : tensor<16x10xbf16>{{$}}
  %1 = lpc.input "y" targets : tensor<16x10xbf16>
  // CHECK-NEXT: lpc.input "l" labels : tensor<16xi32>{{$}}
  %2 = lpc.input "l" labels : tensor<16xi32>
  // CHECK-NEXT: lpc.input "t" tokens : tensor<16x128xi64>{{$}}
  %3 = lpc.input "t" tokens : tensor<16x128xi64>
  // CHECK-NEXT: lpc.input "h" features : tensor<16x8xf8E4M3FN>{{$}}
  %4 = lpc.input "h" features : tensor<16x8xf8E4M3FN>
  return
}
// GENERIC-LABEL: sym_name = "inputs"
// GENERIC: "lpc.input"() <{kind = #lpc<input_kind features>, name = "x"}> : () -> tensor<16x784xf32>
// GENERIC: "lpc.input"() <{kind = #lpc<input_kind labels>, name = "l"}> : () -> tensor<16xi32>

// CHECK-LABEL: func.func @constants()
func.func @constants() -> (tensor<4xf32>, tensor<2x2xbf16>, tensor<3xi32>, tensor<2xi1>, tensor<f32>) {
  // CHECK-NEXT: %[[C0:.*]] = lpc.constant dense<1.000000e+00> : tensor<4xf32>{{$}}
  %0 = lpc.constant dense<1.0> : tensor<4xf32>
  // CHECK-NEXT: %[[C1:.*]] = lpc.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xbf16>{{$}}
  %1 = lpc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xbf16>
  // CHECK-NEXT: %[[C2:.*]] = lpc.constant {tag} dense<[1, 2, 3]> : tensor<3xi32>{{$}}
  %2 = lpc.constant {tag} dense<[1, 2, 3]> : tensor<3xi32>
  // CHECK-NEXT: %[[C3:.*]] = lpc.constant dense<[true, false]> : tensor<2xi1>{{$}}
  %3 = lpc.constant dense<[true, false]> : tensor<2xi1>
  // CHECK-NEXT: %[[C4:.*]] = lpc.constant dense<-2.500000e-01> : tensor<f32>{{$}}
  %4 = lpc.constant dense<-0.25> : tensor<f32>
  // CHECK-NEXT: return %[[C0]], %[[C1]], %[[C2]], %[[C3]], %[[C4]]
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<2x2xbf16>, tensor<3xi32>, tensor<2xi1>, tensor<f32>
}
// GENERIC-LABEL: sym_name = "constants"
// GENERIC: "lpc.constant"() <{value = dense<1.000000e+00> : tensor<4xf32>}> : () -> tensor<4xf32>
// GENERIC: "lpc.constant"() <{value = dense<[1, 2, 3]> : tensor<3xi32>}> {tag} : () -> tensor<3xi32>

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @matmuls(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4x8xbf16>, %[[B:[^:]+]]: tensor<8x16xbf16>, %[[AT:[^:]+]]: tensor<8x4xbf16>, %[[BT:[^:]+]]: tensor<16x8xbf16>,
// CHECK-SAME: %[[BA:[^:]+]]: tensor<2x4x8xf32>, %[[BB:[^:]+]]: tensor<2x8x16xf32>, %[[W:[^:]+]]: tensor<8x16xf32>,
// CHECK-SAME: %[[E:[^:]+]]: tensor<4x8xf8E4M3FN>, %[[F:[^:]+]]: tensor<8x16xf8E4M3FN>, %[[BW:[^:]+]]: tensor<2x16x8xf16>, %[[BX:[^:]+]]: tensor<2x8x4xf16>)
func.func @matmuls(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>, %at: tensor<8x4xbf16>, %bt: tensor<16x8xbf16>,
                   %ba: tensor<2x4x8xf32>, %bb: tensor<2x8x16xf32>, %w: tensor<8x16xf32>,
                   %e: tensor<4x8xf8E4M3FN>, %f: tensor<8x16xf8E4M3FN>, %bw: tensor<2x16x8xf16>, %bx: tensor<2x8x4xf16>)
    -> (tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<2x4x16xf32>,
        tensor<2x4x16xf32>, tensor<4x16xf8E4M3FN>, tensor<4x16xbf16>, tensor<2x4x16xf16>) {
  // CHECK: %[[R0:.*]] = lpc.matmul %[[A]], %[[B]] : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>{{$}}
  %0 = lpc.matmul %a, %b : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
  // CHECK: %[[R1:.*]] = lpc.matmul %[[AT]], %[[B]] {transpose_a} : tensor<8x4xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>{{$}}
  %1 = lpc.matmul %at, %b {transpose_a} : tensor<8x4xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
  // CHECK: %[[R2:.*]] = lpc.matmul %[[A]], %[[BT]] {transpose_b} : tensor<4x8xbf16>, tensor<16x8xbf16> -> tensor<4x16xbf16>{{$}}
  %2 = lpc.matmul %a, %bt {transpose_b} : tensor<4x8xbf16>, tensor<16x8xbf16> -> tensor<4x16xbf16>
  // CHECK: %[[R3:.*]] = lpc.matmul %[[AT]], %[[BT]] {role = #lpc.role<dgrad>, transpose_a, transpose_b} : tensor<8x4xbf16>, tensor<16x8xbf16> -> tensor<4x16xbf16>{{$}}
  %3 = lpc.matmul %at, %bt {transpose_a, transpose_b, role = #lpc.role<dgrad>} : tensor<8x4xbf16>, tensor<16x8xbf16> -> tensor<4x16xbf16>
  // Batched, and batched with a shared rank-2 rhs.
  // CHECK: %[[R4:.*]] = lpc.matmul %[[BA]], %[[BB]] : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>{{$}}
  %4 = lpc.matmul %ba, %bb : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  // CHECK: %[[R5:.*]] = lpc.matmul %[[BA]], %[[W]] {role = #lpc.role<fprop>} : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>{{$}}
  %5 = lpc.matmul %ba, %w {role = #lpc.role<fprop>} : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  // CHECK: %[[R6:.*]] = lpc.matmul %[[E]], %[[F]] {role = #lpc.role<wgrad>} : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x16xf8E4M3FN>{{$}}
  %6 = lpc.matmul %e, %f {role = #lpc.role<wgrad>} : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x16xf8E4M3FN>
  // The user precision pin on a compute op.
  // CHECK: %[[R7:.*]] = lpc.matmul %[[A]], %[[B]] {lpc.precision = #lpc.precision<fp32>} : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>{{$}}
  %7 = lpc.matmul %a, %b {lpc.precision = #lpc.precision<fp32>} : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
  // Batched, both operands transposed.
  // CHECK: %[[R8:.*]] = lpc.matmul %[[BX]], %[[BW]] {transpose_a, transpose_b} : tensor<2x8x4xf16>, tensor<2x16x8xf16> -> tensor<2x4x16xf16>{{$}}
  %8 = lpc.matmul %bx, %bw {transpose_a, transpose_b} : tensor<2x8x4xf16>, tensor<2x16x8xf16> -> tensor<2x4x16xf16>
  // CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]], %[[R8]] :
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<2x4x16xf32>,
        tensor<2x4x16xf32>, tensor<4x16xf8E4M3FN>, tensor<4x16xbf16>, tensor<2x4x16xf16>
}
// GENERIC-LABEL: sym_name = "matmuls"
// GENERIC: "lpc.matmul"(%{{.*}}, %{{.*}}) <{role = #lpc.role<dgrad>, transpose_a, transpose_b}> : (tensor<8x4xbf16>, tensor<16x8xbf16>) -> tensor<4x16xbf16>
// GENERIC: "lpc.matmul"(%{{.*}}, %{{.*}}) {lpc.precision = #lpc.precision<fp32>} : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf16>, %[[Y:[^:]+]]: tensor<4x8xf16>, %[[B:[^:]+]]: tensor<8xf16>)
func.func @elementwise(%x: tensor<4x8xf16>, %y: tensor<4x8xf16>, %b: tensor<8xf16>)
    -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>) {
  // CHECK-NEXT: %[[R0:.*]] = lpc.add %[[X]], %[[Y]] : tensor<4x8xf16>{{$}}
  %0 = lpc.add %x, %y : tensor<4x8xf16>
  // CHECK-NEXT: %[[R1:.*]] = lpc.sub %[[X]], %[[Y]] : tensor<4x8xf16>{{$}}
  %1 = lpc.sub %x, %y : tensor<4x8xf16>
  // CHECK-NEXT: %[[R2:.*]] = lpc.mul %[[X]], %[[Y]] : tensor<4x8xf16>{{$}}
  %2 = lpc.mul %x, %y : tensor<4x8xf16>
  // CHECK-NEXT: %[[R3:.*]] = lpc.div %[[X]], %[[Y]] : tensor<4x8xf16>{{$}}
  %3 = lpc.div %x, %y : tensor<4x8xf16>
  // CHECK-NEXT: %[[R4:.*]] = lpc.bias_add %[[X]], %[[B]] : tensor<4x8xf16>, tensor<8xf16>{{$}}
  %4 = lpc.bias_add %x, %b : tensor<4x8xf16>, tensor<8xf16>
  // CHECK-NEXT: %[[R5:.*]] = lpc.neg %[[X]] : tensor<4x8xf16>{{$}}
  %5 = lpc.neg %x : tensor<4x8xf16>
  // CHECK-NEXT: %[[R6:.*]] = lpc.relu %[[X]] : tensor<4x8xf16>{{$}}
  %6 = lpc.relu %x : tensor<4x8xf16>
  // The default approximation (erf) is not printed.
  // CHECK-NEXT: %[[R7:.*]] = lpc.gelu %[[X]] : tensor<4x8xf16>{{$}}
  %7 = lpc.gelu %x : tensor<4x8xf16>
  // CHECK-NEXT: %[[R8:.*]] = lpc.gelu %[[X]] {approximation = #lpc.gelu_approximation<tanh>} : tensor<4x8xf16>{{$}}
  %8 = lpc.gelu %x {approximation = #lpc.gelu_approximation<tanh>} : tensor<4x8xf16>
  // CHECK-NEXT: %[[R9:.*]] = lpc.gelu %[[X]] : tensor<4x8xf16>{{$}}
  %9 = lpc.gelu %x {approximation = #lpc.gelu_approximation<erf>} : tensor<4x8xf16>
  // CHECK-NEXT: %[[R10:.*]] = lpc.silu %[[X]] : tensor<4x8xf16>{{$}}
  %10 = lpc.silu %x : tensor<4x8xf16>
  // CHECK-NEXT: %[[R11:.*]] = lpc.tanh %[[X]] : tensor<4x8xf16>{{$}}
  %11 = lpc.tanh %x : tensor<4x8xf16>
  // CHECK-NEXT: %[[R12:.*]] = lpc.sigmoid %[[X]] : tensor<4x8xf16>{{$}}
  %12 = lpc.sigmoid %x : tensor<4x8xf16>
  // CHECK-NEXT: %[[R13:.*]] = lpc.exp %[[X]] : tensor<4x8xf16>{{$}}
  %13 = lpc.exp %x : tensor<4x8xf16>
  // CHECK-NEXT: %[[R14:.*]] = lpc.log %[[X]] : tensor<4x8xf16>{{$}}
  %14 = lpc.log %x : tensor<4x8xf16>
  // CHECK-NEXT: %[[R15:.*]] = lpc.sqrt %[[X]] : tensor<4x8xf16>{{$}}
  %15 = lpc.sqrt %x : tensor<4x8xf16>
  // CHECK-NEXT: %[[R16:.*]] = lpc.rsqrt %[[X]] : tensor<4x8xf16>{{$}}
  %16 = lpc.rsqrt %x : tensor<4x8xf16>
  // CHECK-NEXT: %[[R17:.*]] = lpc.pow %[[X]] {exponent = 2.000000e+00 : f64} : tensor<4x8xf16>{{$}}
  %17 = lpc.pow %x {exponent = 2.0 : f64} : tensor<4x8xf16>
  // CHECK-NEXT: %[[R18:.*]] = lpc.scale %[[X]] {factor = 1.250000e-01 : f64} : tensor<4x8xf16>{{$}}
  %18 = lpc.scale %x {factor = 0.125 : f64} : tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = lpc.log1p %[[X]] : tensor<4x8xf16>{{$}}
  %lp = lpc.log1p %x : tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = lpc.expm1 %[[X]] : tensor<4x8xf16>{{$}}
  %em = lpc.expm1 %x : tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = lpc.sin %[[X]] : tensor<4x8xf16>{{$}}
  %sin = lpc.sin %x : tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = lpc.cos %[[X]] : tensor<4x8xf16>{{$}}
  %cos = lpc.cos %x : tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = lpc.erf %[[X]] : tensor<4x8xf16>{{$}}
  %erf = lpc.erf %x : tensor<4x8xf16>
  // Precision pins on Follow and KeepFP32 ops.
  // CHECK-NEXT: %[[R19:.*]] = lpc.add %[[X]], %[[Y]] {lpc.precision = #lpc.precision<bf16>} : tensor<4x8xf16>{{$}}
  %19 = lpc.add %x, %y {lpc.precision = #lpc.precision<bf16>} : tensor<4x8xf16>
  // CHECK-NEXT: %[[R20:.*]] = lpc.exp %[[X]] {lpc.precision = #lpc.precision<fp16>} : tensor<4x8xf16>{{$}}
  %20 = lpc.exp %x {lpc.precision = #lpc.precision<fp16>} : tensor<4x8xf16>
  // CHECK-NEXT: %[[R21:.*]] = lpc.relu %[[X]] {lpc.precision = #lpc.precision<fp8_e5m2>} : tensor<4x8xf16>{{$}}
  %21 = lpc.relu %x {lpc.precision = #lpc.precision<fp8_e5m2>} : tensor<4x8xf16>
  // CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]], %[[R8]], %[[R9]], %[[R10]], %[[R11]], %[[R12]], %[[R13]], %[[R14]], %[[R15]], %[[R16]], %[[R17]], %[[R18]], %[[R19]], %[[R20]], %[[R21]] :
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21
      : tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>,
        tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>
}
// GENERIC-LABEL: sym_name = "elementwise"
// GENERIC: "lpc.gelu"(%{{.*}}) <{approximation = #lpc.gelu_approximation<erf>}> : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "lpc.gelu"(%{{.*}}) <{approximation = #lpc.gelu_approximation<tanh>}> : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "lpc.pow"(%{{.*}}) <{exponent = 2.000000e+00 : f64}> : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "lpc.add"(%{{.*}}, %{{.*}}) {lpc.precision = #lpc.precision<bf16>} : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>

// Elementwise ops on every float element type.
// CHECK-LABEL: func.func @element_types(
func.func @element_types(%a: tensor<2xf32>, %b: tensor<2xbf16>, %c: tensor<2xf8E4M3FN>, %d: tensor<2xf8E5M2>)
    -> (tensor<2xf32>, tensor<2xbf16>, tensor<2xf8E4M3FN>, tensor<2xf8E5M2>) {
  // CHECK-NEXT: lpc.mul %{{.*}}, %{{.*}} : tensor<2xf32>{{$}}
  %0 = lpc.mul %a, %a : tensor<2xf32>
  // CHECK-NEXT: lpc.sub %{{.*}}, %{{.*}} : tensor<2xbf16>{{$}}
  %1 = lpc.sub %b, %b : tensor<2xbf16>
  // CHECK-NEXT: lpc.add %{{.*}}, %{{.*}} : tensor<2xf8E4M3FN>{{$}}
  %2 = lpc.add %c, %c : tensor<2xf8E4M3FN>
  // CHECK-NEXT: lpc.relu %{{.*}} : tensor<2xf8E5M2>{{$}}
  %3 = lpc.relu %d : tensor<2xf8E5M2>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xbf16>, tensor<2xf8E4M3FN>, tensor<2xf8E5M2>
}

//===----------------------------------------------------------------------===//
// Normalization, softmax, reductions
//===----------------------------------------------------------------------===//

// Comparisons of floats in any format and of integers.
// CHECK-LABEL: func.func @compare(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4x8xbf16>, %[[B:[^:]+]]: tensor<4x8xbf16>, %[[I:[^:]+]]: tensor<6xi32>, %[[E:[^:]+]]: tensor<2xf8E4M3FN>)
func.func @compare(%a: tensor<4x8xbf16>, %b: tensor<4x8xbf16>, %i: tensor<6xi32>, %e: tensor<2xf8E4M3FN>)
    -> (tensor<4x8xi1>, tensor<4x8xi1>, tensor<6xi1>, tensor<2xi1>) {
  // CHECK-NEXT: %[[R0:.*]] = lpc.compare gt, %[[A]], %[[B]] : tensor<4x8xbf16> -> tensor<4x8xi1>{{$}}
  %0 = lpc.compare gt, %a, %b : tensor<4x8xbf16> -> tensor<4x8xi1>
  // CHECK-NEXT: %[[R1:.*]] = lpc.compare le, %[[A]], %[[A]] : tensor<4x8xbf16> -> tensor<4x8xi1>{{$}}
  %1 = lpc.compare le, %a, %a : tensor<4x8xbf16> -> tensor<4x8xi1>
  // CHECK-NEXT: %[[R2:.*]] = lpc.compare ne, %[[I]], %[[I]] : tensor<6xi32> -> tensor<6xi1>{{$}}
  %2 = lpc.compare ne, %i, %i : tensor<6xi32> -> tensor<6xi1>
  // CHECK-NEXT: %[[R3:.*]] = lpc.compare eq, %[[E]], %[[E]] : tensor<2xf8E4M3FN> -> tensor<2xi1>{{$}}
  %3 = lpc.compare eq, %e, %e : tensor<2xf8E4M3FN> -> tensor<2xi1>
  return %0, %1, %2, %3 : tensor<4x8xi1>, tensor<4x8xi1>, tensor<6xi1>, tensor<2xi1>
}
// GENERIC-LABEL: sym_name = "compare"
// GENERIC: "lpc.compare"(%{{.*}}, %{{.*}}) <{predicate = #lpc<compare_predicate gt>}> : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xi1>

// CHECK-LABEL: func.func @norms(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x4x8xf32>, %[[G:[^:]+]]: tensor<8xf32>, %[[BT:[^:]+]]: tensor<8xf32>)
func.func @norms(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %bt: tensor<8xf32>)
    -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>,
        tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<1x4x1xf32>,
        tensor<2x8xf32>, tensor<f32>, tensor<2x4x1xf32>, tensor<4x8xf32>) {
  // Default epsilons (1e-5 for layernorm, 1e-6 for rmsnorm) are not printed.
  // CHECK-NEXT: %[[R0:.*]] = lpc.layernorm %[[X]], %[[G]], %[[BT]] : tensor<2x4x8xf32>, tensor<8xf32>{{$}}
  %0 = lpc.layernorm %x, %g, %bt : tensor<2x4x8xf32>, tensor<8xf32>
  // CHECK-NEXT: %[[R1:.*]] = lpc.layernorm %[[X]], %[[G]], %[[BT]] {epsilon = 9.9999999999999995E-7 : f64} : tensor<2x4x8xf32>, tensor<8xf32>{{$}}
  %1 = lpc.layernorm %x, %g, %bt {epsilon = 1.0e-6 : f64} : tensor<2x4x8xf32>, tensor<8xf32>
  // CHECK-NEXT: %[[R2:.*]] = lpc.rmsnorm %[[X]], %[[G]] : tensor<2x4x8xf32>, tensor<8xf32>{{$}}
  %2 = lpc.rmsnorm %x, %g : tensor<2x4x8xf32>, tensor<8xf32>
  // CHECK-NEXT: %[[R3:.*]] = lpc.rmsnorm %[[X]], %[[G]] {epsilon = 1.000000e-05 : f64} : tensor<2x4x8xf32>, tensor<8xf32>{{$}}
  %3 = lpc.rmsnorm %x, %g {epsilon = 1.0e-5 : f64} : tensor<2x4x8xf32>, tensor<8xf32>
  // The default axis (-1) is not printed.
  // CHECK-NEXT: %[[R4:.*]] = lpc.softmax %[[X]] : tensor<2x4x8xf32>{{$}}
  %4 = lpc.softmax %x : tensor<2x4x8xf32>
  // CHECK-NEXT: %[[R5:.*]] = lpc.softmax %[[X]] {axis = 1 : i64} : tensor<2x4x8xf32>{{$}}
  %5 = lpc.softmax %x {axis = 1 : i64} : tensor<2x4x8xf32>
  // CHECK-NEXT: %[[R6:.*]] = lpc.log_softmax %[[X]] : tensor<2x4x8xf32>{{$}}
  %6 = lpc.log_softmax %x {axis = -1 : i64} : tensor<2x4x8xf32>
  // CHECK-NEXT: %[[R7:.*]] = lpc.log_softmax %[[X]] {axis = -2 : i64} : tensor<2x4x8xf32>{{$}}
  %7 = lpc.log_softmax %x {axis = -2 : i64} : tensor<2x4x8xf32>
  // CHECK-NEXT: %[[R8:.*]] = lpc.reduce_sum %[[X]] {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>{{$}}
  %8 = lpc.reduce_sum %x {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: %[[R9:.*]] = lpc.reduce_sum %[[X]] {axes = array<i64: 0, -1>, keepdims} : tensor<2x4x8xf32> -> tensor<1x4x1xf32>{{$}}
  %9 = lpc.reduce_sum %x {axes = array<i64: 0, -1>, keepdims} : tensor<2x4x8xf32> -> tensor<1x4x1xf32>
  // CHECK-NEXT: %[[R10:.*]] = lpc.reduce_mean %[[X]] {axes = array<i64: 1>} : tensor<2x4x8xf32> -> tensor<2x8xf32>{{$}}
  %10 = lpc.reduce_mean %x {axes = array<i64: 1>} : tensor<2x4x8xf32> -> tensor<2x8xf32>
  // CHECK-NEXT: %[[R11:.*]] = lpc.reduce_mean %[[X]] {axes = array<i64: 2, 0, 1>} : tensor<2x4x8xf32> -> tensor<f32>{{$}}
  %11 = lpc.reduce_mean %x {axes = array<i64: 2, 0, 1>} : tensor<2x4x8xf32> -> tensor<f32>
  // CHECK-NEXT: %[[R12:.*]] = lpc.reduce_max %[[X]] {axes = array<i64: -1>, keepdims} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>{{$}}
  %12 = lpc.reduce_max %x {axes = array<i64: -1>, keepdims} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  // CHECK-NEXT: %[[R13:.*]] = lpc.reduce_max %[[X]] {axes = array<i64: 0>} : tensor<2x4x8xf32> -> tensor<4x8xf32>{{$}}
  %13 = lpc.reduce_max %x {axes = array<i64: 0>} : tensor<2x4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]], %[[R8]], %[[R9]], %[[R10]], %[[R11]], %[[R12]], %[[R13]] :
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>,
        tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<1x4x1xf32>,
        tensor<2x8xf32>, tensor<f32>, tensor<2x4x1xf32>, tensor<4x8xf32>
}
// GENERIC-LABEL: sym_name = "norms"
// GENERIC: "lpc.layernorm"(%{{.*}}, %{{.*}}, %{{.*}}) <{epsilon = 9.9999999999999995E-7 : f64}> : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// GENERIC: "lpc.reduce_sum"(%{{.*}}) <{axes = array<i64: 0, -1>, keepdims}> : (tensor<2x4x8xf32>) -> tensor<1x4x1xf32>

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @movement(
// CHECK-SAME: %[[V:[^:]+]]: tensor<8xf32>, %[[M:[^:]+]]: tensor<4x1xbf16>, %[[T:[^:]+]]: tensor<2x3x4xf16>, %[[I:[^:]+]]: tensor<6xi32>,
// CHECK-SAME: %[[TAB:[^:]+]]: tensor<100x16xbf16>, %[[IDS:[^:]+]]: tensor<2x5xi64>, %[[S:[^:]+]]: tensor<2x4x6xf32>,
// CHECK-SAME: %[[C:[^:]+]]: tensor<4x8xi1>, %[[U:[^:]+]]: tensor<4x8xf32>, %[[W:[^:]+]]: tensor<4x8xf32>, %[[CI:[^:]+]]: tensor<4x8xi1>)
func.func @movement(%x: tensor<8xf32>, %m: tensor<4x1xbf16>, %t: tensor<2x3x4xf16>, %i: tensor<6xi32>,
                    %tab: tensor<100x16xbf16>, %ids: tensor<2x5xi64>, %s: tensor<2x4x6xf32>,
                    %c: tensor<4x8xi1>, %u: tensor<4x8xf32>, %v: tensor<4x8xf32>, %ci: tensor<4x8xi1>)
    -> (tensor<4x8xf32>, tensor<4x6xbf16>, tensor<2x3x6xi32>, tensor<6x4xf16>, tensor<2x3xi32>,
        tensor<4x2x3xf16>, tensor<2x2x2xf16>, tensor<3xi32>, tensor<2x6x4xf16>, tensor<18xi32>,
        tensor<2x5x16xbf16>, tensor<6x16xbf16>, tensor<2x4x6xf32>, tensor<2x4x6xf32>, tensor<4x8xf32>,
        tensor<4x8xi1>, tensor<4x8xf32>, tensor<3x2x4xf16>) {
  // CHECK-NEXT: %[[R0:.*]] = lpc.broadcast %[[V]] dims = [1] : tensor<8xf32> -> tensor<4x8xf32>{{$}}
  %0 = lpc.broadcast %x dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %[[R1:.*]] = lpc.broadcast %[[M]] dims = [0, 1] : tensor<4x1xbf16> -> tensor<4x6xbf16>{{$}}
  %1 = lpc.broadcast %m dims = [0, 1] : tensor<4x1xbf16> -> tensor<4x6xbf16>
  // CHECK-NEXT: %[[R2:.*]] = lpc.broadcast %[[I]] dims = [2] : tensor<6xi32> -> tensor<2x3x6xi32>{{$}}
  %2 = lpc.broadcast %i dims = [2] : tensor<6xi32> -> tensor<2x3x6xi32>
  // CHECK-NEXT: %[[R3:.*]] = lpc.reshape %[[T]] : tensor<2x3x4xf16> -> tensor<6x4xf16>{{$}}
  %3 = lpc.reshape %t : tensor<2x3x4xf16> -> tensor<6x4xf16>
  // CHECK-NEXT: %[[R4:.*]] = lpc.reshape %[[I]] : tensor<6xi32> -> tensor<2x3xi32>{{$}}
  %4 = lpc.reshape %i : tensor<6xi32> -> tensor<2x3xi32>
  // CHECK-NEXT: %[[R5:.*]] = lpc.transpose %[[T]] [2, 0, 1] : tensor<2x3x4xf16> -> tensor<4x2x3xf16>{{$}}
  %5 = lpc.transpose %t [2, 0, 1] : tensor<2x3x4xf16> -> tensor<4x2x3xf16>
  // CHECK-NEXT: %[[R6:.*]] = lpc.slice %[[T]] start = [0, 1, 0] limit = [2, 3, 4] step = [1, 1, 2] : tensor<2x3x4xf16> -> tensor<2x2x2xf16>{{$}}
  %6 = lpc.slice %t start = [0, 1, 0] limit = [2, 3, 4] step = [1, 1, 2] : tensor<2x3x4xf16> -> tensor<2x2x2xf16>
  // CHECK-NEXT: %[[R7:.*]] = lpc.slice %[[I]] start = [1] limit = [6] step = [2] : tensor<6xi32> -> tensor<3xi32>{{$}}
  %7 = lpc.slice %i start = [1] limit = [6] step = [2] : tensor<6xi32> -> tensor<3xi32>
  // A step past the extent (here the largest i64) keeps one element (the
  // shape is inferred without overflow; found by fuzz-model).
  // CHECK-NEXT: %{{.*}} = lpc.slice %[[I]] start = [1] limit = [6] step = [9223372036854775807] : tensor<6xi32> -> tensor<1xi32>{{$}}
  %big = lpc.slice %i start = [1] limit = [6] step = [9223372036854775807] : tensor<6xi32> -> tensor<1xi32>
  // CHECK-NEXT: %[[R8:.*]] = lpc.concat %[[T]], %[[T]] axis = 1 : tensor<2x3x4xf16>, tensor<2x3x4xf16> -> tensor<2x6x4xf16>{{$}}
  %8 = lpc.concat %t, %t axis = 1 : tensor<2x3x4xf16>, tensor<2x3x4xf16> -> tensor<2x6x4xf16>
  // CHECK-NEXT: %[[R9:.*]] = lpc.concat %[[I]], %[[I]], %[[I]] axis = -1 : tensor<6xi32>, tensor<6xi32>, tensor<6xi32> -> tensor<18xi32>{{$}}
  %9 = lpc.concat %i, %i, %i axis = -1 : tensor<6xi32>, tensor<6xi32>, tensor<6xi32> -> tensor<18xi32>
  // CHECK-NEXT: %[[R10:.*]] = lpc.embedding %[[TAB]], %[[IDS]] : tensor<100x16xbf16>, tensor<2x5xi64> -> tensor<2x5x16xbf16>{{$}}
  %10 = lpc.embedding %tab, %ids : tensor<100x16xbf16>, tensor<2x5xi64> -> tensor<2x5x16xbf16>
  // CHECK-NEXT: %[[R11:.*]] = lpc.embedding %[[TAB]], %[[I]] {padding_idx = 99 : i64} : tensor<100x16xbf16>, tensor<6xi32> -> tensor<6x16xbf16>{{$}}
  %11 = lpc.embedding %tab, %i {padding_idx = 99 : i64} : tensor<100x16xbf16>, tensor<6xi32> -> tensor<6x16xbf16>
  // The default fill (-inf) is not printed.
  // CHECK-NEXT: %[[R12:.*]] = lpc.causal_mask %[[S]] : tensor<2x4x6xf32>{{$}}
  %12 = lpc.causal_mask %s : tensor<2x4x6xf32>
  // CHECK-NEXT: %[[R13:.*]] = lpc.causal_mask %[[S]] {fill = -1.000000e+04 : f64} : tensor<2x4x6xf32>{{$}}
  %13 = lpc.causal_mask %s {fill = -1.0e4 : f64} : tensor<2x4x6xf32>
  // CHECK-NEXT: %[[R14:.*]] = lpc.where %[[C]], %[[U]], %[[W]] : tensor<4x8xi1>, tensor<4x8xf32>{{$}}
  %14 = lpc.where %c, %u, %v : tensor<4x8xi1>, tensor<4x8xf32>
  // CHECK-NEXT: %[[R15:.*]] = lpc.where %[[CI]], %[[C]], %[[C]] : tensor<4x8xi1>, tensor<4x8xi1>{{$}}
  %15 = lpc.where %ci, %c, %c : tensor<4x8xi1>, tensor<4x8xi1>
  // CHECK-NEXT: %[[R16:.*]] = lpc.dropout %[[U]] {rate = 1.000000e-01 : f64, seed = 42 : i64} : tensor<4x8xf32>{{$}}
  %16 = lpc.dropout %u {rate = 0.1 : f64, seed = 42 : i64} : tensor<4x8xf32>
  // CHECK-NEXT: %[[R17:.*]] = lpc.transpose %[[T]] [1, 0, 2] : tensor<2x3x4xf16> -> tensor<3x2x4xf16>{{$}}
  %17 = lpc.transpose %t [1, 0, 2] : tensor<2x3x4xf16> -> tensor<3x2x4xf16>
  // CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]], %[[R8]], %[[R9]], %[[R10]], %[[R11]], %[[R12]], %[[R13]], %[[R14]], %[[R15]], %[[R16]], %[[R17]] :
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17
      : tensor<4x8xf32>, tensor<4x6xbf16>, tensor<2x3x6xi32>, tensor<6x4xf16>, tensor<2x3xi32>,
        tensor<4x2x3xf16>, tensor<2x2x2xf16>, tensor<3xi32>, tensor<2x6x4xf16>, tensor<18xi32>,
        tensor<2x5x16xbf16>, tensor<6x16xbf16>, tensor<2x4x6xf32>, tensor<2x4x6xf32>, tensor<4x8xf32>,
        tensor<4x8xi1>, tensor<4x8xf32>, tensor<3x2x4xf16>
}
// GENERIC-LABEL: sym_name = "movement"
// GENERIC: "lpc.broadcast"(%{{.*}}) <{dims = array<i64: 1>}> : (tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: "lpc.transpose"(%{{.*}}) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x3x4xf16>) -> tensor<4x2x3xf16>
// GENERIC: "lpc.slice"(%{{.*}}) <{limit = array<i64: 2, 3, 4>, start = array<i64: 0, 1, 0>, step = array<i64: 1, 1, 2>}> : (tensor<2x3x4xf16>) -> tensor<2x2x2xf16>
// GENERIC: "lpc.concat"(%{{.*}}, %{{.*}}) <{axis = 1 : i64}> : (tensor<2x3x4xf16>, tensor<2x3x4xf16>) -> tensor<2x6x4xf16>
// GENERIC: "lpc.causal_mask"(%{{.*}}) <{fill = 0xFFF0000000000000 : f64}> : (tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
// GENERIC: "lpc.dropout"(%{{.*}}) <{rate = 1.000000e-01 : f64, seed = 42 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @losses(
// CHECK-SAME: %[[LG:[^:]+]]: tensor<16x10xf32>, %[[LB:[^:]+]]: tensor<16xi32>, %[[LG3:[^:]+]]: tensor<2x8x50xbf16>, %[[LB3:[^:]+]]: tensor<2x8xi64>,
// CHECK-SAME: %[[P:[^:]+]]: tensor<16x1xf32>, %[[Q:[^:]+]]: tensor<16x1xf32>, %[[PH:[^:]+]]: tensor<4xf16>)
func.func @losses(%lg: tensor<16x10xf32>, %lb: tensor<16xi32>, %lg3: tensor<2x8x50xbf16>, %lb3: tensor<2x8xi64>,
                  %p: tensor<16x1xf32>, %q: tensor<16x1xf32>, %ph: tensor<4xf16>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  // The default reduction (mean) is not printed.
  // CHECK-NEXT: %[[R0:.*]] = lpc.softmax_cross_entropy %[[LG]], %[[LB]] : tensor<16x10xf32>, tensor<16xi32>{{$}}
  %0 = lpc.softmax_cross_entropy %lg, %lb : tensor<16x10xf32>, tensor<16xi32>
  // CHECK-NEXT: %[[R1:.*]] = lpc.softmax_cross_entropy %[[LG]], %[[LB]] {reduction = #lpc.reduction<sum>} : tensor<16x10xf32>, tensor<16xi32>{{$}}
  %1 = lpc.softmax_cross_entropy %lg, %lb {reduction = #lpc.reduction<sum>} : tensor<16x10xf32>, tensor<16xi32>
  // 3-D logits ([batch, seq, vocab]) with an ignore index.
  // CHECK-NEXT: %[[R2:.*]] = lpc.softmax_cross_entropy %[[LG3]], %[[LB3]] {ignore_index = -100 : i64} : tensor<2x8x50xbf16>, tensor<2x8xi64>{{$}}
  %2 = lpc.softmax_cross_entropy %lg3, %lb3 {ignore_index = -100 : i64, reduction = #lpc.reduction<mean>} : tensor<2x8x50xbf16>, tensor<2x8xi64>
  // An ignore index past the class count is allowed too.
  // CHECK-NEXT: %[[R3:.*]] = lpc.softmax_cross_entropy %[[LG]], %[[LB]] {ignore_index = 10 : i64, reduction = #lpc.reduction<sum>} : tensor<16x10xf32>, tensor<16xi32>{{$}}
  %3 = lpc.softmax_cross_entropy %lg, %lb {ignore_index = 10 : i64, reduction = #lpc.reduction<sum>} : tensor<16x10xf32>, tensor<16xi32>
  // CHECK-NEXT: %[[R4:.*]] = lpc.mse_loss %[[P]], %[[Q]] : tensor<16x1xf32>{{$}}
  %4 = lpc.mse_loss %p, %q : tensor<16x1xf32>
  // CHECK-NEXT: %[[R5:.*]] = lpc.mse_loss %[[P]], %[[Q]] {reduction = #lpc.reduction<sum>} : tensor<16x1xf32>{{$}}
  %5 = lpc.mse_loss %p, %q {reduction = #lpc.reduction<sum>} : tensor<16x1xf32>
  // CHECK-NEXT: %[[R6:.*]] = lpc.mse_loss %[[PH]], %[[PH]] {lpc.precision = #lpc.precision<fp32>} : tensor<4xf16>{{$}}
  %6 = lpc.mse_loss %ph, %ph {lpc.precision = #lpc.precision<fp32>} : tensor<4xf16>
  // CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]] : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
// GENERIC-LABEL: sym_name = "losses"
// GENERIC: "lpc.softmax_cross_entropy"(%{{.*}}, %{{.*}}) <{reduction = #lpc.reduction<sum>}> : (tensor<16x10xf32>, tensor<16xi32>) -> tensor<f32>
// GENERIC: "lpc.softmax_cross_entropy"(%{{.*}}, %{{.*}}) <{ignore_index = -100 : i64, reduction = #lpc.reduction<mean>}> : (tensor<2x8x50xbf16>, tensor<2x8xi64>) -> tensor<f32>
// GENERIC: "lpc.mse_loss"(%{{.*}}, %{{.*}}) <{reduction = #lpc.reduction<sum>}> : (tensor<16x1xf32>, tensor<16x1xf32>) -> tensor<f32>

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[G:[^:]+]]: tensor<4x8xf32>, %[[X:[^:]+]]: tensor<4x8xf32>, %[[GM:[^:]+]]: tensor<8xf32>, %[[L:[^:]+]]: tensor<f32>,
// CHECK-SAME: %[[LB:[^:]+]]: tensor<4xi32>, %[[RM:[^:]+]]: tensor<4xf32>, %[[IDS:[^:]+]]: tensor<2x2xi64>, %[[EG:[^:]+]]: tensor<2x2x8xf32>)
func.func @backward(%g: tensor<4x8xf32>, %x: tensor<4x8xf32>, %gm: tensor<8xf32>, %l: tensor<f32>,
                    %lb: tensor<4xi32>, %rm: tensor<4xf32>, %ids: tensor<2x2xi64>, %eg: tensor<2x2x8xf32>) {
  // CHECK-NEXT: lpc.relu_grad %[[G]], %[[X]] : tensor<4x8xf32>{{$}}
  %0 = lpc.relu_grad %g, %x : tensor<4x8xf32>
  // CHECK-NEXT: lpc.gelu_grad %[[G]], %[[X]] : tensor<4x8xf32>{{$}}
  %1 = lpc.gelu_grad %g, %x : tensor<4x8xf32>
  // CHECK-NEXT: lpc.gelu_grad %[[G]], %[[X]] {approximation = #lpc.gelu_approximation<tanh>} : tensor<4x8xf32>{{$}}
  %2 = lpc.gelu_grad %g, %x {approximation = #lpc.gelu_approximation<tanh>} : tensor<4x8xf32>
  // CHECK-NEXT: lpc.silu_grad %[[G]], %[[X]] : tensor<4x8xf32>{{$}}
  %3 = lpc.silu_grad %g, %x : tensor<4x8xf32>
  // CHECK-NEXT: lpc.tanh_grad %[[G]], %[[X]] : tensor<4x8xf32>{{$}}
  %4 = lpc.tanh_grad %g, %x : tensor<4x8xf32>
  // CHECK-NEXT: lpc.sigmoid_grad %[[G]], %[[X]] : tensor<4x8xf32>{{$}}
  %5 = lpc.sigmoid_grad %g, %x : tensor<4x8xf32>
  // CHECK-NEXT: lpc.softmax_grad %[[G]], %[[X]] : tensor<4x8xf32>{{$}}
  %6 = lpc.softmax_grad %g, %x : tensor<4x8xf32>
  // CHECK-NEXT: lpc.log_softmax_grad %[[G]], %[[X]] {axis = 0 : i64} : tensor<4x8xf32>{{$}}
  %7 = lpc.log_softmax_grad %g, %x {axis = 0 : i64} : tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = lpc.layernorm_grad %[[G]], %[[X]], %[[GM]] : tensor<4x8xf32>, tensor<8xf32>{{$}}
  %8:3 = lpc.layernorm_grad %g, %x, %gm : tensor<4x8xf32>, tensor<8xf32>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = lpc.rmsnorm_grad %[[G]], %[[X]], %[[GM]] {epsilon = 1.000000e-05 : f64} : tensor<4x8xf32>, tensor<8xf32>{{$}}
  %9:2 = lpc.rmsnorm_grad %g, %x, %gm {epsilon = 1.0e-5 : f64} : tensor<4x8xf32>, tensor<8xf32>
  // CHECK-NEXT: lpc.softmax_cross_entropy_grad %[[L]], %[[X]], %[[LB]] {ignore_index = -1 : i64} : tensor<4x8xf32>, tensor<4xi32>{{$}}
  %10 = lpc.softmax_cross_entropy_grad %l, %x, %lb {ignore_index = -1 : i64} : tensor<4x8xf32>, tensor<4xi32>
  // CHECK-NEXT: lpc.mse_loss_grad %[[L]], %[[X]], %[[G]] {reduction = #lpc.reduction<sum>} : tensor<4x8xf32>{{$}}
  %11 = lpc.mse_loss_grad %l, %x, %g {reduction = #lpc.reduction<sum>} : tensor<4x8xf32>
  // CHECK-NEXT: lpc.embedding_grad %[[EG]], %[[IDS]] : tensor<2x2x8xf32>, tensor<2x2xi64> -> tensor<100x8xf32>{{$}}
  %12 = lpc.embedding_grad %eg, %ids : tensor<2x2x8xf32>, tensor<2x2xi64> -> tensor<100x8xf32>
  // CHECK-NEXT: lpc.reduce_max_grad %[[RM]], %[[X]], %[[RM]] {axes = array<i64: 1>} : tensor<4xf32>, tensor<4x8xf32>{{$}}
  %13 = lpc.reduce_max_grad %rm, %x, %rm {axes = array<i64: 1>} : tensor<4xf32>, tensor<4x8xf32>
  // CHECK-NEXT: lpc.slice_grad %[[G]] start = [0, 0] limit = [4, 15] step = [1, 2] : tensor<4x8xf32> -> tensor<4x16xf32>{{$}}
  %14 = lpc.slice_grad %g start = [0, 0] limit = [4, 15] step = [1, 2] : tensor<4x8xf32> -> tensor<4x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Precision ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @precision(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>, %[[H:[^:]+]]: tensor<4x8xbf16>, %[[S:[^:]+]]: tensor<f32>, %[[Q:[^:]+]]: tensor<4x8xf8E4M3FN>,
// CHECK-SAME: %[[R:[^:]+]]: tensor<8x16xf8E5M2>, %[[RT:[^:]+]]: tensor<16x8xf8E4M3FN>, %[[B:[^:]+]]: tensor<16xbf16>,
// CHECK-SAME: %[[T:[^:]+]]: tensor<8x4xf8E5M2>, %[[S2:[^:]+]]: tensor<f32>)
func.func @precision(%x: tensor<4x8xf32>, %h: tensor<4x8xbf16>, %s: tensor<f32>, %q: tensor<4x8xf8E4M3FN>,
                     %r: tensor<8x16xf8E5M2>, %rt: tensor<16x8xf8E4M3FN>, %b: tensor<16xbf16>,
                     %t: tensor<8x4xf8E5M2>, %s2: tensor<f32>)
    -> (tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xf8E4M3FN>, tensor<4x8xf8E5M2>, tensor<4x8xf8E4M3FN>,
        tensor<4x8xf8E5M2>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<f32>, tensor<f32>, tensor<4x16xbf16>,
        tensor<4x16xbf16>, tensor<4x16xf32>, tensor<4x16xf16>, tensor<f32>, tensor<4x8xf32>, tensor<i1>,
        tensor<4x8xf8E4M3FN>, tensor<4x8xbf16>) {
  // CHECK-NEXT: %[[R0:.*]] = lpc.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xbf16>{{$}}
  %0 = lpc.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
  // CHECK-NEXT: %[[R1:.*]] = lpc.cast %[[H]] : tensor<4x8xbf16> to tensor<4x8xf32>{{$}}
  %1 = lpc.cast %h : tensor<4x8xbf16> to tensor<4x8xf32>
  // CHECK-NEXT: %[[R2:.*]] = lpc.cast %[[X]] {saturate} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>{{$}}
  %2 = lpc.cast %x {saturate} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  // CHECK-NEXT: %[[R3:.*]] = lpc.cast %[[H]] {saturate} : tensor<4x8xbf16> to tensor<4x8xf8E5M2>{{$}}
  %3 = lpc.cast %h {saturate} : tensor<4x8xbf16> to tensor<4x8xf8E5M2>
  // CHECK-NEXT: %[[R4:.*]] = lpc.quantize %[[X]], %[[S]] : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>{{$}}
  %4 = lpc.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  // CHECK-NEXT: %[[R5:.*]] = lpc.quantize %[[H]], %[[S]] : tensor<4x8xbf16> to tensor<4x8xf8E5M2>{{$}}
  %5 = lpc.quantize %h, %s : tensor<4x8xbf16> to tensor<4x8xf8E5M2>
  // CHECK-NEXT: %[[R6:.*]] = lpc.dequantize %[[Q]], %[[S]] : tensor<4x8xf8E4M3FN> to tensor<4x8xf32>{{$}}
  %6 = lpc.dequantize %q, %s : tensor<4x8xf8E4M3FN> to tensor<4x8xf32>
  // CHECK-NEXT: %[[R7:.*]] = lpc.dequantize %[[R5]], %[[S]] : tensor<4x8xf8E5M2> to tensor<4x8xf16>{{$}}
  %7 = lpc.dequantize %5, %s : tensor<4x8xf8E5M2> to tensor<4x8xf16>
  // CHECK-NEXT: %[[R8:.*]] = lpc.amax %[[X]] : tensor<4x8xf32>{{$}}
  %8 = lpc.amax %x : tensor<4x8xf32>
  // CHECK-NEXT: %[[R9:.*]] = lpc.amax %[[Q]] : tensor<4x8xf8E4M3FN>{{$}}
  %9 = lpc.amax %q : tensor<4x8xf8E4M3FN>
  // E4M3 x E5M2, no bias, default acc_type.
  // CHECK-NEXT: %[[R10:.*]] = lpc.scaled_matmul %[[Q]], %[[R]] scales(%[[S]], %[[S2]]) : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E5M2> -> tensor<4x16xbf16>{{$}}
  %10 = lpc.scaled_matmul %q, %r scales(%s, %s2) : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E5M2> -> tensor<4x16xbf16>
  // E4M3 x E4M3 with bias, fast_accum, transpose_b.
  // CHECK-NEXT: %[[R11:.*]] = lpc.scaled_matmul %[[Q]], %[[RT]] scales(%[[S]], %[[S]]) bias(%[[B]] : tensor<16xbf16>) {fast_accum, role = #lpc.role<fprop>, transpose_b} : tensor<4x8xf8E4M3FN>, tensor<16x8xf8E4M3FN> -> tensor<4x16xbf16>{{$}}
  %11 = lpc.scaled_matmul %q, %rt scales(%s, %s) bias(%b : tensor<16xbf16>) {fast_accum, transpose_b, role = #lpc.role<fprop>} : tensor<4x8xf8E4M3FN>, tensor<16x8xf8E4M3FN> -> tensor<4x16xbf16>
  // An explicit acc_type = f32 is the default and is not printed.
  // CHECK-NEXT: %[[R12:.*]] = lpc.scaled_matmul %[[Q]], %[[RT]] scales(%[[S]], %[[S]]) {role = #lpc.role<dgrad>, transpose_b} : tensor<4x8xf8E4M3FN>, tensor<16x8xf8E4M3FN> -> tensor<4x16xf32>{{$}}
  %12 = lpc.scaled_matmul %q, %rt scales(%s, %s) {transpose_b, acc_type = f32, role = #lpc.role<dgrad>} : tensor<4x8xf8E4M3FN>, tensor<16x8xf8E4M3FN> -> tensor<4x16xf32>
  // E5M2 x E4M3 (gradient x weight), transpose_a.
  // CHECK-NEXT: %[[R13:.*]] = lpc.scaled_matmul %[[T]], %[[RT]] scales(%[[S2]], %[[S]]) {role = #lpc.role<wgrad>, transpose_a, transpose_b} : tensor<8x4xf8E5M2>, tensor<16x8xf8E4M3FN> -> tensor<4x16xf16>{{$}}
  %13 = lpc.scaled_matmul %t, %rt scales(%s2, %s) {transpose_a, transpose_b, role = #lpc.role<wgrad>} : tensor<8x4xf8E5M2>, tensor<16x8xf8E4M3FN> -> tensor<4x16xf16>
  // CHECK-NEXT: %[[R14:.*]] = lpc.loss_scale %[[S2]], %[[S]] : tensor<f32>{{$}}
  %14 = lpc.loss_scale %s2, %s : tensor<f32>
  // CHECK-NEXT: %[[R15:.*]] = lpc.unscale %[[X]], %[[S]] : tensor<4x8xf32>{{$}}
  %15 = lpc.unscale %x, %s : tensor<4x8xf32>
  // CHECK-NEXT: %[[R16:.*]] = lpc.all_finite %[[X]], %[[H]], %[[Q]] : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf8E4M3FN>{{$}}
  %16 = lpc.all_finite %x, %h, %q : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf8E4M3FN>
  // CHECK-NEXT: %[[R17:.*]] = lpc.loss_scale %[[Q]], %[[S]] : tensor<4x8xf8E4M3FN>{{$}}
  %17 = lpc.loss_scale %q, %s : tensor<4x8xf8E4M3FN>
  // CHECK-NEXT: %[[R18:.*]] = lpc.unscale %[[H]], %[[S]] : tensor<4x8xbf16>{{$}}
  %18 = lpc.unscale %h, %s : tensor<4x8xbf16>
  // CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]], %[[R8]], %[[R9]], %[[R10]], %[[R11]], %[[R12]], %[[R13]], %[[R14]], %[[R15]], %[[R16]], %[[R17]], %[[R18]] :
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18
      : tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xf8E4M3FN>, tensor<4x8xf8E5M2>, tensor<4x8xf8E4M3FN>,
        tensor<4x8xf8E5M2>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<f32>, tensor<f32>, tensor<4x16xbf16>,
        tensor<4x16xbf16>, tensor<4x16xf32>, tensor<4x16xf16>, tensor<f32>, tensor<4x8xf32>, tensor<i1>,
        tensor<4x8xf8E4M3FN>, tensor<4x8xbf16>
}
// GENERIC-LABEL: sym_name = "precision"
// GENERIC: "lpc.cast"(%{{.*}}) <{saturate}> : (tensor<4x8xf32>) -> tensor<4x8xf8E4M3FN>
// GENERIC: "lpc.quantize"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
// GENERIC: "lpc.amax"(%{{.*}}) : (tensor<4x8xf32>) -> tensor<f32>
// GENERIC: "lpc.scaled_matmul"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{acc_type = f32}> : (tensor<4x8xf8E4M3FN>, tensor<8x16xf8E5M2>, tensor<f32>, tensor<f32>) -> tensor<4x16xbf16>
// GENERIC: "lpc.scaled_matmul"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{acc_type = f32, fast_accum, role = #lpc.role<fprop>, transpose_b}> : (tensor<4x8xf8E4M3FN>, tensor<16x8xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<16xbf16>) -> tensor<4x16xbf16>
// GENERIC: "lpc.all_finite"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf8E4M3FN>) -> tensor<i1>

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @optim(
// CHECK-SAME: %[[P:[^:]+]]: tensor<4x8xf32>, %[[G:[^:]+]]: tensor<4x8xf32>, %[[M:[^:]+]]: tensor<4x8xf32>, %[[V:[^:]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[LR:[^:]+]]: tensor<f32>, %[[STEP:[^:]+]]: tensor<i64>, %[[STEPF:[^:]+]]: tensor<f32>, %[[B:[^:]+]]: tensor<8xf32>, %[[STEPI:[^:]+]]: tensor<i32>)
func.func @optim(%p: tensor<4x8xf32>, %g: tensor<4x8xf32>, %m: tensor<4x8xf32>, %v: tensor<4x8xf32>,
                 %lr: tensor<f32>, %step: tensor<i64>, %stepf: tensor<f32>, %b: tensor<8xf32>, %stepi: tensor<i32>) {
  // Defaults (momentum, dampening, weight_decay = 0) are not printed.
  // CHECK-NEXT: %{{.*}}, %{{.*}} = lpc.sgd %[[P]], %[[G]], %[[M]] lr(%[[LR]]) : tensor<4x8xf32>{{$}}
  %0:2 = lpc.sgd %p, %g, %m lr(%lr) : tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = lpc.sgd %[[P]], %[[G]], %[[M]] lr(%[[LR]]) {momentum = 9.000000e-01 : f64, nesterov, weight_decay = 1.000000e-04 : f64} : tensor<4x8xf32>{{$}}
  %1:2 = lpc.sgd %p, %g, %m lr(%lr) {momentum = 0.9 : f64, dampening = 0.0 : f64, weight_decay = 1.0e-4 : f64, nesterov} : tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = lpc.sgd %[[P]], %[[G]], %[[M]] lr(%[[LR]]) {dampening = 1.000000e+00 : f64, momentum = 1.000000e+00 : f64} : tensor<4x8xf32>{{$}}
  %2:2 = lpc.sgd %p, %g, %m lr(%lr) {momentum = 1.0 : f64, dampening = 1.0 : f64} : tensor<4x8xf32>
  // Defaults (0.9, 0.999, 1e-8, 0.01) are not printed.
  // CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = lpc.adamw %[[P]], %[[G]], %[[M]], %[[V]] step(%[[STEP]] : tensor<i64>) lr(%[[LR]]) : tensor<4x8xf32>{{$}}
  %3:3 = lpc.adamw %p, %g, %m, %v step(%step : tensor<i64>) lr(%lr) : tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = lpc.adamw %[[P]], %[[G]], %[[M]], %[[V]] step(%[[STEPF]] : tensor<f32>) lr(%[[LR]]) {beta1 = 8.000000e-01 : f64, beta2 = 0.94999999999999996 : f64, eps = 9.9999999999999995E-7 : f64, weight_decay = 1.000000e-01 : f64} : tensor<4x8xf32>{{$}}
  %4:3 = lpc.adamw %p, %g, %m, %v step(%stepf : tensor<f32>) lr(%lr) {beta1 = 0.8 : f64, beta2 = 0.95 : f64, eps = 1.0e-6 : f64, weight_decay = 0.1 : f64} : tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = lpc.adamw %[[P]], %[[G]], %[[M]], %[[V]] step(%[[STEPI]] : tensor<i32>) lr(%[[LR]]) {beta1 = 0.000000e+00 : f64, weight_decay = 0.000000e+00 : f64} : tensor<4x8xf32>{{$}}
  %5:3 = lpc.adamw %p, %g, %m, %v step(%stepi : tensor<i32>) lr(%lr) {beta1 = 0.0 : f64, weight_decay = 0.0 : f64} : tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}}:2, %{{.*}} = lpc.clip_by_global_norm %[[G]], %[[B]] {max_norm = 1.000000e+00 : f64} : tensor<4x8xf32>, tensor<8xf32>{{$}}
  %6:3 = lpc.clip_by_global_norm %g, %b {max_norm = 1.0 : f64} : tensor<4x8xf32>, tensor<8xf32>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = lpc.clip_by_global_norm %[[G]] {max_norm = 5.000000e-01 : f64} : tensor<4x8xf32>{{$}}
  %7:2 = lpc.clip_by_global_norm %g {max_norm = 0.5 : f64} : tensor<4x8xf32>
  // Defaults (warmup_steps = total_steps = 0, min_lr = 0) are not printed.
  // CHECK-NEXT: lpc.lr_schedule %[[STEP]] constant {base_lr = 1.000000e-03 : f64} : tensor<i64>{{$}}
  %8 = lpc.lr_schedule %step constant {base_lr = 1.0e-3 : f64} : tensor<i64>
  // CHECK-NEXT: lpc.lr_schedule %[[STEPI]] linear {base_lr = 1.000000e-02 : f64, total_steps = 100 : i64} : tensor<i32>{{$}}
  %9 = lpc.lr_schedule %stepi linear {base_lr = 1.0e-2 : f64, total_steps = 100 : i64} : tensor<i32>
  // CHECK-NEXT: lpc.lr_schedule %[[STEP]] cosine {base_lr = 1.000000e-03 : f64, min_lr = 1.000000e-05 : f64, total_steps = 100 : i64, warmup_steps = 10 : i64} : tensor<i64>{{$}}
  %10 = lpc.lr_schedule %step cosine {base_lr = 1.0e-3 : f64, warmup_steps = 10 : i64, total_steps = 100 : i64, min_lr = 1.0e-5 : f64} : tensor<i64>
  // Integer lpc.add (the step counter).
  // CHECK-NEXT: lpc.add %[[STEP]], %[[STEP]] : tensor<i64>{{$}}
  %11 = lpc.add %step, %step : tensor<i64>
  return
}
// GENERIC-LABEL: sym_name = "optim"
// GENERIC: "lpc.sgd"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{dampening = 0.000000e+00 : f64, momentum = 0.000000e+00 : f64, weight_decay = 0.000000e+00 : f64}> : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// GENERIC: "lpc.sgd"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov, weight_decay = 1.000000e-04 : f64}> : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// GENERIC: "lpc.adamw"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}> : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<i64>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// GENERIC: "lpc.clip_by_global_norm"(%{{.*}}, %{{.*}}) <{max_norm = 1.000000e+00 : f64}> : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<f32>)
// GENERIC: "lpc.lr_schedule"(%{{.*}}) <{base_lr = 1.000000e-03 : f64, kind = #lpc<lr_schedule_kind constant>, min_lr = 0.000000e+00 : f64, total_steps = 0 : i64, warmup_steps = 0 : i64}> : (tensor<i64>) -> tensor<f32>

// Precision pins on ops in nested regions and on every precision class of
// compute op (AlwaysLow, Follow, KeepFP32).
// CHECK-LABEL: func.func @pins_in_regions(
func.func @pins_in_regions(%c: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: scf.if
  %r = scf.if %c -> tensor<4xf32> {
    // CHECK-NEXT: lpc.softmax %{{.*}} {lpc.precision = #lpc.precision<bf16>} : tensor<4xf32>{{$}}
    %0 = lpc.softmax %x {lpc.precision = #lpc.precision<bf16>} : tensor<4xf32>
    scf.yield %0 : tensor<4xf32>
  } else {
    // CHECK: lpc.reduce_sum %{{.*}} {axes = array<i64: 0>, keepdims, lpc.precision = #lpc.precision<fp32>} : tensor<4xf32> -> tensor<1xf32>{{$}}
    %1 = lpc.reduce_sum %x {axes = array<i64: 0>, keepdims, lpc.precision = #lpc.precision<fp32>} : tensor<4xf32> -> tensor<1xf32>
    %2 = lpc.broadcast %1 dims = [0] {lpc.precision = #lpc.precision<fp16>} : tensor<1xf32> -> tensor<4xf32>
    scf.yield %2 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// Dynamic sizes along the concatenation axis give a dynamic result size.
// CHECK-LABEL: func.func @concat_dynamic(
// CHECK-NEXT: lpc.concat %{{.*}}, %{{.*}} axis = 0 : tensor<?x8xf32>, tensor<2x8xf32> -> tensor<?x8xf32>{{$}}
// CHECK-NEXT: lpc.concat %{{.*}}, %{{.*}} axis = 1 : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x16xf32>{{$}}
func.func @concat_dynamic(%a: tensor<?x8xf32>, %b: tensor<2x8xf32>) -> (tensor<?x8xf32>, tensor<2x16xf32>) {
  %0 = lpc.concat %a, %b axis = 0 : tensor<?x8xf32>, tensor<2x8xf32> -> tensor<?x8xf32>
  %1 = lpc.concat %b, %b axis = 1 : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x16xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<2x16xf32>
}

// CHECK-LABEL: func.func @fp8_stats
// CHECK: lpc.fp8_stats %{{.*}}, %{{.*}} {format = #lpc.precision<fp8_e5m2>} : tensor<4x8xbf16>
// GENERIC: "lpc.fp8_stats"(%{{.*}}, %{{.*}}) <{format = #lpc.precision<fp8_e5m2>}> : (tensor<4x8xbf16>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
func.func @fp8_stats(%x: tensor<4x8xbf16>, %s: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0, %1 = lpc.fp8_stats %x, %s {format = #lpc.precision<fp8_e5m2>} : tensor<4x8xbf16>
  return %0, %1 : tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x16x8xbf16>, %[[K:.*]]: tensor<2x4x12x8xbf16>, %[[V:.*]]: tensor<2x4x12x6xbf16>, %[[M:.*]]: tensor<16x12xf32>)
func.func @attention(%q: tensor<2x4x16x8xbf16>, %k: tensor<2x4x12x8xbf16>,
                     %v: tensor<2x4x12x6xbf16>, %m: tensor<16x12xf32>)
    -> (tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>) {
  // CHECK-NEXT: %[[O:.*]], %[[L:.*]] = lpc.attention %[[Q]], %[[K]], %[[V]] {causal} : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16> -> tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>{{$}}
  %o, %l = lpc.attention %q, %k, %v {causal} : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16> -> tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = lpc.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] {scale = 2.500000e-01 : f64} : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>, tensor<16x12xf32> -> tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>{{$}}
  %o2, %l2 = lpc.attention %q, %k, %v mask %m {scale = 0.25 : f64} : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>, tensor<16x12xf32> -> tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>
  // CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = lpc.attention_grad %[[O]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]] mask %[[M]] {causal} : tensor<2x4x16x6xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>, tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>, tensor<16x12xf32>{{$}}
  %dq, %dk, %dv = lpc.attention_grad %o, %q, %k, %v, %o, %l mask %m {causal} : tensor<2x4x16x6xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>, tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>, tensor<16x12xf32>
  return %dq, %dk, %dv : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>
}

// CHECK-LABEL: func.func @grouped_matmul
// CHECK-SAME: (%[[X:.*]]: tensor<6x8xbf16>, %[[W:.*]]: tensor<3x8x5xbf16>, %[[G:.*]]: tensor<6xi32>, %[[DY:.*]]: tensor<6x5xbf16>)
func.func @grouped_matmul(%x: tensor<6x8xbf16>, %w: tensor<3x8x5xbf16>,
                          %g: tensor<6xi32>, %dy: tensor<6x5xbf16>)
    -> (tensor<6x5xbf16>, tensor<6x8xbf16>, tensor<3x8x5xbf16>) {
  // CHECK-NEXT: lpc.grouped_matmul %[[X]], %[[W]], %[[G]] : tensor<6x8xbf16>, tensor<3x8x5xbf16>, tensor<6xi32> -> tensor<6x5xbf16>{{$}}
  %y = lpc.grouped_matmul %x, %w, %g : tensor<6x8xbf16>, tensor<3x8x5xbf16>, tensor<6xi32> -> tensor<6x5xbf16>
  // CHECK-NEXT: lpc.grouped_matmul %[[DY]], %[[W]], %[[G]] {transpose_b} : tensor<6x5xbf16>, tensor<3x8x5xbf16>, tensor<6xi32> -> tensor<6x8xbf16>{{$}}
  %dx = lpc.grouped_matmul %dy, %w, %g {transpose_b} : tensor<6x5xbf16>, tensor<3x8x5xbf16>, tensor<6xi32> -> tensor<6x8xbf16>
  // CHECK-NEXT: lpc.grouped_matmul_weight_grad %[[X]], %[[DY]], %[[G]] : tensor<6x8xbf16>, tensor<6x5xbf16>, tensor<6xi32> -> tensor<3x8x5xbf16>{{$}}
  %dw = lpc.grouped_matmul_weight_grad %x, %dy, %g : tensor<6x8xbf16>, tensor<6x5xbf16>, tensor<6xi32> -> tensor<3x8x5xbf16>
  return %y, %dx, %dw : tensor<6x5xbf16>, tensor<6x8xbf16>, tensor<3x8x5xbf16>
}

// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[G:.*]]: tensor<4x8xf32>, %[[S:.*]]: tensor<f32>)
func.func @all_reduce(%g: tensor<4x8xf32>, %s: tensor<f32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i1>, tensor<f32>, tensor<4x8xf32>) {
  // CHECK-NEXT: lpc.all_reduce %[[G]] mean : tensor<4x8xf32> -> tensor<4x8xf32>{{$}}
  %0 = lpc.all_reduce %g mean : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: lpc.all_reduce %[[G]] sum : tensor<4x8xf32> -> tensor<4x8xf32>{{$}}
  %1 = lpc.all_reduce %g sum {comm_precision = #lpc.precision<fp32>} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: lpc.all_reduce %[[S]] max : tensor<f32> -> tensor<f32>{{$}}
  %2 = lpc.all_reduce %s max : tensor<f32> -> tensor<f32>
  // CHECK-NEXT: lpc.all_reduce %[[G]] any_nonfinite : tensor<4x8xf32> -> tensor<i1>{{$}}
  %3 = lpc.all_reduce %g any_nonfinite : tensor<4x8xf32> -> tensor<i1>
  // CHECK-NEXT: lpc.all_reduce %[[S]] mean {lpc.assigned = #lpc.precision<fp32>} : tensor<f32> -> tensor<f32>{{$}}
  %4 = lpc.all_reduce %s mean {lpc.assigned = #lpc.precision<fp32>} : tensor<f32> -> tensor<f32>
  // CHECK-NEXT: lpc.all_reduce %[[G]] mean {comm_precision = #lpc.precision<fp8_e5m2>} : tensor<4x8xf32> -> tensor<4x8xf32>{{$}}
  %5 = lpc.all_reduce %g mean {comm_precision = #lpc.precision<fp8_e5m2>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i1>, tensor<f32>, tensor<4x8xf32>
}
// GENERIC-LABEL: sym_name = "all_reduce"
// GENERIC: "lpc.all_reduce"(%{{.*}}) <{comm_precision = #lpc.precision<fp32>, kind = #lpc<all_reduce_kind mean>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>

// The GPU's native-wire form (lpc-native-wire-collectives): bf16 and f16
// tensors that travel as themselves.
// CHECK-LABEL: func.func @native_wire_collectives
func.func @native_wire_collectives(%g: tensor<12x5xbf16>, %h: tensor<4x5xf16>)
    -> (tensor<12x5xbf16>, tensor<4x5xbf16>, tensor<12x5xf16>) {
  // CHECK-NEXT: lpc.all_reduce %{{.*}} mean {comm_precision = #lpc.precision<bf16>} : tensor<12x5xbf16> -> tensor<12x5xbf16>{{$}}
  %0 = lpc.all_reduce %g mean {comm_precision = #lpc.precision<bf16>} : tensor<12x5xbf16> -> tensor<12x5xbf16>
  // CHECK-NEXT: lpc.reduce_scatter %{{.*}} mean ranks(3) {comm_precision = #lpc.precision<bf16>} : tensor<12x5xbf16> -> tensor<4x5xbf16>{{$}}
  %1 = lpc.reduce_scatter %g mean ranks(3) {comm_precision = #lpc.precision<bf16>} : tensor<12x5xbf16> -> tensor<4x5xbf16>
  // CHECK-NEXT: lpc.all_gather %{{.*}} ranks(3) {comm_precision = #lpc.precision<fp16>} : tensor<4x5xf16> -> tensor<12x5xf16>{{$}}
  %2 = lpc.all_gather %h ranks(3) {comm_precision = #lpc.precision<fp16>} : tensor<4x5xf16> -> tensor<12x5xf16>
  return %0, %1, %2 : tensor<12x5xbf16>, tensor<4x5xbf16>, tensor<12x5xf16>
}

// The GPU's FP8 wire (lpc-native-wire-collectives): FP8 values move as
// bytes, the shared scale is a power of two.
// CHECK-LABEL: func.func @fp8_wire
func.func @fp8_wire(%q: tensor<6x5xf8E4M3FN>, %m: tensor<2x5xf8E5M2>, %a: tensor<f32>)
    -> (tensor<6x5xf8E4M3FN>, tensor<6x5xf8E5M2>, tensor<f32>) {
  // CHECK-NEXT: lpc.all_to_all %{{.*}} ranks(3) : tensor<6x5xf8E4M3FN>{{$}}
  %0 = lpc.all_to_all %q ranks(3) : tensor<6x5xf8E4M3FN>
  // CHECK-NEXT: lpc.all_gather %{{.*}} ranks(3) {comm_precision = #lpc.precision<fp8_e5m2>} : tensor<2x5xf8E5M2> -> tensor<6x5xf8E5M2>{{$}}
  %1 = lpc.all_gather %m ranks(3) {comm_precision = #lpc.precision<fp8_e5m2>} : tensor<2x5xf8E5M2> -> tensor<6x5xf8E5M2>
  // CHECK-NEXT: lpc.wire_scale %{{.*}} {format = #lpc.precision<fp8_e4m3>}{{$}}
  %2 = lpc.wire_scale %a {format = #lpc.precision<fp8_e4m3>}
  return %0, %1, %2 : tensor<6x5xf8E4M3FN>, tensor<6x5xf8E5M2>, tensor<f32>
}

// CHECK-LABEL: func.func @sharding_collectives
// CHECK-SAME: (%[[B:.*]]: tensor<12x5xf32>, %[[P:.*]]: tensor<4x5xf32>)
func.func @sharding_collectives(%b: tensor<12x5xf32>, %p: tensor<4x5xf32>)
    -> (tensor<4x5xf32>, tensor<6x5xf32>, tensor<12x5xf32>, tensor<12x5xf32>, tensor<4x5xf32>, tensor<3x5xf32>) {
  // CHECK-NEXT: lpc.reduce_scatter %[[B]] mean ranks(3) : tensor<12x5xf32> -> tensor<4x5xf32>{{$}}
  %0 = lpc.reduce_scatter %b mean ranks(3) : tensor<12x5xf32> -> tensor<4x5xf32>
  // CHECK-NEXT: lpc.reduce_scatter %[[B]] max ranks(2) : tensor<12x5xf32> -> tensor<6x5xf32>{{$}}
  %1 = lpc.reduce_scatter %b max ranks(2) {comm_precision = #lpc.precision<fp32>} : tensor<12x5xf32> -> tensor<6x5xf32>
  // CHECK-NEXT: lpc.all_gather %[[P]] ranks(3) {comm_precision = #lpc.precision<bf16>} : tensor<4x5xf32> -> tensor<12x5xf32>{{$}}
  %2 = lpc.all_gather %p ranks(3) {comm_precision = #lpc.precision<bf16>} : tensor<4x5xf32> -> tensor<12x5xf32>
  // CHECK-NEXT: lpc.all_gather %[[B]] ranks(1) : tensor<12x5xf32> -> tensor<12x5xf32>{{$}}
  %3 = lpc.all_gather %b ranks(1) : tensor<12x5xf32> -> tensor<12x5xf32>
  // CHECK-NEXT: lpc.reduce_scatter %[[B]] mean ranks(3) {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<12x5xf32> -> tensor<4x5xf32>{{$}}
  %4 = lpc.reduce_scatter %b mean ranks(3) {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<12x5xf32> -> tensor<4x5xf32>
  // CHECK-NEXT: lpc.shard %[[B]] ranks(4) : tensor<12x5xf32> -> tensor<3x5xf32>{{$}}
  %5 = lpc.shard %b ranks(4) : tensor<12x5xf32> -> tensor<3x5xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x5xf32>, tensor<6x5xf32>, tensor<12x5xf32>, tensor<12x5xf32>, tensor<4x5xf32>, tensor<3x5xf32>
}
// GENERIC-LABEL: sym_name = "sharding_collectives"
// GENERIC: "lpc.reduce_scatter"(%{{.*}}) <{comm_precision = #lpc.precision<fp32>, kind = #lpc<all_reduce_kind mean>, ranks = 3 : i64}> : (tensor<12x5xf32>) -> tensor<4x5xf32>
// GENERIC: "lpc.all_gather"(%{{.*}}) <{comm_precision = #lpc.precision<bf16>, ranks = 3 : i64}> : (tensor<4x5xf32>) -> tensor<12x5xf32>
// GENERIC: "lpc.shard"(%{{.*}}) <{ranks = 4 : i64}> : (tensor<12x5xf32>) -> tensor<3x5xf32>

// CHECK-LABEL: func.func @conversions(
func.func @conversions(%t: tensor<8xi32>, %m: tensor<8xi1>, %x: tensor<8xf32>) {
  // CHECK-NEXT: lpc.convert %{{.*}} : tensor<8xi32> to tensor<8xf32>{{$}}
  %0 = lpc.convert %t : tensor<8xi32> to tensor<8xf32>
  // CHECK-NEXT: lpc.convert %{{.*}} : tensor<8xi1> to tensor<8xi32>{{$}}
  %1 = lpc.convert %m : tensor<8xi1> to tensor<8xi32>
  // CHECK-NEXT: lpc.convert %{{.*}} : tensor<8xf32> to tensor<8xi64>{{$}}
  %2 = lpc.convert %x : tensor<8xf32> to tensor<8xi64>
  // CHECK-NEXT: lpc.mul %{{.*}}, %{{.*}} : tensor<8xi32>{{$}}
  %3 = lpc.mul %t, %1 : tensor<8xi32>
  // CHECK-NEXT: lpc.sub %{{.*}}, %{{.*}} : tensor<8xi32>{{$}}
  %4 = lpc.sub %3, %t : tensor<8xi32>
  return
}
