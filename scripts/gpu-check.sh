#!/usr/bin/env bash
# scripts/gpu-check.sh - the CUDA runtime's checks on a GPU machine.
#
# For a machine with an NVIDIA GPU and driver, cmake, ninja (or make), a C++17
# compiler and the CUDA toolkit, but no LLVM/MLIR (a GPU machine gets the
# runtime, never the compiler):
#
#   1. configures and builds the runtime alone (cmake -S runtime),
#   2. prints the driver's CUDA version and the devices, and runs the driver
#      self-test, then the GEMM self-test, then the attention self-test
#      (cuDNN's fused attention, forward and backward, small shapes and the
#      d4096 GPT block's B 4 H 32 S 2048 D 128 causal bf16, against a double
#      reference, in a CUDA graph, timed), then the NCCL self-test (the
#      collective steps of a data-parallel artifact through libnccl, one
#      rank) (lpc-cuda-check), first: a broken driver, cuBLASLt, cuDNN or
#      NCCL shows before anything else spends the time,
#   3. runs its ctest suite (the GPU tests run instead of skipping),
#   4. times cuBLASLt GEMMs for a few large shapes in bf16, fp8 (and f16,
#      tf32) and prints TFLOP/s.
#
#   A GPU stage that fails (not one that times out) runs once more with
#   diagnostics, so that one run yields the cause and not only the symptom:
#   CUBLASLT_LOG_LEVEL=2 (cuBLASLt logs its calls and errors),
#   CUDA_LAUNCH_BLOCKING=1 (launches synchronous: a fault is reported by the
#   launch that caused it), LPC_CUDA_GRAPHS=0 (no CUDA graphs) and
#   LPC_CUDA_SYNC_OPS=1 (the runtime waits after every op of a step and names
#   the op that failed), CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr (cuDNN
#   logs its errors and warnings), NCCL_DEBUG=WARN (NCCL says why). Its log
#   is the stage's with "-diag" added.
#
#   5. with the artifacts of scripts/gpu-artifacts.sh (compiled on a machine
#      with LLVM/MLIR and carried here, default build-gpuart): validates
#      them, checks the MLP's first 20 steps in every precision against the
#      CPU's losses, resumes the CPU's fp8 step-10 checkpoint on the GPU
#      (steps 11-20 against the CPU's, and a GPU checkpoint written for the
#      way back, in the results), trains the MLP one Fashion-MNIST epoch per precision
#      (accuracy), and times the large GPT block in bf16 and fp8 against
#      the cost model's step (lpc-cuda-check --estimate) and against
#      PyTorch (bench/gpu_bench.py, when torch with CUDA is there).
#
# Usage: scripts/gpu-check.sh [BUILD_DIR [ARTIFACT_DIR]]
#        (defaults: build-gpucheck, build-gpuart)
# Results (logs, bench.txt, summary.txt) go to $OUT when it is set, else to
# BUILD_DIR/results. Every step has a time limit and the whole script a
# deadline of 470 s ($LPC_GPU_CHECK_SECONDS), so it stays under 8 minutes.
# Exit: 0 all passed, 1 a step failed, 2 no NVIDIA driver
# or GPU (the build and the non-GPU tests still ran).
# LPC_GPU_CHECK_PREBUILT=1: BUILD_DIR is already built (bin/lpc-cuda-check,
# bin/lpc-run): no configure, build or ctest (the script's own test runs it
# so on the fake driver, test/tools/gpu-check-script.test).
set -u -o pipefail

cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build-gpucheck}
ART=${2:-build-gpuart}
RESULTS=${OUT:-$BUILD/results}
mkdir -p "$RESULTS"
SUMMARY=$RESULTS/summary.txt
: >"$SUMMARY"
STATUS=0
START=$(date +%s)
DEADLINE=${LPC_GPU_CHECK_SECONDS:-470}

say() { echo "$*" | tee -a "$SUMMARY"; }
# step NAME LIMIT_SECONDS LOG COMMAND...: runs COMMAND with a time limit,
# output to LOG (and its tail to the terminal on failure); returns its code.
step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local t0 rc dt left
  t0=$(date +%s)
  # The whole script stays within DEADLINE seconds: later steps get what is
  # left, and none starts with less than 10 s.
  left=$((START + DEADLINE - t0))
  if [ $left -lt 10 ]; then
    say "[SKIP] $name: out of time (${DEADLINE}s for the whole check)"
    return 1
  fi
  [ $limit -gt $left ] && limit=$left
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

# The diagnostic settings of a rerun (see the top).
DIAG_ENV=(CUBLASLT_LOG_LEVEL=2 CUDA_LAUNCH_BLOCKING=1 LPC_CUDA_GRAPHS=0 LPC_CUDA_SYNC_OPS=1
  CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr NCCL_DEBUG=WARN)
# gpu_step NAME LIMIT_SECONDS LOG COMMAND...: step, and when it fails (not
# when it times out) the same command once more with DIAG_ENV, its output
# in LOG with "-diag" before the extension. Returns the first run's code.
gpu_step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local rc diag
  step "$name" "$limit" "$log" "$@"
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ]; then
    diag=${log%.*}-diag.${log##*.}
    say "  rerunning '$name' with ${DIAG_ENV[*]}"
    if step "$name (diagnostic rerun)" "$limit" "$diag" env "${DIAG_ENV[@]}" "$@"; then
      say "  it passes with launches synchronous and graphs off: suspect a missing wait (a race) or graph capture"
    else
      # cuBLASLt's and cuDNN's own error lines, if they logged any.
      grep -iE "\[cublasLt\].*\[error\]|^E! CuDNN|CUDNN_STATUS_[A-Z_]+" "$diag" | head -n 10 |
        sed 's/^/    /' | tee -a "$SUMMARY"
    fi
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

# cuDNN and NCCL: the toolkit's or the system's; failing those, the copies
# a pip-installed PyTorch carries (nvidia/cudnn/lib, nvidia/nccl/lib), put on
# the loader's path (cuDNN loads its engine libraries from there too).
for lib in cudnn:libcudnn.so.9 nccl:libnccl.so.2; do
  pkg=${lib%%:*} so=${lib#*:}
  if ! ldconfig -p 2>/dev/null | grep -q "$so" && [ ! -e "$CUDA_DIR/lib64/$so" ] &&
    [ ! -e "$CUDA_DIR/targets/x86_64-linux/lib/$so" ]; then
    dir=$(python3 -c "import nvidia, os, sys; print(next((os.path.join(p, '$pkg', 'lib') for p in nvidia.__path__ if os.path.exists(os.path.join(p, '$pkg', 'lib', '$so'))), ''))" 2>/dev/null)
    if [ -n "$dir" ]; then
      export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      say "$so: not with the toolkit; using PyTorch's, $dir"
    fi
  fi
done

PREBUILT=${LPC_GPU_CHECK_PREBUILT:-0}
if [ "$PREBUILT" != 1 ]; then
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
fi
CHECK=$BUILD/bin/lpc-cuda-check

# Is there a GPU at all? (exit 2: no driver / no device, said in one line)
# The driver's CUDA version, the devices and cuBLASLt, first of all.
timeout 30 "$CHECK" >"$RESULTS/devices.log" 2>&1
rc=$?
sed 's/^/  /' "$RESULTS/devices.log" | tee -a "$SUMMARY"
NO_GPU=0
case $rc in
0) ;;
2) NO_GPU=1 ;;
*) say "[FAIL] lpc-cuda-check: exit $rc" && STATUS=1 ;;
esac
DRIVER=$(sed -nE 's/^NVIDIA driver: (CUDA [0-9.]+).*/\1/p' "$RESULTS/devices.log")
[ -n "$DRIVER" ] && say "driver version: $DRIVER (cuBLAS 13 needs CUDA 13.0, driver R580 or later)"

# The driver and GEMM self-tests before anything else, each its own stage
# (a failure reruns just that one with diagnostics).
if [ $NO_GPU -eq 0 ]; then
  gpu_step "lpc-cuda-check --driver-selftest" 60 "$RESULTS/selftest-driver.log" \
    "$CHECK" --driver-selftest || STATUS=1
  grep -E "^  (ok|FAIL)|all checks|SOME CHECKS" "$RESULTS/selftest-driver.log" | tee -a "$SUMMARY"
  gpu_step "lpc-cuda-check --gemm-selftest" 60 "$RESULTS/selftest-gemm.log" \
    "$CHECK" --gemm-selftest || STATUS=1
  grep -E "^  (ok|FAIL)|all checks|SOME CHECKS|unusable" "$RESULTS/selftest-gemm.log" |
    tee -a "$SUMMARY"
  # cuDNN attention: the reference of the large shape checks two heads
  # (~10 s of host double arithmetic), hence the longer limit.
  gpu_step "lpc-cuda-check --attention-selftest" 150 "$RESULTS/selftest-attention.log" \
    "$CHECK" --attention-selftest || STATUS=1
  grep -E "^  (ok|FAIL|timing|cuDNN)|^cuDNN|all checks|SOME CHECKS" \
    "$RESULTS/selftest-attention.log" | tee -a "$SUMMARY"
  # NCCL (one rank, one GPU): the collective steps of a data-parallel
  # artifact, direct and in a CUDA graph, against a host reference.
  gpu_step "lpc-cuda-check --nccl-selftest" 60 "$RESULTS/selftest-nccl.log" \
    "$CHECK" --nccl-selftest || STATUS=1
  grep -E "^  (ok|FAIL)|^NCCL|all checks|SOME CHECKS" "$RESULTS/selftest-nccl.log" |
    tee -a "$SUMMARY"
fi

if [ "$PREBUILT" != 1 ]; then
  step "ctest" 90 "$RESULTS/ctest.log" ctest --test-dir "$BUILD" --timeout 60 --output-on-failure \
    ${CTEST_EXCLUDE[@]+"${CTEST_EXCLUDE[@]}"} ||
    STATUS=1
  grep -E "tests passed|tests failed|Skipped|\*\*\*Failed" "$RESULTS/ctest.log" | sed 's/^/  /' |
    tee -a "$SUMMARY"
fi

# The artifacts load and validate without a GPU.
if [ -d "$ART" ]; then
  for a in "$ART"/*.json; do
    step "artifact $(basename "$a")" 20 "$RESULTS/artifact-$(basename "$a" .json).log" \
      "$CHECK" --artifact="$a" || STATUS=1
  done
fi

if [ $NO_GPU -eq 1 ]; then
  say "no NVIDIA driver or GPU here: self-tests and benchmarks skipped"
  say "gpu-check: done in $(($(date +%s) - START))s"
  [ $STATUS -eq 0 ] && exit 2 || exit 1
fi

gpu_step "GEMM benchmark" 90 "$RESULTS/bench.txt" "$CHECK" \
  --gemm-bench=4096x4096x4096,8192x2048x8192,8192x8192x8192 \
  --bench-precisions=bf16,fp8-fast,fp8,f16,tf32 --bench-iters=50 || STATUS=1
grep -vE "^(NVIDIA driver|device [0-9]|cuBLASLt:|cuDNN:)" "$RESULTS/bench.txt" | tee -a "$SUMMARY"

RUN=$BUILD/bin/lpc-run
# same_losses REF GPU PRECISION FIRST LAST WHAT: the GPU log has the train
# losses of steps FIRST..LAST and no others, each within the precision's
# tolerance of the CPU's (REF) for the same step.
same_losses() {
  python3 - "$@" <<'PY' | tee -a "$SUMMARY"
import json, sys
ref, gpu, p, first, last, what = sys.argv[1:]
load = lambda f: {r["step"]: r["loss"] for r in map(json.loads, open(f))
                  if "step" in r and "loss" in r}
a, b = load(ref), load(gpu)
steps = list(range(int(first), int(last) + 1))
tol = 2e-3 if p == "no" else 3e-2  # summation order; bf16/fp16/fp8 rounding
ok = sorted(b) == steps and all(s in a for s in steps)
worst = max(abs(a[s] - b[s]) / max(abs(a[s]), 1e-6) for s in steps) if ok else float("inf")
ok = ok and worst <= tol
print(f"  {what}, largest relative difference to the CPU "
      f"{worst:.2e} (tolerance {tol:g}): {'ok' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
}
if [ -d "$ART" ]; then
  # The MLP's first 20 steps (synthetic data, seed 0) against the CPU's.
  for p in no bf16 fp16 fp8; do
    [ -f "$ART/mlp-$p.json" ] || continue
    gpu_step "mlp $p: 20 steps vs the CPU" 40 "$RESULTS/mlp-$p-ref.log" \
      "$RUN" "$ART/mlp-$p.json" --device=cuda --data=synthetic --steps=20 \
      --eval-batches=1 --log="$RESULTS/gpu-mlp-$p.jsonl" || { STATUS=1; continue; }
    same_losses "$ART/ref-mlp-$p.jsonl" "$RESULTS/gpu-mlp-$p.jsonl" $p 1 20 \
      "mlp $p: 20 losses" || STATUS=1
  done
  # A checkpoint the CPU wrote after step 10 resumes on the GPU: steps 11-20
  # against the CPU's. The GPU's own checkpoint after step 20 goes to the
  # results (to resume on a CPU: lpc-run examples/mlp.mlir --resume=...).
  for p in no bf16 fp16 fp8; do
    [ -f "$ART/ckpt-mlp-$p/latest.safetensors" ] || continue
    gpu_step "mlp $p: resume the CPU's step-10 checkpoint" 40 "$RESULTS/mlp-$p-resume.log" \
      "$RUN" "$ART/mlp-$p.json" --device=cuda --data=synthetic --steps=20 \
      --eval-batches=1 --resume="$ART/ckpt-mlp-$p/latest.safetensors" \
      --checkpoint-dir="$RESULTS/gpu-ckpt-mlp-$p" --checkpoint-every=20 \
      --log="$RESULTS/gpu-mlp-$p-resumed.jsonl" || { STATUS=1; continue; }
    same_losses "$ART/ref-mlp-$p.jsonl" "$RESULTS/gpu-mlp-$p-resumed.jsonl" $p 11 20 \
      "mlp $p: resumed from the CPU at step 10, steps 11-20" || STATUS=1
  done
  # An imported PyTorch model (a tiny Hugging Face LLaMA: its rotary tables
  # are constant tensors in the PTX module) from its own weights, 20 steps
  # against the CPU's.
  if [ -f "$ART/llama-bf16.json" ]; then
    gpu_step "imported llama bf16: 20 steps vs the CPU" 40 "$RESULTS/llama-bf16.log" \
      "$RUN" "$ART/llama-bf16.json" --device=cuda --data=text:"$ART/ascii.txt" \
      --init="$ART/llama.safetensors" --steps=20 --eval-batches=1 \
      --log="$RESULTS/gpu-llama-bf16.jsonl" &&
      same_losses "$ART/ref-llama-bf16.jsonl" "$RESULTS/gpu-llama-bf16.jsonl" bf16 1 20 \
        "imported llama bf16: 20 losses" || STATUS=1
  fi
  # One Fashion-MNIST epoch per precision: accuracy and step time.
  for p in no bf16 fp16 fp8; do
    [ -f "$ART/mlp-$p.json" ] || continue
    if gpu_step "mlp $p: one epoch" 60 "$RESULTS/mlp-$p-epoch.log" \
      "$RUN" "$ART/mlp-$p.json" --device=cuda --data-dir="$ART/fashion-mnist" --print-every=100; then
      grep -E "^lpc-run: [0-9]+ steps|^final train loss" "$RESULTS/mlp-$p-epoch.log" |
        sed "s/^/  mlp $p: /" | tee -a "$SUMMARY"
    else
      STATUS=1
    fi
  done
  # The large GPT block: lpc's step time, then PyTorch's in the same run.
  # Its text: the docs (2049-byte sequences, and a held-out tenth for the
  # evaluation), repeated to a few MB.
  TEXT=$BUILD/gpt-text.txt
  for _ in $(seq 30); do cat README.md docs/*.md; done >"$TEXT"
  declare -A MS
  for p in bf16 fp8; do
    [ -f "$ART/gpt-block-$p.json" ] || continue
    if gpu_step "gpt block $p: 30 steps" 100 "$RESULTS/gpt-$p.log" \
      "$RUN" "$ART/gpt-block-$p.json" --device=cuda --data=text:"$TEXT" --steps=30 \
      --eval-batches=1 --print-every=5; then
      grep -E "^lpc-run: ([0-9]+ steps|steps [0-9]+-)" "$RESULTS/gpt-$p.log" |
        sed "s/^/  gpt $p: /" | tee -a "$SUMMARY"
      # The steady state (after the warm-up steps: kernels loaded, GEMM
      # plans chosen, graphs captured), as PyTorch's median is.
      MS[$p]=$(sed -nE 's/^lpc-run: steps [0-9]+-[0-9]+, after [0-9]+ warm-up steps: ([0-9.]+) ms\/step.*/\1/p' \
        "$RESULTS/gpt-$p.log")
    else
      STATUS=1
    fi
  done
  # Every op of the step timed (CUDA events around each, no graphs): the
  # per-op times go to the results (ops-gpt-*.json), for lpc-cuda-check
  # --estimate --measured (measured against modelled, per class and op).
  for p in bf16 fp8; do
    [ -f "$ART/gpt-block-$p.json" ] || continue
    gpu_step "gpt block $p: per-op times" 60 "$RESULTS/gpt-$p-ops.log" \
      "$RUN" "$ART/gpt-block-$p.json" --device=cuda --data=text:"$TEXT" --steps=8 \
      --eval-batches=1 --profile-ops="$RESULTS/ops-gpt-$p.json" || STATUS=1
  done
  # The cost model's step (lpc-cuda-check --estimate, docs/cost-model.md)
  # next to the measured one; with the per-op times, per class as well.
  for p in bf16 fp8; do
    [ -f "$ART/gpt-block-$p.json" ] || continue
    MEASURED=()
    [ -f "$RESULTS/ops-gpt-$p.json" ] && MEASURED=(--measured="$RESULTS/ops-gpt-$p.json")
    "$CHECK" --estimate "$ART/gpt-block-$p.json" --scenario=mid --top=20 \
      ${MEASURED[@]+"${MEASURED[@]}"} >"$RESULTS/estimate-gpt-$p.txt" 2>&1
    if "$CHECK" --estimate "$ART/gpt-block-$p.json" --format=json --top=0 \
      >"$RESULTS/estimate-gpt-$p.json" 2>"$RESULTS/estimate-gpt-$p.log"; then
      python3 - "$RESULTS/estimate-gpt-$p.json" "$p" "${MS[$p]:-}" <<'PY' | tee -a "$SUMMARY"
import json, sys
est = json.load(open(sys.argv[1]))["estimate"]["scenarios"]
p, measured = sys.argv[2], sys.argv[3]
line = (f"  gpt {p}: modelled step {est['mid']['step_ms']:.2f} ms (low "
        f"{est['low']['step_ms']:.2f}, high {est['high']['step_ms']:.2f})")
if measured:
    line += (f", measured {float(measured):.2f} ms/step: measured / modelled "
             f"{float(measured) / est['mid']['step_ms']:.2f}")
print(line)
PY
    else
      say "[FAIL] lpc-cuda-check --estimate $ART/gpt-block-$p.json: see $RESULTS/estimate-gpt-$p.log"
      STATUS=1
    fi
  done
  if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    BENCH=(python3 bench/gpu_bench.py)
    [ -n "${MS[bf16]:-}" ] && BENCH+=(--lpc-bf16-ms="${MS[bf16]}")
    [ -n "${MS[fp8]:-}" ] && BENCH+=(--lpc-fp8-ms="${MS[fp8]}")
    step "PyTorch GPT block (bf16, fp8)" 120 "$RESULTS/torch.log" "${BENCH[@]}" || STATUS=1
    sed 's/^/  /' "$RESULTS/torch.log" | tee -a "$SUMMARY"
  else
    say "no PyTorch with CUDA here: the PyTorch comparison is skipped"
  fi
else
  say "no artifacts in $ART (scripts/gpu-artifacts.sh makes them): training checks skipped"
fi

say "gpu-check: done in $(($(date +%s) - START))s, $([ $STATUS -eq 0 ] && echo 'all passed' || echo 'FAILURES')"
exit $STATUS
