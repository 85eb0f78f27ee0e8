//===- Passes.td - lpc passes ---------------------------------*- tablegen -*-===//
//
// Every lpc pass is declared here (GEN_PASS_DECL / GEN_PASS_DEF), lives in
// passes/<Name>.cpp named after its flag, and has a lit test under
// test/Passes/<flag>.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_PASSES_TD
#define LPC_PASSES_TD

include "mlir/Pass/PassBase.td"

def LpcModelSummary : Pass<"lpc-model-summary", "::mlir::ModuleOp"> {
  let summary = "Prints the parameters and data inputs of each model";
  let description = [{
    For every function that declares `lpc.param` or `lpc.input` ops, prints
    each parameter (name, shape, initializer, element count, FP32 bytes),
    each data input, and the totals, like torchinfo's summary. The IR is left
    unchanged. With `json=true` the summary is one JSON object per function.

    ```
    model @mlp: 4 params, 2 inputs
      param  fc1.weight  784x1024  xavier_uniform  802816  3.06 MiB
      ...
    ```
  }];
  let options = [
    Option<"json", "json", "bool", /*default=*/"false",
           "print JSON instead of a table">,
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "where to write the summary ('-' for stderr)">,
  ];
}

#endif // LPC_PASSES_TD
