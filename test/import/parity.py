#!/usr/bin/env python3
"""Parity of an imported PyTorch model with PyTorch itself.

    parity.py --bin BUILD/bin --case FILE.py:FUNC --optimizer sgd|adamw [...]

Imports the module with lpc-import, trains it for --steps steps with
`lpc-run --init --data=tensors:` in fp32 on the CPU, trains the same
module in PyTorch fp32 from the same weights on the same batches with the
same optimizer, and compares:
  - every step's loss (relative difference <= --loss-rtol);
  - the final parameters (per tensor ||lpc - torch|| / ||torch|| <=
    --param-rtol), for SGD (a parameter that PyTorch moves by rounding
    noise only, whose gradient is mathematically zero, must stay within
    that noise in lpc too); for AdamW see below;
  - that the weights lpc-run wrote load into the original module with
    load_state_dict (strict) and give the loss lpc logged for the next
    batch;
  - the buffers lpc trains (BatchNorm's running statistics and batch
    counter): float ones within --param-rtol, integer ones equal;
  - with --eval, lpc-run's evaluation (--eval-data: the first 4 batches)
    against PyTorch's module.eval() loss on them, within 1e-4.

The case file provides FUNC() -> (module, example_inputs) and
`batches(n) -> {input name: tensor [n * batch, ...]}` (or another function
named by --batches).

AdamW and parameters whose gradient is mathematically zero (an attention
key bias: softmax is invariant to adding a constant per row) get a
rounding-noise gradient in both programs; AdamW normalizes it to
lr-sized steps in a direction that depends on the rounding, so such a
parameter is compared with an absolute bound of 2 * lr * steps instead
(it moves at most lr per step in either program).
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "lpc-import"))
import lpc_import  # noqa: E402


def load_case(spec):
    path, func = spec.rsplit(":", 1)
    s = importlib.util.spec_from_file_location("case_" + func, path)
    mod = importlib.util.module_from_spec(s)
    s.loader.exec_module(mod)
    return mod, getattr(mod, func)


def save_tensors(path, tensors):
    from safetensors.torch import save_file
    save_file({k: v.contiguous() for k, v in tensors.items()}, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--optimizer", choices=["sgd", "adamw"], required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batches", default="batches",
                    help="the case file's function that makes the batches")
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--loss", default="module")
    ap.add_argument("--experts", choices=["sparse", "dense"], default=None,
                    help="lpc-import --experts (mixture-of-experts layers; default: lpc-import's)")
    ap.add_argument("--loss-rtol", type=float, default=1e-5)
    ap.add_argument("--param-rtol", type=float, default=1e-4)
    ap.add_argument("--eval", action="store_true",
                    help="also compare the evaluation loss (model.eval()) after training")
    ap.add_argument("--policy", default="no", help="lpc-run --mixed-precision (no: fp32 parity)")
    ap.add_argument("--policy-rtol", type=float, default=None,
                    help="for a low-precision policy: the largest relative gap of the mean loss "
                         "of the last 5 steps to PyTorch fp32")
    a = ap.parse_args()
    lr = a.lr if a.lr is not None else (0.05 if a.optimizer == "sgd" else 2e-3)

    mod, factory = load_case(a.case)
    tmp = tempfile.mkdtemp(prefix="lpc-parity-")
    model_mlir = os.path.join(tmp, "model.mlir")
    init = os.path.join(tmp, "init.safetensors")
    rc = lpc_import.main([a.case, "-o", model_mlir, "--weights", init, "--loss", a.loss]
                         + (["--experts", a.experts] if a.experts else []))
    if rc != 0:
        print("FAIL: lpc-import failed")
        return 1

    module, example = factory()
    batches = getattr(mod, a.batches)(a.steps)
    names = list(batches)
    ex = list(example.values()) if isinstance(example, dict) else list(example)
    batch = ex[0].shape[0]
    data = os.path.join(tmp, "data.safetensors")
    save_tensors(data, batches)

    # lpc
    log = os.path.join(tmp, "log.jsonl")
    out = os.path.join(tmp, "trained.safetensors")
    extra = "weight-decay=0 momentum=0.9" if a.optimizer == "sgd" else "weight-decay=0.01"
    eval_batches = 4
    if a.eval:
        evdata = os.path.join(tmp, "eval.safetensors")
        save_tensors(evdata, {k: v[:eval_batches * batch] for k, v in batches.items()})
    cmd = [os.path.join(a.bin, "lpc-run"), model_mlir, f"--mixed-precision={a.policy}",
           f"--data=tensors:{data}", f"--init={init}", f"--optimizer={a.optimizer}", f"--lr={lr}",
           f"--autodiff={extra}", f"--steps={a.steps}", f"--log={log}", f"--save-weights={out}",
           "--cache-dir=off", "--cpu-threads=1"]
    if a.eval:
        cmd.append(f"--eval-data=tensors:{evdata}")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL: lpc-run failed:\n" + " ".join(cmd) + "\n" + r.stderr[-3000:])
        return 1
    records = [json.loads(l) for l in open(log)]
    lpc_losses = [r["loss"] for r in records if "loss" in r]
    lpc_eval = [r["eval_loss"] for r in records if r.get("final") and "eval_loss" in r]

    # PyTorch, fp32, same weights (the module of a fresh factory call: the
    # weights lpc-import wrote), same batches in the same order.
    module.train()
    initial = {n: p.detach().clone() for n, p in module.named_parameters()}
    initial_buffers = {n: b.detach().clone() for n, b in module.named_buffers()}
    if a.optimizer == "sgd":
        opt = torch.optim.SGD(module.parameters(), lr=lr, momentum=0.9, weight_decay=0)
    else:
        opt = torch.optim.AdamW(module.parameters(), lr=lr, weight_decay=0.01)
    torch_losses = []
    step_inputs = []
    for s in range(a.steps):
        b = {k: v[s * batch:(s + 1) * batch] for k, v in batches.items()}
        step_inputs.append(b)
        opt.zero_grad()
        loss = mod.loss_of(module(**b)) if hasattr(mod, "loss_of") else _loss(module(**b), b, a.loss)
        loss.backward()
        opt.step()
        torch_losses.append(loss.item())
    # Before anything else runs the module (a train-mode forward moves
    # running statistics).
    trained_buffers = {n: b.detach().clone() for n, b in module.named_buffers()}
    torch_eval = None
    if a.eval:
        module.eval()
        with torch.no_grad():
            el = [float(mod.loss_of(module(**b)) if hasattr(mod, "loss_of") else _loss(module(**b), b, a.loss))
                  for b in step_inputs[:eval_batches]]
        module.train()
        torch_eval = sum(el) / len(el)

    ok = True
    worst = 0.0
    if len(lpc_losses) != a.steps:
        print(f"FAIL: lpc logged {len(lpc_losses)} losses, expected {a.steps}")
        return 1
    for s, (x, y) in enumerate(zip(lpc_losses, torch_losses)):
        rel = abs(x - y) / max(abs(y), 1e-30)
        worst = max(worst, rel)
        if a.policy == "no" and rel > a.loss_rtol:
            print(f"FAIL: step {s + 1}: lpc loss {x!r}, PyTorch {y!r} (relative {rel:.2e} > {a.loss_rtol:g})")
            ok = False
    print(f"losses: {a.steps} steps, first {lpc_losses[0]:.6f} (PyTorch {torch_losses[0]:.6f}), "
          f"last {lpc_losses[-1]:.6f} (PyTorch {torch_losses[-1]:.6f}), worst relative gap {worst:.2e}")
    if a.policy != "no":
        m_l = sum(lpc_losses[-5:]) / 5
        m_t = sum(torch_losses[-5:]) / 5
        gap = abs(m_l - m_t) / abs(m_t)
        print(f"policy {a.policy}: mean loss of the last 5 steps {m_l:.5f} vs PyTorch fp32 {m_t:.5f} "
              f"(relative gap {gap:.2e}, bound {a.policy_rtol})")
        if a.policy_rtol is None or gap > a.policy_rtol:
            ok = False
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1

    # The trained weights load into the original module (strict), and equal
    # PyTorch's.
    from safetensors.torch import load_file
    fresh, _ = factory()
    sd = load_file(out)
    try:
        fresh.load_state_dict(sd)
    except Exception as e:
        print(f"FAIL: load_state_dict of lpc's weights: {e}")
        return 1
    worst_p = 0.0
    for name, p in module.named_parameters():
        q = dict(fresh.named_parameters())[name].detach()
        p = p.detach()
        diff = float((q - p).norm())
        rel = diff / max(float(p.norm()), 1e-30)
        if a.optimizer == "adamw":
            # Zero-gradient parameters (see above): absolute bound.
            bound = 2 * lr * a.steps * (p.numel() ** 0.5)
            if rel > a.param_rtol and diff > bound:
                print(f"FAIL: parameter {name}: relative {rel:.2e}, absolute {diff:.2e} > {bound:.2e}")
                ok = False
            continue
        # SGD and a parameter whose gradient is mathematically zero (an
        # attention key bias): both programs move it by rounding noise only,
        # so a relative comparison of the two noises means nothing. Such a
        # parameter passes when neither program moved it by more than a
        # gradient of 1e-9 per element would (lr x steps x 1e-9 per
        # element); one that lpc moves further fails.
        noise = lr * a.steps * 1e-9 * (p.numel() ** 0.5)
        moved_torch = float((p - initial[name]).norm())
        moved_lpc = float((q - initial[name]).norm())
        if moved_torch <= noise:
            if moved_lpc > noise:
                print(f"FAIL: parameter {name}: PyTorch moves it by rounding noise only "
                      f"({moved_torch:.2e}), lpc by {moved_lpc:.2e} > {noise:.2e}")
                ok = False
            continue
        worst_p = max(worst_p, rel)
        if rel > a.param_rtol:
            print(f"FAIL: parameter {name}: ||lpc - torch|| / ||torch|| = {rel:.2e} > {a.param_rtol:g}")
            ok = False
    if a.optimizer == "sgd":
        print(f"parameters: {len(sd)} tensors loaded strictly; worst relative difference {worst_p:.2e}")
    # Buffers and aliases round-trip too: the loaded module's loss on the
    # first batch equals the trained PyTorch module's.
    with torch.no_grad():
        b = step_inputs[0]
        l1 = float(mod.loss_of(fresh(**b)) if hasattr(mod, "loss_of") else _loss(fresh(**b), b, a.loss))
        l2 = float(mod.loss_of(module(**b)) if hasattr(mod, "loss_of") else _loss(module(**b), b, a.loss))
    if abs(l1 - l2) > 1e-4 * abs(l2) + (1e-3 if a.optimizer == "adamw" else 0):
        print(f"FAIL: the reloaded module's loss {l1} differs from PyTorch's trained module's {l2}")
        ok = False
    # The buffers lpc updates (the reload above ran fresh in train mode:
    # compare against the loaded file).
    kept, worst_b = 0, 0.0
    for name, t in trained_buffers.items():
        if name not in sd or torch.equal(sd[name], initial_buffers[name]) and \
                torch.equal(t, initial_buffers[name]):
            continue  # a constant buffer, written back unchanged
        kept += 1
        q = sd[name]
        if t.is_floating_point():
            rel = float((q.float() - t.float()).norm()) / max(float(t.float().norm()), 1e-30)
            worst_b = max(worst_b, rel)
            if rel > a.param_rtol:
                print(f"FAIL: buffer {name}: ||lpc - torch|| / ||torch|| = {rel:.2e} > {a.param_rtol:g}")
                ok = False
        elif not torch.equal(q.to(t.dtype), t):
            print(f"FAIL: buffer {name}: lpc {q.tolist()}, PyTorch {t.tolist()}")
            ok = False
    if kept:
        print(f"buffers: {kept} updated by training; worst relative difference {worst_b:.2e}, "
              f"integer ones equal")
    if a.eval:
        te = torch_eval
        if len(lpc_eval) != 1:
            print(f"FAIL: lpc-run logged no final eval_loss")
            ok = False
        else:
            rel = abs(lpc_eval[0] - te) / max(abs(te), 1e-30)
            print(f"eval loss: lpc {lpc_eval[0]:.6f}, PyTorch module.eval() {te:.6f} (relative {rel:.2e})")
            if rel > 1e-4:
                print("FAIL: the evaluation losses differ by more than 1e-4")
                ok = False
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def _loss(out, batch, spec):
    import torch.nn.functional as F
    if spec == "module":
        if isinstance(out, torch.Tensor):
            return out
        return out.loss if hasattr(out, "loss") else out[0]
    kind, idx, labels = spec.split(":")[:3]
    o = out if isinstance(out, torch.Tensor) else out[int(idx)]
    if kind == "cross_entropy":
        return F.cross_entropy(o.reshape(-1, o.shape[-1]), batch[labels].reshape(-1))
    return F.mse_loss(o, batch[labels])


if __name__ == "__main__":
    sys.exit(main())
