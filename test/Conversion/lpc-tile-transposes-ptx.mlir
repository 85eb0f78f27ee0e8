// In the GPU pipeline, the transposes lpc-tile-transposes tiles become
// kernels of 16-byte accesses only: LLVM's load/store vectorizer merges
// each tile row's scalar accesses (16 FP8 bytes, 8 bf16) into one
// ld.global.v4.b32 / st.global.v4.b32, with no one-byte gathers left. The
// kernels assemble with ptxas.
// RUN: lpc-opt %s --lpc-gpu-codegen -o %t.mlir
// RUN: %python %S/Inputs/check_ptx.py %t.mlir %ptxas sm_90 --print-ptx | FileCheck %s
// REQUIRES: ptxas

// The two transposes are independent and small: lpc-merge-independent-kernels
// launches them as one kernel, a branch per transpose (the bf16 one first:
// it sank past the FP8 one); each branch keeps its 16-byte accesses.
// CHECK: tr_kernel: 1 entry, 0 extern, target sm_90, 48 vector and 0 scalar global accesses
// CHECK-LABEL: .visible .entry tr_kernel(

// bf16 [3, 32, 48] -> [3, 48, 32]: 8 x 8 tiles, rows of 16 bytes (96 and
// 64 bytes apart).
// CHECK-NOT: ld.global.{{(nc.)?}}u8
// CHECK: ld.global.v4.b32 {{.*}}, {{\[}}[[B:%rd[0-9]+]]];
// CHECK-NEXT: ld.global.v4.b32 {{.*}}, {{\[}}[[B]]+96];
// CHECK-COUNT-6: ld.global.v4.b32
// CHECK-NOT: ld.global
// CHECK: st.global.v4.b32 {{\[}}[[C:%rd[0-9]+]]],
// CHECK-NOT: ld.global
// CHECK: st.global.v4.b32 {{\[}}[[C]]+64],
// CHECK-COUNT-6: st.global.v4.b32
// CHECK-NOT: ld.global
// CHECK: bra.uni

// FP8 [48, 80] -> [80, 48]: per thread 16 source rows of 16 bytes (80
// apart), then 16 destination rows of 16 bytes (48 apart).
// CHECK-NOT: ld.global.{{(nc.)?}}u8
// CHECK: ld.global.v4.b32 {{.*}}, {{\[}}[[P:%rd[0-9]+]]];
// CHECK-NEXT: ld.global.v4.b32 {{.*}}, {{\[}}[[P]]+80];
// CHECK-COUNT-13: ld.global.v4.b32
// CHECK-NEXT: ld.global.v4.b32 {{.*}}, {{\[}}[[P]]+1200];
// CHECK-NOT: ld.global
// CHECK: st.global.v4.b32 {{\[}}[[Q:%rd[0-9]+]]],
// CHECK-NOT: ld.global
// CHECK: st.global.v4.b32 {{\[}}[[Q]]+48],
// CHECK-COUNT-13: st.global.v4.b32
// CHECK-NOT: ld.global
// CHECK: st.global.v4.b32 {{\[}}[[Q]]+720],
// CHECK-NOT: st.global
// CHECK: ret;
func.func @tr(%x: tensor<48x80xf8E4M3FN>, %y: tensor<3x32x48xbf16>) -> (tensor<80x48xf8E4M3FN>, tensor<3x48x32xbf16>) {
  %t = lpc.transpose %x [1, 0] : tensor<48x80xf8E4M3FN> -> tensor<80x48xf8E4M3FN>
  %u = lpc.transpose %y [0, 2, 1] : tensor<3x32x48xbf16> -> tensor<3x48x32xbf16>
  return %t, %u : tensor<80x48xf8E4M3FN>, tensor<3x48x32xbf16>
}
