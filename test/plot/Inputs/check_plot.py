"""Checks lpc-plot's outputs against the logs they were drawn from.

  check_plot.py png FILE            a valid PNG: prints its size
  check_plot.py svg FILE            valid SVG: prints its texts and series ids
  check_plot.py html FILE           the page's table rows and that it holds an SVG
  check_plot.py dump DUMP RUN...    every series of --dump-series against the
                                    JSONL (raw loss, eval points, gap at
                                    --smooth=1, loss scale, FP8 telemetry)
  check_plot.py report DIR          lpc-compare's report.md against its runs
Prints one line per fact for FileCheck; a mismatch exits 1 with the reason.
"""

import json
import math
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib


def die(msg):
    print("MISMATCH: " + msg)
    sys.exit(1)


def close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def check_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        die("%s: no PNG signature" % path)
    # Walk the chunks: each CRC must match, IEND must end the file.
    pos, chunks = 8, []
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        if zlib.crc32(kind + body) != crc:
            die("%s: bad CRC in chunk %s" % (path, kind))
        chunks.append(kind)
        pos += 12 + n
    if chunks[0] != b"IHDR" or chunks[-1] != b"IEND":
        die("%s: chunks %s" % (path, chunks))
    w, h = struct.unpack(">II", data[16:24])
    print("png ok %s chunks, %dx%d" % ("IDAT" if b"IDAT" in chunks else "no-IDAT",
                                       w, h) if w > 100 and h > 100 else "png too small")


def svg_facts(root):
    ns = "{http://www.w3.org/2000/svg}"
    texts, ids, images = [], [], 0
    for el in root.iter():
        if el.tag == ns + "text":
            t = "".join(el.itertext()).strip()
            if t:
                texts.append(t)
        if el.get("id"):
            ids.append(el.get("id"))
        if el.tag == ns + "image":
            images += 1
    return texts, ids, images


def check_svg(path):
    root = ET.parse(path).getroot()
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        die("%s: root is %s" % (path, root.tag))
    texts, ids, images = svg_facts(root)
    print("svg ok, %d images" % images)
    for t in sorted(set(texts)):
        print("text: " + t)
    # Series ids lpc-plot sets (loss-raw-LABEL, gap-LABEL, amax-...).
    for i in sorted(set(ids)):
        if re.match(r"(loss-raw|loss-smooth|eval|gap|gap-eval|loss-scale|skipped|amax|scale|"
                    r"heat)-", i):
            print("id: " + i)


def check_html(path):
    text = open(path, encoding="utf-8").read()
    if not text.startswith("<!DOCTYPE html>") or "</html>" not in text:
        die("%s: not an HTML page" % path)
    svg = text[text.index("<svg"):text.index("</svg>") + 6]
    ET.fromstring(svg)  # the inline figure is well-formed
    rows = re.findall(r"<tr>(.*?)</tr>", text, re.S)
    print("html ok, svg inline, %d table rows" % (len(rows) - 1))
    for r in rows[1:]:
        print("row: " + re.sub(r"</td><td>", " | ", re.sub(r"^<td>|</td>$", "", r)))


def read_jsonl(path):
    recs = [json.loads(l) for l in open(path)]
    return [r for r in recs if "step" in r], recs[-1]


def check_dump(dump_path, run_paths):
    dump = json.load(open(dump_path))
    logs = {}
    for r in dump["runs"]:
        steps, summary = read_jsonl(r["path"])
        if summary != r["summary"]:
            die("%s: the dump's summary differs from the log's" % r["path"])
        logs[r["label"]] = steps, summary
    if sorted(os.path.abspath(p) for p in run_paths) != \
            sorted(os.path.abspath(r["path"]) for r in dump["runs"]):
        die("the dump's runs are not the files given")
    panels = {p["title"]: p["series"] for p in dump["panels"]}
    print("baseline: " + dump["baseline"])
    # Loss: raw = the log's losses, eval = the periodic evals + the final one.
    for s in panels["loss"]:
        steps, summary = logs[s["label"]]
        if s["kind"] == "raw":
            if s["x"] != [r["step"] for r in steps] or \
                    any(not close(y, r["loss"]) for y, r in zip(s["y"], steps)):
                die("raw loss of %s differs from its log" % s["label"])
        if s["kind"] == "eval":
            want = [(r["step"], r["eval_loss"]) for r in steps if "eval_loss" in r]
            want.append((summary["steps"], summary["eval_loss"]))
            if list(zip(s["x"], s["y"])) != want:
                die("eval points of %s: %s, log %s" % (s["label"], s["x"], want))
        print("loss %s %s: %d points" % (s["kind"], s["label"], len(s["x"])))
    # Gap at --smooth=1 (no smoothing): exactly (loss - base) / base.
    base_steps = {r["step"]: r["loss"] for r in logs[dump["baseline"]][0]}
    for s in panels.get("gap", []):
        if s["kind"] != "gap_percent":
            continue
        mine = {r["step"]: r["loss"] for r in logs[s["label"]][0]}
        for x, y in zip(s["x"], s["y"]):
            want = 100.0 * (mine[x] - base_steps[x]) / base_steps[x]
            if not close(y, want, 1e-7):
                die("gap of %s at step %d: %r, want %r" % (s["label"], x, y, want))
        print("gap %s: %d points, last %+.4f%%" % (s["label"], len(s["x"]), s["y"][-1]))
    for s in panels.get("loss scale", []):
        steps, summary = logs[s["label"]]
        if s["kind"] == "loss_scale":
            if s["y"] != [r["loss_scale"] for r in steps]:
                die("loss scale of %s differs from its log" % s["label"])
            print("loss scale %s: %d points" % (s["label"], len(s["y"])))
        else:
            want = [r["step"] for r in steps if r["skipped"]]
            if s["x"] != want:
                die("skipped steps of %s: %s, log %s" % (s["label"], s["x"], want))
            print("skipped %s: %d (summary %d)" % (s["label"], len(want),
                                                   summary["skipped_steps"]))
    # FP8: one heat-map row per tensor and per metric; amax/scale per tensor.
    for title, series in panels.items():
        m = re.match(r"(.*) (fp8_saturated|fp8_underflow)$", title)
        if m:
            steps = logs[m.group(1)][0]
            for s in series:
                want = [r["%s/%s" % (m.group(2), s["label"])] for r in steps]
                if s["y"] != want:
                    die("%s of %s differs from its log" % (title, s["label"]))
            print("heatmap %s: %d tensors x %d steps" % (title, len(series),
                                                         len(series[0]["x"])))
        m = re.match(r"(.*) fp8 (.*)$", title)
        if m:
            steps = logs[m.group(1)][0]
            for s in series:
                want = [r["fp8_%s/%s" % (s["kind"], m.group(2))] for r in steps]
                if s["y"] != want:
                    die("fp8 %s of %s differs from its log" % (s["kind"], title))
    tensors = sorted(t for t in panels if re.match(r".* fp8 ", t))
    print("fp8 tensor panels: %d" % len(tensors))
    for t in tensors:
        print("tensor panel: " + t)


def check_report(d):
    md = open(os.path.join(d, "report.md"), encoding="utf-8").read()
    check_png(os.path.join(d, "comparison.png"))
    runs = {}
    for name in sorted(os.listdir(os.path.join(d, "runs"))):
        if name.endswith(".jsonl"):
            summary = read_jsonl(os.path.join(d, "runs", name))[1]
            runs.setdefault(summary["policy"], []).append(summary)
    rows = [l for l in md.splitlines() if l.startswith("| ") and not l.startswith("| run ")]
    for pol, sums in sorted(runs.items()):
        ev = [s["eval_loss"] for s in sums]
        m = sum(ev) / len(ev)
        sd = math.sqrt(sum((v - m) ** 2 for v in ev) / (len(ev) - 1)) if len(ev) > 1 else 0
        row = [r for r in rows if r.startswith("| %s " % pol)]
        if len(row) != 1:
            die("report.md: %d rows for %s" % (len(row), pol))
        cells = [c.strip() for c in row[0].strip("|").split("|")]
        want = "%.4f" % m + (" ± %.4f" % sd if sd else "")
        if not cells[2].startswith(want):
            die("report.md: %s eval loss '%s', the runs' mean ± sd %s" % (pol, cells[2], want))
        print("report %s: %d seeds, eval %s, gap %s" % (pol, len(sums), want, cells[3]))
    # The eval gap: per seed against the baseline's run of that seed.
    base = [pol for pol in runs for r in rows
            if r.startswith("| %s " % pol) and r.split("|")[4].strip() == "baseline"]
    if len(base) != 1:
        die("report.md: baselines %s" % base)
    bev = {s["seed"]: s["eval_loss"] for s in runs[base[0]]}
    for pol, sums in sorted(runs.items()):
        if pol == base[0]:
            continue
        g = [100.0 * (s["eval_loss"] - bev[s["seed"]]) / bev[s["seed"]] for s in sums]
        m = sum(g) / len(g)
        sd = math.sqrt(sum((v - m) ** 2 for v in g) / (len(g) - 1)) if len(g) > 1 else 0
        want = "%+.2f%%" % m + (" ± %.2f%%" % sd if sd else "")
        cell = [r for r in rows if r.startswith("| %s " % pol)][0].split("|")[4].strip()
        if cell != want:
            die("report.md: %s eval gap '%s', paired by seed %s" % (pol, cell, want))
        print("paired gap %s vs %s: %s" % (pol, base[0], want))


cmd = sys.argv[1]
if cmd == "png":
    check_png(sys.argv[2])
elif cmd == "svg":
    check_svg(sys.argv[2])
elif cmd == "html":
    check_html(sys.argv[2])
elif cmd == "dump":
    check_dump(sys.argv[2], sys.argv[3:])
elif cmd == "report":
    check_report(sys.argv[2])
else:
    die("unknown command " + cmd)
