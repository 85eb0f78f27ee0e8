//===- lpc-opt.cpp - mlir-opt with the lpc dialect and passes -------------===//
//
// Behaves like mlir-opt (every upstream dialect and pass is registered, plus
// lpc's), except that the output file is written atomically: the result goes
// to a temporary file that is renamed over `-o` only when everything
// succeeded, so a failed run never leaves a truncated or half-written file.
//
//===----------------------------------------------------------------------===//

#include "lpc/Conversion/Passes.h"
#include "lpc/Dialect/LpcDialect.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR (then PTX).
  registerAllToLLVMIRTranslations(registry);
  registry.insert<lpc::LpcDialect>();
  registerAllPasses();
  lpc::registerLpcPasses();
  lpc::registerLpcPipelines();
  lpc::registerLpcConversionPasses();
  lpc::registerCPUCodegenPipeline();
  lpc::registerGPUCodegenPipeline();

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv,
      "lpc-opt: apply passes to lpc / MLIR modules (mlir-opt conventions)",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects:\n";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), "\n");
    llvm::outs() << "\n";
    return 0;
  }
  if (config.shouldListPasses()) {
    printRegisteredPasses();
    return 0;
  }

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "lpc-opt: " << error << "\n";
    return 1;
  }

  std::string result;
  {
    llvm::raw_string_ostream os(result);
    if (failed(MlirOptMain(os, std::move(input), registry, config)))
      return 1;
  }

  if (llvm::Error err = llvm::writeToOutput(
          outputFilename, [&](llvm::raw_ostream &os) -> llvm::Error {
            os << result;
            return llvm::Error::success();
          })) {
    // The error text already names the file.
    llvm::errs() << "lpc-opt: cannot write output: "
                 << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  return 0;
}
