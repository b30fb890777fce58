#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A long ground-truth trace for timing `mpxkit eval` (doc/benchmarks.md, "eval on long traces").

STEPS steps of a corpus trace's events: its rows repeated in order, the step column renumbered.
usage: bench/eval-long-trace.py STEPS [CORPUS_TRACE] >OUT.csv
"""
import gzip
import os
import sys

steps = int(sys.argv[1])
trace = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(__file__), "..", "data", "corpus", "lu.csv.gz")
with gzip.open(trace, "rt") as f:
    rows = [line for line in f if not line.startswith("#")]
body = [r.split(",", 1)[1] for r in rows[1:]]
out = sys.stdout
out.write(rows[0])
out.writelines(f"{i},{body[i % len(body)]}" for i in range(steps))
