#!/usr/bin/env python3
"""Per-mode summary of an ablation: reads the JSON array of `evoteam compare --json` (a file, or stdin with -)
and prints, for each team mode, the number of runs, the mean best speedup and the mean evaluations to reach 90%
of the run's final best, over the seeds. Used by bench/ablation.sh."""
import json
import sys

MODES = ("single", "fixed", "evolving")


def mean(values):
    values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return sum(values) / len(values) if values else None


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def summarise(runs):
    by_mode = {}
    for run in runs:
        by_mode.setdefault(run.get("team_mode") or "?", []).append(run)
    order = [m for m in MODES if m in by_mode] + sorted(m for m in by_mode if m not in MODES)
    lines = ["%-10s %5s %14s %20s" % ("mode", "runs", "mean best", "mean evals to 90%")]
    for mode in order:
        group = by_mode[mode]
        best = mean([r.get("best_speedup") for r in group])
        to_90 = mean([r.get("evaluations_to_90") for r in group])
        lines.append("%-10s %5d %14s %20s" % (mode, len(group), fmt(best, ".3f") + "x" if best is not None else "-",
                                              fmt(to_90, ".1f")))
    return "\n".join(lines)


def main(argv):
    if len(argv) != 2:
        print("usage: ablation_summary.py COMPARE_JSON|-", file=sys.stderr)
        return 2
    text = sys.stdin.read() if argv[1] == "-" else open(argv[1], encoding="utf-8").read()
    runs = json.loads(text)
    if not isinstance(runs, list):
        print("expected a JSON array of runs (evoteam compare --json)", file=sys.stderr)
        return 1
    print(summarise(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
