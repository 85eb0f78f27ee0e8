#!/usr/bin/env bash
# scripts/gpu-artifacts.sh - what scripts/gpu-check.sh needs from a machine
# that has the compiler: CUDA artifacts, CPU reference losses and the data.
#
# Writes to DIR (default build-gpuart; it is carried to the GPU machine):
#   mlp-{no,bf16,fp16,fp8}.json  the MLP example (784-1024-1024-10, batch
#                                256), compiled for one Fashion-MNIST epoch
#   ref-mlp-{no,...}.jsonl       its first 20 steps on synthetic data, run
#                                on the CPU here: the GPU must match them
#   ckpt-mlp-fp8/                the CPU's checkpoint after 10 of the fp8
#                                steps (parameters, AdamW moments, FP8
#                                scales and amax histories; 22 MB, so one
#                                precision within the 64 MiB carried): the
#                                GPU resumes from it and must match 11-20
#   gpt-block-{bf16,fp8}.json    one GPT block large enough for an H200
#                                (d_model 4096, 32 heads, seq 2048, batch 4)
#   fashion-mnist/               Debian's Fashion-MNIST files
# Usage: scripts/gpu-artifacts.sh [DIR] [--gpu-arch=sm_90]   (after a build)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR=${1:-$ROOT/build-gpuart}
ARCH=${2:---gpu-arch=sm_90}
BIN=${LPC_BUILD_DIR:-$ROOT/build}/bin
[ -x "$BIN/lpc-run" ] || { echo "gpu-artifacts: build lpc first (scripts/lpc build)" >&2; exit 1; }
mkdir -p "$DIR"
FMNIST=/usr/share/datasets/fashion-mnist
for p in no bf16 fp16 fp8; do
  "$BIN/lpc-run" "$ROOT/examples/mlp.mlir" --device=cuda "$ARCH" --mixed-precision=$p \
    --epochs=1 --emit-artifact="$DIR/mlp-$p.json"
  # The reference: the same 20 steps (synthetic data, seed 0) on the CPU.
  "$BIN/lpc-run" "$ROOT/examples/mlp.mlir" --mixed-precision=$p --data=synthetic --steps=20 \
    --log="$DIR/ref-mlp-$p.jsonl" >/dev/null 2>&1
  rm -rf "$DIR/ckpt-mlp-$p"
  if [ $p = fp8 ]; then
    "$BIN/lpc-run" "$ROOT/examples/mlp.mlir" --mixed-precision=$p --data=synthetic \
      --steps=10 --checkpoint-dir="$DIR/ckpt-mlp-$p" --checkpoint-every=10 >/dev/null 2>&1
  fi
done
"$BIN/lpc-model" gpt --layers=1 --d-model=4096 --heads=32 --seq=2048 --vocab=256 --batch=4 \
  -o "$DIR/gpt-block.mlir"
for p in bf16 fp8; do
  "$BIN/lpc-run" "$DIR/gpt-block.mlir" --device=cuda "$ARCH" --mixed-precision=$p \
    --data=text:"$ROOT/README.md" --steps=30 --emit-artifact="$DIR/gpt-block-$p.json" 2>&1 |
    grep -v '^$' || true
done
mkdir -p "$DIR/fashion-mnist"
cp "$FMNIST"/*-ubyte.gz "$DIR/fashion-mnist/"
du -sh "$DIR"
