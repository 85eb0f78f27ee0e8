#!/bin/sh
# The runtime-only build (issue: "a CMake option builds only the runtime and
# lpc-run"): configures runtime/ on its own in BUILD_DIR, builds lpc-run and
# lpc-cuda-check, and checks that neither links LLVM/MLIR and that lpc-run
# answers --help and says in one line, with exit 2, that there is no driver.
# usage: standalone-build.sh SOURCE_DIR BUILD_DIR
set -eu
src=$1 build=$2
cmake -G Ninja -S "$src/runtime" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DLPC_RUNTIME_CPU_GEMM=OFF >"$build.log" 2>&1 || { cat "$build.log"; exit 1; }
ninja -C "$build" -j1 lpc-run lpc-cuda-check >>"$build.log" 2>&1 || { tail -40 "$build.log"; exit 1; }
for t in lpc-run lpc-cuda-check; do
  if ldd "$build/bin/$t" | grep -Ei 'libLLVM|libMLIR'; then
    echo "error: $t links LLVM/MLIR"; exit 1
  fi
done
"$build/bin/lpc-run" --help | grep -q 'usage: lpc-run ARTIFACT.json --device=cuda'
set +e
LPC_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1 "$build/bin/lpc-run" x.json --device=cuda 2>"$build.err"
rc=$?
set -e
cat "$build.err"
[ "$rc" -eq 2 ] || { echo "error: exit $rc, expected 2"; exit 1; }
grep -q 'no NVIDIA driver' "$build.err"
echo "runtime-only build: lpc-run and lpc-cuda-check built without LLVM/MLIR"
