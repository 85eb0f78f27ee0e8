"""Hand-computed optimizer trajectories for lpc's train step.

Reads the JSON that `lpc-gradcheck --trajectory=N` prints for
Inputs/linear-regression.mlir (initial state, inputs, and the loss and state
after every step, evaluated by the reference evaluator in double precision),
recomputes the same N steps here from scratch in float64 (forward, backward
and the optimizer written out by hand from PyTorch's formulas), and exits
non-zero if any value differs by more than a relative 1e-12.

usage: optimizer_trajectory.py adamw|sgd LR [options as key=value] < trajectory.json
"""
import json
import sys

import numpy as np


def f32(x):
    return float(np.float32(x))


def main():
    kind, lr = sys.argv[1], f32(float(sys.argv[2]))  # lr is an f32 constant
    opts = dict(a.split("=") for a in sys.argv[3:])
    data = json.load(sys.stdin)
    arr = lambda t: np.array(t["data"], dtype=np.float64).reshape(t["shape"])
    x, t = arr(data["inputs"]["x"]), arr(data["inputs"]["t"])
    w, b = arr(data["initial"]["param:w"]), arr(data["initial"]["param:b"])
    params = {"w": w, "b": b}
    state = {k: np.zeros_like(v) for k, v in params.items()}
    state2 = {k: np.zeros_like(v) for k, v in params.items()}
    beta1, beta2 = float(opts.get("beta1", 0.9)), float(opts.get("beta2", 0.999))
    eps, wd = float(opts.get("eps", 1e-8)), float(opts.get("weight-decay", 0.01))
    momentum = float(opts.get("momentum", 0.0))
    nesterov = opts.get("nesterov", "false") == "true"
    worst, checked = 0.0, 0
    for step, rec in enumerate(data["steps"], start=1):
        y = x @ params["w"] + params["b"]
        loss = np.mean((y - t) ** 2)
        dy = 2.0 * (y - t) / y.size
        grads = {"w": x.T @ dy, "b": dy.sum(axis=0)}
        for k in params:
            p, g = params[k], grads[k]
            if kind == "adamw":
                p = p * (1 - lr * wd)
                state[k] = beta1 * state[k] + (1 - beta1) * g
                state2[k] = beta2 * state2[k] + (1 - beta2) * g * g
                mhat = state[k] / (1 - beta1 ** step)
                vhat = state2[k] / (1 - beta2 ** step)
                p = p - lr * mhat / (np.sqrt(vhat) + eps)
            else:
                g = g + wd * p
                state[k] = momentum * state[k] + g
                g = g + momentum * state[k] if nesterov else state[k]
                p = p - lr * g
            params[k] = p
        expect = {"loss": np.array(loss), "param:w": params["w"],
                  "param:b": params["b"]}
        if kind == "adamw":
            expect["exp_avg:w"], expect["exp_avg_sq:w"] = state["w"], state2["w"]
        else:
            expect["momentum_buffer:w"] = state["w"]
        for key, want in expect.items():
            got = np.array(rec[key] if key == "loss" else arr(rec[key]))
            err = np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30))
            worst = max(worst, err)
            checked += want.size
            if err > 1e-12:
                print(f"FAIL step {step} {key}: max rel err {err:.3e}\n"
                      f"  lpc  {got.ravel()[:4]}\n  hand {want.ravel()[:4]}")
                return 1
    print(f"{kind}: {len(data['steps'])} steps, {checked} values match "
          f"(max rel err {worst:.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
