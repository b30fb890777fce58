#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tables of doc/schedules.md, "Tuning adaptive": each schedule spec scored with the
best pair's estimators on the training (18) or validation (3: awk, bfs, coreutils-sort)
programs of seed 1, never the held-out ones, C = 4, W = G.

usage: build-aux/schedule-tune.py train|val SPEC...   (MPXKIT=binary, default ./utils/mpxkit)

Per spec: the mean over the four estimators of mean RA / total accuracy / mean DTW (as a
multiple of round-robin fixed's on the same programs), then per estimator its mean RA / total
accuracy / mean DTW (x round-robin fixed) and the event that loses most against round-robin
fixed, with the difference of their mean RA."""
import collections
import csv
import glob
import io
import os
import subprocess
import sys

ESTIMATORS = "linear-dira,dcam,mlp,bigru-full"
TEST = {"fft", "grep", "sort-kernel", "spmv", "zstd"}  # held out: never scored here
VAL = {"awk", "bfs", "coreutils-sort"}


def programs(part):
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    files = sorted(glob.glob(os.path.join(top, "data", "corpus", "*.csv.gz")))
    name = lambda f: os.path.basename(f)[: -len(".csv.gz")]
    train = [f for f in files if name(f) not in TEST | VAL]
    val = [f for f in files if name(f) in VAL]
    assert len(train) == 18 and len(val) == 3, "data/corpus is not the 26 programs of seed 1"
    return train if part == "train" else val


def scores(mpxkit, spec, estimators, files):
    out = subprocess.run([mpxkit, "eval", "-c", "4", "-s", spec, "-e", estimators, "-f", "csv"]
                         + files, capture_output=True, text=True, check=True).stdout
    by = collections.defaultdict(list)
    for r in csv.DictReader(io.StringIO(out)):
        by[r["estimator"]].append(r)
    res = {}
    for e, rows in by.items():
        n = len(rows)
        events = collections.defaultdict(list)
        for r in rows:
            events[r["event"]].append(float(r["ra"]))
        res[e] = {"ra": sum(float(r["ra"]) for r in rows) / n,
                  "ta": sum(float(r["total_accuracy"]) for r in rows) / n,
                  "dtw": sum(float(r["dtw"]) for r in rows) / n,
                  "event": {k: sum(v) / len(v) for k, v in events.items()}}
    return res


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("train", "val"):
        sys.exit("usage: schedule-tune.py train|val SPEC...")
    mpxkit = os.environ.get("MPXKIT", "./utils/mpxkit")
    files = programs(sys.argv[1])
    base = scores(mpxkit, "round-robin", "fixed", files)["fixed"]
    print(f"# {sys.argv[1]} ({len(files)} programs); round-robin fixed: RA {base['ra']:.3f} "
          f"TA {base['ta']:.3f} DTW {base['dtw']:.3f}")
    for spec in sys.argv[2:]:
        res = scores(mpxkit, spec, ESTIMATORS, files)
        n = len(res)
        line = (f"{spec:40s} avg4 {sum(r['ra'] for r in res.values()) / n:.4f} / "
                f"{sum(r['ta'] for r in res.values()) / n:.4f} / "
                f"{sum(r['dtw'] for r in res.values()) / n / base['dtw']:.3f}x")
        for e, r in res.items():
            worst = min(r["event"], key=lambda k: r["event"][k] - base["event"][k])
            line += (f" | {e}: {r['ra']:.3f} / {r['ta']:.3f} / {r['dtw']:.2f} "
                     f"({r['dtw'] / base['dtw']:.2f}x) {worst} "
                     f"{r['event'][worst] - base['event'][worst]:+.3f}")
        print(line, flush=True)


if __name__ == "__main__":
    main()
