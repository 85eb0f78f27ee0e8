"""Checks a CUDA artifact (docs/cuda-artifact.md) independently of lpc's
own writer and of runtime/cuda's loader:

- every view lies inside its argument, result or buffer;
- two buffers whose uses interleave in the schedule share no byte (the
  arena plan), and every buffer lies inside the arena;
- each launch names an .entry of its module's PTX whose parameter list has
  exactly the parameters the launch passes (a view: two pointers, offset,
  sizes, strides; scalars one each), with matching widths;
- GEMM operands are contiguous rank-3 views with consistent shapes, FP8
  GEMMs' scales rank-0 F32 views, biases F32 [N] views for F32 results;
- copies move equally many bytes between contiguous views;
- a launch's optional cost-model keys (lpc-gpu-launch-info): "access" has
  one of "", "r", "w", "rw" per param ("" for scalars), "serial_iters" is a
  non-negative integer.

Prints one summary line per function; exits 1 with every problem found.
usage: check_artifact.py ARTIFACT.json
"""
import json
import re
import sys

DTYPE_BYTES = {"F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1,
               "I32": 4, "I64": 8, "BOOL": 1}

problems = []


def problem(msg):
    problems.append(msg)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def contiguous(v):
    expect = 1
    for size, stride in reversed(list(zip(v["sizes"], v["strides"]))):
        if size != 1 and stride != expect:
            return False
        expect *= size
    return True


def entry_params(ptx):
    """{kernel name: [param type, ...]} of the .entry directives."""
    out = {}
    for m in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\)", ptx, re.S):
        types = re.findall(r"\.param\s+(\.\w+)", m.group(2))
        out[m.group(1)] = types
    return out


def check_function(fn):
    where = "@" + fn["name"]
    spaces = {
        "arg": [numel(s["shape"]) * DTYPE_BYTES[s["dtype"]] for s in fn["args"]],
        "result": [numel(s["shape"]) * DTYPE_BYTES[s["dtype"]]
                   for s in fn["results"]],
        "buffer": [b["bytes"] for b in fn["buffers"]],
    }
    arena = fn["arena_bytes"]
    for i, b in enumerate(fn["buffers"]):
        if b["offset"] % 256 or b["offset"] < 0 or b["offset"] + b["bytes"] > arena:
            problem(f"{where}: buffer {i} at {b['offset']}+{b['bytes']} "
                    f"outside the {arena}-byte arena or unaligned")
    uses = {}  # buffer -> (first op, last op)

    def view(v, op_index, what):
        space, index = v["space"], v["index"]
        if index >= len(spaces[space]):
            problem(f"{where} op {op_index}: {what}: no {space} {index}")
            return
        lo = hi = v["offset"]
        for size, stride in zip(v["sizes"], v["strides"]):
            if size == 0:
                return
            span = (size - 1) * stride
            lo, hi = lo + min(0, span), hi + max(0, span)
        end = (hi + 1) * v["elem_bytes"]
        if lo < 0 or end > spaces[space][index]:
            problem(f"{where} op {op_index}: {what}: view of {space} {index} "
                    f"spans elements {lo}..{hi} ({end} bytes) of "
                    f"{spaces[space][index]} bytes")
        if space == "buffer":
            f, l = uses.get(index, (op_index, op_index))
            uses[index] = (min(f, op_index), max(l, op_index))

    entries = [entry_params(m["ptx"]) for m in fn["modules"]]
    counts = {"launch": 0, "gemm": 0, "copy": 0, "collective": 0}
    collectives = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all",
                   "shard")
    for k, op in enumerate(fn["ops"]):
        kind = "collective" if op["op"] in collectives else op["op"]
        if kind in counts:
            counts[kind] += 1
        if op["op"] == "launch":
            name = op["kernel"]
            params = entries[op["module"]].get(name)
            if params is None:
                problem(f"{where} op {k}: no .entry {name} in module "
                        f"{fn['modules'][op['module']]['name']}")
                continue
            passed = []
            for p in op["params"]:
                if "view" in p:
                    view(p["view"], k, name)
                    passed += ["ptr", "ptr"] + ["i64"] * (
                        1 + 2 * len(p["view"]["sizes"]))
                else:
                    (kind,) = p.keys()
                    passed.append(kind)
            if "access" in op:
                acc = op["access"]
                if not isinstance(acc, list) or len(acc) != len(op["params"]):
                    problem(f"{where} op {k}: access is not a list with one "
                            f"entry per param")
                else:
                    for a, p in zip(acc, op["params"]):
                        if a not in ("", "r", "w", "rw") or \
                                (a and "view" not in p):
                            problem(f"{where} op {k}: access {a!r} for a "
                                    f"{'view' if 'view' in p else 'scalar'}")
            if "serial_iters" in op and not (
                    isinstance(op["serial_iters"], int) and
                    not isinstance(op["serial_iters"], bool) and
                    op["serial_iters"] >= 0):
                problem(f"{where} op {k}: serial_iters is not a non-negative "
                        f"integer")
            widths = {"ptr": ".u64", "i64": ".u64", "i32": ".u32",
                      "f32": ".f32", "f64": ".f64"}
            want = [widths[p] for p in passed]
            got = [{".b64": ".u64", ".s64": ".u64", ".b32": ".u32",
                    ".s32": ".u32"}.get(t, t) for t in params]
            if want != got:
                problem(f"{where} op {k}: {name} takes {len(got)} parameters "
                        f"{got}, the launch passes {len(want)} {want}")
            # CUDA's limits: grid x < 2^31, y and z < 2^16; blocks of at
            # most 1024 threads, z at most 64.
            gx, gy, gz = op["grid"]
            bx, by, bz = op["block"]
            if min(op["grid"] + op["block"]) < 1 or numel(op["block"]) > 1024 \
                    or gx >= 2**31 or gy >= 2**16 or gz >= 2**16 or bz > 64:
                problem(f"{where} op {k}: bad launch shape {op['grid']} x "
                        f"{op['block']}")
        elif op["op"] == "gemm":
            a, b, c = op["a"], op["b"], op["c"]
            for key, v in (("a", a), ("b", b), ("c", c)):
                view(v, k, "gemm " + key)
                if len(v["sizes"]) != 3 or not contiguous(v):
                    problem(f"{where} op {k}: gemm {key} is not a contiguous "
                            f"rank-3 view")
            # Dequantization factors of FP8 GEMMs: rank-0 F32, both or none.
            scales = [op[key] for key in ("a_scale", "b_scale") if key in op]
            for key, v in zip(("a_scale", "b_scale"), scales):
                view(v, k, "gemm " + key)
                if v["sizes"] != [] or v["elem_bytes"] != 4:
                    problem(f"{where} op {k}: gemm {key} is not a rank-0 F32 view")
            if len(scales) == 1 or (scales and not op["a_type"].startswith("F8")):
                problem(f"{where} op {k}: gemm scales need both, and FP8 operands")
            if "bias" in op:
                view(op["bias"], k, "gemm bias")
                if op["c_type"] != "F32" or op["bias"]["elem_bytes"] != 4 or \
                        not contiguous(op["bias"]) or \
                        op["bias"]["sizes"] != [c["sizes"][2]]:
                    problem(f"{where} op {k}: gemm bias is not an F32 [N] view "
                            f"for an F32 C")
            if problems and problems[-1].startswith(f"{where} op {k}: gemm"):
                continue
            for key in "abc":
                if op[key]["elem_bytes"] != DTYPE_BYTES[op[key + "_type"]]:
                    problem(f"{where} op {k}: gemm {key} element size")
            ba, ra, ca = a["sizes"]
            m, kk = (ca, ra) if op["trans_a"] else (ra, ca)
            bb, rb, cb = b["sizes"]
            kb, n = (cb, rb) if op["trans_b"] else (rb, cb)
            if (kb != kk or c["sizes"] != [ba, m, n] or
                    bb != (1 if op["broadcast_b"] else ba)):
                problem(f"{where} op {k}: gemm shapes {a['sizes']} x "
                        f"{b['sizes']} -> {c['sizes']} do not fit")
        elif op["op"] == "copy":
            s, d = op["src"], op["dst"]
            view(s, k, "copy src")
            view(d, k, "copy dst")
            if not (contiguous(s) and contiguous(d)) or \
                    numel(s["sizes"]) * s["elem_bytes"] != \
                    numel(d["sizes"]) * d["elem_bytes"]:
                problem(f"{where} op {k}: copy between non-contiguous or "
                        f"unequal views")
        elif op["op"] in collectives:
            # NCCL's: contiguous F32, BF16, F16 or FP8 views of the dtype;
            # one side holds `ranks` blocks of the other (all_reduce: the
            # same size; all_to_all: the same size, `ranks` blocks each).
            i, o = op["in"], op["out"]
            view(i, k, op["op"] + " in")
            view(o, k, op["op"] + " out")
            blocks = 1 if op["op"] in ("all_reduce", "all_to_all") \
                else op["ranks"]
            small, large = ((i, o) if op["op"] == "all_gather" else (o, i))
            width = {"F32": 4, "BF16": 2, "F16": 2, "F8_E4M3": 1,
                     "F8_E5M2": 1}.get(op["dtype"])
            whole = op["op"] != "all_to_all" or \
                numel(i["sizes"]) % op["ranks"] == 0
            if not (contiguous(i) and contiguous(o)) or width is None or \
                    i["elem_bytes"] != width or o["elem_bytes"] != width or \
                    numel(large["sizes"]) != blocks * numel(small["sizes"]) \
                    or not whole:
                problem(f"{where} op {k}: {op['op']} views do not fit")
        else:
            problem(f"{where} op {k}: unknown op {op['op']}")

    # The plan: buffers in use at the same time share no byte.
    live = sorted(uses.items())
    for i, (bi, (fi, li)) in enumerate(live):
        for bj, (fj, lj) in live[i + 1:]:
            if li < fj or lj < fi:
                continue
            x, y = fn["buffers"][bi], fn["buffers"][bj]
            if x["offset"] < y["offset"] + y["bytes"] and \
                    y["offset"] < x["offset"] + x["bytes"]:
                problem(f"{where}: buffers {bi} and {bj} are live together "
                        f"(ops {fi}-{li}, {fj}-{lj}) and overlap")
    total = sum(b["bytes"] for b in fn["buffers"])
    print(f"{where}: {len(fn['args'])} args, {len(fn['results'])} results, "
          f"{counts['launch']} launches of {len(fn['modules'])} modules, "
          f"{counts['gemm']} gemms, {counts['copy']} copies"
          + (f", {counts['collective']} collectives" if counts["collective"]
             else "") + "; arena "
          f"{arena} bytes for {total} bytes of {len(fn['buffers'])} buffers")


def main():
    art = json.load(open(sys.argv[1]))
    if art.get("format") != "lpc-cuda-artifact" or art.get("version") != 2:
        problem("not a version 2 lpc-cuda-artifact")
    else:
        print(f"artifact for {art['chip']}: "
              f"{len(art['functions'])} functions")
        for fn in art["functions"]:
            check_function(fn)
    for p in problems:
        print("error:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
