"""Checks that a checkpoint written by lpc-run on the CPU and a CUDA artifact
of the same model and settings describe the same train state: every state
argument of the artifact's train step is a tensor of the checkpoint with the
same dtype and shape (key "state/name", or "state" when unnamed), the
checkpoint holds nothing else, and its metadata names the artifact's model,
precision and pipeline. Both runs go through the same trainer (runtime/
Trainer.cpp), which writes and reads checkpoints by these keys, so a
checkpoint of one resumes on the other.

Usage: check_ckpt_compat.py CHECKPOINT.safetensors ARTIFACT.json
Prints one line per check that fails, then "compatible: N tensors" or
"INCOMPATIBLE".
"""
import json
import struct
import sys


def main():
    ckpt, artifact = sys.argv[1], sys.argv[2]
    with open(ckpt, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    meta = header.pop("__metadata__", {})
    art = json.load(open(artifact))
    train = art["train"]
    step = [f for f in art["functions"] if f["name"].endswith("_train_step")]
    bad = []
    if len(step) != 1:
        bad.append("artifact: %d train-step functions" % len(step))
    state = {}
    for a in step[0]["args"] if step else []:
        if a["state"]:
            key = a["state"] + "/" + a["name"] if a["name"] else a["state"]
            state[key] = (a["dtype"], a["shape"])
    for key, (dtype, shape) in sorted(state.items()):
        t = header.get(key)
        if t is None:
            bad.append("missing in the checkpoint: " + key)
        elif (t["dtype"], t["shape"]) != (dtype, shape):
            bad.append("%s: checkpoint %s %s, artifact %s %s" %
                       (key, t["dtype"], t["shape"], dtype, shape))
    for key in sorted(set(header) - set(state)):
        bad.append("only in the checkpoint: " + key)
    for mk, ak in (("model", "model"), ("mixed_precision", "mixed_precision"),
                   ("pipeline", "pipeline")):
        if meta.get(mk) != train.get(ak):
            bad.append("metadata %s: checkpoint %r, artifact %r" %
                       (mk, meta.get(mk), train.get(ak)))
    for line in bad:
        print(line)
    print("INCOMPATIBLE" if bad else "compatible: %d tensors" % len(state))


if __name__ == "__main__":
    main()
