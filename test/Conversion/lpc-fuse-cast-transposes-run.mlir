// lpc-fuse-cast-transposes keeps the semantics: an FP8 quantization with
// its amax and saturation/underflow counts (one generic after
// lpc-fuse-sibling-reductions) and the transposed copy of its result, run
// through the GPU pipeline's loop stage on the CPU (lpc-jit
// --gpu-loop-passes), give bit for bit the reference evaluator's results
// (the copy, the tensor, the amax, the counts), with inputs that saturate
// (std 300) and that underflow (std 1e-3). Tile grids (column tiles x
// groups of 4 rows) are odd: 5 x 12 (16-column tiles), 2 x 3 x 8 with a
// batch dimension, 2 x 4 (32-column tiles, two steps each), and 3 x 8 of a
// [2, 16, 48] activation's [32, 48] view, as a GEMM takes it; a size that
// does not tile is left to lpc-tile-transposes' fallback and still right.
// RUN: for f in stats batched plain collapsed ragged; do for s in 1 300 1e-3; do lpc-jit %s --function=$f --exact --gpu-loop-passes --input-std=$s || exit 1; done; done | FileCheck %s --implicit-check-not=MISMATCH
// CHECK-COUNT-15: all results match the reference evaluator

// The fused loop is what runs: after the GPU pipeline's front end and the
// pass, no transpose is left but the ragged one.
// RUN: lpc-opt %s --lpc-to-linalg --canonicalize --cse --lpc-fuse-elementwise --canonicalize --cse --lpc-fuse-sibling-reductions=elementwise=true --cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --lpc-fuse-cast-transposes | FileCheck %s --check-prefix=FUSED
// FUSED-LABEL: func.func @stats(
// FUSED-NOT: linalg.transpose
// FUSED: scf.parallel {{.*}} to (%c5{{.*}}, %c12{{.*}})
// FUSED-NOT: linalg.transpose
// FUSED-LABEL: func.func @batched(
// FUSED-NOT: linalg.transpose
// FUSED: scf.parallel {{.*}} to (%c2{{.*}}, %c3{{.*}}, %c8{{.*}})
// FUSED-NOT: linalg.transpose
// FUSED-LABEL: func.func @plain(
// FUSED-NOT: linalg.transpose
// FUSED: scf.parallel {{.*}} to (%c2{{.*}}, %c4{{.*}})
// FUSED-NOT: linalg.transpose
// FUSED-LABEL: func.func @collapsed(
// FUSED-NOT: linalg.transpose
// FUSED: scf.parallel {{.*}} to (%c3{{.*}}, %c8{{.*}})
// FUSED-NOT: linalg.transpose
// FUSED-LABEL: func.func @ragged(
// FUSED: linalg.transpose

func.func @stats(%x: tensor<48x80xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<80x48xf32>, tensor<48x80xf32>) {
  %a = lpc.amax %x : tensor<48x80xf32>
  %sat, %und = lpc.fp8_stats %x, %s {format = #lpc.precision<fp8_e4m3>} : tensor<48x80xf32>
  %q = lpc.quantize %x, %s : tensor<48x80xf32> to tensor<48x80xf8E4M3FN>
  %t = lpc.transpose %q [1, 0] : tensor<48x80xf8E4M3FN> -> tensor<80x48xf8E4M3FN>
  %w = lpc.cast %t : tensor<80x48xf8E4M3FN> to tensor<80x48xf32>
  %v = lpc.cast %q : tensor<48x80xf8E4M3FN> to tensor<48x80xf32>
  return %a, %sat, %und, %w, %v : tensor<f32>, tensor<f32>, tensor<f32>, tensor<80x48xf32>, tensor<48x80xf32>
}

func.func @batched(%x: tensor<2x32x48xbf16>, %s: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<2x48x32xf32>) {
  %a = lpc.amax %x : tensor<2x32x48xbf16>
  %sat, %und = lpc.fp8_stats %x, %s {format = #lpc.precision<fp8_e5m2>} : tensor<2x32x48xbf16>
  %q = lpc.quantize %x, %s : tensor<2x32x48xbf16> to tensor<2x32x48xf8E5M2>
  %t = lpc.transpose %q [0, 2, 1] : tensor<2x32x48xf8E5M2> -> tensor<2x48x32xf8E5M2>
  %w = lpc.cast %t : tensor<2x48x32xf8E5M2> to tensor<2x48x32xf32>
  return %a, %sat, %und, %w : tensor<f32>, tensor<f32>, tensor<f32>, tensor<2x48x32xf32>
}

func.func @plain(%x: tensor<16x64xf32>, %s: tensor<f32>) -> tensor<64x16xf32> {
  %q = lpc.quantize %x, %s : tensor<16x64xf32> to tensor<16x64xf8E4M3FN>
  %t = lpc.transpose %q [1, 0] : tensor<16x64xf8E4M3FN> -> tensor<64x16xf8E4M3FN>
  %w = lpc.cast %t : tensor<64x16xf8E4M3FN> to tensor<64x16xf32>
  return %w : tensor<64x16xf32>
}

func.func @collapsed(%x: tensor<2x16x48xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<48x32xf32>) {
  %a = lpc.amax %x : tensor<2x16x48xf32>
  %q = lpc.quantize %x, %s : tensor<2x16x48xf32> to tensor<2x16x48xf8E4M3FN>
  %v = lpc.reshape %q : tensor<2x16x48xf8E4M3FN> -> tensor<32x48xf8E4M3FN>
  %t = lpc.transpose %v [1, 0] : tensor<32x48xf8E4M3FN> -> tensor<48x32xf8E4M3FN>
  %w = lpc.cast %t : tensor<48x32xf8E4M3FN> to tensor<48x32xf32>
  return %a, %w : tensor<f32>, tensor<48x32xf32>
}

func.func @ragged(%x: tensor<20x36xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<36x20xf32>) {
  %a = lpc.amax %x : tensor<20x36xf32>
  %q = lpc.quantize %x, %s : tensor<20x36xf32> to tensor<20x36xf8E4M3FN>
  %t = lpc.transpose %q [1, 0] : tensor<20x36xf8E4M3FN> -> tensor<36x20xf8E4M3FN>
  %w = lpc.cast %t : tensor<36x20xf8E4M3FN> to tensor<36x20xf32>
  return %a, %w : tensor<f32>, tensor<36x20xf32>
}
