#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Model families doc/predict.md measured outside mpxkit before choosing what to build: power
# and DVFS-time variants, each on the TRAINING part of a data set only (leave one training
# workload out), never on its test workloads.  A prototype in numpy (python3-numpy), run by hand:
#   bench/predict-validate.sh ./utils/mpxkit WORK     # imports the datasets into WORK
#   bench/predict-explore.py WORK [DVFS_DATA]         # DVFS_DATA: ../shared/data/dvfs
# It reads the imported datasets and, for the temperatures the dataset format does not carry,
# the raw GemStone and Nikov files.  The fits are the ones lib/predict makes (weights 1/y^2,
# per-frequency power, pairs of frequencies for time) written again in numpy.
import collections
import csv
import itertools
import math
import os
import sys

import numpy as np

WORK = sys.argv[1] if len(sys.argv) > 1 else "."
DATA = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "dvfs")


def fnv1a(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


class Obs:
    """One workload x threads x frequency: counts and time summed over runs (lib/predict/obs.c)."""


def observe(name):
    meta, rows = {}, []
    with open(os.path.join(WORK, name + ".csv")) as f:
        for line in f:
            if line.startswith("#"):
                k, v = line[1:].strip().split("=", 1)
                meta[k.strip()] = v
                continue
            header = line.strip().split(",")
            break
        rows = [line.rstrip("\n").split(",") for line in f]
    events = header[9:]
    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault((r[0], int(r[3]), float(r[2])), []).append(r)
    out = []
    for (w, threads, freq), rs in groups.items():
        o = Obs()
        o.workload, o.threads, o.freq = w, threads, freq
        o.count = {e: sum(float(r[9 + i]) for r in rs) for i, e in enumerate(events)}
        t = [float(r[6]) for r in rs]
        o.time_s = sum(t)
        o.power = sum(float(r[7]) * x for r, x in zip(rs, t)) / o.time_s
        o.volt = sum(float(r[8]) * x for r, x in zip(rs, t)) / o.time_s
        o.window = meta.get("time") == "window"
        o.roles = {k[5:]: v for k, v in meta.items() if k.startswith("role.")}
        o.events = events
        out.append(o)
    return out


def training(name, obs):
    """The training workloads of the split doc/predict.md uses for the data set."""
    names = sorted({o.workload for o in obs})
    if name.startswith("gemstone"):
        return [w for w in names if fnv1a(w) % 100 >= 30]
    path = {"nikov-cbench": "nikov/cBench/cbench_split.data",
            "nikov-parsec": "nikov/PARSEC/PARSEC_split.data"}[name]
    train = set()
    for line in open(os.path.join(DATA, path)):
        if line.strip() and not line.startswith("#") and line.split("\t")[0].strip():
            train.add(line.split("\t")[0].strip())
    return [w for w in names if w in train]


def temperatures(name):
    """Mean core temperature per (workload, threads, MHz), from the raw files."""
    t = {}
    if name.startswith("gemstone"):
        raw = {"gemstone-date18": "date-18-A15-experiment-breakdown.csv",
               "gemstone-asrtpm": "asrtpm-A15-powmon-data.csv"}[name]
        with open(os.path.join(DATA, "gemstone", raw)) as f:
            rd = csv.reader(f, delimiter="\t")
            ix = {c: i for i, c in enumerate(next(rd))}
            for r in rd:
                key = (r[ix["Workload Name"]], len(r[ix["Core Mask"]].split(":")),
                       float(r[ix["Frequency A15"]]))
                t[key] = float(r[ix["Average Temperature A15"]])
        return t
    acc = collections.defaultdict(lambda: [0.0, 0])
    for i in (1, 2):
        path = os.path.join(DATA, "nikov", "cBench",
                            "xu3_cset_perfcpu_cBench_eMMC_el%d_big.data" % i)
        with open(path) as f:
            f.readline()
            for line in f:
                p = line.split("\t")
                a = acc[(p[1], 1, float(p[3]))]
                a[0] += float(p[4])
                a[1] += 1
    return {k: v[0] / v[1] for k, v in acc.items()}


# ---- least squares as lib/predict/fit.c: weights 1/y^2, optionally IRLS (--robust) -----------

def solve(x, y, w, robust=False):
    sw = np.sqrt(w)
    b = np.linalg.lstsq(x * sw[:, None], y * sw, rcond=None)[0]
    for _ in range(10 if robust else 0):
        r = np.abs(x @ b - y) * sw
        ww = w / np.maximum(r, 1e-3)
        s = np.sqrt(ww)
        b = np.linalg.lstsq(x * s[:, None], y * s, rcond=None)[0]
    return b


def nnls(a, b, free):
    """min |a x - b| with x[j] >= 0 for j >= free (Lawson and Hanson's active set)."""
    n = a.shape[1]
    p = np.zeros(n, bool)
    p[:free] = True
    x = np.zeros(n)

    def sub(p):
        z = np.zeros(n)
        z[p] = np.linalg.lstsq(a[:, p], b, rcond=None)[0]
        return z
    if free:
        x = sub(p)
    for _ in range(200):
        g = a.T @ (b - a @ x)
        cand = ~p & (g > 1e-12)
        if not cand.any():
            break
        p[np.argmax(np.where(cand, g, -np.inf))] = True
        while True:
            z = sub(p)
            neg = p.copy()
            neg[:free] = False
            neg &= z <= 0
            if not neg.any():
                x = z
                break
            i = np.where(neg)[0]
            x = x + np.min(x[i] / (x[i] - z[i])) * (z - x)
            drop = p.copy()
            drop[:free] = False
            drop &= np.abs(x) < 1e-12
            p[drop] = False
            x[drop] = 0
    return x


# ---- power at the same frequency ---------------------------------------------------------------

def power_design(obs, events, form, temps, per_cycle=False):
    rows = []
    for o in obs:
        f, v = o.freq * 1e-3, o.volt
        cyc = o.count[o.roles["cycles"]]
        r = np.array([o.count[e] / cyc if per_cycle else o.count[e] / o.time_s * 1e-9
                      for e in events])
        t = temps.get((o.workload, o.threads, o.freq), math.nan) if temps else 0
        fixed = {"per-freq": [1], "per-freq-v": [1, v], "per-freq-v+T": [1, v, t],
                 "walker": [1, f, v, f * v, v * v, f * v * v, v ** 3, f * v ** 3],
                 "walker+T": [1, f, v, f * v, v * v, f * v * v, v ** 3, f * v ** 3,
                              v * t, v * v * t]}[form]
        scale = 1 if form == "per-freq" else v * v
        rows.append(fixed + list(scale * r))
    return np.array(rows, float), len(fixed)


def power_lowo(name, events, form, temps=None, per_cycle=False, robust=False, by_threads=False,
               nonneg=False, in_sample=False):
    obs = observe(name)
    train = training(name, obs)
    obs = [o for o in obs if o.workload in train and o.power > 0]
    x, nfix = power_design(obs, events, form, temps, per_cycle)
    y = np.array([o.power for o in obs])
    w = 1 / y ** 2
    freq = np.array([o.freq for o in obs])
    thr = np.array([o.threads for o in obs])
    wl = np.array([o.workload for o in obs])
    keys = freq * 100 + (thr if by_threads else 0)
    if form.startswith("walker"):
        keys = thr if by_threads else np.zeros(len(y))
    pred = np.full(len(y), np.nan)
    for held in ([None] if in_sample else train):
        test = np.ones(len(y), bool) if held is None else wl == held
        fit = np.ones(len(y), bool) if held is None else ~test
        for k in set(keys):
            g = keys == k
            if not (g & test).any():
                continue
            a, b = x[g & fit], y[g & fit]
            if nonneg:
                s = np.sqrt(w[g & fit])
                aa = a * s[:, None]
                sc = np.sqrt((aa * aa).mean(0))
                sc[sc == 0] = 1
                c = nnls(aa / sc, b * s, nfix) / sc
            else:
                c = solve(a, b, w[g & fit], robust)
            pred[g & test] = x[g & test] @ c
    return 100 * np.mean(np.abs(pred - y) / y)


def power_tables():
    print("## Power at the same frequency (MAPE %, training workloads held out one at a time)")
    print()
    print("| data set | events | variant | MAPE % |")
    print("| --- | --- | --- | --- |")
    for name in ("gemstone-date18", "gemstone-asrtpm", "nikov-cbench"):
        obs = observe(name)
        temps = temperatures(name)
        if name == "nikov-cbench":
            roles = obs[0].roles
            sets = [("roles", [roles[k] for k in ("cycles", "instructions", "misses", "dcache",
                                                  "branches")]),
                    ("all 12", [e for e in obs[0].events if e != "SW_INCR"])]
        else:
            sets = [("all 7", obs[0].events)]
        for label, ev in sets:
            form = "per-freq" if name == "nikov-cbench" else "per-freq-v"
            variants = [
                ("%s, rates per second" % form, dict(form=form)),
                ("%s, rates per cycle" % form, dict(form=form, per_cycle=True)),
                ("per-freq-v + temperature", dict(form="per-freq-v+T", temps=temps)),
                ("Walker's one fit over all frequencies", dict(form="walker")),
                ("Walker's + temperature", dict(form="walker+T", temps=temps)),
                ("%s, --robust" % form, dict(form=form, robust=True)),
                ("%s, non-negative event coefficients" % form, dict(form=form, nonneg=True)),
                ("%s, fitted on the workloads it predicts (in-sample)" % form,
                 dict(form=form, in_sample=True)),
                ("%s, --robust, in-sample" % form, dict(form=form, robust=True, in_sample=True)),
            ]
            if name == "gemstone-asrtpm":
                variants += [("%s, one fit per thread count" % form,
                              dict(form=form, by_threads=True)),
                             ("%s, one fit per thread count, --robust" % form,
                              dict(form=form, by_threads=True, robust=True))]
            for vlabel, kw in variants:
                print("| %s | %s | %s | %.2f |" % (name, label, vlabel, power_lowo(name, ev, **kw)))
    print()


# ---- DVFS time: every ordered pair of frequencies of one workload ------------------------------

class Pairs:
    def __init__(self, name):
        obs = observe(name)
        self.train = training(name, obs)
        g = collections.defaultdict(list)
        for o in obs:
            if o.workload not in self.train:
                continue
            c = o.count
            n, cyc, f = c[o.roles["instructions"]], c[o.roles["cycles"]], o.freq * 1e-3
            busy = cyc / (n * f)
            idle = 0 if o.window else max(0.0, o.time_s * 1e9 * o.threads / n - busy)
            feat = dict(f=f, busy=busy, idle=idle, tau=busy + idle, thr=o.threads,
                        cpi=cyc / n, miss=c[o.roles["misses"]] / n,
                        r={e: c[e] / n for e in o.events})
            g[(o.workload, o.threads)].append(feat)
        self.events = [e for e in obs[0].events if e != "SW_INCR"]  # Nikov's: always 0
        self.roles = obs[0].roles
        cols = collections.defaultdict(list)
        for (w, t), lst in g.items():
            fs = sorted(x["f"] for x in lst)
            for a, z in itertools.permutations(lst, 2):
                cols["w"].append(w)
                cols["ra"].append(a["f"] / z["f"])
                cols["b"].append(a["busy"])
                cols["i"].append(a["idle"])
                cols["tz"].append(z["tau"])
                cols["fa"].append(a["f"])
                cols["fz"].append(z["f"])
                cols["thr"].append(t)
                cols["cpi"].append(a["cpi"])
                cols["miss"].append(a["miss"])
                cols["r"].append([a["r"][e] for e in self.events])
                cols["adj"].append(abs(fs.index(a["f"]) - fs.index(z["f"])) == 1)
                cols["ext"].append({a["f"], z["f"]} == {fs[0], fs[-1]})
        for k, v in cols.items():
            setattr(self, k, np.array(v))

    def terms(self, names):
        """MET regressors per instruction at f: 1, cpi, miss, cpi*miss, miss*MPKI, events, x thr."""
        out = []
        for t in names:
            if t == "1":
                out.append(np.ones(len(self.w)))
            elif t == "cpi":
                out.append(self.cpi)
            elif t == "miss":
                out.append(self.miss)
            elif t == "cpi*miss":
                out.append(self.cpi * self.miss)
            elif t == "mlp":
                out.append(1000 * self.miss ** 2)
            elif t.endswith("*thr"):
                out.append(self.terms([t[:-4]])[0] * self.thr)
            else:
                out.append(self.r[:, self.events.index(t)])
        return np.column_stack(out) if out else np.zeros((len(self.w), 0))

    def lowo(self, names, group=None, idle_scales=False):
        m = self.terms(names)
        b = self.b + (self.i if idle_scales else 0)
        i = 0 * self.i if idle_scales else self.i
        y = self.tz - i - b * self.ra
        x = (1 - self.ra)[:, None] * m
        w = 1 / self.tz ** 2
        keys = np.zeros(len(y)) if group is None else group(self)
        ape = np.zeros(len(y))
        for held in self.train:
            test = self.w == held
            for k in set(keys):
                g = keys == k
                if not (g & test).any():
                    continue
                mu = solve(x[g & ~test], y[g & ~test], w[g & ~test]) if m.shape[1] else []
                met = m[g & test] @ mu if m.shape[1] else 0
                met = np.clip(met, 0, b[g & test])
                pred = (b[g & test] - met) * self.ra[g & test] + met + i[g & test]
                ape[g & test] = np.abs(pred - self.tz[g & test]) / self.tz[g & test]
        return tuple(100 * ape[s].mean() for s in (self.adj, self.ext, np.ones(len(y), bool)))


def time_tables():
    print("## DVFS time (MAPE % adjacent / extreme / all pairs, training workloads held out)")
    print()
    print("| data set | MET per instruction | fits | adjacent | extreme | all |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in ("gemstone-date18", "gemstone-asrtpm", "nikov-cbench", "nikov-parsec"):
        p = Pairs(name)
        other = [e for e in p.events if e not in (p.roles["cycles"], p.roles["instructions"])]
        variants = [([], None, "none"), (["miss"], None, "linear"),
                    (["miss", "mlp"], None, "mlp"), (["1", "cpi"], None, "cpi"),
                    (["1", "cpi", "miss"], None, "cpi + miss"),
                    (["1", "cpi", "cpi*miss"], None, "cpi + cpi x miss"),
                    (["1", "cpi", "miss", "mlp"], None, "cpi + mlp"),
                    (["1", "cpi"] + other, None, "cpi + every other event")]
        if name == "gemstone-asrtpm":
            variants += [(["1", "cpi", "1*thr", "cpi*thr"], None, "cpi, x threads")]
        for names, group, label in variants:
            print("| %s | %s | one fit | %.2f | %.2f | %.2f |" % ((name, label) + p.lowo(names)))
        for label, group in (("one per source MHz", lambda q: q.fa),
                             ("one per pair of MHz", lambda q: q.fa * 100 + q.fz)):
            print("| %s | cpi | %s | %.2f | %.2f | %.2f |" % (
                (name, label) + p.lowo(["1", "cpi"], group)))
        if name.startswith("nikov"):
            print("| %s | none, idle time scaling with the clock | one fit | %.2f | %.2f | %.2f |"
                  % ((name,) + p.lowo([], idle_scales=True)))
    print()


if __name__ == "__main__":
    power_tables()
    time_tables()
