// Parameter initializers follow PyTorch's formulas (fan_in = dim 0, fan_out =
// dim 1 of an [in, out] weight):
//   xavier_uniform  U(-b, b), b = gain sqrt(6 / (fan_in + fan_out))
//   xavier_normal   N(0, gain sqrt(2 / (fan_in + fan_out)))
//   kaiming_uniform U(-b, b), b = gain sqrt(3 / fan_in)
//   kaiming_normal  N(0, gain / sqrt(fan_in))
// check_init.py checks bounds, means and deviations (5 standard errors).
//
// RUN: lpc-eval %s --seed=3 --print=json | %python %S/check_init.py \
// RUN:   uniform:-0.0576071529:0.0576071529 uniform:-0.0874817765:0.0874817765 \
// RUN:   normal:0:0.1020620726 normal:0:0.0625 normal:1:0.02 uniform:-3:5 \
// RUN:   constant:0.1:_ constant:0:_ constant:1:_ uniform:-1:1 normal:0:1 \
// RUN:   | FileCheck %s
// CHECK-COUNT-11: ok
// CHECK-NOT: FAIL
func.func @init() -> (tensor<784x1024xf32>, tensor<784x1024xf32>, tensor<256x512xf32>, tensor<256x512xf32>, tensor<300x400xf32>, tensor<300x400xf32>, tensor<10x10xf32>, tensor<4xf32>, tensor<4xf32>, tensor<100x100xf32>, tensor<100x100xf32>) {
  %0 = lpc.param "xu" xavier_uniform : tensor<784x1024xf32>
  %1 = lpc.param "ku" kaiming_uniform {gain = 1.4142135623730951 : f64} : tensor<784x1024xf32>
  %2 = lpc.param "xn" xavier_normal {gain = 2.0 : f64} : tensor<256x512xf32>
  %3 = lpc.param "kn" kaiming_normal : tensor<256x512xf32>
  %4 = lpc.param "n" normal {std = 0.02 : f64, mean = 1.0 : f64} : tensor<300x400xf32>
  %5 = lpc.param "u" uniform {low = -3.0 : f64, high = 5.0 : f64} : tensor<300x400xf32>
  %6 = lpc.param "c" constant {value = 0.1 : f64} : tensor<10x10xf32>
  %7 = lpc.param "z" zeros : tensor<4xf32>
  %8 = lpc.param "o" ones : tensor<4xf32>
  %9 = lpc.param "ud" uniform : tensor<100x100xf32>
  %10 = lpc.param "nd" normal : tensor<100x100xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<784x1024xf32>, tensor<784x1024xf32>, tensor<256x512xf32>, tensor<256x512xf32>, tensor<300x400xf32>, tensor<300x400xf32>, tensor<10x10xf32>, tensor<4xf32>, tensor<4xf32>, tensor<100x100xf32>, tensor<100x100xf32>
}
