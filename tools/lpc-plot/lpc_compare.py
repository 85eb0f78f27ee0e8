#!/usr/bin/env python3
"""lpc-compare: train one model once per precision policy (and seed), then
write one report to choose a precision by.

    lpc-compare examples/gpt.mlir --out-dir=cmp --policies=no,bf16,fp16,fp8 \\
        --seeds=0,1,2 --data=text:README.md --steps=1500 \\
        --autodiff="lr-schedule=cosine warmup-steps=100" --eval-every=100

Every run is the same lpc-run command (the model, the data, the flags this
driver does not know are passed on unchanged) but for --mixed-precision and
--seed. In --out-dir:
  runs/POLICY-seedS.jsonl   each run's metrics (lpc-run --log)
  runs/POLICY-seedS.out     its output; runs/POLICY-seedS.cmd its command
  comparison.png            lpc-plot's figure (seeds averaged, min-max band)
  report.md, report.html    the table (final train/eval loss, mean ± sample
                            standard deviation over the seeds, the gap to the
                            baseline, ms/step, peak memory, state bytes per
                            parameter, skipped steps), each run's figures,
                            the command, the machine
Runs are sequential (each one's step time is its own). A run that fails
stops the comparison (its output is named; no report is written). --reuse
keeps a finished run whose command is the same (after an interruption).
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lpc_plot  # noqa: E402
from lpc_plot import PlotError  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
POLICIES = ("no", "fp16", "bf16", "fp8")
# Flags the driver sets per run; passing them through would make the runs
# differ in more than the policy, or overwrite each other's files.
OWN_FLAGS = ("--mixed-precision", "--seed", "--log", "--resume", "--checkpoint-dir",
             "--checkpoint-every", "--save-weights", "--emit-artifact", "--config")


def parse_list(opt, text, conv):
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise PlotError("%s: empty list" % opt)
    out = []
    for t in items:
        try:
            out.append(conv(t))
        except ValueError:
            raise PlotError("%s: '%s' is not valid" % (opt, t))
    if len(set(out)) != len(out):
        raise PlotError("%s=%s: a value repeats" % (opt, text))
    return out


def policy(t):
    if t not in POLICIES:
        raise ValueError(t)
    return t


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def run_one(lpc_run, model, pol, seed, passthrough, runs_dir, reuse, i, n):
    name = "%s-seed%d" % (pol, seed)
    log = os.path.join(runs_dir, name + ".jsonl")
    out = os.path.join(runs_dir, name + ".out")
    cmd_file = os.path.join(runs_dir, name + ".cmd")
    cmd = [lpc_run, model, "--mixed-precision=" + pol, "--seed=%d" % seed] + passthrough
    if reuse and os.path.exists(log) and os.path.exists(cmd_file):
        with open(cmd_file) as f:
            same = f.read() == json.dumps(cmd)
        if same:
            try:
                lpc_plot.read_run(log)
                print("lpc-compare: [%d/%d] %s: reusing %s" % (i, n, name, log), flush=True)
                return log
            except PlotError:
                pass  # cut short: train again
    print("lpc-compare: [%d/%d] %s: %s" % (i, n, name, shlex.join(cmd)), flush=True)
    tmp = log + ".part"
    with open(out, "w") as f:
        rc = subprocess.call(cmd + ["--log=" + tmp], stdout=f, stderr=subprocess.STDOUT)
    with open(out) as f:
        tail = f.read().strip().splitlines()[-3:]
    if rc != 0:
        raise PlotError("the %s run failed (exit %d); its output is in %s:\n  %s"
                        % (name, rc, out, "\n  ".join(tail)))
    os.replace(tmp, log)
    lpc_plot.write_atomic(cmd_file, json.dumps(cmd).encode())
    for line in tail:
        print("  " + line, flush=True)
    return log


def report_md(title, command, rows, runs, baseline, image):
    lines = ["# %s" % title, "",
             "Date: %s. Machine: %s, %d CPUs (%s). Command:" % (
                 datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                 cpu_name(), os.cpu_count() or 0, platform.platform()),
             "", "```", command, "```", "",
             "Final losses are the last step's training loss and the end-of-run evaluation; "
             "with several seeds, mean ± sample standard deviation. Eval gap: each run's final "
             "eval loss relative to the baseline (%s) run of the same seed, mean ± standard "
             "deviation over the seeds; train gap: the same for the mean training loss over "
             "the last 10%% of steps. ms/step is the training loop's mean, "
             "peak memory the process's maximum resident set, state B/param the training "
             "state (parameters, optimizer moments, scales) per parameter." % baseline,
             "", lpc_plot.markdown_table(rows),
             "Final eval loss of each run:", ""]
    for r in rows:
        lines.append("- %s: %s (seeds %s)" % (
            r["label"], ", ".join("%.4f" % v for v in r["eval_losses"]),
            ", ".join(str(s) for s in r["seeds"])))
    lines += ["", "![comparison](%s)" % os.path.basename(image), "", "Logs:", ""]
    lines += ["- %s: %s" % (r.label, os.path.relpath(r.path, os.path.dirname(image) or "."))
              for r in runs]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="lpc-compare", description=__doc__.split("\n\n")[0],
        allow_abbrev=False,  # --seed=1 must not pass for --seeds=1
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.split("\n")[2:]) +
        "\nAny other --flag=value goes to lpc-run unchanged.")
    ap.add_argument("model", help="the model (.mlir) lpc-run trains")
    ap.add_argument("--out-dir", required=True, help="where the runs and the report go")
    ap.add_argument("--policies", default="no,bf16,fp16,fp8",
                    help="comma-separated --mixed-precision values (default no,bf16,fp16,fp8)")
    ap.add_argument("--seeds", default="0", help="comma-separated seeds (default 0)")
    ap.add_argument("--baseline", help="the policy the gaps are relative to "
                    "(default: no if compared, else the first)")
    ap.add_argument("--lpc-run", default=os.path.join(
        os.environ.get("LPC_BUILD_DIR", os.path.join(ROOT, "build")), "bin", "lpc-run"),
        help="the lpc-run binary (default: the build's)")
    ap.add_argument("--reuse", action="store_true",
                    help="keep finished runs of the same command in --out-dir")
    ap.add_argument("--dpi", type=int, default=80, help="the PNG's resolution (default 80)")
    args, passthrough = ap.parse_known_args(argv)
    try:
        for p in passthrough:
            if not p.startswith("--"):
                raise PlotError("'%s': lpc-run's flags pass through as --flag=value" % p)
            if p.split("=", 1)[0] in OWN_FLAGS:
                raise PlotError("%s: lpc-compare sets it for each run (--policies, --seeds, "
                                "--out-dir)" % p.split("=", 1)[0])
        pols = parse_list("--policies", args.policies, policy)
        seeds = parse_list("--seeds", args.seeds, int)
        base = args.baseline or ("no" if "no" in pols else pols[0])
        if base not in pols:
            raise PlotError("--baseline=%s: not one of --policies=%s" % (base, args.policies))
        if not os.path.isfile(args.model):
            raise PlotError("%s: no such model file" % args.model)
        if not os.access(args.lpc_run, os.X_OK):
            raise PlotError("--lpc-run=%s: not an executable (build lpc first: scripts/lpc "
                            "build)" % args.lpc_run)
        runs_dir = os.path.join(args.out_dir, "runs")
        os.makedirs(runs_dir, exist_ok=True)
        logs, n, i = [], len(pols) * len(seeds), 0
        for s in seeds:
            for p in pols:
                i += 1
                logs.append(run_one(args.lpc_run, args.model, p, s, passthrough, runs_dir,
                                    args.reuse, i, n))
        # The baseline's logs first: its label is then the first curve's.
        logs.sort(key=lambda l: os.path.basename(l).split("-seed")[0] != base)
        image = os.path.join(args.out_dir, "comparison.png")
        title = "lpc-compare: %s, %s" % (os.path.basename(args.model), ", ".join(pols))
        runs, curves, rows = lpc_plot.plot(logs, image, baseline=base,
                                           group_seeds=len(seeds) > 1, dpi=args.dpi,
                                           title=title)
        lpc_plot.plot(logs, os.path.join(args.out_dir, "report.html"), baseline=base,
                      group_seeds=len(seeds) > 1, title=title)
        command = shlex.join(["lpc-compare"] + (argv if argv is not None else sys.argv[1:]))
        md = report_md(title, command, rows, runs, base, image)
        lpc_plot.write_atomic(os.path.join(args.out_dir, "report.md"), md.encode())
    except PlotError as e:
        print("lpc-compare: error: %s" % e, file=sys.stderr)
        return 1
    print(lpc_plot.markdown_table(rows), end="")
    print("lpc-compare: wrote %s, %s and %s" % (
        os.path.join(args.out_dir, "report.md"), os.path.join(args.out_dir, "report.html"),
        image))
    return 0


if __name__ == "__main__":
    sys.exit(main())
