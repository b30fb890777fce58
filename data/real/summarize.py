#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Summarises `mpxkit eval -f csv` of the real corpus, one row per (slice, schedule, estimator).

usage: mpxkit eval -f csv ... | data/real/summarize.py [--markdown] [--by-split]

With --by-split, the rows are told apart by each trace's split (its '# split=' line).

Columns: TA, the mean total accuracy over (trace, event) pairs; within 10 %, the share of pairs
whose total is within 10 % of the truth (total accuracy >= 0.9); mean RA per window; window
coverage, the mean over pairs of the share of windows whose interval holds the truth; total
coverage, the share of pairs whose total's interval holds the true total.  `merge` is eval's
--merge value: steps of the recording per slice (1 step = 1 ms here).
"""
import csv
import gzip
import sys
from collections import OrderedDict


def split_of(path, cache={}):
    if path not in cache:
        cache[path] = "?"
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            for line in f:
                if not line.startswith("#"):
                    break
                if line.startswith("# split="):
                    cache[path] = line.split("=", 1)[1].strip()
    return cache[path]


def main():
    md = "--markdown" in sys.argv[1:]
    by_split = "--by-split" in sys.argv[1:]
    rows = OrderedDict()
    for r in csv.DictReader(line for line in sys.stdin if not line.startswith("#")):
        key = (split_of(r["trace"]) if by_split else "", int(r["merge"]), r["schedule"],
               r["estimator"])
        acc = rows.setdefault(key, [0, 0.0, 0, 0.0, 0.0, 0])
        ta = float(r["total_accuracy"])
        acc[0] += 1
        acc[1] += ta
        acc[2] += ta >= 0.9
        acc[3] += float(r["ra"])
        cov = float(r["interval_coverage"]) if r["interval_coverage"] not in ("", "nan") else 0.0
        acc[4] += cov
        acc[5] += r["total_in_interval"] in ("true", "1", "yes")
    head = ["split", "slice", "schedule / estimator", "pairs", "TA", "within 10 %", "mean RA",
            "window cov.", "total cov."]
    if md:
        print("| " + " | ".join(head) + " |")
        print("| --- | --- |" + " ---: |" * (len(head) - 2))
    else:
        print("\t".join(head))
    for (sp, m, sch, est), (n, ta, w10, ra, cov, tin) in sorted(rows.items(),
                                                                key=lambda kv: kv[0][:2]):
        cells = [sp or "all", "%d ms" % m, "%s / %s" % (sch, est), str(n), "%.3f" % (ta / n),
                 "%.0f %%" % (100.0 * w10 / n), "%.3f" % (ra / n), "%.3f" % (cov / n),
                 "%.3f" % (tin / n)]
        print(("| " + " | ".join(cells) + " |") if md else "\t".join(cells))


if __name__ == "__main__":
    main()
