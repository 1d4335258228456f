#!/usr/bin/env python3
"""How hard the field's published tuning landscapes are for random search: the yardstick behind the hardness bar
of docs/search.md (random search < 85% of the best at 15% of the space needs at most ~4 configurations within 85%
of the best, since a 15% sample misses k of them with probability ~0.85^k).

Usage: bench/published_random.py GIT_DIR [REV] [-o TABLE_MD]
  GIT_DIR: the .git of a clone of github.com/AutoTuningAssociation/benchmark_hub (exhaustive Kernel Tuner caches of
  GPU kernels measured on several devices); REV defaults to HEAD.

Reads every *.json.gz under cachefiles/ and currently_unused/cachefiles/ at <rev> (default HEAD)
directly from the git object store (git cat-file), decompresses with gzip, and keeps only
plain Kernel Tuner caches (top-level "cache" dict).  Skipped, with reasons: T4-format files
(*_T4*, keys metadata/results), *-metadata*/*-results*, hyperparameter-tuning caches,
KTT-format outputs, Git LFS pointers, blobs absent from the clone, undecodable files.

Per landscape:
  * entries  = len(cache) (all evaluated configs, valid or not) -> basis for budgets
  * cartesian = product of len(tune_params[k]) (reference only)
  * valid    = entries whose objective value is a finite number
  * best     = min valid objective (all caches here minimise "time")
  * within X = #valid configs with best/time >= X  (X = 0.95, 0.90, 0.85)
  * random search: uniform sampling WITHOUT replacement from all cache entries, budget
    b = round(p * entries) for p = 5/10/15 %; invalid entries use up budget and find nothing.
    Score = best/min(time of valid sampled) (0 if nothing valid sampled).
    1001 seeds (random.Random(seed), seed = 0..1000); for each seed one sample of the largest
    budget is drawn and the smaller budgets use its prefixes (each prefix is itself a uniform
    sample without replacement of that size).  Reported: median [Q1-Q3] (inclusive quartiles).
  * P(miss85@15%) = exact hypergeometric probability that a 15 % sample contains none of the
    K configs within 85 % of the best: C(N-K, b) / C(N, b).
Standard library only.
"""
import gzip
import json
import math
import random
import statistics
import subprocess
import sys

SEEDS = 1001
BUDGETS = (0.05, 0.10, 0.15)
THRESH = (0.95, 0.90, 0.85)
ROOTS = ("cachefiles/", "currently_unused/cachefiles/")


def git(gd, *args, check=True):
    return subprocess.run(["git", "--git-dir", gd, *args], capture_output=True, check=check)


def budget(p, n):
    return max(1, int(math.floor(p * n + 0.5)))


def log_comb(n, k):
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def p_miss(n, k, b):
    if n - k < b:
        return 0.0
    return math.exp(log_comb(n - k, b) - log_comb(n, b))


def is_valid(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def analyse(d):
    obj = d.get("objective", "time")
    if d.get("objective_higher_is_better"):
        raise ValueError("higher-is-better objective not handled")
    cache = d["cache"]
    times = [v.get(obj) if isinstance(v, dict) else None for v in cache.values()]
    times = [float(t) if is_valid(t) else math.inf for t in times]
    n = len(times)
    valid = [t for t in times if t < math.inf]
    best = min(valid)
    within = {x: sum(1 for t in valid if best / t >= x) for x in THRESH}
    cart = math.prod(len(v) for v in d.get("tune_params", {}).values())
    bs = [budget(p, n) for p in BUDGETS]
    bmax = max(bs)
    scores = {p: [] for p in BUDGETS}
    idx_range = range(n)
    for seed in range(SEEDS):
        sample = random.Random(seed).sample(idx_range, bmax)
        for p, b in zip(BUDGETS, bs):
            m = min(times[i] for i in sample[:b])
            scores[p].append(best / m if m < math.inf else 0.0)
    stats = {}
    for p in BUDGETS:
        s = scores[p]
        q1, med, q3 = statistics.quantiles(s, n=4, method="inclusive")
        stats[p] = (med, q1, q3, sum(1 for x in s if x >= 0.85) / len(s))
    b15 = budget(0.15, n)
    return dict(obj=obj, n=n, cart=cart, valid=len(valid), best=best, within=within,
                budgets=bs, stats=stats, pmiss=p_miss(n, within[0.85], b15))


def main():
    args = [a for a in sys.argv[1:]]
    out = None
    if "-o" in args:
        i = args.index("-o")
        out = args[i + 1]
        del args[i:i + 2]
    gd = args[0]
    rev = args[1] if len(args) > 1 else "HEAD"
    commit = git(gd, "rev-parse", rev).stdout.decode().strip()
    date = git(gd, "log", "-1", "--format=%ci", commit).stdout.decode().strip()
    lic = git(gd, "show", f"{commit}:LICENSE", check=False).stdout.decode().strip().splitlines()
    lic_line = lic[0] + (" — " + lic[2] if len(lic) > 2 else "") if lic else "(no LICENSE)"

    entries = git(gd, "ls-tree", "-r", commit).stdout.decode().splitlines()
    rows, skipped = [], []
    for line in entries:
        meta, path = line.split("\t", 1)
        sha = meta.split()[2]
        if not path.startswith(ROOTS) or not path.endswith(".json.gz"):
            if path.startswith(ROOTS) and not path.endswith(".json.gz"):
                skipped.append((path, "not .json.gz (zip duplicate)"))
            continue
        base = path.rsplit("/", 1)[1]
        if "hyperparam" in path:
            skipped.append((path, "hyperparameter-tuning cache, not a kernel"))
            continue
        if "_T4" in base or "-metadata" in base or "-results" in base:
            skipped.append((path, "T4 / metadata / results file"))
            continue
        if git(gd, "cat-file", "-e", sha, check=False).returncode != 0:
            skipped.append((path, f"blob {sha[:10]} absent from this clone"))
            continue
        raw = git(gd, "cat-file", "-p", sha).stdout
        if raw.startswith(b"version https://git-lfs"):
            skipped.append((path, "Git LFS pointer"))
            continue
        try:
            d = json.loads(gzip.decompress(raw))
        except Exception as e:  # noqa: BLE001
            skipped.append((path, f"undecodable: {e}"))
            continue
        if not isinstance(d, dict) or not isinstance(d.get("cache"), dict):
            keys = list(d)[:3] if isinstance(d, dict) else type(d).__name__
            skipped.append((path, f"not a Kernel Tuner cache (keys {keys})"))
            continue
        print("analysing", path, file=sys.stderr, flush=True)
        r = analyse(d)
        r["path"] = path
        rows.append(r)

    L = []
    L.append("# Random search on published Kernel Tuner brute-force landscapes\n")
    L.append(f"Source: github.com/AutoTuningAssociation/benchmark_hub, commit `{commit}` ({date}).  ")
    L.append(f"Licence: {lic_line} (LICENSE file at that commit).  ")
    L.append(f"Generated by `bench/published_random.py`; random search = uniform sampling without "
             f"replacement over all cache entries (invalid ones consume budget), {SEEDS} seeds; "
             "cells are the fraction of the best time reached (best/found), median [Q1–Q3]. "
             "Budgets are round(p·entries). `P(miss85)` = hypergeometric probability that a 15 % "
             "sample contains no config within 85 % of the best; `emp<0.85` = share of seeds whose "
             "15 % result is below 0.85.\n")

    def table(sel, title):
        L.append(f"\n## {title}\n")
        L.append("| landscape | entries | cartesian | valid | best (ms) | ≥95% | ≥90% | ≥85% | "
                 "rand 5% | rand 10% | rand 15% | P(miss85) @15% | emp<0.85 @15% |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|")
        for r in sel:
            name = r["path"].replace("currently_unused/cachefiles/", "").replace("cachefiles/", "")
            name = name[:-len(".json.gz")]
            cells = []
            for p, b in zip(BUDGETS, r["budgets"]):
                med, q1, q3, _ = r["stats"][p]
                cells.append(f"{med:.3f} [{q1:.3f}–{q3:.3f}] (b={b})")
            emp = 1 - r["stats"][0.15][3]
            L.append(f"| {name} | {r['n']} | {r['cart']} | {r['valid']} | {r['best']:.4g} | "
                     f"{r['within'][0.95]} | {r['within'][0.90]} | {r['within'][0.85]} | "
                     + " | ".join(cells) + f" | {r['pmiss']:.2e} | {emp:.3f} |")

    table([r for r in rows if r["path"].startswith("cachefiles/")], "cachefiles/ (current benchmark set)")
    table([r for r in rows if r["path"].startswith("currently_unused/")],
          "currently_unused/cachefiles/ (older caches; convolution/ and pnpoly/ hold KTT-measured "
          "times converted to KT format, 'KernelTuner data/' holds Kernel Tuner measurements)")
    L.append("\n## Skipped files\n")
    for p, why in skipped:
        L.append(f"- `{p}`: {why}")
    text = "\n".join(L) + "\n"
    if out:
        with open(out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
