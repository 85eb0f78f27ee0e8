// lpc-tile-transposes keeps the semantics: transposes of the last two
// dimensions, run through the GPU pipeline's loop stage on the CPU
// (lpc-jit --gpu-loop-passes), give bit for bit the reference evaluator's
// result, and the untransformed lowering's. Tile counts are odd (3 x 5
// tiles of 16 x 16 FP8, of 8 x 8 bf16, of 4 x 4 f32), with batch
// dimensions; the sizes that are not multiples of the tile are left to
// linalg's lowering and still right.
// RUN: for f in rank2 batched ragged wide; do lpc-jit %s --function=$f --exact --gpu-loop-passes || exit 1; lpc-jit %s --function=$f --exact || exit 1; done | FileCheck %s --implicit-check-not=MISMATCH
// CHECK-COUNT-8: all results match the reference evaluator

// The tiled loop is what runs: 16 x 16 one-byte loads in the rank-2 case
// (its one transpose), none but the element-wise lowering's one without
// the loop stage.
// RUN: lpc-jit %s --function=rank2 --gpu-loop-passes --print-llvm-dialect 2>&1 | grep -c "llvm.load .* -> i8$" | FileCheck %s --check-prefix=TILED
// RUN: lpc-jit %s --function=rank2 --print-llvm-dialect 2>&1 | grep -c "llvm.load .* -> i8$" | FileCheck %s --check-prefix=PLAIN
// TILED: {{^256$}}
// PLAIN: {{^1$}}

// A model whose FP8 GEMMs take transposed copies at odd multiples of 16
// (48 inputs, 80 hidden units, 16 classes, 32 rows): forward, backward
// and update match the reference every step.
// RUN: lpc-model mlp --input=48 --hidden=80 --classes=16 --batch=32 -o %t.mlp.mlir
// RUN: lpc-jit %t.mlp.mlir --steps=2 --gpu-loop-passes --autodiff="optimizer=sgd lr=0.1" --pipeline="lpc-mixed-precision{policy=fp8 fp8-min-mnk=0 amax-history-len=4}" | FileCheck %s --implicit-check-not=MISMATCH --check-prefix=MLP
// MLP: all results match the reference evaluator

func.func @rank2(%x: tensor<48x80xf32>) -> tensor<80x48xf8E4M3FN> {
  %a = lpc.cast %x : tensor<48x80xf32> to tensor<48x80xf8E4M3FN>
  %t = lpc.transpose %a [1, 0] : tensor<48x80xf8E4M3FN> -> tensor<80x48xf8E4M3FN>
  return %t : tensor<80x48xf8E4M3FN>
}

func.func @batched(%x: tensor<3x32x48xf32>, %y: tensor<2x3x16x48xf32>) -> (tensor<3x48x32xf8E5M2>, tensor<2x3x48x16xf8E4M3FN>) {
  %a = lpc.cast %x : tensor<3x32x48xf32> to tensor<3x32x48xf8E5M2>
  %t = lpc.transpose %a [0, 2, 1] : tensor<3x32x48xf8E5M2> -> tensor<3x48x32xf8E5M2>
  %b = lpc.cast %y : tensor<2x3x16x48xf32> to tensor<2x3x16x48xf8E4M3FN>
  %u = lpc.transpose %b [0, 1, 3, 2] : tensor<2x3x16x48xf8E4M3FN> -> tensor<2x3x48x16xf8E4M3FN>
  return %t, %u : tensor<3x48x32xf8E5M2>, tensor<2x3x48x16xf8E4M3FN>
}

// Not multiples of 16: left alone.
func.func @ragged(%x: tensor<20x36xf32>, %y: tensor<16x40xf32>) -> (tensor<36x20xf8E4M3FN>, tensor<40x16xf8E5M2>) {
  %a = lpc.cast %x : tensor<20x36xf32> to tensor<20x36xf8E4M3FN>
  %t = lpc.transpose %a [1, 0] : tensor<20x36xf8E4M3FN> -> tensor<36x20xf8E4M3FN>
  %b = lpc.cast %y : tensor<16x40xf32> to tensor<16x40xf8E5M2>
  %u = lpc.transpose %b [1, 0] : tensor<16x40xf8E5M2> -> tensor<40x16xf8E5M2>
  return %t, %u : tensor<36x20xf8E4M3FN>, tensor<40x16xf8E5M2>
}

// Wider elements: bf16 in 8 x 8 tiles, f32 in 4 x 4 (12 x 20 bf16 is not
// a multiple of 8: left alone).
func.func @wide(%x: tensor<24x40xf32>, %y: tensor<2x12x20xf32>) -> (tensor<40x24xbf16>, tensor<2x20x12xf32>, tensor<2x20x12xbf16>) {
  %a = lpc.cast %x : tensor<24x40xf32> to tensor<24x40xbf16>
  %t = lpc.transpose %a [1, 0] : tensor<24x40xbf16> -> tensor<40x24xbf16>
  %u = lpc.transpose %y [0, 2, 1] : tensor<2x12x20xf32> -> tensor<2x20x12xf32>
  %b = lpc.cast %y : tensor<2x12x20xf32> to tensor<2x12x20xbf16>
  %v = lpc.transpose %b [0, 2, 1] : tensor<2x12x20xbf16> -> tensor<2x20x12xbf16>
  return %t, %u, %v : tensor<40x24xbf16>, tensor<2x20x12xf32>, tensor<2x20x12xbf16>
}
