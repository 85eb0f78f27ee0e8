// Folders and canonicalization patterns of LpcFolds.cpp. Every rewrite must
// be exact (bit-identical for every input); the negative cases check that
// rounding rewrites do not happen.
// RUN: lpc-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @neg_neg(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4xf32>
func.func @neg_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.neg %x : tensor<4xf32>
  %1 = lpc.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Three negations leave one.
// CHECK-LABEL: func.func @neg_neg_neg(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xbf16>)
// CHECK-NEXT: %[[N:.*]] = lpc.neg %[[X]] : tensor<4xbf16>
// CHECK-NEXT: return %[[N]] : tensor<4xbf16>
func.func @neg_neg_neg(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = lpc.neg %x : tensor<4xbf16>
  %1 = lpc.neg %0 : tensor<4xbf16>
  %2 = lpc.neg %1 : tensor<4xbf16>
  return %2 : tensor<4xbf16>
}

// -----

// A single negation stays.
// CHECK-LABEL: func.func @neg_alone(
// CHECK-NEXT: %[[N:.*]] = lpc.neg
// CHECK-NEXT: return %[[N]]
func.func @neg_alone(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @pow_one(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4xf32>
func.func @pow_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.pow %x {exponent = 1.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// pow by 2 (or by 1 + tiny) is not the identity.
// CHECK-LABEL: func.func @pow_not_one(
// CHECK-NEXT: %[[P:.*]] = lpc.pow %{{.*}} {exponent = 2.000000e+00 : f64} : tensor<4xf32>
// CHECK-NEXT: %[[Q:.*]] = lpc.pow %[[P]] {exponent = 1.0000000000000002 : f64} : tensor<4xf32>
// CHECK-NEXT: return %[[Q]]
func.func @pow_not_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.pow %x {exponent = 2.0 : f64} : tensor<4xf32>
  %1 = lpc.pow %0 {exponent = 1.0000000000000002 : f64} : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @scale_one(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3xf16>)
// CHECK-NEXT: return %[[X]] : tensor<2x3xf16>
func.func @scale_one(%x: tensor<2x3xf16>) -> tensor<2x3xf16> {
  %0 = lpc.scale %x {factor = 1.0 : f64} : tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// scale by -1 is exactly a negation.
// CHECK-LABEL: func.func @scale_minus_one(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[N:.*]] = lpc.neg %[[X]] : tensor<4xf32>
// CHECK-NEXT: return %[[N]] : tensor<4xf32>
// CHECK-NOT: lpc.scale
func.func @scale_minus_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.scale %x {factor = -1.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// scale(-1) then neg: the new neg folds with the existing one.
// CHECK-LABEL: func.func @scale_minus_one_then_neg(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4xf32>
func.func @scale_minus_one_then_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.scale %x {factor = -1.0 : f64} : tensor<4xf32>
  %1 = lpc.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Two scales by -1 cancel (through neg(neg x)).
// CHECK-LABEL: func.func @scale_minus_one_twice(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf8E4M3FN>)
// CHECK-NEXT: return %[[X]] : tensor<4xf8E4M3FN>
func.func @scale_minus_one_twice(%x: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %0 = lpc.scale %x {factor = -1.0 : f64} : tensor<4xf8E4M3FN>
  %1 = lpc.scale %0 {factor = -1.0 : f64} : tensor<4xf8E4M3FN>
  return %1 : tensor<4xf8E4M3FN>
}

// -----

// scale by 2 then by 3 must NOT merge into scale by 6: x * 2 * 3 and x * 6
// round differently (and x * 2 may overflow where x * 6 does not, or the
// other way round in low precision).
// CHECK-LABEL: func.func @scale_scale_no_merge(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xbf16>)
// CHECK-NEXT: %[[A:.*]] = lpc.scale %[[X]] {factor = 2.000000e+00 : f64} : tensor<4xbf16>
// CHECK-NEXT: %[[B:.*]] = lpc.scale %[[A]] {factor = 3.000000e+00 : f64} : tensor<4xbf16>
// CHECK-NEXT: return %[[B]]
// CHECK-NOT: 6.000000e+00
func.func @scale_scale_no_merge(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = lpc.scale %x {factor = 2.0 : f64} : tensor<4xbf16>
  %1 = lpc.scale %0 {factor = 3.0 : f64} : tensor<4xbf16>
  return %1 : tensor<4xbf16>
}

// -----

// scale by -2 is not a negation.
// CHECK-LABEL: func.func @scale_minus_two(
// CHECK-NEXT: %[[A:.*]] = lpc.scale %{{.*}} {factor = -2.000000e+00 : f64} : tensor<4xf32>
// CHECK-NEXT: return %[[A]]
// CHECK-NOT: lpc.neg
func.func @scale_minus_two(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.scale %x {factor = -2.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// scale by 0 is not folded to zeros: 0 * inf and 0 * NaN are NaN, and
// 0 * -x is -0.
// CHECK-LABEL: func.func @scale_zero(
// CHECK-NEXT: %[[A:.*]] = lpc.scale %{{.*}} {factor = 0.000000e+00 : f64} : tensor<4xf32>
// CHECK-NEXT: return %[[A]]
// CHECK-NOT: lpc.constant
func.func @scale_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.scale %x {factor = 0.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @dropout_rate_zero(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4x8xf32>
func.func @dropout_rate_zero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lpc.dropout %x {rate = 0.0 : f64, seed = 7 : i64} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @dropout_rate_nonzero(
// CHECK-NEXT: %[[D:.*]] = lpc.dropout %{{.*}} {rate = 1.000000e-01 : f64, seed = 7 : i64} : tensor<4x8xf32>
// CHECK-NEXT: return %[[D]]
func.func @dropout_rate_nonzero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lpc.dropout %x {rate = 0.1 : f64, seed = 7 : i64} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_same_type(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4x8xf32>
func.func @broadcast_same_type(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lpc.broadcast %x dims = [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A broadcast that changes the shape stays, even with size-1 dims.
// CHECK-LABEL: func.func @broadcast_real(
// CHECK-NEXT: %[[A:.*]] = lpc.broadcast %{{.*}} dims = [0, 1] : tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[B:.*]] = lpc.broadcast %{{.*}} dims = [1] : tensor<8xf32> -> tensor<1x8xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @broadcast_real(%x: tensor<1x8xf32>, %y: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<1x8xf32>) {
  %0 = lpc.broadcast %x dims = [0, 1] : tensor<1x8xf32> -> tensor<4x8xf32>
  %1 = lpc.broadcast %y dims = [1] : tensor<8xf32> -> tensor<1x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<1x8xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_same_type(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3xi32>)
// CHECK-NEXT: return %[[X]] : tensor<2x3xi32>
func.func @reshape_same_type(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = lpc.reshape %x : tensor<2x3xi32> -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// reshape(reshape(x)) is one reshape from x.
// CHECK-LABEL: func.func @reshape_reshape(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = lpc.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]] : tensor<4x6xf32>
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = lpc.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = lpc.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// A chain of reshapes collapses into one.
// CHECK-LABEL: func.func @reshape_chain(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = lpc.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<8x3xf32>
// CHECK-NEXT: return %[[R]] : tensor<8x3xf32>
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<8x3xf32> {
  %0 = lpc.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = lpc.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  %2 = lpc.reshape %1 : tensor<4x6xf32> -> tensor<8x3xf32>
  return %2 : tensor<8x3xf32>
}

// -----

// reshape there and back is x.
// CHECK-LABEL: func.func @reshape_roundtrip(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]] : tensor<2x3xf32>
func.func @reshape_roundtrip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = lpc.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = lpc.reshape %0 : tensor<6xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// The inner reshape stays when it has another use.
// CHECK-LABEL: func.func @reshape_reshape_multi_use(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3xf32>)
// CHECK-DAG: %[[A:.*]] = lpc.reshape %[[X]] : tensor<2x3xf32> -> tensor<6xf32>
// CHECK-DAG: %[[B:.*]] = lpc.reshape %[[X]] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK: return %[[A]], %[[B]]
func.func @reshape_reshape_multi_use(%x: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {
  %0 = lpc.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = lpc.reshape %0 : tensor<6xf32> -> tensor<3x2xf32>
  return %0, %1 : tensor<6xf32>, tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_identity(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]] : tensor<2x3x4xf32>
func.func @transpose_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = lpc.transpose %x [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// A non-identity permutation stays even when the shape does not change.
// CHECK-LABEL: func.func @transpose_square(
// CHECK-NEXT: %[[T:.*]] = lpc.transpose %{{.*}} [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_square(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = lpc.transpose %x [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// transpose(transpose(x)) composes: mid dim i = x dim inner[i], result dim
// i = mid dim perm[i] = x dim inner[perm[i]]; [1, 2, 0] then [1, 0, 2] is
// [2, 1, 0].
// CHECK-LABEL: func.func @transpose_transpose(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = lpc.transpose %[[X]] [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK-NEXT: return %[[T]] : tensor<4x3x2xf32>
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = lpc.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = lpc.transpose %0 [1, 0, 2] : tensor<3x4x2xf32> -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}

// -----

// Composition order matters: [1, 2, 0] then [2, 0, 1] is the identity, and
// [1, 2, 0] twice is [2, 0, 1].
// CHECK-LABEL: func.func @transpose_inverse(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = lpc.transpose %[[X]] [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: return %[[X]], %[[T]] : tensor<2x3x4xf32>, tensor<4x2x3xf32>
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>) {
  %0 = lpc.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = lpc.transpose %0 [2, 0, 1] : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  %2 = lpc.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %3 = lpc.transpose %2 [1, 2, 0] : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  return %1, %3 : tensor<2x3x4xf32>, tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @slice_full(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4x8xf32>
func.func @slice_full(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lpc.slice %x start = [0, 0] limit = [4, 8] step = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Partial slices stay, and so does a strided one over the whole range.
// CHECK-LABEL: func.func @slice_partial(
// CHECK-NEXT: %[[A:.*]] = lpc.slice %{{.*}} start = [0, 0] limit = [4, 7] step = [1, 1] : tensor<4x8xf32> -> tensor<4x7xf32>
// CHECK-NEXT: %[[B:.*]] = lpc.slice %{{.*}} start = [1, 0] limit = [4, 8] step = [1, 1] : tensor<4x8xf32> -> tensor<3x8xf32>
// CHECK-NEXT: %[[C:.*]] = lpc.slice %{{.*}} start = [0, 0] limit = [4, 8] step = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
func.func @slice_partial(%x: tensor<4x8xf32>) -> (tensor<4x7xf32>, tensor<3x8xf32>, tensor<4x4xf32>) {
  %0 = lpc.slice %x start = [0, 0] limit = [4, 7] step = [1, 1] : tensor<4x8xf32> -> tensor<4x7xf32>
  %1 = lpc.slice %x start = [1, 0] limit = [4, 8] step = [1, 1] : tensor<4x8xf32> -> tensor<3x8xf32>
  %2 = lpc.slice %x start = [0, 0] limit = [4, 8] step = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0, %1, %2 : tensor<4x7xf32>, tensor<3x8xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @concat_single(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4x8xf32>
func.func @concat_single(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lpc.concat %x axis = 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @concat_two(
// CHECK-NEXT: %[[C:.*]] = lpc.concat %{{.*}}, %{{.*}} axis = 0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: return %[[C]]
func.func @concat_two(%x: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %0 = lpc.concat %x, %x axis = 0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// cast to the same type is the identity.
// CHECK-LABEL: func.func @cast_same_type(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xbf16>)
// CHECK-NEXT: return %[[X]] : tensor<4xbf16>
func.func @cast_same_type(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = lpc.cast %x : tensor<4xbf16> to tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// f32 -> bf16 -> f32 must stay as two casts: the first one rounds.
// CHECK-LABEL: func.func @cast_f32_bf16_f32(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[A:.*]] = lpc.cast %[[X]] : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT: %[[B:.*]] = lpc.cast %[[A]] : tensor<4xbf16> to tensor<4xf32>
// CHECK-NEXT: return %[[B]] : tensor<4xf32>
func.func @cast_f32_bf16_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.cast %x : tensor<4xf32> to tensor<4xbf16>
  %1 = lpc.cast %0 : tensor<4xbf16> to tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// f32 -> f16 -> bf16 stays: both casts round (and f16 overflows earlier).
// CHECK-LABEL: func.func @cast_f32_f16_bf16(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[A:.*]] = lpc.cast %[[X]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: %[[B:.*]] = lpc.cast %[[A]] : tensor<4xf16> to tensor<4xbf16>
// CHECK-NEXT: return %[[B]]
func.func @cast_f32_f16_bf16(%x: tensor<4xf32>) -> tensor<4xbf16> {
  %0 = lpc.cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = lpc.cast %0 : tensor<4xf16> to tensor<4xbf16>
  return %1 : tensor<4xbf16>
}

// -----

// bf16 -> f32 is exact, so bf16 -> f32 -> f16 is one cast bf16 -> f16.
// CHECK-LABEL: func.func @cast_bf16_f32_f16(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xbf16>)
// CHECK-NEXT: %[[A:.*]] = lpc.cast %[[X]] : tensor<4xbf16> to tensor<4xf16>
// CHECK-NEXT: return %[[A]] : tensor<4xf16>
// CHECK-NOT: tensor<4xf32>
func.func @cast_bf16_f32_f16(%x: tensor<4xbf16>) -> tensor<4xf16> {
  %0 = lpc.cast %x : tensor<4xbf16> to tensor<4xf32>
  %1 = lpc.cast %0 : tensor<4xf32> to tensor<4xf16>
  return %1 : tensor<4xf16>
}

// -----

// Widening there and back is x.
// CHECK-LABEL: func.func @cast_widen_narrow(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf16>)
// CHECK-NEXT: return %[[X]] : tensor<4xf16>
func.func @cast_widen_narrow(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = lpc.cast %x : tensor<4xf16> to tensor<4xf32>
  %1 = lpc.cast %0 : tensor<4xf32> to tensor<4xf16>
  return %1 : tensor<4xf16>
}

// -----

// f8E5M2 -> f32 is exact (inf and NaN included), so the chain becomes one
// cast, which keeps the outer cast's saturate.
// CHECK-LABEL: func.func @cast_e5m2_f32_e4m3(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf8E5M2>)
// CHECK-NEXT: %[[A:.*]] = lpc.cast %[[X]] : tensor<4xf8E5M2> to tensor<4xf8E4M3FN>
// CHECK-NEXT: %[[B:.*]] = lpc.cast %[[X]] {saturate} : tensor<4xf8E5M2> to tensor<4xf8E4M3FN>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @cast_e5m2_f32_e4m3(%x: tensor<4xf8E5M2>) -> (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) {
  %0 = lpc.cast %x : tensor<4xf8E5M2> to tensor<4xf32>
  %1 = lpc.cast %0 : tensor<4xf32> to tensor<4xf8E4M3FN>
  %2 = lpc.cast %x : tensor<4xf8E5M2> to tensor<4xf32>
  %3 = lpc.cast %2 {saturate} : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %1, %3 : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>
}

// -----

// f8E4M3FN -> bf16 and f8E5M2 -> f16 are exact.
// CHECK-LABEL: func.func @cast_fp8_exact(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf8E4M3FN>, %[[Y:[^:]+]]: tensor<4xf8E5M2>)
// CHECK-NEXT: %[[A:.*]] = lpc.cast %[[X]] : tensor<4xf8E4M3FN> to tensor<4xf32>
// CHECK-NEXT: return %[[X]], %[[A]], %[[Y]]
func.func @cast_fp8_exact(%x: tensor<4xf8E4M3FN>, %y: tensor<4xf8E5M2>) -> (tensor<4xf8E4M3FN>, tensor<4xf32>, tensor<4xf8E5M2>) {
  %0 = lpc.cast %x : tensor<4xf8E4M3FN> to tensor<4xbf16>
  %1 = lpc.cast %0 : tensor<4xbf16> to tensor<4xf8E4M3FN>
  %2 = lpc.cast %x : tensor<4xf8E4M3FN> to tensor<4xbf16>
  %3 = lpc.cast %2 : tensor<4xbf16> to tensor<4xf32>
  %4 = lpc.cast %y : tensor<4xf8E5M2> to tensor<4xf16>
  %5 = lpc.cast %4 : tensor<4xf16> to tensor<4xf8E5M2>
  return %1, %3, %5 : tensor<4xf8E4M3FN>, tensor<4xf32>, tensor<4xf8E5M2>
}

// -----

// A cast into f8E4M3FN (no inf) is never exact, even from an fp8 type
// whose finite values it holds: inf from f8E5M2 would become NaN. Nor is
// f8E4M3FN -> f8E5M2 exact (E5M2 has one mantissa bit fewer).
// CHECK-LABEL: func.func @cast_fp8_not_exact(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf8E5M2>, %[[Y:[^:]+]]: tensor<4xf8E4M3FN>)
// CHECK-NEXT: %[[A:.*]] = lpc.cast %[[X]] : tensor<4xf8E5M2> to tensor<4xf8E4M3FN>
// CHECK-NEXT: %[[B:.*]] = lpc.cast %[[A]] : tensor<4xf8E4M3FN> to tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = lpc.cast %[[Y]] : tensor<4xf8E4M3FN> to tensor<4xf8E5M2>
// CHECK-NEXT: %[[D:.*]] = lpc.cast %[[C]] : tensor<4xf8E5M2> to tensor<4xf8E4M3FN>
// CHECK-NEXT: return %[[B]], %[[D]]
func.func @cast_fp8_not_exact(%x: tensor<4xf8E5M2>, %y: tensor<4xf8E4M3FN>) -> (tensor<4xf32>, tensor<4xf8E4M3FN>) {
  %0 = lpc.cast %x : tensor<4xf8E5M2> to tensor<4xf8E4M3FN>
  %1 = lpc.cast %0 : tensor<4xf8E4M3FN> to tensor<4xf32>
  %2 = lpc.cast %y : tensor<4xf8E4M3FN> to tensor<4xf8E5M2>
  %3 = lpc.cast %2 : tensor<4xf8E5M2> to tensor<4xf8E4M3FN>
  return %1, %3 : tensor<4xf32>, tensor<4xf8E4M3FN>
}

// -----

// A saturating narrowing cast followed by a widening one stays: the first
// cast rounds and clamps.
// CHECK-LABEL: func.func @cast_saturate_roundtrip(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[A:.*]] = lpc.cast %[[X]] {saturate} : tensor<4xf32> to tensor<4xf8E4M3FN>
// CHECK-NEXT: %[[B:.*]] = lpc.cast %[[A]] : tensor<4xf8E4M3FN> to tensor<4xf32>
// CHECK-NEXT: return %[[B]]
func.func @cast_saturate_roundtrip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.cast %x {saturate} : tensor<4xf32> to tensor<4xf8E4M3FN>
  %1 = lpc.cast %0 : tensor<4xf8E4M3FN> to tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A chain of exact widenings becomes one cast.
// CHECK-LABEL: func.func @cast_chain(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf8E5M2>)
// CHECK-NEXT: %[[A:.*]] = lpc.cast %[[X]] : tensor<4xf8E5M2> to tensor<4xbf16>
// CHECK-NEXT: return %[[A]]
func.func @cast_chain(%x: tensor<4xf8E5M2>) -> tensor<4xbf16> {
  %0 = lpc.cast %x : tensor<4xf8E5M2> to tensor<4xf16>
  %1 = lpc.cast %0 : tensor<4xf16> to tensor<4xf32>
  %2 = lpc.cast %1 : tensor<4xf32> to tensor<4xbf16>
  return %2 : tensor<4xbf16>
}

// -----

// The inner cast stays when it has another use; the outer one still reads x.
// CHECK-LABEL: func.func @cast_multi_use(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xbf16>)
// CHECK-DAG: %[[A:.*]] = lpc.cast %[[X]] : tensor<4xbf16> to tensor<4xf32>
// CHECK-DAG: %[[B:.*]] = lpc.cast %[[X]] : tensor<4xbf16> to tensor<4xf16>
// CHECK: return %[[A]], %[[B]]
func.func @cast_multi_use(%x: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xf16>) {
  %0 = lpc.cast %x : tensor<4xbf16> to tensor<4xf32>
  %1 = lpc.cast %0 : tensor<4xf32> to tensor<4xf16>
  return %0, %1 : tensor<4xf32>, tensor<4xf16>
}

// -----

// Unused pure ops are erased; constants stay when used.
// CHECK-LABEL: func.func @dead_code(
// CHECK-NEXT: %[[C:.*]] = lpc.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT: return %[[C]]
func.func @dead_code(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.exp %x : tensor<4xf32>
  %1 = lpc.constant dense<1.0> : tensor<4xf32>
  %2 = lpc.constant dense<2.0> : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Params and inputs are not pure: they stay even when unused.
// CHECK-LABEL: func.func @params_stay(
// CHECK-NEXT: lpc.param "w" zeros : tensor<4xf32>
// CHECK-NEXT: lpc.input "x" features : tensor<2x4xf32>
// CHECK-NEXT: return
func.func @params_stay() {
  %0 = lpc.param "w" zeros : tensor<4xf32>
  %1 = lpc.input "x" features : tensor<2x4xf32>
  return
}

// -----

// Folds keep the precision pin of the surviving op.
// CHECK-LABEL: func.func @fold_keeps_pin(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = lpc.transpose %[[X]] [2, 1, 0] {lpc.precision = #lpc.precision<bf16>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK-NEXT: return %[[T]]
func.func @fold_keeps_pin(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = lpc.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = lpc.transpose %0 [1, 0, 2] {lpc.precision = #lpc.precision<bf16>} : tensor<3x4x2xf32> -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}

// -----

// scale(x, -1) -> neg(x) keeps the user's precision pin.
// CHECK-LABEL: func.func @scale_minus_one_keeps_pin(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[N:.*]] = lpc.neg %[[X]] {lpc.precision = #lpc.precision<fp32>} : tensor<4xf32>
// CHECK-NEXT: return %[[N]]
func.func @scale_minus_one_keeps_pin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.scale %x {factor = -1.0 : f64, lpc.precision = #lpc.precision<fp32>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// cast(reshape(x)) -> reshape(cast(x)) for a narrowing cast, so that CSE
// keeps one cast where x is also cast directly (the backward's weight-gradient
// GEMMs reshape saved activations that the forward already cast). The
// reshape's assigned precision follows its new element type; saturate stays
// on the cast. (The two casts of x are left to CSE.)
// CHECK-LABEL: func.func @cast_of_reshape(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[C:.*]] = lpc.cast %[[X]] : tensor<2x3x4xf32> to tensor<2x3x4xbf16>
// CHECK-NEXT: %[[D:.*]] = lpc.cast %[[X]] : tensor<2x3x4xf32> to tensor<2x3x4xbf16>
// CHECK-NEXT: %[[R:.*]] = lpc.reshape %[[D]] {lpc.assigned = #lpc.precision<bf16>, lpc.reason = "follow: inputs are bf16"} : tensor<2x3x4xbf16> -> tensor<6x4xbf16>
// CHECK-NEXT: %[[Q:.*]] = lpc.cast %[[X]] {saturate} : tensor<2x3x4xf32> to tensor<2x3x4xf8E4M3FN>
// CHECK-NEXT: %[[S:.*]] = lpc.reshape %[[Q]] : tensor<2x3x4xf8E4M3FN> -> tensor<24xf8E4M3FN>
// CHECK-NEXT: return %[[C]], %[[R]], %[[S]]
func.func @cast_of_reshape(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xbf16>, tensor<6x4xbf16>, tensor<24xf8E4M3FN>) {
  %0 = lpc.cast %x : tensor<2x3x4xf32> to tensor<2x3x4xbf16>
  %1 = lpc.reshape %x {lpc.assigned = #lpc.precision<fp32>, lpc.reason = "follow: an input is fp32"} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %2 = lpc.cast %1 : tensor<6x4xf32> to tensor<6x4xbf16>
  %3 = lpc.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %4 = lpc.cast %3 {saturate} : tensor<24xf32> to tensor<24xf8E4M3FN>
  return %0, %2, %4 : tensor<2x3x4xbf16>, tensor<6x4xbf16>, tensor<24xf8E4M3FN>
}

// -----

// A widening cast stays after the reshape: shared with the forward, the wide
// copy would live through the step in place of the narrow x.
// CHECK-LABEL: func.func @widening_cast_of_reshape(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xbf16>)
// CHECK-NEXT: %[[R:.*]] = lpc.reshape %[[X]] : tensor<2x3x4xbf16> -> tensor<6x4xbf16>
// CHECK-NEXT: %[[C:.*]] = lpc.cast %[[R]] : tensor<6x4xbf16> to tensor<6x4xf32>
// CHECK-NEXT: return %[[C]]
func.func @widening_cast_of_reshape(%x: tensor<2x3x4xbf16>) -> tensor<6x4xf32> {
  %0 = lpc.reshape %x : tensor<2x3x4xbf16> -> tensor<6x4xbf16>
  %1 = lpc.cast %0 : tensor<6x4xbf16> to tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}

// -----

// quantize(reshape(x), s) quantizes x itself, then reshapes the FP8 copy:
// with the forward's quantize of x (same scale) CSE keeps one FP8 copy for
// the fprop and the weight-gradient GEMMs. amax and fp8_stats are over all
// elements: they read x directly.
// CHECK-LABEL: func.func @fp8_of_reshape(
// CHECK-DAG: %[[Q:.*]] = lpc.quantize %arg0, %arg1 : tensor<2x8x4xf32> to tensor<2x8x4xf8E4M3FN>
// CHECK-DAG: %[[R:.*]] = lpc.reshape %[[Q]] : tensor<2x8x4xf8E4M3FN> -> tensor<16x4xf8E4M3FN>
// CHECK-DAG: %[[A:.*]] = lpc.amax %arg0 : tensor<2x8x4xf32>
// CHECK-DAG: %{{.*}}, %{{.*}} = lpc.fp8_stats %arg0, %arg1 {format = #lpc.precision<fp8_e4m3>} : tensor<2x8x4xf32>
// CHECK: return %[[R]], %[[A]]
func.func @fp8_of_reshape(%x: tensor<2x8x4xf32>, %s: tensor<f32>) -> (tensor<16x4xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %r = lpc.reshape %x : tensor<2x8x4xf32> -> tensor<16x4xf32>
  %q = lpc.quantize %r, %s : tensor<16x4xf32> to tensor<16x4xf8E4M3FN>
  %a = lpc.amax %r : tensor<16x4xf32>
  %sat, %und = lpc.fp8_stats %r, %s {format = #lpc.precision<fp8_e4m3>} : tensor<16x4xf32>
  return %q, %a, %sat, %und : tensor<16x4xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>
}
