// A model that reads constant tables that are not splats (what lpc-import
// makes of rotary cos/sin tables, constant index tensors and masks: here a
// table multiplied in, a constant boolean mask and constant embedding ids)
// compiles for the GPU: the tables become initialized .global arrays of the
// one PTX module (lpc-sink-constant-globals), the kernels assemble, and the
// CUDA artifact, which has no view of host memory, is written and validates.
// REQUIRES: ptxas
// RUN: lpc-opt %s --lpc-autodiff --lpc-mixed-precision="policy=bf16" --symbol-privatize="exclude=tables_train_step" --symbol-dce | lpc-opt --lpc-gpu-codegen -o %t.gpu.mlir
// RUN: %python %S/Inputs/check_ptx.py %t.gpu.mlir %ptxas sm_90 | FileCheck %s --check-prefix=PTX
// PTX: lpc_kernels: {{[0-9]+}} entry, 0 extern, target sm_90
// PTX: assembled {{[0-9]+}} kernels for sm_90
// The table's f32 bytes (1.5 = 0x3FC00000: 0, 0, 192, 63) are in the PTX.
// RUN: %python %S/Inputs/check_ptx.py %t.gpu.mlir %ptxas sm_90 --print-ptx | FileCheck %s --check-prefix=GLOBAL
// GLOBAL: .global .align {{[0-9]+}} .b8 __constant_2x3xf32{{[_0-9]*}}[24] = {0, 0, 192, 63, 0, 0, 0, 192,
// No memref.get_global is left in the host function.
// RUN: FileCheck %s --check-prefix=HOST < %t.gpu.mlir
// HOST-LABEL: func.func @tables_train_step(
// HOST-NOT: memref.get_global
// HOST: return
// RUN: rm -rf %t.d && mkdir -p %t.d
// RUN: %python %S/../tools/Inputs/write_safetensors.py %t.d/data.safetensors x=F32:8x3 t=F32:8x3
// RUN: lpc-run %s --device=cuda --mixed-precision=bf16 --data=tensors:%t.d/data.safetensors --steps=2 --emit-artifact=%t.d/tables.json
// RUN: lpc-cuda-check --artifact=%t.d/tables.json | FileCheck %s --check-prefix=ART
// ART: tables_train_step: {{.*}} launches
// A GEMM has no view of such a table: a clear error naming the op, no file.
// RUN: not lpc-run %S/Inputs/const_gemm_operand.mlir --device=cuda --data=tensors:%t.d/data.safetensors --emit-artifact=%t.d/gemm.json 2>&1 | FileCheck %s --check-prefix=GEMM
// GEMM: lpc-run: error: --device=cuda: @cg_train_step: 'func.call' at loc("{{.*}}const_gemm_operand.mlir":9:8): an operand is a constant tensor (not a splat), which only kernels can read on the GPU
// RUN: not ls %t.d/gemm.json

func.func @tables() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x3xf32>
  %t = lpc.input "t" targets : tensor<2x3xf32>
  %w = lpc.param "w" normal : tensor<3x3xf32>
  %emb = lpc.param "emb" normal : tensor<5x3xf32>
  %h = lpc.matmul %x, %w : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x3xf32>
  %table = lpc.constant dense<[[1.5, -2.0, 0.25], [3.0, -0.5, 4.0]]> : tensor<2x3xf32>
  %a = lpc.mul %h, %table : tensor<2x3xf32>
  %mask = lpc.constant dense<[[true, false, true], [false, false, true]]> : tensor<2x3xi1>
  %b = lpc.where %mask, %a, %h : tensor<2x3xi1>, tensor<2x3xf32>
  %ids = lpc.constant dense<[4, 1]> : tensor<2xi32>
  %e = lpc.embedding %emb, %ids : tensor<5x3xf32>, tensor<2xi32> -> tensor<2x3xf32>
  %c = lpc.add %b, %e : tensor<2x3xf32>
  %l = lpc.mse_loss %c, %t : tensor<2x3xf32>
  return %l : tensor<f32>
}
