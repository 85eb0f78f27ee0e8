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
#   llama-bf16.json, llama.safetensors, ascii.txt, ref-llama-bf16.jsonl
#                                a tiny Hugging Face LLaMA imported with
#                                lpc-import (rotary tables: constant tensors
#                                the kernels read from their PTX module), its
#                                weights, ASCII text and the CPU's first 20
#                                losses (only where the importer's venv,
#                                .venv-torch, exists)
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
"$BIN/lpc-model" gpt --layers=1 --d-model=4096 --heads=32 --seq=2048 --vocab=256 --batch=4 --attention=fused \
  -o "$DIR/gpt-block.mlir"
for p in bf16 fp8; do
  "$BIN/lpc-run" "$DIR/gpt-block.mlir" --device=cuda "$ARCH" --mixed-precision=$p \
    --data=text:"$ROOT/README.md" --steps=30 --emit-artifact="$DIR/gpt-block-$p.json" 2>&1 |
    grep -v '^$' || true
done
TORCH_PY=${LPC_TORCH_VENV:-$ROOT/.venv-torch}/bin/python
if [ -x "$TORCH_PY" ]; then
  # Bytes 0-127 only: the tiny LLaMA's vocabulary has 128 tokens.
  LC_ALL=C tr -cd '\11\12\15\40-\176' <"$ROOT/README.md" >"$DIR/ascii.txt"
  "$TORCH_PY" "$ROOT/tools/lpc-import/lpc_import.py" "$ROOT/test/import/Inputs/hf_llama.py:make" \
    -o "$DIR/llama.mlir" --weights "$DIR/llama.safetensors" >/dev/null
  "$BIN/lpc-run" "$DIR/llama.mlir" --device=cuda "$ARCH" --mixed-precision=bf16 \
    --data=text:"$DIR/ascii.txt" --init="$DIR/llama.safetensors" --emit-artifact="$DIR/llama-bf16.json"
  "$BIN/lpc-run" "$DIR/llama.mlir" --mixed-precision=bf16 --data=text:"$DIR/ascii.txt" \
    --init="$DIR/llama.safetensors" --steps=20 --log="$DIR/ref-llama-bf16.jsonl" >/dev/null 2>&1
  rm -f "$DIR/llama.mlir"
fi
mkdir -p "$DIR/fashion-mnist"
cp "$FMNIST"/*-ubyte.gz "$DIR/fashion-mnist/"
du -sh "$DIR"
