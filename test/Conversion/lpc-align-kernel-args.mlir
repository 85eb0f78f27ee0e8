// RUN: lpc-opt %s -split-input-file -verify-diagnostics --lpc-align-kernel-args | FileCheck %s
// RUN: lpc-opt %s -split-input-file -verify-diagnostics --lpc-align-kernel-args="bytes=256" | FileCheck %s --check-prefix=B256

// Every pointer parameter of a kernel is aligned; other parameters, other
// functions and declarations are left alone.
// CHECK-LABEL: llvm.func @kernel(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 16 : i64}, %{{.*}}: !llvm.ptr {llvm.align = 16 : i64}, %{{.*}}: i64)
// CHECK-LABEL: llvm.func @helper(
// CHECK-SAME: %{{.*}}: !llvm.ptr)
// CHECK-LABEL: llvm.func @decl(!llvm.ptr)
// B256: llvm.func @kernel(%{{.*}}: !llvm.ptr {llvm.align = 256 : i64}
gpu.module @kernels {
  llvm.func @kernel(%a: !llvm.ptr, %b: !llvm.ptr, %n: i64) attributes {gpu.kernel, nvvm.kernel} {
    llvm.return
  }
  llvm.func @helper(%a: !llvm.ptr) {
    llvm.return
  }
  llvm.func @decl(!llvm.ptr)
}
