"""Writes a hand-made CUDA artifact with a "train" section that the fake
driver (runtime/cuda/tests/FakeDriver.cpp) can run: the PTX modules are the
fake's host kernels, taken from `lpc-cuda-check --print-test-artifact`.

toy_train_step(w [2,3] param, image [8,4], label [8]) -> (w' [2,3], loss):
  w' = 1.0 * w + 0.5 (lpc_fake_affine_2d), loss = image[0, 0] (the same
  kernel on a 1x1 view: which batch the step was given)
toy_eval(w, image, label) -> loss = w[0, 0] (a copy)

With w initialized to 1.0, w after step k is 1 + 0.5 k if, and only if,
each step reads the state the previous one wrote.

Options (the data-parallel tests): --batch=N (8), --loss-row=R (0: the loss
is image[R, 0]), --all-reduce=sum|mean|max (the loss goes through an
all_reduce step of the artifact, NCCL's, on its way to the result).
--label-id-bound=N gives the label input an "id_bound" (the tensor data
check); --image-id-bound=N puts one on the F32 input (an invalid artifact).
usage: toy_train_artifact.py TEST_ARTIFACT.json OUT.json [options]
"""
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("test_artifact")
ap.add_argument("out")
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--loss-row", type=int, default=0)
ap.add_argument("--all-reduce", choices=["sum", "mean", "max"])
ap.add_argument("--label-id-bound", type=int,
                help="mark the label input as ids of an embedding of this many rows")
ap.add_argument("--image-id-bound", type=int, help="the same on the F32 image (invalid)")
args = ap.parse_args()
assert 0 <= args.loss_row < args.batch

test = json.load(open(args.test_artifact))
affine = next(m for m in test["functions"][0]["modules"]
              if "lpc_fake_affine_2d" in m["ptx"])


def slot(dtype, shape, state="", name="", input="", metric="", **kw):
    s = {"dtype": dtype, "shape": shape, "state": state, "name": name,
         "input": input, "metric": metric}
    s.update(kw)
    return s


def view(space, index, sizes, strides, offset=0):
    return {"space": space, "index": index, "offset": offset, "sizes": sizes,
            "strides": strides, "elem_bytes": 4}


inputs = [slot("F32", [args.batch, 4], input="image"),
          slot("I32", [args.batch], input="label")]
if args.label_id_bound is not None:
    inputs[1]["id_bound"] = args.label_id_bound
if args.image_id_bound is not None:
    inputs[0]["id_bound"] = args.image_id_bound
w = slot("F32", [2, 3], state="param", name="w")
loss = slot("F32", [], metric="loss")
step = {
    "name": "toy_train_step", "args": [w] + inputs, "results": [w, loss],
    "arena_bytes": 256, "buffers": [],
    "modules": [{"name": "affine", "ptx": affine["ptx"]}],
    "ops": [
        {"op": "launch", "module": 0, "kernel": "lpc_fake_affine_2d",
         "grid": [1, 1, 1], "block": [64, 1, 1], "shared_bytes": 0,
         "params": [{"view": view("arg", 0, [2, 3], [3, 1])},
                    {"view": view("result", 0, [2, 3], [3, 1])},
                    {"f32": 1.0}, {"f32": 0.5}]},
        {"op": "launch", "module": 0, "kernel": "lpc_fake_affine_2d",
         "grid": [1, 1, 1], "block": [64, 1, 1], "shared_bytes": 0,
         "params": [{"view": view("arg", 1, [1, 1], [4, 1],
                                  offset=4 * args.loss_row)},
                    {"view": view("buffer" if args.all_reduce else "result",
                                  0 if args.all_reduce else 1, [1, 1],
                                  [1, 1])},
                    {"f32": 1.0}, {"f32": 0.0}]},
    ],
}
if args.all_reduce:
    step["buffers"] = [{"offset": 0, "bytes": 4}]
    step["ops"].append({"op": "all_reduce", "reduce": args.all_reduce,
                        "dtype": "F32", "in": view("buffer", 0, [1], [1]),
                        "out": view("result", 1, [], [])})
evaluate = {
    "name": "toy_eval", "args": [w] + inputs, "results": [loss],
    "arena_bytes": 256, "buffers": [], "modules": [],
    "ops": [{"op": "copy", "src": view("arg", 0, [1], [1]),
             "dst": view("result", 0, [], [])}],
}
art = {
    "format": "lpc-cuda-artifact", "version": 2, "chip": "sm_80",
    "producer": "test/Runtime/Inputs/toy_train_artifact.py",
    "functions": [step, evaluate],
    "train": {
        "model": "toy", "batch": args.batch, "text_model": False,
        "feature_input": "image", "features": 4, "label_input": "label",
        "classes": 3, "total_steps": 5, "mixed_precision": "no",
        "pipeline": "hand-written", "lr": 0.001, "lr_schedule": "constant",
        "warmup_steps": 0, "min_lr": 0,
        "params": {"w": {"init": "constant", "value": 1.0}},
    },
}
json.dump(art, open(args.out, "w"), indent=1)
