// RUN: lpc-opt %s -split-input-file -verify-diagnostics --lpc-fp8-to-nvvm

// The loops lpc-gpu-codegen makes are scalar; vectors would need unrolling.
func.func @vector(%x: vector<4xf32>) -> vector<4xf8E4M3FN> {
  // expected-error @below {{lpc-fp8-to-nvvm: only scalar FP8 conversions are supported, got 'vector<4xf32>'}}
  %y = arith.truncf %x : vector<4xf32> to vector<4xf8E4M3FN>
  return %y : vector<4xf8E4M3FN>
}

// -----

func.func @vector_extf(%v: vector<4xf8E5M2>) -> vector<4xf32> {
  // expected-error @below {{lpc-fp8-to-nvvm: only scalar FP8 conversions are supported, got 'vector<4xf32>'}}
  %y = arith.extf %v : vector<4xf8E5M2> to vector<4xf32>
  return %y : vector<4xf32>
}

// -----

func.func @vector_sitofp(%v: vector<4xi32>) -> vector<4xf8E4M3FN> {
  // expected-error @below {{lpc-fp8-to-nvvm: only scalar FP8 conversions are supported, got 'vector<4xi32>'}}
  %y = arith.sitofp %v : vector<4xi32> to vector<4xf8E4M3FN>
  return %y : vector<4xf8E4M3FN>
}

// -----

// Through f32, an f64 would be rounded twice.
func.func @from_f64(%x: f64) -> f8E4M3FN {
  // expected-error @below {{lpc-fp8-to-nvvm: 'f64' -> 'f8E4M3FN' would round twice (through f32)}}
  %y = arith.truncf %x : f64 to f8E4M3FN
  return %y : f8E4M3FN
}

// -----

func.func @rounding_mode(%x: f32) -> f8E5M2 {
  // expected-error @below {{lpc-fp8-to-nvvm: the instruction rounds to nearest even, not downward}}
  %y = arith.truncf %x downward : f32 to f8E5M2
  return %y : f8E5M2
}

// -----

func.func @to_bf16(%v: f8E4M3FN) -> bf16 {
  // expected-error @below {{lpc-fp8-to-nvvm: the instruction gives f16; 'bf16' is not wider}}
  %y = arith.extf %v : f8E4M3FN to bf16
  return %y : bf16
}

// -----

// sm_80 has no FP8 conversions (lpc-gpu-codegen keeps the integer code
// there).
module attributes {gpu.container_module} {
  gpu.module @sm80 [#nvvm.target<chip = "sm_80">] {
    gpu.func @k(%x: f32, %out: memref<1xf8E4M3FN>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @below {{lpc-fp8-to-nvvm: FP8 conversions need sm_89 or later; the gpu.module targets sm_80}}
      %y = arith.truncf %x : f32 to f8E4M3FN
      memref.store %y, %out[%c0] : memref<1xf8E4M3FN>
      gpu.return
    }
  }
}

// -----

// On sm_89 they need PTX 8.1 (LLVM would abort the process on 7.8).
module attributes {gpu.container_module} {
  gpu.module @sm89 [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @k(%v: f8E5M2, %out: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @below {{lpc-fp8-to-nvvm: FP8 conversions on sm_89 need PTX 8.1 or later (target features "+ptx81")}}
      %y = arith.extf %v : f8E5M2 to f32
      memref.store %y, %out[%c0] : memref<1xf32>
      gpu.return
    }
  }
}
