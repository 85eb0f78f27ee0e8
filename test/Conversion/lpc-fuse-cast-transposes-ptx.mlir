// In the GPU pipeline, the cast that lpc-fuse-cast-transposes makes write
// the transposed copy too becomes a kernel of wide accesses only: per
// thread, 4 source rows of 32 elements (16 where the columns are no
// multiple of 32) read as 16-byte vector loads, the 4 FP8 rows written as
// 16-byte stores (two in a row fill a 32-byte sector), and the transposed
// copy as one 4-byte store per column (a warp's 32 threads, neighbouring
// groups of 4 rows, write 128 consecutive bytes of a transposed row with
// each). No one-byte access is left, and no loop. The kernels assemble
// with ptxas.
// RUN: lpc-opt %s --lpc-gpu-codegen -o %t.mlir
// RUN: %python %S/Inputs/check_ptx.py %t.mlir %ptxas sm_90 --print-ptx | FileCheck %s
// REQUIRES: ptxas

// CHECK-LABEL: .visible .entry stats_kernel_0(
// CHECK-NOT: {{(ld|st)}}.global{{(.nc)?}}.{{[bsu]}}8
// f32 [512, 128] weight with its amax and saturation/underflow counts: 4 x
// 32 elements per thread, 4 rows of 128 bytes; the FP8 rows 128 bytes
// apart.
// CHECK-COUNT-32: ld.global.v4.b32
// CHECK-NOT: ld.global
// CHECK: st.global.v4.b32 {{\[}}[[Q:%rd[0-9]+]]],
// CHECK-NEXT: st.global.v4.b32 {{\[}}[[Q]]+16],
// CHECK-NEXT: st.global.v4.b32 {{\[}}[[Q]]+128],
// CHECK-NEXT: st.global.v4.b32 {{\[}}[[Q]]+144],
// CHECK-NEXT: st.global.v4.b32 {{\[}}[[Q]]+256],
// CHECK-NEXT: st.global.v4.b32 {{\[}}[[Q]]+272],
// CHECK-NEXT: st.global.v4.b32 {{\[}}[[Q]]+384],
// CHECK-NEXT: st.global.v4.b32 {{\[}}[[Q]]+400],
// CHECK-NOT: ld.global
// The transposed rows are 512 bytes apart.
// CHECK: st.global.b32 {{\[}}[[T:%rd[0-9]+]]],
// CHECK: st.global.b32 {{\[}}[[T]]+512],
// CHECK-COUNT-30: st.global.b32 {{\[}}[[T]]+{{[0-9]+}}],
// CHECK-NOT: {{(ld|st)}}.global{{(.nc)?}}.{{[bsu]}}8
// CHECK-LABEL: .visible .entry act_kernel(
// CHECK-NOT: {{(ld|st)}}.global{{(.nc)?}}.{{[bsu]}}8
// bf16 [4, 96, 48] activation as the GEMM's [384, 48] operand, E5M2: 4 x 16
// elements per thread (48 is no multiple of 32), 4 rows of 32 bytes.
// CHECK-COUNT-8: ld.global.v4.b32
// CHECK-NOT: ld.global
// CHECK: st.global.v4.b32 {{\[}}[[A:%rd[0-9]+]]],
// CHECK-NEXT: st.global.v4.b32 {{\[}}[[A]]+48],
// CHECK-NEXT: st.global.v4.b32 {{\[}}[[A]]+96],
// CHECK-NEXT: st.global.v4.b32 {{\[}}[[A]]+144],
// CHECK-COUNT-16: st.global.b32 {{\[}}[[U:%rd[0-9]+]]{{(\+[0-9]+)?}}],
// CHECK-NOT: {{(ld|st)}}.global
// CHECK: ret;
// CHECK: assembled 6 kernels for sm_90

func.func @stats(%x: tensor<512x128xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<128x512xf32>, tensor<512x128xf32>) {
  %a = lpc.amax %x : tensor<512x128xf32>
  %sat, %und = lpc.fp8_stats %x, %s {format = #lpc.precision<fp8_e4m3>} : tensor<512x128xf32>
  %q = lpc.quantize %x, %s : tensor<512x128xf32> to tensor<512x128xf8E4M3FN>
  %t = lpc.transpose %q [1, 0] : tensor<512x128xf8E4M3FN> -> tensor<128x512xf8E4M3FN>
  %w = lpc.cast %t : tensor<128x512xf8E4M3FN> to tensor<128x512xf32>
  %v = lpc.cast %q : tensor<512x128xf8E4M3FN> to tensor<512x128xf32>
  return %a, %sat, %und, %w, %v : tensor<f32>, tensor<f32>, tensor<f32>, tensor<128x512xf32>, tensor<512x128xf32>
}

func.func @act(%x: tensor<4x96x48xbf16>, %s: tensor<f32>) -> (tensor<48x384xf32>, tensor<4x96x48xf32>) {
  %q = lpc.quantize %x, %s : tensor<4x96x48xbf16> to tensor<4x96x48xf8E5M2>
  %c = lpc.reshape %q : tensor<4x96x48xf8E5M2> -> tensor<384x48xf8E5M2>
  %t = lpc.transpose %c [1, 0] : tensor<384x48xf8E5M2> -> tensor<48x384xf8E5M2>
  %w = lpc.cast %t : tensor<48x384xf8E5M2> to tensor<48x384xf32>
  %v = lpc.cast %q : tensor<4x96x48xf8E5M2> to tensor<4x96x48xf32>
  return %w, %v : tensor<48x384xf32>, tensor<4x96x48xf32>
}
