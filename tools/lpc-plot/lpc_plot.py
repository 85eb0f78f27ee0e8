#!/usr/bin/env python3
"""lpc-plot: pictures of lpc-run's metrics logs (--log=RUN.jsonl).

    lpc-plot RUN.jsonl [RUN2.jsonl ...] -o FILE.png|.svg|.html [--baseline=RUN]

One figure, top to bottom:
  - the training loss of every run (raw, thin, and a centred moving average,
    --smooth), its eval points (--eval-every and the final evaluation), each
    run labelled by the policy and recipe its summary record names;
  - the relative gap of each run's loss to the baseline run's, step by step
    (--baseline: a file given, or a label such as `bf16`; default the first);
  - fp16 runs: the dynamic loss scale and the steps it skipped;
  - fp8 runs: per tensor, amax and the scale over steps, and heat maps of the
    saturated and underflowed fractions (tensors x steps).
An .html file holds the figure (inline SVG) and a table of the runs.
--panels picks parts: loss, gap, loss-scale, fp8-heatmap, fp8-tensors.

--group-seeds draws runs that differ only in their seed as one mean curve
with a min-max band (what `lpc-compare` does with several seeds).
--dump-series=FILE.json writes every plotted series (what the tests read).

The logs are read strictly: an empty file, a line that is not JSON (a cut
last line: a run still going or killed), a record lpc-run does not write, a
log without its summary record, or runs of different models are errors
naming the file and line; nothing is written then.
"""

import argparse
import html
import io
import json
import math
import os
import sys
import tempfile


class PlotError(Exception):
    """An error for the user: printed as 'lpc-plot: error: ...'."""


# ---------------------------------------------------------------------------
# Reading a run
# ---------------------------------------------------------------------------

# What the summary record (the last line, {"final": true, ...}) must hold to
# label and compare runs; lpc-run writes these since the runs could be
# compared at all (an older log is refused rather than mislabelled).
SUMMARY_KEYS = ("model", "policy", "recipe", "seed", "steps", "parameters")


class Run:
    """One lpc-run log: step records by step number, and the summary."""

    def __init__(self, path):
        self.path = path
        self.steps = []      # step numbers, increasing
        self.records = []    # the step records, same order
        self.summary = None
        self.summary_line = 0
        self.label = None

    # Series over steps --------------------------------------------------
    def series(self, key):
        """(steps, values) of the records that hold `key` (NaN kept)."""
        xs, ys = [], []
        for s, r in zip(self.steps, self.records):
            if key in r:
                xs.append(s)
                ys.append(r[key])
        return xs, ys

    def keys_with_prefix(self, prefix):
        seen = {}
        for r in self.records:
            for k in r:
                if k.startswith(prefix):
                    seen.setdefault(k[len(prefix):], None)
        return list(seen)

    @property
    def policy(self):
        return self.summary["policy"]

    def eval_points(self):
        """(steps, eval losses): the periodic evaluations and the final one."""
        xs, ys = self.series("eval_loss")
        if self.summary.get("eval_loss") is not None:
            xs.append(self.summary["steps"])
            ys.append(self.summary["eval_loss"])
        return xs, ys

    def group_key(self):
        s = self.summary
        return (s["model"], s["policy"], s["recipe"])

    def base_label(self):
        s = self.summary
        return s["policy"] + (" [%s]" % s["recipe"].strip() if s["recipe"].strip() else "")


def _restore_nonfinite(rec):
    """lpc-run writes NaN/inf as null plus "nonfinite": {key: "nan"|"inf"}."""
    nf = rec.pop("nonfinite", None)
    if isinstance(nf, dict):
        for k, v in nf.items():
            rec[k] = float(v)
    return rec


def read_run(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise PlotError("%s: cannot read: %s" % (path, e.strerror or e))
    if not data.strip():
        raise PlotError("%s: empty file (no records); expected an lpc-run --log JSONL" % path)
    lines = data.split(b"\n")
    cut = not data.endswith(b"\n")
    if not cut:
        lines.pop()  # after the last newline
    run = Run(path)
    for i, raw in enumerate(lines, 1):
        last = i == len(lines)
        where = "%s:%d" % (path, i)
        if run.summary is not None:
            raise PlotError("%s: a record after the summary (line %d); one run per file"
                            % (where, run.summary_line))
        try:
            rec = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            if last and cut:
                raise PlotError("%s: truncated: the last line is cut off (%s); the run is "
                                "still going or was killed" % (where, e))
            raise PlotError("%s: not JSON (%s); expected an lpc-run --log JSONL" % (where, e))
        if not isinstance(rec, dict):
            raise PlotError("%s: not an lpc-run metrics record (a JSON %s, not an object)"
                            % (where, type(rec).__name__))
        rec = _restore_nonfinite(rec)
        if rec.get("final") is True:
            missing = [k for k in SUMMARY_KEYS if k not in rec]
            if missing:
                raise PlotError("%s: the summary record lacks %s (written by an older "
                                "lpc-run? rerun the training)" % (where, ", ".join(missing)))
            run.summary, run.summary_line = rec, i
            continue
        step = rec.get("step")
        if not isinstance(step, int) or isinstance(step, bool) or step < 1 or \
                not isinstance(rec.get("loss"), (int, float)) or rec["loss"] is None:
            raise PlotError("%s: not an lpc-run metrics record (a step record has an integer "
                            "'step' >= 1 and a numeric 'loss'; a summary has \"final\": true)"
                            % where)
        # A resumed run appends to the log and repeats the steps after its
        # checkpoint: the later records are the ones the run continued from.
        while run.steps and run.steps[-1] >= step:
            run.steps.pop()
            run.records.pop()
        run.steps.append(step)
        run.records.append(rec)
    if run.summary is None:
        raise PlotError("%s: no summary record ({\"final\": true, ...}, the last line lpc-run "
                        "writes): the run did not finish or the file is cut short" % path)
    if not run.steps:
        raise PlotError("%s: no step records before the summary" % path)
    return run


def read_runs(paths):
    runs = [read_run(p) for p in paths]
    first = runs[0]
    for r in runs[1:]:
        for key in ("model", "parameters"):
            if r.summary[key] != first.summary[key]:
                raise PlotError(
                    "%s: a run of another model (%s %s) than %s (%s %s); plot runs of one "
                    "model together" % (r.path, key, json.dumps(r.summary[key]), first.path,
                                        key, json.dumps(first.summary[key])))
    # Labels: policy [recipe], then the seed, then the file where they clash.
    bases = [r.base_label() for r in runs]
    labels = list(bases)
    for i, r in enumerate(runs):
        if bases.count(bases[i]) > 1:
            labels[i] = "%s seed %s" % (r.base_label(), r.summary["seed"])
    for i, r in enumerate(runs):
        if labels.count(labels[i]) > 1:
            labels[i] = "%s (%s)" % (labels[i], os.path.basename(r.path))
    for r, l in zip(runs, labels):
        r.label = l
    return runs


# ---------------------------------------------------------------------------
# Curves
# ---------------------------------------------------------------------------

def smooth_window(n, window):
    """The moving average's width: `window`, or (0) about 2% of the run."""
    w = window if window > 0 else max(1, n // 50)
    return w | 1  # odd: centred on its step


def moving_average(values, window):
    """Centred moving average (shorter at the ends): it lags no change of the
    loss, unlike an exponential average. Non-finite values are left out."""
    h = window // 2
    fin = [v if v is not None and math.isfinite(v) else None for v in values]
    out = []
    for i in range(len(fin)):
        part = [v for v in fin[max(0, i - h):i + h + 1] if v is not None]
        out.append(sum(part) / len(part) if part else float("nan"))
    return out


class Curve:
    """A run's (or a seed group's) loss curve as the charts draw it."""

    def __init__(self, label, runs, smooth):
        self.label = label
        self.runs = runs
        steps = sorted(set.intersection(*[set(r.steps) for r in runs]))
        self.steps = steps
        per_run = []
        for r in runs:
            by_step = dict(zip(*r.series("loss")))
            per_run.append([by_step[s] for s in steps])
        self.raw = [sum(v) / len(v) for v in zip(*per_run)]
        self.window = smooth_window(len(steps), smooth)
        self.smooth = moving_average(self.raw, self.window)
        if len(runs) > 1:
            sm = [moving_average(v, self.window) for v in per_run]
            self.band = ([min(v) for v in zip(*sm)], [max(v) for v in zip(*sm)])
        else:
            self.band = None
        # Eval points: those every run of the group has, averaged.
        evs = [dict(zip(*r.eval_points())) for r in runs]
        common = sorted(set.intersection(*[set(e) for e in evs]))
        self.eval_steps = common
        self.eval = [sum(e[s] for e in evs) / len(evs) for s in common]


def make_curves(runs, group_seeds, smooth):
    if not group_seeds:
        return [Curve(r.label, [r], smooth) for r in runs]
    groups = {}
    for r in runs:
        groups.setdefault(r.group_key(), []).append(r)
    curves = []
    for key, rs in groups.items():
        label = rs[0].base_label()
        if len(rs) > 1:
            label += " (mean of %d seeds)" % len(rs)
        curves.append(Curve(label, rs, smooth))
    return curves


def pick_baseline(curves, runs, spec):
    if spec is None:
        return curves[0]
    for c in curves:
        if spec == c.label or spec == c.runs[0].base_label() or spec == c.runs[0].policy \
                or any(os.path.abspath(spec) == os.path.abspath(r.path) for r in c.runs):
            return c
    raise PlotError("--baseline=%s: no run is that file or has that label (runs: %s)"
                    % (spec, ", ".join(c.label for c in curves)))


# ---------------------------------------------------------------------------
# The figure
# ---------------------------------------------------------------------------

# The figure's parts (--panels): loss and gap share the top row.
PANELS = ("loss", "gap", "loss-scale", "fp8-heatmap", "fp8-tensors")


class Dump:
    """Every plotted series, by panel: --dump-series and the tests read it."""

    def __init__(self):
        self.panels = []

    def panel(self, title):
        p = {"title": title, "series": []}
        self.panels.append(p)
        return p

    @staticmethod
    def add(panel, label, kind, x, y=None, **extra):
        s = {"label": label, "kind": kind, "x": [float(v) for v in x]}
        if y is not None:
            s["y"] = [None if (v is None or not math.isfinite(v)) else float(v) for v in y]
        s.update(extra)
        panel["series"].append(s)


def _gid(*parts):
    """An SVG id for an artist (the tests find series by it)."""
    s = "-".join(parts)
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)


def build_figure(runs, curves, baseline, dump, max_tensors, panels):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import colors as mcolors

    fp16_runs = [r for r in runs if r.policy == "fp16"]
    fp8_runs = [r for r in runs if r.policy == "fp8"]
    if curves and len(curves[0].runs) > 1:
        # Seed groups: the telemetry of each group's first run.
        firsts = {id(c.runs[0]) for c in curves}
        fp16_runs = [r for r in fp16_runs if id(r) in firsts]
        fp8_runs = [r for r in fp8_runs if id(r) in firsts]

    ncols = 4
    rows = []
    top = [p for p in ("loss", "gap") if p in panels]
    if top:
        rows.append(("loss", 3.2, top))
    if fp16_runs and "loss-scale" in panels:
        rows.append(("fp16", 1.5))
    for r in fp8_runs:
        tensors = sorted(r.keys_with_prefix("fp8_amax/"))
        if max_tensors and len(tensors) > max_tensors:
            tensors = tensors[:max_tensors]
        if "fp8-heatmap" in panels:
            rows.append(("heat", 0.9 + 0.16 * max(len(tensors), 1), r, tensors))
        if "fp8-tensors" in panels:
            n = (len(tensors) + ncols - 1) // ncols
            for i in range(n):
                rows.append(("tensors", 1.7, r, tensors[i * ncols:(i + 1) * ncols]))
    if not rows:
        raise PlotError("--panels=%s: nothing of that to draw for these runs (loss-scale "
                        "needs an fp16 run, fp8-* an fp8 run)" % ",".join(panels))
    heights = [row[1] for row in rows]
    fig = plt.figure(figsize=(13, sum(heights) + 0.3 * len(rows)), layout="constrained")
    grid = fig.add_gridspec(len(rows), ncols, height_ratios=heights)
    cmap = plt.get_cmap("tab10")
    color = {c.label: cmap(i % 10) for i, c in enumerate(curves)}
    run_color = {}
    for c in curves:
        for r in c.runs:
            run_color[id(r)] = color[c.label]

    for ri, row in enumerate(rows):
        kind = row[0]
        if kind == "loss":
            top = row[2]
            span = 4 // len(top)
        if kind == "loss" and "loss" in top:
            ax = fig.add_subplot(grid[ri, 0:span])
            p = dump.panel("loss")
            for c in curves:
                col = color[c.label]
                ax.plot(c.steps, c.raw, color=col, alpha=0.25, linewidth=0.7,
                        gid=_gid("loss-raw", c.label))
                ax.plot(c.steps, c.smooth, color=col, linewidth=1.6, label=c.label,
                        gid=_gid("loss-smooth", c.label))
                Dump.add(p, c.label, "raw", c.steps, c.raw)
                Dump.add(p, c.label, "smoothed", c.steps, c.smooth)
                if c.band:
                    ax.fill_between(c.steps, c.band[0], c.band[1], color=col, alpha=0.15,
                                    linewidth=0)
                    Dump.add(p, c.label, "band", c.steps, c.band[0], y_high=c.band[1])
                if c.eval_steps:
                    ax.plot(c.eval_steps, c.eval, "o", color=col, markersize=4,
                            markeredgecolor="black", markeredgewidth=0.5,
                            gid=_gid("eval", c.label))
                    Dump.add(p, c.label, "eval", c.eval_steps, c.eval)
            ax.set_title("training loss (thin: raw, thick: %d-step moving average, dots: eval)"
                         % curves[0].window)
            ax.set_xlabel("step")
            ax.set_ylabel("loss")
            _loss_ylim(ax, curves)
            ax.legend(fontsize=8)
            ax.grid(alpha=0.3)
        if kind == "loss" and "gap" in top:
            ax = fig.add_subplot(grid[ri, 4 - span:4])
            p = dump.panel("gap")
            base = dict(zip(baseline.steps, baseline.smooth))
            base_ev = dict(zip(baseline.eval_steps, baseline.eval))
            for c in curves:
                if c is baseline:
                    continue
                xs = [s for s in c.steps if s in base]
                sm = dict(zip(c.steps, c.smooth))
                gap = [100.0 * (sm[s] - base[s]) / base[s] for s in xs]
                ax.plot(xs, gap, color=color[c.label], linewidth=1.4, label=c.label,
                        gid=_gid("gap", c.label))
                Dump.add(p, c.label, "gap_percent", xs, gap)
                ev = dict(zip(c.eval_steps, c.eval))
                exs = [s for s in c.eval_steps if s in base_ev]
                if exs:
                    eg = [100.0 * (ev[s] - base_ev[s]) / base_ev[s] for s in exs]
                    ax.plot(exs, eg, "o", color=color[c.label], markersize=4,
                            markeredgecolor="black", markeredgewidth=0.5,
                            gid=_gid("gap-eval", c.label))
                    Dump.add(p, c.label, "eval_gap_percent", exs, eg)
            ax.axhline(0, color=color[baseline.label], linewidth=1)
            ax.set_title("smoothed loss relative to %s, %% (dots: eval)" % baseline.label)
            ax.set_xlabel("step")
            ax.set_ylabel("gap %")
            if len(curves) > 1:
                ax.legend(fontsize=8)
            ax.grid(alpha=0.3)
        elif kind == "fp16":
            ax = fig.add_subplot(grid[ri, 0:4])
            p = dump.panel("loss scale")
            for r in fp16_runs:
                xs, ys = r.series("loss_scale")
                col = run_color[id(r)]
                ax.step(xs, ys, where="post", color=col, label=r.label,
                        gid=_gid("loss-scale", r.label))
                Dump.add(p, r.label, "loss_scale", xs, ys)
                sx, sv = r.series("skipped")
                skipped = [s for s, v in zip(sx, sv) if v]
                by = dict(zip(xs, ys))
                ax.plot(skipped, [by[s] for s in skipped], "x", color="red", markersize=6,
                        gid=_gid("skipped", r.label))
                Dump.add(p, r.label, "skipped_steps", skipped)
            ax.set_yscale("log", base=2)
            ax.set_title("fp16: dynamic loss scale (x: skipped steps, %s)" % ", ".join(
                "%s: %d" % (r.label, r.summary.get("skipped_steps", 0)) for r in fp16_runs))
            ax.set_xlabel("step")
            ax.legend(fontsize=8)
            ax.grid(alpha=0.3)
        elif kind == "heat":
            r, tensors = row[2], row[3]
            for ci, (metric, title) in enumerate((("fp8_saturated", "saturated"),
                                                  ("fp8_underflow", "underflowed"))):
                ax = fig.add_subplot(grid[ri, 2 * ci:2 * ci + 2])
                p = dump.panel("%s %s" % (r.label, metric))
                mat, xs = [], r.steps
                for t in tensors:
                    by = dict(zip(*r.series("%s/%s" % (metric, t))))
                    mat.append([by.get(s, float("nan")) for s in xs])
                    Dump.add(p, t, metric, xs, mat[-1])
                # Log colours: saturation is often 1e-5 while underflow
                # reaches 1; white marks exactly none.
                masked = [[v if v and v > 0 else float("nan") for v in row_] for row_ in mat]
                cm = plt.get_cmap("magma_r").copy()
                cm.set_bad("white")
                im = ax.imshow(masked, aspect="auto", interpolation="nearest", cmap=cm,
                               norm=mcolors.LogNorm(vmin=1e-6, vmax=1, clip=True),
                               extent=(xs[0] - 0.5, xs[-1] + 0.5, len(tensors) - 0.5, -0.5),
                               gid=_gid("heat", metric, r.label))
                ax.set_yticks(range(len(tensors)))
                ax.set_yticklabels(tensors if ci == 0 else [], fontsize=6)
                ax.set_xlabel("step")
                ax.set_title("%s: fraction %s (white: none)" % (r.label, title), fontsize=9)
                fig.colorbar(im, ax=ax, fraction=0.04, pad=0.01)
        elif kind == "tensors":
            r, tensors = row[2], row[3]
            for ci, t in enumerate(tensors):
                ax = fig.add_subplot(grid[ri, ci])
                p = dump.panel("%s fp8 %s" % (r.label, t))
                xs, amax = r.series("fp8_amax/" + t)
                sx, scale = r.series("fp8_scale/" + t)
                ax.plot(xs, amax, color="tab:blue", linewidth=1, gid=_gid("amax", r.label, t))
                ax.tick_params(axis="x", labelsize=6)
                ax2 = ax.twinx()
                ax2.plot(sx, scale, color="tab:orange", linewidth=1,
                         gid=_gid("scale", r.label, t))
                for a, ys, col in ((ax, amax, "tab:blue"), (ax2, scale, "tab:orange")):
                    _range_ticks(a, ys, col)
                Dump.add(p, t, "amax", xs, amax)
                Dump.add(p, t, "scale", sx, scale)
                ax.set_title("%s: %s" % (r.label, t), fontsize=7)
                if ci == 0:
                    ax.set_ylabel("amax", color="tab:blue", fontsize=7)
                if ci == len(tensors) - 1:
                    ax2.set_ylabel("scale", color="tab:orange", fontsize=7)
    return fig


def _range_ticks(ax, ys, col):
    """Log axis labelled at the series' own minimum and maximum: amax and
    scale often move within a fraction of a decade, where matplotlib's log
    ticks would either say nothing or crowd the axis."""
    from matplotlib import ticker
    vals = [v for v in ys if v is not None and math.isfinite(v) and v > 0]
    if vals:
        ax.set_yscale("log")
        lo, hi = min(vals), max(vals)
        ax.yaxis.set_minor_locator(ticker.NullLocator())
        ax.set_yticks([lo, hi] if hi > lo else [lo])
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: "%.3g" % v))
        if hi > lo:
            f = (hi / lo) ** 0.08
            ax.set_ylim(lo / f, hi * f)
    ax.tick_params(axis="y", labelcolor=col, labelsize=6)


def _loss_ylim(ax, curves):
    """The first steps' loss (ln(vocab) and up) would flatten the rest."""
    vals = [v for c in curves for v in c.smooth if math.isfinite(v)]
    raw = [v for c in curves for v in c.raw if math.isfinite(v)]
    if not vals:
        return
    lo = min(min(vals), min(raw))
    tail = [v for c in curves for v in c.smooth[len(c.smooth) // 10:] if math.isfinite(v)]
    hi = max(tail) if tail else max(vals)
    hi = max(hi, lo + 1e-6)
    pad = 0.15 * (hi - lo)
    ax.set_ylim(lo - pad, hi + 3 * pad)


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------

def _fmt(v, spec):
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else spec % v


def mean_spread(vals):
    """Mean and sample standard deviation (0 for one value)."""
    vals = [v for v in vals if v is not None and math.isfinite(v)]
    if not vals:
        return None, None
    m = sum(vals) / len(vals)
    if len(vals) < 2:
        return m, 0.0
    return m, math.sqrt(sum((v - m) ** 2 for v in vals) / (len(vals) - 1))


def tail_loss(run):
    """Mean training loss over the last 10% of steps: the end of the curve
    without one step's noise."""
    ys = [v for v in run.series("loss")[1] if v is not None and math.isfinite(v)]
    n = max(1, len(ys) // 10)
    return sum(ys[-n:]) / n if ys else None


def gaps(c, baseline, value):
    """Relative gaps (%) of a curve's runs to the baseline's: paired by seed
    when every run has a baseline run of its seed (same data order and
    initial weights, so the seed's own variation cancels), else the gap of
    the means. Returns (mean, spread) as mean_spread does."""
    if c is baseline:
        return None, None
    by_seed = {r.summary["seed"]: value(r) for r in baseline.runs}
    paired = []
    for r in c.runs:
        b, v = by_seed.get(r.summary["seed"]), value(r)
        if b is None or v is None or not b:
            paired = None
            break
        paired.append(100.0 * (v - b) / b)
    if paired:
        return mean_spread(paired)
    m = mean_spread([value(r) for r in c.runs])[0]
    b = mean_spread([value(r) for r in baseline.runs])[0]
    return (None, None) if m is None or not b else (100.0 * (m - b) / b, None)


def summary_rows(runs, curves, baseline):
    """One row per curve (a run, or a seed group): the comparison's table."""
    rows = []
    for c in curves:
        s = [r.summary for r in c.runs]
        ev = mean_spread([x.get("eval_loss") for x in s])
        tr = mean_spread([x.get("train_loss") for x in s])
        acc = mean_spread([x.get("eval_accuracy") for x in s])
        rows.append({
            "label": c.label, "runs": len(s), "seeds": [x["seed"] for x in s],
            "steps": s[0]["steps"],
            "train_loss": tr, "eval_loss": ev, "eval_accuracy": acc,
            "eval_gap_percent": gaps(c, baseline, lambda r: r.summary.get("eval_loss")),
            "train_tail_gap_percent": gaps(c, baseline, tail_loss),
            "eval_losses": [x.get("eval_loss") for x in s],
            "ms_per_step": mean_spread([x.get("ms_per_step") for x in s])[0],
            "peak_memory_mib": max(x.get("peak_memory_mib", 0) for x in s),
            "state_bytes_per_parameter": s[0].get("state_bytes_per_parameter"),
            "skipped_steps": sum(x.get("skipped_steps", 0) for x in s),
            "baseline": c is baseline,
        })
    return rows


TABLE_HEAD = ["run", "final train loss", "final eval loss", "eval gap",
              "train gap (last 10%)", "ms/step", "peak memory", "state B/param",
              "skipped steps"]


def _pm(ms, spec):
    m, sd = ms
    if m is None:
        return "-"
    return (spec % m) + ("" if sd is None or sd == 0 else (" ± " + spec.replace("+", "") % sd))


def table_cells(row):
    gap, tgap = ("baseline", "baseline") if row["baseline"] else (
        _pm(row["eval_gap_percent"], "%+.2f%%"), _pm(row["train_tail_gap_percent"], "%+.2f%%"))
    ev = _pm(row["eval_loss"], "%.4f")
    if row["eval_accuracy"][0] is not None:
        ev += " (acc %s)" % _pm(row["eval_accuracy"], "%.4f")
    return [row["label"], _pm(row["train_loss"], "%.4f"), ev, gap, tgap,
            _fmt(row["ms_per_step"], "%.1f"), "%d MiB" % row["peak_memory_mib"],
            _fmt(row["state_bytes_per_parameter"], "%.2f"), str(row["skipped_steps"])]


def markdown_table(rows):
    out = ["| " + " | ".join(TABLE_HEAD) + " |", "|" + "---|" * len(TABLE_HEAD)]
    for r in rows:
        out.append("| " + " | ".join(table_cells(r)) + " |")
    return "\n".join(out) + "\n"


def html_table(rows):
    out = ["<table>", "<tr>" + "".join("<th>%s</th>" % html.escape(h) for h in TABLE_HEAD)
           + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join("<td>%s</td>" % html.escape(c) for c in table_cells(r))
                   + "</tr>")
    out.append("</table>")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------

def write_atomic(path, data):
    """Write to a temporary file beside `path`, then rename: never half a file."""
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".lpc-plot-", dir=d)
    except OSError as e:
        raise PlotError("%s: cannot write: %s" % (path, e.strerror or e))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for the temporary only
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def render(fig, fmt, dpi):
    import matplotlib
    # Text stays text in SVG (searchable, and what the tests read); no
    # date, so that the same logs give the same file.
    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["svg.hashsalt"] = "lpc-plot"
    buf = io.BytesIO()
    meta = {"Date": None} if fmt == "svg" else {}
    fig.savefig(buf, format=fmt, dpi=dpi, metadata=meta)
    return buf.getvalue()


def html_page(title, svg, table, runs):
    files = "".join("<li>%s: %s</li>" % (html.escape(r.label), html.escape(r.path))
                    for r in runs)
    svg_text = svg.decode("utf-8")
    svg_text = svg_text[svg_text.find("<svg"):]  # drop the XML prolog inside HTML
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n"
            "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}"
            "td,th{border:1px solid #999;padding:2px 8px;text-align:right}"
            "td:first-child{text-align:left}</style></head><body>\n<h1>%s</h1>\n%s\n"
            "<ul>%s</ul>\n%s\n</body></html>\n"
            % (html.escape(title), html.escape(title), table, files, svg_text)).encode("utf-8")


def plot(paths, out, baseline=None, group_seeds=False, smooth=0, dump_path=None,
         title="lpc runs", dpi=100, max_tensors=0, table_md=None, panels=PANELS):
    """Reads the logs, draws, writes `out` (and the dump/table): the whole
    of lpc-plot, also called by lpc-compare."""
    ext = os.path.splitext(out)[1].lower()
    if ext not in (".png", ".svg", ".html"):
        raise PlotError("-o %s: unknown format '%s' (expected .png, .svg or .html)" % (out, ext))
    if smooth < 0:
        raise PlotError("--smooth=%d: expected a window of steps >= 0 (0: about 2%% of the "
                        "run)" % smooth)
    bad = [p for p in panels if p not in PANELS]
    if bad or not panels:
        raise PlotError("--panels=%s: expected some of %s" % (",".join(panels), ",".join(PANELS)))
    runs = read_runs(paths)
    curves = make_curves(runs, group_seeds, smooth)
    base = pick_baseline(curves, runs, baseline)
    dump = Dump()
    fig = build_figure(runs, curves, base, dump, max_tensors, panels)
    rows = summary_rows(runs, curves, base)
    if ext == ".html":
        data = html_page(title, render(fig, "svg", dpi), html_table(rows), runs)
    else:
        data = render(fig, ext[1:], dpi)
    outputs = [(out, data)]
    if dump_path:
        dump_obj = {"baseline": base.label, "runs": [
            {"path": r.path, "label": r.label, "summary": r.summary} for r in runs],
            "table": rows, "panels": dump.panels}
        outputs.append((dump_path, (json.dumps(dump_obj, indent=1) + "\n").encode()))
    if table_md:
        outputs.append((table_md, markdown_table(rows).encode()))
    for p, d in outputs:
        write_atomic(p, d)
    return runs, curves, rows


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="lpc-plot", description=__doc__.split("\n\n")[0], allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.split("\n")[2:]))
    ap.add_argument("runs", nargs="+", metavar="RUN.jsonl", help="lpc-run --log files")
    ap.add_argument("-o", "--output", required=True, help="FILE.png, FILE.svg or FILE.html")
    ap.add_argument("--baseline", help="the run the gaps are relative to: one of the files, "
                    "or a label/policy (default: the first run)")
    ap.add_argument("--group-seeds", action="store_true",
                    help="one mean curve (min-max band) per policy and recipe")
    ap.add_argument("--smooth", type=int, default=0,
                    help="the smoothed loss: a centred moving average over this many "
                    "steps (default 0: about 2%% of the run)")
    ap.add_argument("--panels", default=",".join(PANELS),
                    help="what to draw, some of %s (default all)" % ",".join(PANELS))
    ap.add_argument("--max-tensors", type=int, default=0,
                    help="FP8 tensors drawn per run (0: all)")
    ap.add_argument("--dump-series", metavar="FILE.json",
                    help="also write every plotted series as JSON")
    ap.add_argument("--table", metavar="FILE.md", help="also write the runs' table (markdown)")
    ap.add_argument("--title", default="lpc runs", help="the HTML page's title")
    ap.add_argument("--dpi", type=int, default=100, help="PNG resolution (default 100)")
    args = ap.parse_args(argv)
    try:
        plot(args.runs, args.output, baseline=args.baseline, group_seeds=args.group_seeds,
             smooth=args.smooth, dump_path=args.dump_series, title=args.title, dpi=args.dpi,
             max_tensors=args.max_tensors, table_md=args.table,
             panels=[p.strip() for p in args.panels.split(",") if p.strip()])
    except PlotError as e:
        print("lpc-plot: error: %s" % e, file=sys.stderr)
        return 1
    print("lpc-plot: wrote %s" % args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
