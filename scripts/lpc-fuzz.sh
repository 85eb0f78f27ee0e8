#!/usr/bin/env bash
# libFuzzer runs of lpc's parsers and passes:
#  - the runtime's readers of untrusted files (runtime/fuzz): safetensors
#    (checkpoints, --init, --data=tensors), JSON (artifacts, the runtime-only
#    lpc-run's configs, safetensors headers), IDX (plain and gzipped), text
#    corpora and checkpoint data positions, CUDA artifacts;
#  - `model` (tools/fuzz-model): parse + verify + lpc-autodiff +
#    lpc-mixed-precision on mutated lpc models.
#
#   scripts/lpc fuzz [--runs=N | --seconds=S] [--seed=N] [--build-dir=DIR] [TARGET...]
#
# Builds with clang, coverage, ASan and UBSan in DIR (default build-fuzz):
# the runtime alone in DIR, lpc's dialect and passes in DIR/model (about 5
# minutes on 2 cores). Then runs each target (default: all) from its seeds
# (runtime/fuzz/corpus, tools/fuzz-model/corpus) with its dictionary; the
# grown corpus stays in DIR/corpus. Prints one line per target (inputs run,
# speed, coverage) and exits non-zero on a crash, a leak, a timeout or a
# broken property (the input is saved as DIR/crashes/TARGET-*). --seed fixes
# libFuzzer's random seed (a repeatable run).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build-fuzz"
RUNS=100000
SECONDS_LIMIT=0
SEED=0
TARGETS=()
for a in "$@"; do
  case "$a" in
    --runs=*) RUNS="${a#--runs=}" ;;
    --seconds=*) SECONDS_LIMIT="${a#--seconds=}"; RUNS=-1 ;;
    --seed=*) SEED="${a#--seed=}" ;;
    --build-dir=*) BUILD="${a#--build-dir=}" ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) echo "lpc fuzz: error: unknown option '$a' (see --help)" >&2; exit 1 ;;
    *) TARGETS+=("$a") ;;
  esac
done
case "$RUNS" in ''|*[!0-9-]*) echo "lpc fuzz: error: --runs must be a number, got '$RUNS'" >&2; exit 1 ;; esac
case "$SECONDS_LIMIT" in ''|*[!0-9]*) echo "lpc fuzz: error: --seconds must be a number, got '$SECONDS_LIMIT'" >&2; exit 1 ;; esac
case "$SEED" in ''|*[!0-9]*) echo "lpc fuzz: error: --seed must be a number, got '$SEED'" >&2; exit 1 ;; esac

# clang 22 (the compiler of Debian's LLVM/MLIR 22, whose headers the model
# target includes); any clang with libFuzzer does for the runtime alone.
CXX="${LPC_FUZZ_CXX:-$(command -v clang++-22 || command -v clang++ || true)}"
CC="${LPC_FUZZ_CC:-$(command -v clang-22 || command -v clang || true)}"
[ -n "$CXX" ] && [ -n "$CC" ] || {
  echo "lpc fuzz: error: needs clang and libFuzzer (apt install clang-22 libclang-rt-22-dev; scripts/lpc install does)" >&2
  exit 1
}

# Which builds the targets need: no target named means all of them.
want_runtime=0
want_model=0
if [ ${#TARGETS[@]} -eq 0 ]; then
  want_runtime=1; want_model=1
else
  for t in "${TARGETS[@]}"; do
    if [ "$t" = model ]; then want_model=1; else want_runtime=1; fi
  done
fi

mkdir -p "$BUILD"
if [ "$want_runtime" -eq 1 ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    cmake -G Ninja -S "$ROOT/runtime" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
      -DLPC_RUNTIME_FUZZERS=ON -DLPC_RUNTIME_CPU_GEMM=OFF >"$BUILD/configure.log" 2>&1 ||
      { cat "$BUILD/configure.log" >&2; exit 1; }
  fi
  ninja -C "$BUILD" lpc-fuzzers >"$BUILD/build.log" 2>&1 || { tail -40 "$BUILD/build.log" >&2; exit 1; }
fi
if [ "$want_model" -eq 1 ]; then
  MODEL_BUILD="$BUILD/model"
  mkdir -p "$MODEL_BUILD"
  if [ ! -f "$MODEL_BUILD/build.ninja" ]; then
    cmake -G Ninja -S "$ROOT" -B "$MODEL_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
      -DLPC_MLIR_FUZZER=ON >"$MODEL_BUILD/configure.log" 2>&1 ||
      { cat "$MODEL_BUILD/configure.log" >&2; exit 1; }
  fi
  ninja -C "$MODEL_BUILD" fuzz-model >"$MODEL_BUILD/build.log" 2>&1 ||
    { tail -40 "$MODEL_BUILD/build.log" >&2; exit 1; }
fi

if [ ${#TARGETS[@]} -eq 0 ]; then
  for f in "$BUILD"/bin/fuzz-*; do [ -x "$f" ] && TARGETS+=("$(basename "$f" | sed 's/^fuzz-//')"); done
  TARGETS+=(model)
fi

dict_of() {
  case "$1" in
    safetensors) echo safetensors ;;
    json|artifact|model) echo "$1" ;;
    *) echo "" ;;
  esac
}

[ ${#TARGETS[@]} -gt 0 ] || { echo "lpc fuzz: error: no fuzz targets in $BUILD/bin" >&2; exit 1; }

# The file readers' targets rewrite their input file per run: in memory when
# the machine has /dev/shm.
tmp="$BUILD"
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm

failed=0
mkdir -p "$BUILD/crashes"
for t in "${TARGETS[@]}"; do
  if [ "$t" = model ]; then
    exe="$MODEL_BUILD/bin/fuzz-model"
    seeds="$ROOT/tools/fuzz-model/corpus"
    dicts="$ROOT/tools/fuzz-model/dict"
  else
    exe="$BUILD/bin/fuzz-$t"
    seeds="$ROOT/runtime/fuzz/corpus/$t"
    dicts="$ROOT/runtime/fuzz/dict"
  fi
  [ -x "$exe" ] || { echo "lpc fuzz: error: no target '$t' (built: $(cd "$BUILD/bin" && ls fuzz-* | tr "\n" " ")model)" >&2; exit 1; }
  work="$BUILD/corpus/$t"
  mkdir -p "$work"
  args=(-runs="$RUNS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
        -artifact_prefix="$BUILD/crashes/$t-")
  [ "$SECONDS_LIMIT" -gt 0 ] && args+=(-max_total_time="$SECONDS_LIMIT")
  [ "$SEED" -gt 0 ] && args+=(-seed="$SEED")
  d="$(dict_of "$t")"
  [ -n "$d" ] && args+=(-dict="$dicts/$d.dict")
  log="$BUILD/$t.log"
  start=$(date +%s)
  if (cd "$BUILD" && TMPDIR="$tmp" "$exe" "${args[@]}" "$work" "$seeds") >"$log" 2>&1; then
    status=clean
  else
    status="FAILED (log: $log)"
    failed=1
  fi
  secs=$(( $(date +%s) - start ))
  # (A target that failed early may lack any of these figures.)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
  speed=$(( ${runs:-0} / (secs > 0 ? secs : 1) ))
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | sed 's/cov: //' || true)
  printf 'fuzz-%-12s %10s inputs in %4ss (%s/s), coverage %s edges, corpus %s files: %s\n' \
    "$t" "${runs:-?}" "$secs" "${speed:-?}" "${cov:-?}" "$(ls "$work" | wc -l)" "$status"
  # fuzz-model says where its inputs ended (parser, passes, compiled).
  sed -n 's/^fuzz-model outcomes: /  outcomes: /p' "$log" | tail -1
  [ "$status" = clean ] || { grep -E 'ERROR|property failed|SUMMARY' "$log" | head -5 >&2 || true; }
done
exit $failed
