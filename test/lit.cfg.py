# -*- Python -*- lit configuration for lpc.
import os
import shutil
import subprocess
import sys

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
tools = ["lpc-opt", "lpc-model", "lpc-eval", "lpc-gradcheck", "lpc-jit", "FileCheck", "not", "count"]
llvm_config.add_tool_substitutions(tools, [config.lpc_tools_dir, config.llvm_tools_dir])

# libgomp (oneDNN's threads) spins after each GEMM; on a shared 2-core
# machine that makes every GEMM wait a scheduler tick (runtime/gemm/README.md).
config.environment["OMP_WAIT_POLICY"] = "passive"

# Compiled code is cached in the build tree, never in the user's home
# (tests of the cache itself set their own directory).
config.environment["LPC_CACHE_DIR"] = os.path.join(config.test_exec_root, "lpc-cache")

if os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"):
    config.available_features.add("fashion-mnist")
tools.append("lpc-run")
llvm_config.add_tool_substitutions(["lpc-run"], [config.lpc_tools_dir])

# Data-parallel runs: lpc built with MPI (runtime/comm) and Open MPI's
# mpirun. Open MPI runs as root only with its documented opt-in; two ranks
# on a 2-core machine need --oversubscribe; no single-copy (CMA) transfers,
# which containers often forbid. Tests say `REQUIRES: mpirun` and run
# `%mpirun -np N ...`; without them they report as unsupported.
if getattr(config, "have_mpi", False) and shutil.which("mpirun"):
    config.available_features.add("mpirun")
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    config.environment["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
config.substitutions.append(("%mpirun", "mpirun --oversubscribe"))

if getattr(config, "have_cuda_runtime", False):
    config.available_features.add("cuda-runtime")
    llvm_config.add_tool_substitutions(["lpc-cuda-check", "lpc-run-artifact"],
                                       [config.lpc_tools_dir])
    config.substitutions.append(
        ("%fake_cuda", os.path.join(config.lpc_obj_root, "runtime", "cuda",
                                    "liblpc-fake-cuda.so")))
    # The stand-in libnccl (runtime/cuda/tests/FakeNccl.cpp): collectives
    # over MPI on the fake driver's memory.
    config.substitutions.append(
        ("%fake_nccl", os.path.join(config.lpc_obj_root, "runtime", "cuda",
                                    "liblpc-fake-nccl.so")))

if config.have_ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", getattr(config, "ptxas", "ptxas")))

# Python for test oracles (ml_dtypes, numpy): the interpreter CMake was given
# (LPC_PYTHON, a venv made by scripts/lpc), else the one running lit. Tests
# that need ml_dtypes say `REQUIRES: ml_dtypes` and run `%python`.
lpc_python = getattr(config, "lpc_python", "") or sys.executable
try:
    # Resolve wrappers (e.g. pyenv shims) to the real interpreter.
    lpc_python = subprocess.run(
        [lpc_python, "-c", "import ml_dtypes, numpy, sys; print(sys.executable)"],
        capture_output=True, text=True, check=True).stdout.strip()
    config.available_features.add("ml_dtypes")
except (OSError, subprocess.CalledProcessError):
    pass
# (use_default_substitutions already defined %python as lit's own python.)
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", '"%s"' % lpc_python))

# The PyTorch importer's interpreter (LPC_TORCH_PYTHON, the tools venv
# scripts/lpc makes with torch, transformers and safetensors). Tests of
# lpc-import say `REQUIRES: torch` and run `%torch-python`.
torch_python = getattr(config, "lpc_torch_python", "")
if torch_python:
    try:
        subprocess.run([torch_python, "-c", "import torch, transformers, safetensors"],
                       capture_output=True, check=True, timeout=120)
        config.available_features.add("torch")
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        pass
config.substitutions.append(("%torch-python", '"%s"' % (torch_python or "python3")))
config.substitutions.append(("%lpc-import", '"%s" "%s"' % (
    torch_python or "python3", os.path.join(config.lpc_src_root, "tools", "lpc-import", "lpc_import.py"))))
config.substitutions.append(("%tools", config.lpc_tools_dir))

# lpc-plot and lpc-compare (tools/lpc-plot) run in the test venv, which holds
# matplotlib; tests of them say `REQUIRES: matplotlib`.
try:
    subprocess.run([lpc_python, "-c", "import matplotlib"], capture_output=True,
                   check=True, timeout=120)
    config.available_features.add("matplotlib")
except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
    pass
for name, script in (("%lpc-plot", "lpc_plot.py"), ("%lpc-compare", "lpc_compare.py")):
    config.substitutions.append((name, '"%s" "%s"' % (
        lpc_python, os.path.join(config.lpc_src_root, "tools", "lpc-plot", script))
        # lpc-compare runs this build's lpc-run (not build/'s: the sanitizer
        # build is another directory).
        + (' "--lpc-run=%s"' % os.path.join(config.lpc_tools_dir, "lpc-run")
           if name == "%lpc-compare" else "")))

# The libFuzzer targets (scripts/lpc-fuzz.sh: the runtime's readers and
# fuzz-model) need clang 22 (that of Debian's MLIR 22) with compiler-rt's
# libFuzzer; tests of them say `REQUIRES: libfuzzer`.
clangxx = shutil.which("clang++-22")
if clangxx:
    try:
        lib = subprocess.run([clangxx, "-print-file-name=libclang_rt.fuzzer-x86_64.a"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
        if os.path.isabs(lib) and os.path.exists(lib):
            config.available_features.add("libfuzzer")
    except (OSError, subprocess.TimeoutExpired):
        pass
config.substitutions.append(("%lpc-fuzz", os.path.join(config.lpc_src_root, "scripts", "lpc-fuzz.sh")))
