// The precision report's communication section lists lpc.reduce_scatter and
// lpc.all_gather with their payload (the whole tensor; over N ranks each
// rank sends (N-1)/N of it) in their wire format against fp32.

// CHECK:      communication per step (payloads; over N ranks each rank sends 2(N-1)/N of an all-reduce's, (N-1)/N of the others')
// CHECK-NEXT: collective location elements on wire bytes if fp32
// CHECK-NEXT: reduce_scatter mean over 3 ranks lpc-precision-report-sharding.mlir:[[@LINE+15]]:8 60 bf16 120 B 240 B
// CHECK-NEXT: all_gather over 3 ranks lpc-precision-report-sharding.mlir:[[@LINE+15]]:8 60 fp32 240 B 240 B
// CHECK-NEXT: reduce_scatter max over 2 ranks lpc-precision-report-sharding.mlir:[[@LINE+15]]:8 60 fp32 240 B 240 B
// CHECK-NEXT: all_gather over 3 ranks lpc-precision-report-sharding.mlir:[[@LINE+15]]:8 60 fp8_e4m3 64 B 240 B
// CHECK-NEXT: total 664 B 960 B

// JSON:      "comm_precision": "bf16",
// JSON-NEXT: "elements": 60,
// JSON-NEXT: "location": "lpc-precision-report-sharding.mlir:{{[0-9]+}}:8",
// JSON-NEXT: "what": "reduce_scatter mean over 3 ranks"
// JSON:      "total": {
// JSON-NEXT:   "all_fp32": 960,
// JSON-NEXT:   "chosen": 664

func.func @step(%g: tensor<12x5xf32>) -> (tensor<12x5xf32>, tensor<6x5xf32>, tensor<12x5xf32>) {
  %0 = lpc.reduce_scatter %g mean ranks(3) {comm_precision = #lpc.precision<bf16>} : tensor<12x5xf32> -> tensor<4x5xf32>
  %1 = lpc.all_gather %0 ranks(3) : tensor<4x5xf32> -> tensor<12x5xf32>
  %2 = lpc.reduce_scatter %g max ranks(2) : tensor<12x5xf32> -> tensor<6x5xf32>
  %3 = lpc.all_gather %0 ranks(3) {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<4x5xf32> -> tensor<12x5xf32>
  return %1, %2, %3 : tensor<12x5xf32>, tensor<6x5xf32>, tensor<12x5xf32>
}
