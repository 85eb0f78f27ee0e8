// RUN: lpc-opt %s -split-input-file --lpc-gpu-launch-info | FileCheck %s

// Each launch gets what its kernel does to every operand (reads through a
// loop, writes through a view, a scalar, an operand it never touches, a
// read-modify-write) and the loop iterations one thread runs in sequence:
// a loop's trip count times its body's, loops in sequence added, an scf.if
// by its longer branch, none when a bound is not a constant.

// CHECK-LABEL: func.func @host(
// CHECK: gpu.launch_func @kernels::@sum {{.*}} {lpc_access = ["r", "w", "", ""], lpc_serial_iters = 64 : i64}
// CHECK: gpu.launch_func @kernels::@rmw {{.*}} {lpc_access = ["rw"], lpc_serial_iters = 35 : i64}
// CHECK: gpu.launch_func @kernels::@dyn {{.*}} {lpc_access = ["w", ""]}{{$}}
// A second launch of a kernel gets the same.
// CHECK: gpu.launch_func @kernels::@sum {{.*}} {lpc_access = ["r", "w", "", ""], lpc_serial_iters = 64 : i64}
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sum(%x: memref<64xf32>, %m: memref<1xf32>, %s: f32, %unused: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0.0 : f32
      %r = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
        %v = memref.load %x[%i] : memref<64xf32>
        %a = arith.addf %acc, %v : f32
        scf.yield %a : f32
      }
      %r2 = arith.mulf %r, %s : f32
      %view = memref.subview %m[0] [1] [1] : memref<1xf32> to memref<1xf32, strided<[1]>>
      memref.store %r2, %view[%c0] : memref<1xf32, strided<[1]>>
      gpu.return
    }
    gpu.func @rmw(%y: memref<4x8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      scf.for %i = %c0 to %c4 step %c1 {
        scf.for %j = %c0 to %c8 step %c1 {
          %v = memref.load %y[%i, %j] : memref<4x8xf32>
          %w = arith.addf %v, %v : f32
          memref.store %w, %y[%i, %j] : memref<4x8xf32>
        }
      }
      %tid = gpu.thread_id x
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        scf.for %k = %c0 to %c3 step %c1 {
        }
      }
      gpu.return
    }
    gpu.func @dyn(%z: memref<?xf32>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %f = arith.constant 1.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        memref.store %f, %z[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
  func.func @host(%x: memref<64xf32>, %m: memref<1xf32>, %u: memref<4xf32>,
                  %y: memref<4x8xf32>, %z: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = arith.constant 2.0 : f32
    gpu.launch_func @kernels::@sum blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<64xf32>, %m : memref<1xf32>, %s : f32, %u : memref<4xf32>)
    gpu.launch_func @kernels::@rmw blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%y : memref<4x8xf32>)
    gpu.launch_func @kernels::@dyn blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%z : memref<?xf32>, %c4 : index)
    gpu.launch_func @kernels::@sum blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<64xf32>, %m : memref<1xf32>, %s : f32, %u : memref<4xf32>)
    return
  }
}

// -----

// A 0-d scratch stored before it is read (also under a one-thread guard)
// is only written: the kernel never sees what it held before. An
// accumulator read first stays "rw".

// CHECK-LABEL: func.func @scalars(
// CHECK: gpu.launch_func @k2::@scratch {{.*}} {lpc_access = ["w", "rw", "w"], lpc_serial_iters = 0 : i64}
module attributes {gpu.container_module} {
  gpu.module @k2 {
    gpu.func @scratch(%s: memref<f32>, %acc: memref<f32>, %g: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %s[] : memref<f32>
      %v = memref.load %s[] : memref<f32>
      %a = memref.load %acc[] : memref<f32>
      %sum = arith.addf %a, %v : f32
      memref.store %sum, %acc[] : memref<f32>
      %tid = gpu.thread_id x
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        memref.store %sum, %g[] : memref<f32>
        %w = memref.load %g[] : memref<f32>
        memref.store %w, %acc[] : memref<f32>
      }
      gpu.return
    }
  }
  func.func @scalars(%s: memref<f32>, %acc: memref<f32>, %g: memref<f32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k2::@scratch blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%s : memref<f32>, %acc : memref<f32>, %g : memref<f32>)
    return
  }
}
