// A model that reads constant tables that are not splats (what lpc-import
// makes of rotary cos/sin tables, constant index tensors and masks: here a
// table multiplied in, a constant boolean mask and constant embedding ids)
// compiles for the GPU: the tables become initialized .global arrays of the
// one PTX module (lpc-sink-constant-globals), the kernels assemble, and the
// CUDA artifact, which has no view of host memory, is written and validates;
// a table a GEMM reads is first copied to device memory by a kernel.
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
// A GEMM operand that is such a table: cuBLASLt reads device memory, so
// lpc-gemm-to-calls{device-operands} first copies the table with a kernel
// (which reads it from the PTX module): the artifact is written, validates,
// and has a launch before each GEMM of a table. The copies compute what the
// reference does (lpc-jit --gpu-loop-passes takes the same GEMM lowering
// and runs the copy loops on the CPU).
// RUN: lpc-run %S/Inputs/const_gemm_operand.mlir --device=cuda --data=tensors:%t.d/data.safetensors --steps=2 --emit-artifact=%t.d/gemm.json
// RUN: lpc-cuda-check --artifact=%t.d/gemm.json | FileCheck %s --check-prefix=GEMM
// GEMM: cg_train_step: {{.*}} 3 GEMMs (3 x F32xF32->F32)
// RUN: %python %S/../tools/Inputs/check_artifact.py %t.d/gemm.json | FileCheck %s --check-prefix=GEMMCHECK
// GEMMCHECK-NOT: error:
// GEMMCHECK: @cg_train_step
// RUN: lpc-jit %S/Inputs/const_gemm_operand.mlir --function=const_gemms --gpu-loop-passes | FileCheck %s --check-prefix=JIT
// JIT: all results match the reference evaluator
// RUN: lpc-opt %S/Inputs/const_gemm_operand.mlir --symbol-privatize="exclude=const_gemms" --symbol-dce --lpc-gpu-codegen | FileCheck %s --check-prefix=COPY
// COPY-LABEL: func.func @const_gemms(
// COPY-NOT: memref.get_global
// COPY: gpu.launch_func @lpc_kernels::@{{[a-z_0-9]+}}
// COPY: call @lpc_rt_gemm_f32
// COPY: gpu.launch_func
// COPY: call @lpc_rt_gemm_f32

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
