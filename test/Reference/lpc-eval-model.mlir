// lpc-eval on models: parameters come from their initializers (seeded by
// name, so declaration order does not matter), inputs and arguments are
// random; integer inputs stay below the class count / vocabulary of the ops
// that consume them (looking through data movement), else below 10.
//
// RUN: lpc-eval %s --function=model | FileCheck %s --check-prefix=SUMMARY
// RUN: lpc-eval %s --function=model --print=json | FileCheck %s --check-prefix=IDS
// RUN: lpc-eval %s --function=model --seed=5 --print=json > %t.a
// RUN: lpc-eval %s --function=model --seed=5 --print=json > %t.b
// RUN: lpc-eval %s --function=model --seed=6 --print=json > %t.c
// RUN: diff %t.a %t.b
// RUN: not diff %t.a %t.c > /dev/null
// RUN: lpc-eval %s --function=params_ab --print=json | grep data > %t.ab
// RUN: lpc-eval %s --function=params_ba --print=json | grep data > %t.ba
// RUN: diff %t.ab %t.ba
// RUN: lpc-eval %s --function=args --print=full | FileCheck %s --check-prefix=ARGS
// RUN: lpc-eval %s --function=args --print=full --no-round-f32 | FileCheck %s --check-prefix=ARGS

// SUMMARY:      result #0: tensor<f32> min=[[LOSS:[0-9.e+-]+]] max=[[LOSS]] mean={{[0-9.e+-]+}}
// SUMMARY-NEXT:   {{\[}}[[LOSS]]]
// SUMMARY-NEXT: result #1: tensor<4x2xi32> min={{[0-2]}} max={{[0-2]}} mean={{[0-9.e+-]+}}
// SUMMARY-NEXT:   [{{([0-2], ){7}[0-2]}}]
// SUMMARY-NEXT: result #2: tensor<8xi64> min={{[0-4]}} max={{[0-4]}} mean={{[0-9.e+-]+}}
// SUMMARY-NEXT:   [{{([0-4], ){7}[0-4]}}]
// SUMMARY-NEXT: result #3: tensor<8x3xf32> min={{.*}} max={{.*}} mean={{.*}}
// SUMMARY-NEXT:   [{{.*}}, ... (24 values)]
// IDS: {"dtype": "i32", "shape": [4, 2], "data": [{{([0-2], ){7}[0-2]}}]}
// IDS: {"dtype": "i64", "shape": [8], "data": [{{([0-4], ){7}[0-4]}}]}
func.func @model() -> (tensor<f32>, tensor<4x2xi32>, tensor<8xi64>, tensor<8x3xf32>) {
  %labels = lpc.input "labels" labels : tensor<4x2xi32>
  %tokens = lpc.input "tokens" tokens : tensor<8xi64>
  %table = lpc.param "wte" normal {std = 0.02 : f64} : tensor<5x4xf32>
  %w = lpc.param "head" xavier_uniform : tensor<4x3xf32>
  %e = lpc.embedding %table, %tokens : tensor<5x4xf32>, tensor<8xi64> -> tensor<8x4xf32>
  %logits = lpc.matmul %e, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %flat = lpc.reshape %labels : tensor<4x2xi32> -> tensor<8xi32>
  %loss = lpc.softmax_cross_entropy %logits, %flat : tensor<8x3xf32>, tensor<8xi32>
  return %loss, %labels, %tokens, %logits : tensor<f32>, tensor<4x2xi32>, tensor<8xi64>, tensor<8x3xf32>
}

func.func @params_ab() -> (tensor<3x4xf32>, tensor<4xf32>) {
  %a = lpc.param "a" kaiming_normal : tensor<3x4xf32>
  %b = lpc.param "b" uniform : tensor<4xf32>
  return %a, %b : tensor<3x4xf32>, tensor<4xf32>
}
func.func @params_ba() -> (tensor<3x4xf32>, tensor<4xf32>) {
  %b = lpc.param "b" uniform : tensor<4xf32>
  %a = lpc.param "a" kaiming_normal : tensor<3x4xf32>
  return %a, %b : tensor<3x4xf32>, tensor<4xf32>
}

// Random arguments are never zero; relu keeps the positive ones.
// ARGS:     result #0: tensor<2x2xbf16>
// ARGS-NOT: {{[[ ]-?0[],]}}
// ARGS:     result #1: tensor<2x2xbf16>
func.func @args(%x: tensor<2x2xbf16>) -> (tensor<2x2xbf16>, tensor<2x2xbf16>) {
  %0 = lpc.relu %x : tensor<2x2xbf16>
  return %x, %0 : tensor<2x2xbf16>, tensor<2x2xbf16>
}
