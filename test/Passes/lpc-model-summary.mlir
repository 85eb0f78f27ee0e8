// --lpc-model-summary: a table (or JSON) of each model's parameters and data
// inputs on stderr or in the `output` file; the IR is not changed.

// The table goes to stderr; column alignment is checked exactly.
// RUN: lpc-opt %s --lpc-model-summary -o %t.ir.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TABLE --strict-whitespace --match-full-lines
// The IR is unchanged: byte-identical to a run without the pass.
// RUN: lpc-opt %s -o %t.plain.mlir
// RUN: diff %t.plain.mlir %t.ir.mlir
// RUN: lpc-opt %s --lpc-model-summary 2>/dev/null | FileCheck %s --check-prefix=IR
// JSON, through the flag and through a pass pipeline.
// RUN: lpc-opt %s --lpc-model-summary=json=true -o %t.json.mlir 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: diff %t.plain.mlir %t.json.mlir
// RUN: lpc-opt %s --pass-pipeline='builtin.module(lpc-model-summary{json=true})' -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=JSON
// output=FILE writes the summary there and nothing to stderr.
// RUN: rm -f %t.txt %t.json
// RUN: lpc-opt %s --lpc-model-summary=output=%t.txt -o /dev/null 2>%t.err
// RUN: count 0 < %t.err
// RUN: FileCheck %s --check-prefix=TABLE --strict-whitespace --match-full-lines < %t.txt
// RUN: lpc-opt %s '--lpc-model-summary=json=true output=%t.json' -o /dev/null 2>%t.err
// RUN: count 0 < %t.err
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// An explicit json=false is the table.
// RUN: lpc-opt %s --lpc-model-summary=json=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TABLE --strict-whitespace --match-full-lines
// An output file that cannot be written is an error.
// RUN: not lpc-opt %s --lpc-model-summary=output=%t.missing-dir/summary.txt -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOUT
// An unknown pass option is an error.
// RUN: not lpc-opt %s --lpc-model-summary=jsn=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADOPT
// Without params or inputs there is nothing to list: no table, an empty JSON array.
// RUN: echo 'func.func @f() { return }' | lpc-opt --lpc-model-summary -o /dev/null 2>&1 | count 0
// RUN: echo 'func.func @f() { return }' | lpc-opt --lpc-model-summary=json=true -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EMPTY

// TABLE:model @mlp
// TABLE-NEXT:  kind   name        shape         init/kind            elements       bytes
// TABLE-NEXT:  input  image       256x784xf32   features               200704  784.00 KiB
// TABLE-NEXT:  input  label       256xi32       labels                    256    1.00 KiB
// TABLE-NEXT:  param  fc1.weight  784x1024xf32  kaiming_uniform        802816    3.06 MiB
// TABLE-NEXT:  param  fc1.bias    1024xf32      zeros                    1024    4.00 KiB
// TABLE-NEXT:  param  fc2.weight  1024x10xf32   xavier_uniform          10240   40.00 KiB
// TABLE-NEXT:  param  fc2.bias    10xf32        zeros                      10        40 B
// TABLE-NEXT:  total: 814090 parameters (3.11 MiB as FP32 masters), 785.00 KiB of inputs per batch
// A function without params or inputs is not listed.
// TABLE-NOT:model @helper
// Rows are in program order; a 0-d parameter's shape is its element type.
// TABLE-NEXT:model @tiny
// TABLE-NEXT:  kind   name         shape      init/kind      elements       bytes
// TABLE-NEXT:  input  tokens       2x8xi64    tokens               16       128 B
// TABLE-NEXT:  param  temperature  f32        ones                  1         4 B
// TABLE-NEXT:  param  wte          50x16xf32  normal              800    3.12 KiB
// TABLE-NEXT:  input  hidden       2x3xbf16   features              6        12 B
// TABLE-NEXT:  total: 801 parameters (3.13 KiB as FP32 masters), 140 B of inputs per batch
// TABLE-NOT:{{.}}

// IR-NOT: model @
// IR-NOT: "entries"
// IR-LABEL: func.func @mlp()
// IR: lpc.param "fc1.weight" kaiming_uniform : tensor<784x1024xf32>
// IR-LABEL: func.func @helper(
// IR-LABEL: func.func @tiny()
// IR: lpc.param "wte" normal {std = 2.000000e-02 : f64} : tensor<50x16xf32>

// JSON:      [
// JSON-NEXT:   {
// JSON-NEXT:     "entries": [
// JSON-NEXT:       {
// JSON-NEXT:         "bytes": 802816,
// JSON-NEXT:         "detail": "features",
// JSON-NEXT:         "elements": 200704,
// JSON-NEXT:         "kind": "input",
// JSON-NEXT:         "name": "image",
// JSON-NEXT:         "shape": "256x784xf32"
// JSON-NEXT:       },
// JSON-NEXT:       {
// JSON-NEXT:         "bytes": 1024,
// JSON-NEXT:         "detail": "labels",
// JSON-NEXT:         "elements": 256,
// JSON-NEXT:         "kind": "input",
// JSON-NEXT:         "name": "label",
// JSON-NEXT:         "shape": "256xi32"
// JSON-NEXT:       },
// JSON-NEXT:       {
// JSON-NEXT:         "bytes": 3211264,
// JSON-NEXT:         "detail": "kaiming_uniform",
// JSON-NEXT:         "elements": 802816,
// JSON-NEXT:         "kind": "param",
// JSON-NEXT:         "name": "fc1.weight",
// JSON-NEXT:         "shape": "784x1024xf32"
// JSON-NEXT:       },
// JSON-NEXT:       {
// JSON-NEXT:         "bytes": 4096,
// JSON-NEXT:         "detail": "zeros",
// JSON-NEXT:         "elements": 1024,
// JSON-NEXT:         "kind": "param",
// JSON-NEXT:         "name": "fc1.bias",
// JSON-NEXT:         "shape": "1024xf32"
// JSON-NEXT:       },
// JSON-NEXT:       {
// JSON-NEXT:         "bytes": 40960,
// JSON-NEXT:         "detail": "xavier_uniform",
// JSON-NEXT:         "elements": 10240,
// JSON-NEXT:         "kind": "param",
// JSON-NEXT:         "name": "fc2.weight",
// JSON-NEXT:         "shape": "1024x10xf32"
// JSON-NEXT:       },
// JSON-NEXT:       {
// JSON-NEXT:         "bytes": 40,
// JSON-NEXT:         "detail": "zeros",
// JSON-NEXT:         "elements": 10,
// JSON-NEXT:         "kind": "param",
// JSON-NEXT:         "name": "fc2.bias",
// JSON-NEXT:         "shape": "10xf32"
// JSON-NEXT:       }
// JSON-NEXT:     ],
// JSON-NEXT:     "input_bytes": 803840,
// JSON-NEXT:     "model": "mlp",
// JSON-NEXT:     "param_bytes": 3256360,
// JSON-NEXT:     "param_elements": 814090
// JSON-NEXT:   },
// JSON-NEXT:   {
// JSON-NEXT:     "entries": [
// JSON-NEXT:       {
// JSON-NEXT:         "bytes": 128,
// JSON-NEXT:         "detail": "tokens",
// JSON-NEXT:         "elements": 16,
// JSON-NEXT:         "kind": "input",
// JSON-NEXT:         "name": "tokens",
// JSON-NEXT:         "shape": "2x8xi64"
// JSON-NEXT:       },
// JSON-NEXT:       {
// JSON-NEXT:         "bytes": 4,
// JSON-NEXT:         "detail": "ones",
// JSON-NEXT:         "elements": 1,
// JSON-NEXT:         "kind": "param",
// JSON-NEXT:         "name": "temperature",
// JSON-NEXT:         "shape": "f32"
// JSON-NEXT:       },
// JSON-NEXT:       {
// JSON-NEXT:         "bytes": 3200,
// JSON-NEXT:         "detail": "normal",
// JSON-NEXT:         "elements": 800,
// JSON-NEXT:         "kind": "param",
// JSON-NEXT:         "name": "wte",
// JSON-NEXT:         "shape": "50x16xf32"
// JSON-NEXT:       },
// JSON-NEXT:       {
// JSON-NEXT:         "bytes": 12,
// JSON-NEXT:         "detail": "features",
// JSON-NEXT:         "elements": 6,
// JSON-NEXT:         "kind": "input",
// JSON-NEXT:         "name": "hidden",
// JSON-NEXT:         "shape": "2x3xbf16"
// JSON-NEXT:       }
// JSON-NEXT:     ],
// JSON-NEXT:     "input_bytes": 140,
// JSON-NEXT:     "model": "tiny",
// JSON-NEXT:     "param_bytes": 3204,
// JSON-NEXT:     "param_elements": 801
// JSON-NEXT:   }
// JSON-NEXT: ]
// JSON-NOT: {{.}}

// BADOUT: error: lpc-model-summary: cannot write '{{.*}}missing-dir{{/|\\}}summary.txt'

// BADOPT: no such option jsn

// EMPTY: {{^}}[]{{$}}
// EMPTY-NOT: {{.}}

module {
  func.func @mlp() -> tensor<f32> {
    %x = lpc.input "image" features : tensor<256x784xf32>
    %y = lpc.input "label" labels : tensor<256xi32>
    %w1 = lpc.param "fc1.weight" kaiming_uniform : tensor<784x1024xf32>
    %b1 = lpc.param "fc1.bias" zeros : tensor<1024xf32>
    %w2 = lpc.param "fc2.weight" xavier_uniform {gain = 2.0 : f64} : tensor<1024x10xf32>
    %b2 = lpc.param "fc2.bias" zeros : tensor<10xf32>
    %h = lpc.matmul %x, %w1 : tensor<256x784xf32>, tensor<784x1024xf32> -> tensor<256x1024xf32>
    %h1 = lpc.bias_add %h, %b1 : tensor<256x1024xf32>, tensor<1024xf32>
    %a = lpc.relu %h1 : tensor<256x1024xf32>
    %o = lpc.matmul %a, %w2 : tensor<256x1024xf32>, tensor<1024x10xf32> -> tensor<256x10xf32>
    %o1 = lpc.bias_add %o, %b2 : tensor<256x10xf32>, tensor<10xf32>
    %l = lpc.softmax_cross_entropy %o1, %y : tensor<256x10xf32>, tensor<256xi32>
    return %l : tensor<f32>
  }
  func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = lpc.relu %x : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func @tiny() {
    %t = lpc.input "tokens" tokens : tensor<2x8xi64>
    %s = lpc.param "temperature" ones : tensor<f32>
    %e = lpc.param "wte" normal {std = 0.02 : f64} : tensor<50x16xf32>
    %h = lpc.input "hidden" features : tensor<2x3xbf16>
    return
  }
}
