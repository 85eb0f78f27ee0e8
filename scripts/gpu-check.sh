#!/usr/bin/env bash
# scripts/gpu-check.sh - the CUDA runtime's checks on a GPU machine.
#
# For a machine with an NVIDIA GPU and driver, cmake, ninja (or make), a C++17
# compiler and the CUDA toolkit, but no LLVM/MLIR (a GPU machine gets the
# runtime, never the compiler):
#
#   1. configures and builds the runtime alone (cmake -S runtime),
#   2. runs its ctest suite (the GPU tests run instead of skipping),
#   3. runs lpc-cuda-check --driver-selftest --gemm-selftest,
#   4. times cuBLASLt GEMMs for a few large shapes in bf16, fp8 (and f16,
#      tf32) and prints TFLOP/s.
#
# Usage: scripts/gpu-check.sh [BUILD_DIR]      (default: build-gpucheck)
# Results (logs, bench.txt, summary.txt) go to $OUT when it is set, else to
# BUILD_DIR/results. Every step has a time limit; the whole script stays
# under 8 minutes. Exit: 0 all passed, 1 a step failed, 2 no NVIDIA driver
# or GPU (the build and the non-GPU tests still ran).
set -u -o pipefail

cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build-gpucheck}
RESULTS=${OUT:-$BUILD/results}
mkdir -p "$RESULTS"
SUMMARY=$RESULTS/summary.txt
: >"$SUMMARY"
STATUS=0
START=$(date +%s)

say() { echo "$*" | tee -a "$SUMMARY"; }
# step NAME LIMIT_SECONDS LOG COMMAND...: runs COMMAND with a time limit,
# output to LOG (and its tail to the terminal on failure); returns its code.
step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local t0 rc dt
  t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
  rc=$?
  dt=$(($(date +%s) - t0))
  if [ $rc -eq 0 ]; then
    say "[ ok ] $name (${dt}s)"
  else
    if [ $rc -eq 124 ]; then
      say "[FAIL] $name: timed out after ${limit}s"
    else
      say "[FAIL] $name: exit $rc (${dt}s), log: $log"
    fi
    tail -n 25 "$log" | sed 's/^/    /'
  fi
  return $rc
}

say "gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) CPUs"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
    --format=csv,noheader 2>/dev/null | sed 's/^/  nvidia-smi: /' | tee -a "$SUMMARY"
fi

# Configure: CUDA from $CUDA_HOME or /usr/local/cuda; zlib and oneDNN (CPU
# GEMMs, not what this script checks) only when their headers are there.
GEN=Ninja
command -v ninja >/dev/null 2>&1 || GEN="Unix Makefiles"
ARGS=(-G "$GEN" -S runtime -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DLPC_RUNTIME_CUDA=ON)
CUDA_DIR=${CUDA_HOME:-/usr/local/cuda}
[ -d "$CUDA_DIR" ] && ARGS+=(-DCUDAToolkit_ROOT="$CUDA_DIR")
CTEST_EXCLUDE=()
if [ ! -f /usr/include/zlib.h ]; then
  ARGS+=(-DLPC_RUNTIME_ZLIB=OFF)
  # Without zlib the runtime cannot read Debian's gzipped Fashion-MNIST.
  CTEST_EXCLUDE=(-E 'runtime/fashion-mnist')
fi
[ -f /usr/include/oneapi/dnnl/dnnl.h ] || ARGS+=(-DLPC_RUNTIME_CPU_GEMM=OFF)

if ! step "configure (cmake ${ARGS[*]})" 60 "$RESULTS/configure.log" cmake "${ARGS[@]}"; then
  exit 1
fi
if ! grep -q "lpc: CUDA runtime with" "$RESULTS/configure.log"; then
  say "[FAIL] the CUDA toolkit was not found (set CUDA_HOME)"
  exit 1
fi
if ! step "build" 150 "$RESULTS/build.log" cmake --build "$BUILD" -j "$(nproc)"; then
  exit 1
fi
CHECK=$BUILD/bin/lpc-cuda-check

# Is there a GPU at all? (exit 2: no driver / no device, said in one line)
timeout 30 "$CHECK" >"$RESULTS/devices.log" 2>&1
rc=$?
sed 's/^/  /' "$RESULTS/devices.log" | tee -a "$SUMMARY"
NO_GPU=0
case $rc in
0) ;;
2) NO_GPU=1 ;;
*) say "[FAIL] lpc-cuda-check: exit $rc" && STATUS=1 ;;
esac

step "ctest" 90 "$RESULTS/ctest.log" ctest --test-dir "$BUILD" --timeout 60 --output-on-failure \
  ${CTEST_EXCLUDE[@]+"${CTEST_EXCLUDE[@]}"} ||
  STATUS=1
grep -E "tests passed|tests failed|Skipped|\*\*\*Failed" "$RESULTS/ctest.log" | sed 's/^/  /' |
  tee -a "$SUMMARY"

if [ $NO_GPU -eq 1 ]; then
  say "no NVIDIA driver or GPU here: self-tests and benchmarks skipped"
  say "gpu-check: done in $(($(date +%s) - START))s"
  [ $STATUS -eq 0 ] && exit 2 || exit 1
fi

step "lpc-cuda-check --driver-selftest --gemm-selftest" 60 "$RESULTS/selftest.log" \
  "$CHECK" --driver-selftest --gemm-selftest || STATUS=1
grep -E "^  (ok|FAIL)|all checks|SOME CHECKS" "$RESULTS/selftest.log" | tee -a "$SUMMARY"

step "GEMM benchmark" 90 "$RESULTS/bench.txt" "$CHECK" \
  --gemm-bench=4096x4096x4096,8192x2048x8192,8192x8192x8192 \
  --bench-precisions=bf16,fp8-fast,fp8,f16,tf32 --bench-iters=50 || STATUS=1
grep -vE "^(NVIDIA driver|device [0-9]|cuBLASLt:)" "$RESULTS/bench.txt" | tee -a "$SUMMARY"

say "gpu-check: done in $(($(date +%s) - START))s, $([ $STATUS -eq 0 ] && echo 'all passed' || echo 'FAILURES')"
exit $STATUS
