"""Checks lpc-run training logs (JSONL, one file per precision).

usage:
  check_training.py classify MIN_ACC REL_TOL fp32.jsonl other.jsonl...
      every run reaches eval accuracy >= MIN_ACC, and the final train loss
      (mean of the last 20 steps: single batches are noisy) of every other
      run is within REL_TOL of the first run's.
  check_training.py lm CORPUS FRACTION run.jsonl...
      every run's final train loss (mean of the last 20 steps) is below
      FRACTION x the unigram (byte) entropy of CORPUS, in nats, and its eval
      loss (held-out tail of the corpus) below the entropy itself.
"""
import collections
import json
import math
import sys


def load(path):
    steps, final = [], None
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("final"):
                final = rec
            elif "loss" in rec:
                steps.append(rec["loss"])
    if final is None or not steps:
        sys.exit(f"FAIL {path}: no final record or no steps")
    tail = steps[-20:]
    return sum(tail) / len(tail), final


def main():
    mode = sys.argv[1]
    ok = True
    if mode == "classify":
        min_acc, tol = float(sys.argv[2]), float(sys.argv[3])
        runs = [(p, *load(p)) for p in sys.argv[4:]]
        ref_loss = runs[0][1]
        for path, loss, final in runs:
            acc = final["eval_accuracy"]
            rel = abs(loss - ref_loss) / ref_loss
            good = acc >= min_acc and rel <= tol
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} {path.split('/')[-1]}: eval accuracy "
                  f"{acc:.4f} (>= {min_acc}), final train loss {loss:.4f} "
                  f"({100 * rel:.2f}% from the first run)")
    else:
        data = open(sys.argv[2], "rb").read()
        counts = collections.Counter(data)
        h = -sum(c / len(data) * math.log(c / len(data)) for c in counts.values())
        frac = float(sys.argv[3])
        for path in sys.argv[4:]:
            loss, final = load(path)
            good = loss < frac * h and final["eval_loss"] < h
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} {path.split('/')[-1]}: final train loss "
                  f"{loss:.4f}, eval loss {final['eval_loss']:.4f}, unigram "
                  f"entropy {h:.4f} nats (train bound {frac} x)")
    print("training checks passed" if ok else "training checks FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
