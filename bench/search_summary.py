#!/usr/bin/env python3
"""Prints the search benchmark's table from the runs' JSON lines (bench/search_bench.sh): per landscape and budget,
the median and quartiles over seeds of the fraction of the exhaustive best each searcher reached, and the
evaluations it took to reach 95% of it. Random search is computed here from the table itself (a uniform sample of
the declared space without replacement, seeds 1..SEEDS).

Usage: search_summary.py SEEDS LANDSCAPE_JSON... -- RUNS_JSONL...
"""
import json
import random
import statistics
import sys


def quartiles(values):
    values = sorted(values)
    if len(values) == 1:
        return values[0], values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[1], q[2]


def random_runs(table, budgets, seeds):
    points = table["configs"]
    best = max(r["speedup"] for r in points if r["verdict"] in ("PASS", "NOISY") and r.get("speedup"))
    for budget in budgets:
        for seed in range(1, seeds + 1):
            order = random.Random(seed).sample(range(len(points)), len(points))
            reached, to_95 = 0.0, 0
            for i, index in enumerate(order[:budget]):
                row = points[index]
                if row["verdict"] in ("PASS", "NOISY") and row.get("speedup"):
                    reached = max(reached, row["speedup"])
                    if not to_95 and row["speedup"] >= 0.95 * best:
                        to_95 = i + 1
            yield {"landscape": table["task"], "team": "random", "budget": budget, "seed": seed,
                   "fraction": reached / best, "evaluations_to_95": to_95}


def main():
    if "--" not in sys.argv or len(sys.argv) < 4:
        print(__doc__)
        return 2
    cut = sys.argv.index("--")
    seeds = int(sys.argv[1])
    tables = [json.load(open(path)) for path in sys.argv[2:cut]]
    runs = []
    for path in sys.argv[cut + 1:]:
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                runs.append(json.loads(line))
    for table in tables:
        size = len(table["configs"])
        budgets = sorted({r["budget"] for r in runs if r["landscape"] == table["task"]})
        runs += list(random_runs(table, budgets, seeds))
        passing = [r for r in table["configs"] if r["verdict"] in ("PASS", "NOISY")]
        best = max(r["speedup"] for r in passing)
        near = sum(1 for r in passing if r["speedup"] >= 0.95 * best)
        print(f"\n### {table['task']}: {size} configurations, {len(passing)} pass, best {best:.2f}x "
              f"({near} within 95% of it); measured {table['measured']} on {table['machine']['cpu']}\n")
        print("| searcher | " + " | ".join(f"{round(100 * b / size)}% ({b} evals)" for b in budgets) +
              f" | evals to 95% (reached/seeds) at {budgets[-1]} |")
        print("| --- | " + " | ".join("---" for _ in budgets) + " | --- |")
        teams = []
        for r in runs:
            if r["landscape"] == table["task"] and r["team"] not in teams:
                teams.append(r["team"])
        for team in teams:
            cells = []
            for budget in budgets:
                fractions = [r["fraction"] for r in runs
                             if r["landscape"] == table["task"] and r["team"] == team and r["budget"] == budget]
                if not fractions:
                    cells.append("")
                    continue
                q1, median, q3 = quartiles(fractions)
                cells.append(f"{100 * median:.1f}% [{100 * q1:.1f}–{100 * q3:.1f}]")
            last = [r for r in runs if r["landscape"] == table["task"] and r["team"] == team
                    and r["budget"] == budgets[-1]]
            reached = [r["evaluations_to_95"] for r in last if r["evaluations_to_95"]]
            to_95 = f"{statistics.median(reached):.0f} ({len(reached)}/{len(last)})" if reached else f"— (0/{len(last)})"
            print(f"| {team} | " + " | ".join(cells) + f" | {to_95} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
