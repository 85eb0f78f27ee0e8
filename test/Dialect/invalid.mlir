// One split per diagnostic of the lpc verifiers (dialects/LpcOps.cpp), the
// dialect attribute verifier (dialects/LpcDialect.cpp) and a few of the
// ODS-generated type constraints.
// RUN: lpc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// lpc.param
//===----------------------------------------------------------------------===//

func.func @param_empty_name() {
  // expected-error @+1 {{'lpc.param' op needs a non-empty name}}
  %0 = lpc.param "" zeros : tensor<4xf32>
  return
}

// -----

func.func @param_std_not_normal() {
  // expected-error @+1 {{'lpc.param' op attribute 'std' only applies to normal initializers, not 'zeros'}}
  %0 = lpc.param "w" zeros {std = 0.1 : f64} : tensor<4xf32>
  return
}

// -----

func.func @param_mean_not_normal() {
  // expected-error @+1 {{'lpc.param' op attribute 'mean' only applies to normal initializers, not 'uniform'}}
  %0 = lpc.param "w" uniform {mean = 0.1 : f64} : tensor<4xf32>
  return
}

// -----

func.func @param_low_not_uniform() {
  // expected-error @+1 {{'lpc.param' op attribute 'low' only applies to uniform initializers, not 'normal'}}
  %0 = lpc.param "w" normal {low = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @param_high_not_uniform() {
  // expected-error @+1 {{'lpc.param' op attribute 'high' only applies to uniform initializers, not 'xavier_uniform'}}
  %0 = lpc.param "w" xavier_uniform {high = 1.0 : f64} : tensor<4x4xf32>
  return
}

// -----

func.func @param_value_not_constant() {
  // expected-error @+1 {{'lpc.param' op attribute 'value' only applies to constant initializers, not 'ones'}}
  %0 = lpc.param "w" ones {value = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @param_gain_not_fan() {
  // expected-error @+1 {{'lpc.param' op attribute 'gain' only applies to xavier/kaiming initializers, not 'normal'}}
  %0 = lpc.param "w" normal {gain = 2.0 : f64} : tensor<4x4xf32>
  return
}

// -----

func.func @param_constant_without_value() {
  // expected-error @+1 {{'lpc.param' op 'constant' initializer needs a 'value' attribute}}
  %0 = lpc.param "w" constant : tensor<4xf32>
  return
}

// -----

func.func @param_std_zero() {
  // expected-error @+1 {{'lpc.param' op 'std' must be positive, got 0.000000e+00}}
  %0 = lpc.param "w" normal {std = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @param_std_nan() {
  // expected-error @+1 {{'lpc.param' op 'std' must be finite, got nan}}
  %0 = lpc.param "w" normal {std = 0x7FF8000000000000 : f64} : tensor<4xf32>
  return
}

// -----

func.func @param_mean_nan() {
  // expected-error @+1 {{'lpc.param' op 'mean' must be finite, got nan}}
  %0 = lpc.param "w" normal {mean = 0x7FF8000000000000 : f64} : tensor<4xf32>
  return
}

// -----

func.func @param_value_inf() {
  // expected-error @+1 {{'lpc.param' op 'value' must be finite, got INF}}
  %0 = lpc.param "w" constant {value = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return
}

// -----

func.func @param_uniform_infinite_range() {
  // expected-error @+1 {{'lpc.param' op 'low' must be finite, got -INF}}
  %0 = lpc.param "w" uniform {low = 0xFFF0000000000000 : f64, high = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return
}

// -----

func.func @param_gain_inf() {
  // expected-error @+1 {{'lpc.param' op 'gain' must be finite, got INF}}
  %0 = lpc.param "w" xavier_normal {gain = 0x7FF0000000000000 : f64} : tensor<4x4xf32>
  return
}

// -----

func.func @param_gain_negative() {
  // expected-error @+1 {{'lpc.param' op 'gain' must be positive, got -1.000000e+00}}
  %0 = lpc.param "w" kaiming_normal {gain = -1.0 : f64} : tensor<4x4xf32>
  return
}

// -----

func.func @param_uniform_empty_range() {
  // expected-error @+1 {{'lpc.param' op 'uniform' initializer needs low < high, got [5.000000e-01, 5.000000e-01)}}
  %0 = lpc.param "w" uniform {low = 0.5 : f64, high = 0.5 : f64} : tensor<4xf32>
  return
}

// -----

// The defaults are low = -1, high = 1: a low of 2 alone is an empty range.
func.func @param_uniform_low_above_default_high() {
  // expected-error @+1 {{'lpc.param' op 'uniform' initializer needs low < high, got [2.000000e+00, 1.000000e+00)}}
  %0 = lpc.param "w" uniform {low = 2.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @param_fan_rank1() {
  // expected-error @+1 {{'lpc.param' op 'xavier_uniform' needs a tensor of rank >= 2 (fan-in, fan-out), got 'tensor<8xf32>'}}
  %0 = lpc.param "w" xavier_uniform : tensor<8xf32>
  return
}

// -----

func.func @param_fan_rank0() {
  // expected-error @+1 {{'lpc.param' op 'kaiming_uniform' needs a tensor of rank >= 2 (fan-in, fan-out), got 'tensor<f32>'}}
  %0 = lpc.param "w" kaiming_uniform : tensor<f32>
  return
}

// -----

func.func @param_dynamic_shape() {
  // expected-error @+1 {{'lpc.param' op parameter shape must be static, got 'tensor<?x4xf32>'}}
  %0 = lpc.param "w" normal : tensor<?x4xf32>
  return
}

// -----

func.func @param_duplicate_name() {
  // expected-note @+1 {{first declared here}}
  %0 = lpc.param "fc.weight" normal : tensor<4x4xf32>
  %1 = lpc.param "fc.bias" zeros : tensor<4xf32>
  // expected-error @+1 {{'lpc.param' op duplicate parameter name 'fc.weight'}}
  %2 = lpc.param "fc.weight" zeros : tensor<4xf32>
  return
}

// -----

func.func @buffer_named_as_param() {
  // expected-note @+1 {{first declared here}}
  %0 = lpc.param "bn.weight" ones : tensor<4xf32>
  // expected-error @+1 {{'lpc.buffer' op duplicate name 'bn.weight' (a parameter or buffer)}}
  %1 = lpc.buffer "bn.weight" : tensor<4xf32>
  return
}

// -----

func.func @param_named_as_buffer() {
  // expected-note @+1 {{first declared here}}
  %0 = lpc.buffer "bn.running_mean" : tensor<4xf32>
  // expected-error @+1 {{'lpc.param' op duplicate parameter name 'bn.running_mean'}}
  %1 = lpc.param "bn.running_mean" zeros : tensor<4xf32>
  return
}

// -----

func.func @buffer_fractional_count() {
  // expected-error @+1 {{'lpc.buffer' op 'value' of an integer buffer must be a whole number, got 1.5}}
  %0 = lpc.buffer "n" {value = 1.5 : f64} : tensor<i32>
  return
}

// -----

func.func @buffer_dynamic() {
  // expected-error @+1 {{'lpc.buffer' op buffer shape must be static, got 'tensor<?xf32>'}}
  %0 = lpc.buffer "m" : tensor<?xf32>
  return
}

// -----

func.func @buffer_update_unknown(%v: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.buffer_update' op updates 'bn.running_var', which no lpc.buffer of this function declares}}
  lpc.buffer_update "bn.running_var", %v : tensor<4xf32>
  return
}

// -----

func.func @buffer_update_type(%v: tensor<3xf32>) {
  %0 = lpc.buffer "m" : tensor<4xf32>
  // expected-error @+1 {{'lpc.buffer_update' op value of type 'tensor<3xf32>' for buffer 'm' of type 'tensor<4xf32>'}}
  lpc.buffer_update "m", %v : tensor<3xf32>
  return
}

// -----

func.func @buffer_updated_twice(%v: tensor<4xf32>) {
  %0 = lpc.buffer "m" : tensor<4xf32>
  // expected-note @+1 {{first update here}}
  lpc.buffer_update "m", %v : tensor<4xf32>
  // expected-error @+1 {{'lpc.buffer_update' op a second update of buffer 'm'}}
  lpc.buffer_update "m", %v : tensor<4xf32>
  return
}

// -----

func.func @convert_to_itself(%a: tensor<4xi32>) {
  // expected-error @+1 {{'lpc.convert' op converts 'i32' to itself}}
  %0 = lpc.convert %a : tensor<4xi32> to tensor<4xi32>
  return
}

// -----

func.func @convert_shape(%a: tensor<4xi32>) {
  // expected-error @+1 {{'lpc.convert' op changes the shape from 'tensor<4xi32>' to 'tensor<2x2xf32>'; a conversion only changes the element type}}
  %0 = lpc.convert %a : tensor<4xi32> to tensor<2x2xf32>
  return
}

// -----

func.func @convert_bf16(%a: tensor<4xbf16>) {
  // expected-error @+1 {{'lpc.convert' op operand #0 must be ranked tensor of 32-bit float or 1-bit signless integer or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xbf16>'}}
  %0 = lpc.convert %a : tensor<4xbf16> to tensor<4xi32>
  return
}

// -----

func.func @train_or_eval_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'lpc.train_or_eval' op failed to verify that all of {train, eval, result} have same type}}
  %0 = "lpc.train_or_eval"(%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @param_not_f32() {
  // expected-error @+1 {{'lpc.param' op result #0 must be ranked tensor of 32-bit float values, but got 'tensor<4xbf16>'}}
  %0 = lpc.param "w" zeros : tensor<4xbf16>
  return
}

// -----

func.func @param_unknown_init() {
  // expected-error @+2 {{custom op 'lpc.param' expected ::mlir::lpc::InitKind to be one of: zeros, ones, constant, normal, uniform, xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal}}
  // expected-error @+1 {{custom op 'lpc.param' failed to parse Lpc_InitKindAttr parameter 'value' which is to be a `::mlir::lpc::InitKind`}}
  %0 = lpc.param "w" he_normal : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// lpc.input
//===----------------------------------------------------------------------===//

func.func @input_empty_name() {
  // expected-error @+1 {{'lpc.input' op needs a non-empty name}}
  %0 = lpc.input "" features : tensor<4x2xf32>
  return
}

// -----

func.func @input_labels_float() {
  // expected-error @+1 {{'lpc.input' op 'labels' inputs must have an integer element type (i32 or i64), got 'tensor<4xf32>'}}
  %0 = lpc.input "y" labels : tensor<4xf32>
  return
}

// -----

func.func @input_tokens_bool() {
  // expected-error @+1 {{'lpc.input' op 'tokens' inputs must have an integer element type (i32 or i64), got 'tensor<4x8xi1>'}}
  %0 = lpc.input "t" tokens : tensor<4x8xi1>
  return
}

// -----

func.func @input_features_int() {
  // expected-error @+1 {{'lpc.input' op 'features' inputs must have a float element type, got 'tensor<4x2xi32>'}}
  %0 = lpc.input "x" features : tensor<4x2xi32>
  return
}

// -----

func.func @input_targets_int() {
  // expected-error @+1 {{'lpc.input' op 'targets' inputs must have a float element type, got 'tensor<4xi64>'}}
  %0 = lpc.input "x" targets : tensor<4xi64>
  return
}

// -----

func.func @input_scalar() {
  // expected-error @+1 {{'lpc.input' op inputs need a static shape with a leading batch dimension, got 'tensor<f32>'}}
  %0 = lpc.input "x" features : tensor<f32>
  return
}

// -----

func.func @input_dynamic() {
  // expected-error @+1 {{'lpc.input' op inputs need a static shape with a leading batch dimension, got 'tensor<?x8xf32>'}}
  %0 = lpc.input "x" features : tensor<?x8xf32>
  return
}

// -----

func.func @input_duplicate_name() {
  // expected-note @+1 {{first declared here}}
  %0 = lpc.input "x" features : tensor<4x2xf32>
  // expected-error @+1 {{'lpc.input' op duplicate input name 'x'}}
  %1 = lpc.input "x" targets : tensor<4x2xf32>
  return
}

// -----

func.func @input_unknown_kind() {
  // expected-error @+2 {{custom op 'lpc.input' expected ::mlir::lpc::InputKind to be one of: features, targets, labels, tokens}}
  // expected-error @+1 {{custom op 'lpc.input' failed to parse Lpc_InputKindAttr parameter 'value' which is to be a `::mlir::lpc::InputKind`}}
  %0 = lpc.input "x" images : tensor<4x2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// lpc.constant
//===----------------------------------------------------------------------===//

func.func @constant_not_elements() {
  // expected-error @+1 {{expected a dense elements attribute with a tensor type, e.g. dense<1.0> : tensor<4xf32>}}
  %0 = lpc.constant 1.0 : f32
  return
}

// -----

func.func @constant_type_mismatch() {
  // expected-error @+1 {{'lpc.constant' op value type 'tensor<4xf32>' differs from result type 'tensor<2x2xf32>'}}
  %0 = "lpc.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<2x2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// lpc.matmul (shape inference shared with lpc.scaled_matmul)
//===----------------------------------------------------------------------===//

func.func @matmul_rank1(%a: tensor<4xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+2 {{operands must have rank >= 2, got 'tensor<4xf32>' and 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<4xf32>, tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @matmul_rhs_rank(%a: tensor<2x4x8xf32>, %b: tensor<2x2x8x16xf32>) {
  // expected-error @+2 {{rhs must be a matrix or have the same rank as lhs ('tensor<2x4x8xf32>'), got 'tensor<2x2x8x16xf32>'}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<2x4x8xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x16xf32>
  return
}

// -----

// A rank-3 rhs is not broadcast against a rank-2 lhs.
func.func @matmul_rhs_rank_higher(%a: tensor<4x8xf32>, %b: tensor<2x8x16xf32>) {
  // expected-error @+2 {{rhs must be a matrix or have the same rank as lhs ('tensor<4x8xf32>'), got 'tensor<2x8x16xf32>'}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x3x4x8xf32>, %b: tensor<2x5x8x16xf32>) {
  // expected-error @+2 {{batch dimension 1 differs: 'tensor<2x3x4x8xf32>' vs 'tensor<2x5x8x16xf32>'}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<2x3x4x8xf32>, tensor<2x5x8x16xf32> -> tensor<2x3x4x16xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) {
  // expected-error @+2 {{contraction dimensions differ: lhs 'tensor<4x8xf32>' has K = 8 but rhs 'tensor<7x16xf32>' has K = 7}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// With transpose_b, K is the last dimension of rhs.
func.func @matmul_contraction_transposed(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+2 {{contraction dimensions differ: lhs 'tensor<4x8xf32>' has K = 8 but rhs 'tensor<8x16xf32>' (transposed) has K = 16}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b {transpose_b} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_contraction_transposed_a(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+2 {{contraction dimensions differ: lhs 'tensor<4x8xf32>' (transposed) has K = 4 but rhs 'tensor<8x16xf32>' has K = 8}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b {transpose_a} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<4x8xbf16>, %b: tensor<8x16xf32>) {
  // expected-error @+2 {{'lpc.matmul' op operand element types differ ('bf16' vs 'f32'); insert lpc.cast}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<4x8xbf16>, tensor<8x16xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_result_type(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+2 {{'lpc.matmul' op inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<4x16xbf16>'}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xbf16>
  return
}

// -----

// ODS type constraint: integer operands.
func.func @matmul_int(%a: tensor<4x8xi32>, %b: tensor<8x16xi32>) {
  // expected-error @+1 {{'lpc.matmul' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4x8xi32>'}}
  %0 = lpc.matmul %a, %b : tensor<4x8xi32>, tensor<8x16xi32> -> tensor<4x16xi32>
  return
}

// -----

func.func @matmul_unknown_role(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+2 {{expected ::mlir::lpc::GemmRole to be one of: fprop, dgrad, wgrad}}
  // expected-error @+1 {{failed to parse Lpc_GemmRoleAttr parameter 'value' which is to be a `::mlir::lpc::GemmRole`}}
  %0 = lpc.matmul %a, %b {role = #lpc.role<bprop>} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// lpc.scaled_matmul
//===----------------------------------------------------------------------===//

func.func @scaled_matmul_e5m2_e5m2(%a: tensor<4x8xf8E5M2>, %b: tensor<8x16xf8E5M2>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op E5M2 x E5M2 is not supported (FP8 tensor cores and cuBLASLt reject it); quantize one operand to E4M3}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) : tensor<4x8xf8E5M2>, tensor<8x16xf8E5M2> -> tensor<4x16xf32>
  return
}

// -----

func.func @scaled_matmul_acc_type(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op accumulation type must be f32, got 'f16'}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) {acc_type = f16} : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x16xf32>
  return
}

// -----

func.func @scaled_matmul_result_shape(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op result shape tensor<4x8xbf16> does not match the product shape 'tensor<4x16xbf16>'}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x8xbf16>
  return
}

// -----

func.func @scaled_matmul_bias_size(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<f32>, %bias: tensor<8xbf16>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op bias must be rank 1 with the result's last dimension (16), got 'tensor<8xbf16>'}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) bias(%bias : tensor<8xbf16>) : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x16xbf16>
  return
}

// -----

func.func @scaled_matmul_bias_rank(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<f32>, %bias: tensor<4x16xbf16>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op bias must be rank 1 with the result's last dimension (16), got 'tensor<4x16xbf16>'}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) bias(%bias : tensor<4x16xbf16>) : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x16xbf16>
  return
}

// -----

// The shape checks of lpc.matmul apply, without the type inference error.
func.func @scaled_matmul_contraction(%a: tensor<4x8xf8E4M3FN>, %b: tensor<16x8xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{contraction dimensions differ: lhs 'tensor<4x8xf8E4M3FN>' has K = 8 but rhs 'tensor<16x8xf8E4M3FN>' has K = 16}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) : tensor<4x8xf8E4M3FN>, tensor<16x8xf8E4M3FN> -> tensor<4x8xf32>
  return
}

// -----

// ODS type constraint: operands must be FP8.
func.func @scaled_matmul_not_fp8(%a: tensor<4x8xbf16>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op operand #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<4x8xbf16>'}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) : tensor<4x8xbf16>, tensor<8x16xf8E4M3FN> -> tensor<4x16xf32>
  return
}

// -----

// ODS type constraint: the result is f32, bf16 or f16, never FP8.
func.func @scaled_matmul_fp8_result(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x16xf8E4M3FN>'}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x16xf8E4M3FN>
  return
}

// -----

// ODS type constraint: scales are 0-d f32 tensors.
func.func @scaled_matmul_scale_rank(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op operand #2 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = "lpc.scaled_matmul"(%a, %b, %s, %s) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>} : (tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// ODS type constraint: wrong element type (add, sub and mul take integers,
// div does not).
func.func @div_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{'lpc.div' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xi32>'}}
  %0 = lpc.div %a, %a : tensor<4xi32>
  return
}

// -----

func.func @add_bool(%a: tensor<4xi1>) {
  // expected-error @+1 {{'lpc.add' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = lpc.add %a, %a : tensor<4xi1>
  return
}

// -----

// ODS trait: elementwise operands have one type (see lpc.broadcast).
func.func @add_shapes(%a: tensor<4xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{'lpc.add' op requires the same type for all operands and results}}
  %0 = "lpc.add"(%a, %b) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  return
}

// -----

// ODS type constraint: unranked tensors are not lpc values.
func.func @relu_unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{'lpc.relu' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<*xf32>'}}
  %0 = "lpc.relu"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @bias_add_scalar(%a: tensor<f32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{'lpc.bias_add' op input must have rank >= 1, got 'tensor<f32>'}}
  %0 = lpc.bias_add %a, %b : tensor<f32>, tensor<1xf32>
  return
}

// -----

func.func @bias_add_size(%a: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.bias_add' op bias must be rank 1 with the input's last dimension (8), got 'tensor<4xf32>'}}
  %0 = lpc.bias_add %a, %b : tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @bias_add_rank(%a: tensor<4x8xf32>, %b: tensor<1x8xf32>) {
  // expected-error @+1 {{'lpc.bias_add' op bias must be rank 1 with the input's last dimension (8), got 'tensor<1x8xf32>'}}
  %0 = lpc.bias_add %a, %b : tensor<4x8xf32>, tensor<1x8xf32>
  return
}

// -----

func.func @bias_add_element_type(%a: tensor<4x8xf32>, %b: tensor<8xbf16>) {
  // expected-error @+1 {{'lpc.bias_add' op bias element type 'bf16' differs from input element type 'f32'; insert lpc.cast}}
  %0 = lpc.bias_add %a, %b : tensor<4x8xf32>, tensor<8xbf16>
  return
}

// -----

func.func @gelu_unknown_approximation(%a: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::lpc::GeluApproximation to be one of: erf, tanh}}
  // expected-error @+1 {{failed to parse Lpc_GeluApproximationAttr parameter 'value' which is to be a `::mlir::lpc::GeluApproximation`}}
  %0 = lpc.gelu %a {approximation = #lpc.gelu_approximation<sigmoid>} : tensor<4xf32>
  return
}

// -----

// ODS attribute constraint: pow needs its exponent.
func.func @pow_without_exponent(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.pow' op requires attribute 'exponent'}}
  %0 = lpc.pow %a : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

func.func @layernorm_scalar(%a: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+1 {{'lpc.layernorm' op input must have rank >= 1, got 'tensor<f32>'}}
  %0 = lpc.layernorm %a, %g, %g : tensor<f32>, tensor<1xf32>
  return
}

// -----

func.func @layernorm_gamma_size(%a: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.layernorm' op gamma must be rank 1 with the input's last dimension (8), got 'tensor<4xf32>'}}
  %0 = lpc.layernorm %a, %g, %g : tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @layernorm_gamma_element_type(%a: tensor<4x8xf32>, %g: tensor<8xbf16>) {
  // expected-error @+1 {{'lpc.layernorm' op gamma element type 'bf16' differs from input element type 'f32'; insert lpc.cast}}
  %0 = lpc.layernorm %a, %g, %g : tensor<4x8xf32>, tensor<8xbf16>
  return
}

// -----

// ODS trait: gamma and beta have one type.
func.func @layernorm_beta_type(%a: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.layernorm' op failed to verify that all of {gamma, beta} have same type}}
  %0 = "lpc.layernorm"(%a, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layernorm_epsilon(%a: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.layernorm' op epsilon must be positive, got 0.000000e+00}}
  %0 = lpc.layernorm %a, %g, %g {epsilon = 0.0 : f64} : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @rmsnorm_scalar(%a: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+1 {{'lpc.rmsnorm' op input must have rank >= 1, got 'tensor<f32>'}}
  %0 = lpc.rmsnorm %a, %g : tensor<f32>, tensor<1xf32>
  return
}

// -----

func.func @rmsnorm_gamma_rank(%a: tensor<4x8xf32>, %g: tensor<1x8xf32>) {
  // expected-error @+1 {{'lpc.rmsnorm' op gamma must be rank 1 with the input's last dimension (8), got 'tensor<1x8xf32>'}}
  %0 = lpc.rmsnorm %a, %g : tensor<4x8xf32>, tensor<1x8xf32>
  return
}

// -----

func.func @rmsnorm_gamma_element_type(%a: tensor<4x8xbf16>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.rmsnorm' op gamma element type 'f32' differs from input element type 'bf16'; insert lpc.cast}}
  %0 = lpc.rmsnorm %a, %g : tensor<4x8xbf16>, tensor<8xf32>
  return
}

// -----

func.func @rmsnorm_epsilon(%a: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.rmsnorm' op epsilon must be positive, got -1.000000e-06}}
  %0 = lpc.rmsnorm %a, %g {epsilon = -1.0e-6 : f64} : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'lpc.softmax' op axis 3 is out of range for 'tensor<2x4x8xf32>' (valid: -3 to 2)}}
  %0 = lpc.softmax %a {axis = 3 : i64} : tensor<2x4x8xf32>
  return
}

// -----

func.func @log_softmax_axis(%a: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'lpc.log_softmax' op axis -4 is out of range for 'tensor<2x4x8xf32>' (valid: -3 to 2)}}
  %0 = lpc.log_softmax %a {axis = -4 : i64} : tensor<2x4x8xf32>
  return
}

// -----

// The default axis (-1) of a 0-d tensor is out of range.
func.func @softmax_scalar(%a: tensor<f32>) {
  // expected-error @+1 {{'lpc.softmax' op axis -1 is out of range for 'tensor<f32>' (valid: 0 to -1)}}
  %0 = lpc.softmax %a : tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

func.func @reduce_no_axes(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.reduce_sum' op needs at least one axis to reduce}}
  // expected-error @+1 {{'lpc.reduce_sum' op failed to infer returned types}}
  %0 = lpc.reduce_sum %a {axes = array<i64>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_axis_range(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.reduce_mean' op axis 2 is out of range for 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'lpc.reduce_mean' op failed to infer returned types}}
  %0 = lpc.reduce_mean %a {axes = array<i64: 2>} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// -1 and 1 name the same dimension of a rank-2 tensor.
func.func @reduce_axis_repeated(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.reduce_max' op axis -1 is repeated}}
  // expected-error @+1 {{'lpc.reduce_max' op failed to infer returned types}}
  %0 = lpc.reduce_max %a {axes = array<i64: 1, -1>} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// keepdims keeps the reduced dimension as size 1.
func.func @reduce_keepdims_type(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.reduce_sum' op inferred type(s) 'tensor<4x1xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{'lpc.reduce_sum' op failed to infer returned types}}
  %0 = lpc.reduce_sum %a {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

func.func @broadcast_element_type(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op element type changes from 'f32' to 'bf16'}}
  %0 = lpc.broadcast %a dims = [1] : tensor<8xf32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @broadcast_dims_count(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op needs one entry in 'dims' per operand dimension (1), got 2}}
  %0 = lpc.broadcast %a dims = [0, 1] : tensor<8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @broadcast_dims_range(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op dims[0] = 2 is out of range for result 'tensor<4x8xf32>'}}
  %0 = lpc.broadcast %a dims = [2] : tensor<8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @broadcast_dims_negative(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op dims[0] = -1 is out of range for result 'tensor<4x8xf32>'}}
  %0 = lpc.broadcast %a dims = [-1] : tensor<8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @broadcast_dims_order(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op 'dims' must be strictly increasing}}
  %0 = lpc.broadcast %a dims = [2, 1] : tensor<4x8xf32> -> tensor<2x8x4xf32>
  return
}

// -----

func.func @broadcast_size(%a: tensor<3xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op operand dimension 0 (size 3) must be 1 or equal result dimension 1 (size 8)}}
  %0 = lpc.broadcast %a dims = [1] : tensor<3xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reshape_element_type(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'lpc.reshape' op element type changes from 'f32' to 'f16'; use lpc.cast}}
  %0 = lpc.reshape %a : tensor<2x3xf32> -> tensor<6xf16>
  return
}

// -----

func.func @reshape_dynamic(%a: tensor<?x3xf32>) {
  // expected-error @+1 {{'lpc.reshape' op needs static shapes}}
  %0 = lpc.reshape %a : tensor<?x3xf32> -> tensor<6xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'lpc.reshape' op element count changes: 'tensor<2x3xf32>' has 6 elements, 'tensor<7xf32>' has 7}}
  %0 = lpc.reshape %a : tensor<2x3xf32> -> tensor<7xf32>
  return
}

// -----

func.func @transpose_rank(%a: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'lpc.transpose' op permutation has 2 entries but the input 'tensor<2x3x4xf32>' has rank 3}}
  // expected-error @+1 {{'lpc.transpose' op failed to infer returned types}}
  %0 = lpc.transpose %a [1, 0] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  return
}

// -----

func.func @transpose_repeated(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'lpc.transpose' op [1, 1] is not a permutation of 0..1}}
  // expected-error @+1 {{'lpc.transpose' op failed to infer returned types}}
  %0 = lpc.transpose %a [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @transpose_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'lpc.transpose' op [0, 2] is not a permutation of 0..1}}
  // expected-error @+1 {{'lpc.transpose' op failed to infer returned types}}
  %0 = lpc.transpose %a [0, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_result(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'lpc.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{'lpc.transpose' op failed to infer returned types}}
  %0 = lpc.transpose %a [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @slice_entries(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.slice' op start, limit and step need 2 entries each}}
  // expected-error @+1 {{'lpc.slice' op failed to infer returned types}}
  %0 = lpc.slice %a start = [0] limit = [4, 8] step = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_step(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.slice' op step[1] must be >= 1, got 0}}
  // expected-error @+1 {{'lpc.slice' op failed to infer returned types}}
  %0 = lpc.slice %a start = [0, 0] limit = [4, 8] step = [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_bounds(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.slice' op dimension 0: need 0 <= start <= limit <= 4, got [3, 2)}}
  // expected-error @+1 {{'lpc.slice' op failed to infer returned types}}
  %0 = lpc.slice %a start = [3, 0] limit = [2, 8] step = [1, 1] : tensor<4x8xf32> -> tensor<0x8xf32>
  return
}

// -----

func.func @slice_past_end(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.slice' op dimension 1: need 0 <= start <= limit <= 8, got [0, 9)}}
  // expected-error @+1 {{'lpc.slice' op failed to infer returned types}}
  %0 = lpc.slice %a start = [0, 0] limit = [4, 9] step = [1, 1] : tensor<4x8xf32> -> tensor<4x9xf32>
  return
}

// -----

func.func @slice_result(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.slice' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x2xf32>'}}
  // expected-error @+1 {{'lpc.slice' op failed to infer returned types}}
  %0 = lpc.slice %a start = [0, 0] limit = [4, 8] step = [1, 3] : tensor<4x8xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+2 {{'lpc.concat' op needs at least one input}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = "lpc.concat"() <{axis = 0 : i64}> : () -> tensor<4xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.concat' op axis 2 is out of range for 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %a axis = 2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @concat_negative_axis(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{'lpc.concat' op axis -3 is out of range for 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %a axis = -3 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+2 {{'lpc.concat' op input 1 ('tensor<8xf32>') differs in rank or element type from input 0 ('tensor<4x8xf32>')}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %b axis = 0 : tensor<4x8xf32>, tensor<8xf32> -> tensor<5x8xf32>
  return
}

// -----

func.func @concat_element_type(%a: tensor<4x8xf32>, %b: tensor<4x8xbf16>) {
  // expected-error @+2 {{'lpc.concat' op input 2 ('tensor<4x8xbf16>') differs in rank or element type from input 0 ('tensor<4x8xf32>')}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %a, %b axis = 0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xbf16> -> tensor<12x8xf32>
  return
}

// -----

func.func @concat_other_dim(%a: tensor<4x8xf32>, %b: tensor<4x7xf32>) {
  // expected-error @+2 {{'lpc.concat' op input 1 ('tensor<4x7xf32>') differs from input 0 ('tensor<4x8xf32>') in dimension 1, which is not the concatenation axis}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %b axis = 0 : tensor<4x8xf32>, tensor<4x7xf32> -> tensor<8x8xf32>
  return
}

// -----

// The concatenated size of a dynamic dimension is dynamic.
func.func @concat_dynamic(%a: tensor<?x8xf32>, %b: tensor<2x8xf32>) {
  // expected-error @+2 {{'lpc.concat' op inferred type(s) 'tensor<?x8xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = lpc.concat %a, %b axis = 0 : tensor<?x8xf32>, tensor<2x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @embedding_table_rank(%t: tensor<100xf32>, %i: tensor<4xi32>) {
  // expected-error @+2 {{'lpc.embedding' op table must be [vocab, dim], got 'tensor<100xf32>'}}
  // expected-error @+1 {{'lpc.embedding' op failed to infer returned types}}
  %0 = lpc.embedding %t, %i : tensor<100xf32>, tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

// ODS type constraint: indices are integers.
func.func @embedding_float_indices(%t: tensor<100x8xf32>, %i: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.embedding' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = lpc.embedding %t, %i : tensor<100x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @causal_mask_rank(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.causal_mask' op needs rank >= 2 ([..., queries, keys]), got 'tensor<8xf32>'}}
  %0 = lpc.causal_mask %a : tensor<8xf32>
  return
}

// -----

func.func @causal_mask_queries(%a: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'lpc.causal_mask' op needs queries <= keys in the last two dimensions, got 8 > 4}}
  %0 = lpc.causal_mask %a : tensor<2x8x4xf32>
  return
}

// -----

func.func @where_shape(%c: tensor<4xi1>, %a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.where' op condition shape 'tensor<4xi1>' differs from value shape 'tensor<8xf32>'}}
  %0 = lpc.where %c, %a, %a : tensor<4xi1>, tensor<8xf32>
  return
}

// -----

func.func @compare_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.compare' op result shape 'tensor<8xi1>' differs from operand shape 'tensor<4xf32>'}}
  %0 = lpc.compare lt, %a, %a : tensor<4xf32> -> tensor<8xi1>
  return
}

// -----

// The operands have one type (a narrow float is compared with a value of its
// own format: cast the other first).
func.func @compare_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'lpc.compare' op failed to verify that all of {lhs, rhs} have same type}}
  %0 = "lpc.compare"(%a, %b) <{predicate = #lpc<compare_predicate lt>}> : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_predicate(%a: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::lpc::ComparePredicate to be one of: lt, le, gt, ge, eq, ne}}
  // expected-error @+1 {{failed to parse Lpc_ComparePredicateAttr parameter 'value'}}
  %0 = lpc.compare lte, %a, %a : tensor<4xf32> -> tensor<4xi1>
  return
}

// -----

// ODS type constraint: the condition is i1.
func.func @where_cond_type(%c: tensor<8xi32>, %a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.where' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<8xi32>'}}
  %0 = lpc.where %c, %a, %a : tensor<8xi32>, tensor<8xf32>
  return
}

// -----

func.func @dropout_rate_one(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.dropout' op rate must be in [0, 1), got 1.000000e+00}}
  %0 = lpc.dropout %a {rate = 1.0 : f64, seed = 0 : i64} : tensor<8xf32>
  return
}

// -----

func.func @dropout_rate_negative(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.dropout' op rate must be in [0, 1), got -1.000000e-01}}
  %0 = lpc.dropout %a {rate = -0.1 : f64, seed = 0 : i64} : tensor<8xf32>
  return
}

// -----

// ODS attribute constraint: dropout needs a seed.
func.func @dropout_no_seed(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.dropout' op requires attribute 'seed'}}
  %0 = lpc.dropout %a {rate = 0.5 : f64} : tensor<8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

func.func @sce_labels_shape(%l: tensor<16x10xf32>, %y: tensor<8xi32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op labels must have the logits' shape without the class dimension: logits 'tensor<16x10xf32>', labels 'tensor<8xi32>'}}
  %0 = lpc.softmax_cross_entropy %l, %y : tensor<16x10xf32>, tensor<8xi32>
  return
}

// -----

func.func @sce_labels_rank(%l: tensor<2x8x50xf32>, %y: tensor<16xi32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op labels must have the logits' shape without the class dimension: logits 'tensor<2x8x50xf32>', labels 'tensor<16xi32>'}}
  %0 = lpc.softmax_cross_entropy %l, %y : tensor<2x8x50xf32>, tensor<16xi32>
  return
}

// -----

func.func @sce_scalar_logits(%l: tensor<f32>, %y: tensor<i32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op labels must have the logits' shape without the class dimension: logits 'tensor<f32>', labels 'tensor<i32>'}}
  %0 = lpc.softmax_cross_entropy %l, %y : tensor<f32>, tensor<i32>
  return
}

// -----

func.func @sce_ignore_index(%l: tensor<16x10xf32>, %y: tensor<16xi32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op ignore_index 3 is a valid class id (0..9); use a negative value such as -100}}
  %0 = lpc.softmax_cross_entropy %l, %y {ignore_index = 3 : i64} : tensor<16x10xf32>, tensor<16xi32>
  return
}

// -----

// ODS type constraint: labels with a float type.
func.func @sce_float_labels(%l: tensor<16x10xf32>, %y: tensor<16xf32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<16xf32>'}}
  %0 = lpc.softmax_cross_entropy %l, %y : tensor<16x10xf32>, tensor<16xf32>
  return
}

// -----

// ODS type constraint: the loss is a 0-d f32 tensor.
func.func @sce_loss_type(%l: tensor<16x10xf32>, %y: tensor<16xi32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<16xf32>'}}
  %0 = "lpc.softmax_cross_entropy"(%l, %y) : (tensor<16x10xf32>, tensor<16xi32>) -> tensor<16xf32>
  return
}

// -----

func.func @sce_unknown_reduction(%l: tensor<16x10xf32>, %y: tensor<16xi32>) {
  // expected-error @+2 {{expected ::mlir::lpc::LossReduction to be one of: mean, sum}}
  // expected-error @+1 {{failed to parse Lpc_LossReductionAttr parameter 'value' which is to be a `::mlir::lpc::LossReduction`}}
  %0 = lpc.softmax_cross_entropy %l, %y {reduction = #lpc.reduction<none>} : tensor<16x10xf32>, tensor<16xi32>
  return
}

// -----

// ODS trait: prediction and target have one type.
func.func @mse_types(%p: tensor<4xf32>, %t: tensor<4xbf16>) {
  // expected-error @+1 {{'lpc.mse_loss' op failed to verify that all of {prediction, target} have same type}}
  %0 = "lpc.mse_loss"(%p, %t) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

func.func @softmax_grad_axis(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.softmax_grad' op axis 2 is out of range for 'tensor<4x8xf32>' (valid: -2 to 1)}}
  %0 = lpc.softmax_grad %g, %g {axis = 2 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @log_softmax_grad_axis(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.log_softmax_grad' op axis -3 is out of range for 'tensor<4x8xf32>' (valid: -2 to 1)}}
  %0 = lpc.log_softmax_grad %g, %g {axis = -3 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @embedding_grad_table_rank(%g: tensor<4x8xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'lpc.embedding_grad' op result must be the [vocab, dim] table, got 'tensor<100xf32>'}}
  %0 = lpc.embedding_grad %g, %i : tensor<4x8xf32>, tensor<4xi32> -> tensor<100xf32>
  return
}

// -----

func.func @embedding_grad_shape(%g: tensor<4x8xf32>, %i: tensor<2x2xi32>) {
  // expected-error @+1 {{'lpc.embedding_grad' op grad 'tensor<4x8xf32>' must be indices.shape x [dim] of 'tensor<100x8xf32>'}}
  %0 = lpc.embedding_grad %g, %i : tensor<4x8xf32>, tensor<2x2xi32> -> tensor<100x8xf32>
  return
}

// -----

func.func @embedding_grad_element_type(%g: tensor<4x8xbf16>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'lpc.embedding_grad' op grad 'tensor<4x8xbf16>' must be indices.shape x [dim] of 'tensor<100x8xf32>'}}
  %0 = lpc.embedding_grad %g, %i : tensor<4x8xbf16>, tensor<4xi32> -> tensor<100x8xf32>
  return
}

// -----

func.func @slice_grad_element_type(%g: tensor<2x8xf32>) {
  // expected-error @+1 {{'lpc.slice_grad' op element type changes from 'f32' to 'bf16'}}
  %0 = lpc.slice_grad %g start = [0, 0] limit = [2, 8] step = [1, 1] : tensor<2x8xf32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @slice_grad_entries(%g: tensor<2x8xf32>) {
  // expected-error @+1 {{'lpc.slice_grad' op start, limit and step need 2 entries each}}
  %0 = lpc.slice_grad %g start = [0, 0] limit = [2, 8] step = [1] : tensor<2x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_grad_bounds(%g: tensor<2x8xf32>) {
  // expected-error @+1 {{'lpc.slice_grad' op dimension 0: need 0 <= start <= limit <= 4, got [3, 5)}}
  %0 = lpc.slice_grad %g start = [3, 0] limit = [5, 8] step = [1, 1] : tensor<2x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_grad_step(%g: tensor<2x8xf32>) {
  // expected-error @+1 {{'lpc.slice_grad' op step[0] must be >= 1, got -1}}
  %0 = lpc.slice_grad %g start = [0, 0] limit = [2, 8] step = [-1, 1] : tensor<2x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_grad_shape(%g: tensor<2x8xf32>) {
  // expected-error @+1 {{'lpc.slice_grad' op grad 'tensor<2x8xf32>' does not match the slice of 'tensor<4x8xf32>' ('tensor<1x8xf32>')}}
  %0 = lpc.slice_grad %g start = [0, 0] limit = [2, 8] step = [2, 1] : tensor<2x8xf32> -> tensor<4x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Precision ops
//===----------------------------------------------------------------------===//

func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.cast' op changes the shape from 'tensor<4xf32>' to 'tensor<8xbf16>'; a cast only changes the element type}}
  %0 = lpc.cast %a : tensor<4xf32> to tensor<8xbf16>
  return
}

// -----

func.func @cast_saturate_not_fp8(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.cast' op 'saturate' applies only to fp8 results, not 'bf16'}}
  %0 = lpc.cast %a {saturate} : tensor<4xf32> to tensor<4xbf16>
  return
}

// -----

// ODS type constraint: casts are between float types.
func.func @cast_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{'lpc.cast' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xi32>'}}
  %0 = lpc.cast %a : tensor<4xi32> to tensor<4xf32>
  return
}

// -----

func.func @quantize_shape(%a: tensor<4x8xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.quantize' op changes the shape from 'tensor<4x8xf32>' to 'tensor<8x4xf8E4M3FN>'}}
  %0 = lpc.quantize %a, %s : tensor<4x8xf32> to tensor<8x4xf8E4M3FN>
  return
}

// -----

// ODS type constraint: quantize produces FP8.
func.func @quantize_to_bf16(%a: tensor<4x8xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.quantize' op result #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<4x8xbf16>'}}
  %0 = lpc.quantize %a, %s : tensor<4x8xf32> to tensor<4x8xbf16>
  return
}

// -----

// ODS type constraint: quantize reads f32, f16 or bf16, not FP8.
func.func @quantize_from_fp8(%a: tensor<4x8xf8E5M2>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.quantize' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xf8E5M2>'}}
  %0 = lpc.quantize %a, %s : tensor<4x8xf8E5M2> to tensor<4x8xf8E4M3FN>
  return
}

// -----

func.func @dequantize_shape(%a: tensor<4x8xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.dequantize' op changes the shape from 'tensor<4x8xf8E4M3FN>' to 'tensor<32xf32>'}}
  %0 = lpc.dequantize %a, %s : tensor<4x8xf8E4M3FN> to tensor<32xf32>
  return
}

// -----

// ODS type constraint: the scale inverse is a 0-d f32 tensor.
func.func @dequantize_scale_type(%a: tensor<4x8xf8E4M3FN>, %s: tensor<bf16>) {
  // expected-error @+1 {{'lpc.dequantize' op operand #1 must be 0D tensor of 32-bit float values, but got 'tensor<bf16>'}}
  %0 = "lpc.dequantize"(%a, %s) : (tensor<4x8xf8E4M3FN>, tensor<bf16>) -> tensor<4x8xf32>
  return
}

// -----

func.func @all_finite_empty() {
  // expected-error @+1 {{'lpc.all_finite' op needs at least one input}}
  %0 = "lpc.all_finite"() : () -> tensor<i1>
  return
}

// -----

// ODS trait: loss_scale keeps its input type.
func.func @loss_scale_type(%a: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.loss_scale' op failed to verify that all of {input, result} have same type}}
  %0 = "lpc.loss_scale"(%a, %s) : (tensor<4xf32>, tensor<f32>) -> tensor<4xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

func.func @sgd_momentum(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op momentum must be in [0, 1], got 1.500000e+00}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) {momentum = 1.5 : f64} : tensor<4xf32>
  return
}

// -----

func.func @sgd_dampening(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op dampening must be in [0, 1], got -1.000000e-01}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) {dampening = -0.1 : f64} : tensor<4xf32>
  return
}

// -----

func.func @sgd_weight_decay(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op weight_decay must be >= 0}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) {weight_decay = -1.0e-4 : f64} : tensor<4xf32>
  return
}

// -----

func.func @sgd_weight_decay_nan(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op weight_decay must be >= 0}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) {weight_decay = 0x7FF8000000000000 : f64} : tensor<4xf32>
  return
}

// -----

func.func @sgd_nesterov_no_momentum(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op nesterov momentum needs momentum > 0 and zero dampening}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) {nesterov} : tensor<4xf32>
  return
}

// -----

func.func @sgd_nesterov_dampening(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op nesterov momentum needs momentum > 0 and zero dampening}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) {momentum = 0.9 : f64, dampening = 0.1 : f64, nesterov} : tensor<4xf32>
  return
}

// -----

// ODS type constraint: optimizer state is FP32.
func.func @sgd_bf16(%p: tensor<4xbf16>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op operand #0 must be ranked tensor of 32-bit float values, but got 'tensor<4xbf16>'}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) : tensor<4xbf16>
  return
}

// -----

func.func @adamw_beta1(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'lpc.adamw' op beta1 must be in [0, 1), got 1.000000e+00}}
  %0:3 = lpc.adamw %p, %p, %p, %p step(%t : tensor<i64>) lr(%lr) {beta1 = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @adamw_beta2(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'lpc.adamw' op beta2 must be in [0, 1), got -5.000000e-01}}
  %0:3 = lpc.adamw %p, %p, %p, %p step(%t : tensor<i64>) lr(%lr) {beta2 = -0.5 : f64} : tensor<4xf32>
  return
}

// -----

func.func @adamw_eps(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'lpc.adamw' op eps must be positive}}
  %0:3 = lpc.adamw %p, %p, %p, %p step(%t : tensor<i64>) lr(%lr) {eps = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @adamw_weight_decay(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'lpc.adamw' op weight_decay must be >= 0}}
  %0:3 = lpc.adamw %p, %p, %p, %p step(%t : tensor<i64>) lr(%lr) {weight_decay = -0.01 : f64} : tensor<4xf32>
  return
}

// -----

func.func @adamw_weight_decay_nan(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'lpc.adamw' op weight_decay must be >= 0}}
  %0:3 = lpc.adamw %p, %p, %p, %p step(%t : tensor<i64>) lr(%lr) {weight_decay = 0x7FF8000000000000 : f64} : tensor<4xf32>
  return
}

// -----

// ODS type constraint: the step is a 0-d i32, i64 or f32 tensor.
func.func @adamw_step_type(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<1xi64>) {
  // expected-error @+1 {{'lpc.adamw' op operand #4 must be 0D tensor of 32-bit signless integer or 64-bit signless integer or 32-bit float values, but got 'tensor<1xi64>'}}
  %0:3 = lpc.adamw %p, %p, %p, %p step(%t : tensor<1xi64>) lr(%lr) : tensor<4xf32>
  return
}

// -----

func.func @clip_empty() {
  // expected-error @+1 {{'lpc.clip_by_global_norm' op needs at least one gradient}}
  %0 = "lpc.clip_by_global_norm"() <{max_norm = 1.0 : f64}> : () -> tensor<f32>
  return
}

// -----

func.func @clip_max_norm(%g: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.clip_by_global_norm' op max_norm must be positive, got 0.000000e+00}}
  %0:2 = lpc.clip_by_global_norm %g {max_norm = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @lr_schedule_min_above_base(%t: tensor<i64>) {
  // expected-error @+1 {{'lpc.lr_schedule' op needs 0 <= min_lr <= base_lr, got min_lr = 1.000000e-02, base_lr = 1.000000e-03}}
  %0 = lpc.lr_schedule %t cosine {base_lr = 1.0e-3 : f64, min_lr = 1.0e-2 : f64, total_steps = 10 : i64} : tensor<i64>
  return
}

// -----

func.func @lr_schedule_negative_base(%t: tensor<i64>) {
  // expected-error @+1 {{'lpc.lr_schedule' op needs 0 <= min_lr <= base_lr, got min_lr = 0.000000e+00, base_lr = -1.000000e-03}}
  %0 = lpc.lr_schedule %t constant {base_lr = -1.0e-3 : f64} : tensor<i64>
  return
}

// -----

func.func @lr_schedule_nan_base(%t: tensor<i64>) {
  // expected-error @+1 {{'lpc.lr_schedule' op needs 0 <= min_lr <= base_lr, got min_lr = 0.000000e+00, base_lr = nan}}
  %0 = lpc.lr_schedule %t constant {base_lr = 0x7FF8000000000000 : f64} : tensor<i64>
  return
}

// -----

func.func @lr_schedule_negative_steps(%t: tensor<i64>) {
  // expected-error @+1 {{'lpc.lr_schedule' op warmup_steps and total_steps must be >= 0}}
  %0 = lpc.lr_schedule %t constant {base_lr = 1.0e-3 : f64, warmup_steps = -1 : i64} : tensor<i64>
  return
}

// -----

func.func @lr_schedule_negative_total(%t: tensor<i64>) {
  // expected-error @+1 {{'lpc.lr_schedule' op warmup_steps and total_steps must be >= 0}}
  %0 = lpc.lr_schedule %t linear {base_lr = 1.0e-3 : f64, total_steps = -5 : i64} : tensor<i64>
  return
}

// -----

func.func @lr_schedule_decay_without_steps(%t: tensor<i64>) {
  // expected-error @+1 {{'lpc.lr_schedule' op 'linear' decay needs total_steps > warmup_steps, got 10 <= 10}}
  %0 = lpc.lr_schedule %t linear {base_lr = 1.0e-3 : f64, warmup_steps = 10 : i64, total_steps = 10 : i64} : tensor<i64>
  return
}

// -----

func.func @lr_schedule_cosine_default_steps(%t: tensor<i32>) {
  // expected-error @+1 {{'lpc.lr_schedule' op 'cosine' decay needs total_steps > warmup_steps, got 0 <= 0}}
  %0 = lpc.lr_schedule %t cosine {base_lr = 1.0e-3 : f64} : tensor<i32>
  return
}

// -----

// ODS type constraint: the step is an integer.
func.func @lr_schedule_float_step(%t: tensor<f32>) {
  // expected-error @+1 {{'lpc.lr_schedule' op operand #0 must be 0D tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<f32>'}}
  %0 = lpc.lr_schedule %t constant {base_lr = 1.0e-3 : f64} : tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// The precision pin (LpcDialect::verifyOperationAttribute)
//===----------------------------------------------------------------------===//

func.func @pin_unknown_lpc_attribute(%a: tensor<4xf32>) {
  // expected-error @+1 {{unknown lpc attribute 'lpc.precison' (known: lpc.precision, lpc.assigned, lpc.reason, lpc.fp8, lpc.profile_labels, lpc.parallel_*, lpc.serial_body, lpc.independent_columns, lpc.bucket)}}
  %0 = lpc.relu %a {lpc.precison = #lpc.precision<fp32>} : tensor<4xf32>
  return
}

// -----

// The attributes lpc-outline-parallel-loops puts on the bodies it outlines.
// expected-error @+1 {{'lpc.parallel_grain' must be an integer attribute on a function}}
func.func private @body(index, index) attributes {lpc.parallel_body, lpc.parallel_grain = "4"}

// -----

// expected-error @+1 {{'lpc.parallel_noalias' must be an i64 array attribute on a function}}
func.func private @body(index, index) attributes {lpc.parallel_body, lpc.parallel_noalias = [3]}

// -----

func.func @parallel_attr_on_op(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.parallel_body' must be a unit attribute on a function}}
  %0 = lpc.relu %a {lpc.parallel_body} : tensor<4xf32>
  return
}

// -----

func.func @pin_not_precision_attr(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.precision' must be a #lpc.precision<...> attribute, got "fp32"}}
  %0 = lpc.relu %a {lpc.precision = "fp32"} : tensor<4xf32>
  return
}

// -----

func.func @pin_fixed_op(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.precision' cannot pin 'lpc.cast': its precision is fixed by its types}}
  %0 = lpc.cast %a {lpc.precision = #lpc.precision<fp32>} : tensor<4xf32> to tensor<4xbf16>
  return
}

// -----

func.func @pin_param() {
  // expected-error @+1 {{'lpc.precision' cannot pin 'lpc.param': its precision is fixed by its types}}
  %0 = lpc.param "w" zeros {lpc.precision = #lpc.precision<bf16>} : tensor<4xf32>
  return
}

// -----

func.func @pin_non_lpc_op(%a: f32) {
  // expected-error @+1 {{'lpc.precision' applies only to lpc compute ops, not 'arith.addf'}}
  %0 = arith.addf %a, %a {lpc.precision = #lpc.precision<fp16>} : f32
  return
}

// -----

// expected-error @+1 {{'lpc.precision' applies only to lpc compute ops, not 'func.func'}}
func.func @pin_on_function() attributes {lpc.precision = #lpc.precision<bf16>} {
  return
}

// -----

func.func @pin_unknown_precision(%a: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::lpc::Precision to be one of: fp32, fp16, bf16, fp8_e4m3, fp8_e5m2}}
  // expected-error @+1 {{failed to parse Lpc_PrecisionAttr parameter 'value' which is to be a `::mlir::lpc::Precision`}}
  %0 = lpc.relu %a {lpc.precision = #lpc.precision<fp7>} : tensor<4xf32>
  return
}

// -----

func.func @unknown_op(%a: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'lpc.frobnicate' is unknown}}
  %0 = lpc.frobnicate %a : tensor<4xf32>
  return
}

// -----

func.func @unknown_op_generic(%a: tensor<4xf32>) {
  // expected-error @+1 {{unregistered operation 'lpc.frobnicate' found in dialect ('lpc') that does not allow unknown operations}}
  %0 = "lpc.frobnicate"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fp8_stats_format(%a: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.fp8_stats' op format must be fp8_e4m3 or fp8_e5m2, got bf16}}
  %0, %1 = lpc.fp8_stats %a, %s {format = #lpc.precision<bf16>} : tensor<4xf32>
  return
}

// -----

func.func @fp8_stats_scale(%a: tensor<4xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{'lpc.fp8_stats' op operand #1 must be 0D tensor of 32-bit float values}}
  %0:2 = "lpc.fp8_stats"(%a, %s) <{format = #lpc.precision<fp8_e4m3>}> : (tensor<4xf32>, tensor<2xf32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @independent_columns_on_a_relu(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lpc.independent_columns' must be a unit attribute on an scf.for}}
  %0 = lpc.relu %a {lpc.independent_columns} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// lpc.attention, lpc.attention_grad
//===----------------------------------------------------------------------===//

func.func @attention_rank(%q: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.attention' op query must have rank >= 2 ([batch..., Sq, D]), got 'tensor<8xf32>'}}
  %o, %l = lpc.attention %q, %q, %q : tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>, tensor<f32>
  return
}

// -----

func.func @attention_types(%q: tensor<4x8xf32>, %k: tensor<4x8xbf16>) {
  // expected-error @+1 {{'lpc.attention' op query, key and value must have the same element type}}
  %o, %l = lpc.attention %q, %k, %k : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @attention_fp8(%q: tensor<4x8xf8E4M3FN>) {
  // expected-error @+1 {{'lpc.attention' op FP8 attention is not supported}}
  %o, %l = lpc.attention %q, %q, %q : tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN> -> tensor<4x8xf8E4M3FN>, tensor<4xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>) {
  // expected-error @+1 {{'lpc.attention' op query, key and value must have the same leading (batch) dims}}
  %o, %l = lpc.attention %q, %k, %k : tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<4x8xf32>, %k: tensor<4x6xf32>) {
  // expected-error @+1 {{'lpc.attention' op query and key must have the same last dim (D)}}
  %o, %l = lpc.attention %q, %k, %k : tensor<4x8xf32>, tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>, tensor<4xf32>
  return
}

// -----

func.func @attention_keys(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<6x8xf32>) {
  // expected-error @+1 {{'lpc.attention' op key and value must have the same number of keys (dim 0)}}
  %o, %l = lpc.attention %q, %k, %v : tensor<4x8xf32>, tensor<5x8xf32>, tensor<6x8xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<4x8xf32>, %v: tensor<4x3xf32>) {
  // expected-error @+1 {{'lpc.attention' op result must be 'tensor<4x3xf32>' ([batch..., Sq, Dv] of query's type), got 'tensor<4x8xf32>'}}
  %o, %l = lpc.attention %q, %q, %v : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @attention_lse(%q: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.attention' op lse must be 'tensor<4xf32>' ([batch..., Sq]), got 'tensor<8xf32>'}}
  %o, %l = lpc.attention %q, %q, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<2x4x8xf32>, %m: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'lpc.attention' op mask must be [Sq, Skv] = [4, 4] (shared by every batch and head), got 'tensor<2x4x4xf32>'}}
  %o, %l = lpc.attention %q, %q, %q mask %m : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.attention' op scale must be finite}}
  %o, %l = lpc.attention %q, %q, %q {scale = 0x7FF0000000000000 : f64} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @attention_grad_type(%g: tensor<4x8xbf16>, %q: tensor<4x8xf32>, %l: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.attention_grad' op grad must have the type of result, got 'tensor<4x8xbf16>' and 'tensor<4x8xf32>'}}
  %dq, %dk, %dv = lpc.attention_grad %g, %q, %q, %q, %q, %l : tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

// lpc.all_reduce

func.func @all_reduce_comm_precision(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.all_reduce' op comm_precision bf16 needs kind mean (sum communicates in fp32 only)}}
  %0 = lpc.all_reduce %g sum {comm_precision = #lpc.precision<bf16>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @all_reduce_type(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.all_reduce' op mean gives the input's type 'tensor<4x8xf32>', got 'tensor<8x4xf32>'}}
  %0 = lpc.all_reduce %g mean : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @all_reduce_any_nonfinite_type(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.all_reduce' op any_nonfinite gives a tensor<i1>, got 'tensor<4x8xf32>'}}
  %0 = lpc.all_reduce %g any_nonfinite : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// A bf16 input (the GPU's native-wire form) names its own type as the wire.
func.func @all_reduce_bf16(%g: tensor<4x8xbf16>) {
  // expected-error @+1 {{'lpc.all_reduce' op a 'bf16' input travels as itself: comm_precision must be bf16, not fp32}}
  %0 = lpc.all_reduce %g mean : tensor<4x8xbf16> -> tensor<4x8xbf16>
  return
}

// -----

func.func @all_reduce_bf16_as_fp16(%g: tensor<4x8xbf16>) {
  // expected-error @+1 {{'lpc.all_reduce' op a 'bf16' input travels as itself: comm_precision must be bf16, not fp16}}
  %0 = lpc.all_reduce %g mean {comm_precision = #lpc.precision<fp16>} : tensor<4x8xbf16> -> tensor<4x8xbf16>
  return
}

// -----

func.func @all_reduce_bf16_to_f32(%g: tensor<4x8xbf16>) {
  // expected-error @+1 {{'lpc.all_reduce' op the result 'tensor<4x8xf32>' must have the input's element type 'bf16'}}
  %0 = lpc.all_reduce %g mean {comm_precision = #lpc.precision<bf16>} : tensor<4x8xbf16> -> tensor<4x8xf32>
  return
}

// -----

func.func @all_reduce_fp8(%g: tensor<4x8xf8E4M3FN>) {
  // expected-error @+1 {{'lpc.all_reduce' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = lpc.all_reduce %g mean : tensor<4x8xf8E4M3FN> -> tensor<4x8xf8E4M3FN>
  return
}

// -----

func.func @any_nonfinite_bf16(%g: tensor<4x8xbf16>) {
  // expected-error @+1 {{'lpc.all_reduce' op any_nonfinite tests an f32 input, got 'tensor<4x8xbf16>'}}
  %0 = lpc.all_reduce %g any_nonfinite : tensor<4x8xbf16> -> tensor<i1>
  return
}

// -----

func.func @reduce_scatter_f16(%g: tensor<4x8xf16>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op a 'f16' input travels as itself: comm_precision must be fp16, not bf16}}
  %0 = lpc.reduce_scatter %g mean ranks(2) {comm_precision = #lpc.precision<bf16>} : tensor<4x8xf16> -> tensor<2x8xf16>
  return
}

// -----

// lpc.reduce_scatter, lpc.all_gather

func.func @reduce_scatter_any_nonfinite(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op kind must be sum, mean or max (any_nonfinite is lpc.all_reduce's)}}
  %0 = lpc.reduce_scatter %g any_nonfinite ranks(2) : tensor<4x8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @reduce_scatter_comm_precision(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op comm_precision fp8_e4m3 needs kind mean (max communicates in fp32 only)}}
  %0 = lpc.reduce_scatter %g max ranks(2) {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<4x8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @reduce_scatter_blocks(%g: tensor<5x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op dimension 0 of the input (5) must be 2 (ranks) times that of the result (2)}}
  %0 = lpc.reduce_scatter %g sum ranks(2) : tensor<5x8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @reduce_scatter_huge_ranks(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op dimension 0 of the input (4) must be 9223372036854775807 (ranks) times that of the result (4611686018427387904)}}
  %0 = lpc.reduce_scatter %g sum ranks(9223372036854775807) : tensor<4x8xf32> -> tensor<4611686018427387904x8xf32>
  return
}

// -----

func.func @reduce_scatter_scalar(%g: tensor<f32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op needs a input of rank >= 1 (its dimension 0 is split between the ranks), got 'tensor<f32>'}}
  %0 = lpc.reduce_scatter %g sum ranks(1) : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @reduce_scatter_dims(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op the result 'tensor<2x7xf32>' must match the input 'tensor<4x8xf32>' in dimension 1}}
  %0 = lpc.reduce_scatter %g sum ranks(2) : tensor<4x8xf32> -> tensor<2x7xf32>
  return
}

// -----

func.func @reduce_scatter_zero_ranks(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op attribute 'ranks' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %0 = lpc.reduce_scatter %g sum ranks(0) : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @all_gather_blocks(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.all_gather' op dimension 0 of the result (12) must be 2 (ranks) times that of the input (4)}}
  %0 = lpc.all_gather %g ranks(2) : tensor<4x8xf32> -> tensor<12x8xf32>
  return
}

// -----

func.func @all_gather_rank(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.all_gather' op the input 'tensor<4x8xf32>' must have the rank of the result 'tensor<8x8x1xf32>'}}
  %0 = lpc.all_gather %g ranks(2) : tensor<4x8xf32> -> tensor<8x8x1xf32>
  return
}

// -----

func.func @all_gather_fp8_wire(%g: tensor<4x8xf8E4M3FN>) {
  // expected-error @+1 {{'lpc.all_gather' op a 'f8E4M3FN' input travels as itself: comm_precision must be fp8_e4m3, not fp8_e5m2}}
  %0 = lpc.all_gather %g ranks(2) {comm_precision = #lpc.precision<fp8_e5m2>} : tensor<4x8xf8E4M3FN> -> tensor<8x8xf8E4M3FN>
  return
}

// -----

func.func @all_reduce_fp8_input(%g: tensor<8xf8E4M3FN>) {
  // expected-error @+1 {{'lpc.all_reduce' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = lpc.all_reduce %g mean {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<8xf8E4M3FN> -> tensor<8xf8E4M3FN>
  return
}

// -----

func.func @all_to_all_blocks(%q: tensor<5x8xf8E4M3FN>) {
  // expected-error @+1 {{'lpc.all_to_all' op dimension 0 of the input (5) must be a multiple of 2 (ranks)}}
  %0 = lpc.all_to_all %q ranks(2) : tensor<5x8xf8E4M3FN>
  return
}

// -----

func.func @all_to_all_scalar(%q: tensor<f32>) {
  // expected-error @+1 {{'lpc.all_to_all' op needs an input of rank >= 1 (its dimension 0 is split between the ranks), got 'tensor<f32>'}}
  %0 = lpc.all_to_all %q ranks(1) : tensor<f32>
  return
}

// -----

func.func @all_to_all_ranks(%q: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.all_to_all' op attribute 'ranks' failed to satisfy constraint}}
  %0 = lpc.all_to_all %q ranks(0) : tensor<4xf32>
  return
}

// -----

func.func @wire_scale_format(%a: tensor<f32>) {
  // expected-error @+1 {{'lpc.wire_scale' op format must be fp8_e4m3 or fp8_e5m2 (the other wire formats need no scale), got bf16}}
  %0 = lpc.wire_scale %a {format = #lpc.precision<bf16>}
  return
}

// -----

func.func @shard_blocks(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.shard' op dimension 0 of the input (4) must be 3 (ranks) times that of the result (1)}}
  %0 = lpc.shard %g ranks(3) : tensor<4x8xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @shard_dims(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.shard' op the result 'tensor<2x4xf32>' must match the input 'tensor<4x8xf32>' in dimension 1}}
  %0 = lpc.shard %g ranks(2) : tensor<4x8xf32> -> tensor<2x4xf32>
  return
}

// -----

// lpc.embedding / lpc.embedding_grad padding_idx

func.func @embedding_padding_idx(%w: tensor<4x8xf32>, %ids: tensor<2xi32>) {
  // expected-error @+1 {{'lpc.embedding' op padding_idx 4 is not a row of the 4-row table}}
  %0 = lpc.embedding %w, %ids {padding_idx = 4 : i64} : tensor<4x8xf32>, tensor<2xi32> -> tensor<2x8xf32>
  return
}

// -----

func.func @embedding_grad_padding_idx(%g: tensor<2x8xf32>, %ids: tensor<2xi32>) {
  // expected-error @+1 {{'lpc.embedding_grad' op padding_idx 9 is not a row of the 4-row table}}
  %0 = lpc.embedding_grad %g, %ids {padding_idx = 9 : i64} : tensor<2x8xf32>, tensor<2xi32> -> tensor<4x8xf32>
  return
}

// -----

func.func @embedding_negative_padding_idx(%w: tensor<4x8xf32>, %ids: tensor<2xi32>) {
  // expected-error @+1 {{'lpc.embedding' op attribute 'padding_idx' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = lpc.embedding %w, %ids {padding_idx = -1 : i64} : tensor<4x8xf32>, tensor<2xi32> -> tensor<2x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// lpc.grouped_matmul, lpc.grouped_matmul_weight_grad
//===----------------------------------------------------------------------===//

func.func @grouped_lhs_rank(%x: tensor<2x6x8xf32>, %w: tensor<3x8x5xf32>, %g: tensor<6xi32>) {
  // expected-error @+1 {{'lpc.grouped_matmul' op lhs must be [rows, K], got 'tensor<2x6x8xf32>'}}
  %y = lpc.grouped_matmul %x, %w, %g : tensor<2x6x8xf32>, tensor<3x8x5xf32>, tensor<6xi32> -> tensor<6x5xf32>
  return
}

// -----

func.func @grouped_groups(%x: tensor<6x8xf32>, %w: tensor<3x8x5xf32>, %g: tensor<5xi32>) {
  // expected-error @+1 {{'lpc.grouped_matmul' op groups must be [6] (one group per row of lhs), got 'tensor<5xi32>'}}
  %y = lpc.grouped_matmul %x, %w, %g : tensor<6x8xf32>, tensor<3x8x5xf32>, tensor<5xi32> -> tensor<6x5xf32>
  return
}

// -----

func.func @grouped_groups_type(%x: tensor<6x8xf32>, %w: tensor<3x8x5xf32>, %g: tensor<6xi64>) {
  // expected-error @+1 {{'lpc.grouped_matmul' op operand #2 must be ranked tensor of 32-bit signless integer values, but got 'tensor<6xi64>'}}
  %y = lpc.grouped_matmul %x, %w, %g : tensor<6x8xf32>, tensor<3x8x5xf32>, tensor<6xi64> -> tensor<6x5xf32>
  return
}

// -----

func.func @grouped_rhs_rank(%x: tensor<6x8xf32>, %w: tensor<8x5xf32>, %g: tensor<6xi32>) {
  // expected-error @+1 {{'lpc.grouped_matmul' op rhs must be [groups, K, N], got 'tensor<8x5xf32>'}}
  %y = lpc.grouped_matmul %x, %w, %g : tensor<6x8xf32>, tensor<8x5xf32>, tensor<6xi32> -> tensor<6x5xf32>
  return
}

// -----

func.func @grouped_inner(%x: tensor<6x8xf32>, %w: tensor<3x8x5xf32>, %g: tensor<6xi32>) {
  // expected-error @+1 {{'lpc.grouped_matmul' op inner dimensions differ: lhs 'tensor<6x8xf32>' has K = 8, rhs 'tensor<3x8x5xf32>' has K = 5}}
  %y = lpc.grouped_matmul %x, %w, %g {transpose_b} : tensor<6x8xf32>, tensor<3x8x5xf32>, tensor<6xi32> -> tensor<6x8xf32>
  return
}

// -----

func.func @grouped_result(%x: tensor<6x8xf32>, %w: tensor<3x8x5xf32>, %g: tensor<6xi32>) {
  // expected-error @+1 {{'lpc.grouped_matmul' op result must be 'tensor<6x5xf32>', got 'tensor<6x4xf32>'}}
  %y = lpc.grouped_matmul %x, %w, %g : tensor<6x8xf32>, tensor<3x8x5xf32>, tensor<6xi32> -> tensor<6x4xf32>
  return
}

// -----

func.func @grouped_fp8(%x: tensor<6x8xf8E4M3FN>, %w: tensor<3x8x5xf8E4M3FN>, %g: tensor<6xi32>) {
  // expected-error @+1 {{'lpc.grouped_matmul' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %y = lpc.grouped_matmul %x, %w, %g : tensor<6x8xf8E4M3FN>, tensor<3x8x5xf8E4M3FN>, tensor<6xi32> -> tensor<6x5xf8E4M3FN>
  return
}

// -----

func.func @grouped_wgrad_rhs(%x: tensor<6x8xf32>, %dy: tensor<5x5xf32>, %g: tensor<6xi32>) {
  // expected-error @+1 {{'lpc.grouped_matmul_weight_grad' op rhs must be [6, N] (a row per row of lhs), got 'tensor<5x5xf32>'}}
  %dw = lpc.grouped_matmul_weight_grad %x, %dy, %g : tensor<6x8xf32>, tensor<5x5xf32>, tensor<6xi32> -> tensor<3x8x5xf32>
  return
}

// -----

func.func @grouped_wgrad_result(%x: tensor<6x8xf32>, %dy: tensor<6x5xf32>, %g: tensor<6xi32>) {
  // expected-error @+1 {{'lpc.grouped_matmul_weight_grad' op result must be [groups, 8, 5], got 'tensor<3x5x8xf32>'}}
  %dw = lpc.grouped_matmul_weight_grad %x, %dy, %g : tensor<6x8xf32>, tensor<6x5xf32>, tensor<6xi32> -> tensor<3x5x8xf32>
  return
}

// -----

func.func @grouped_wgrad_types(%x: tensor<6x8xbf16>, %dy: tensor<6x5xf32>, %g: tensor<6xi32>) {
  // expected-error @+1 {{'lpc.grouped_matmul_weight_grad' op failed to verify that all of {lhs, rhs, result} have same element type}}
  %dw = lpc.grouped_matmul_weight_grad %x, %dy, %g : tensor<6x8xbf16>, tensor<6x5xf32>, tensor<6xi32> -> tensor<3x8x5xbf16>
  return
}
