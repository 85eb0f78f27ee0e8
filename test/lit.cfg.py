# -*- Python -*- lit configuration for lpc.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "lpc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.lpc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%examples", os.path.join(config.lpc_src_root, "examples")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Tools: ours first, then FileCheck & co. from LLVM.
llvm_config.with_environment("PATH", config.lpc_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tools = ["lpc-opt", "lpc-model", "FileCheck", "not", "count"]
llvm_config.add_tool_substitutions(tools, [config.lpc_tools_dir, config.llvm_tools_dir])

if config.have_ptxas:
    config.available_features.add("ptxas")
