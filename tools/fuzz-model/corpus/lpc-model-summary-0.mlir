// --lpc-model-summary: a table (or JSON) of each model's parameters and data
// inputs on stderr or in the `output` file; the IR is not changed.

// The table goes to stderr; column alignment is checked exactly.
// The IR is unchanged: byte-identical to a run without the pass.
// JSON, through the flag and through a pass pipeline.
// output=FILE writes the summary there and nothing to stderr.
// An explicit json=false is the table.
// An output file that cannot be written is an error.
// An unknown pass option is an error.
// Without params or inputs there is nothing to list: no table, an empty JSON array.

// A function without params or inputs is not listed.
// Rows are in program order; a 0-d parameter's shape is its element type.






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
