#!/usr/bin/env python3
"""The GPU suite's per-workload table (tests/gpu/run.sh): one row per task and workload from the evaluations' JSON.

    latency_table.py text|markdown EVAL_DIR KERNELS_DIR

EVAL_DIR holds one `evoteam eval --json` result per task. Each row: the starting kernel's median latency and,
where the evaluation has a vendor baseline ("vendor" for the task: name, status, detail and fraction, the geometric
mean; "vendor" per workload once measured: median_s and fraction, the ratio of the candidate's speedup to the
vendor's over the same baseline, so the vendor's latency over the starting kernel's), the vendor's latency and that
ratio, or the vendor's status and why when it was not measured. Where the task's own baseline is the vendor library ("vendor": true in its
task.json's baseline: gemm_bf16's cuBLAS), the baseline's latency and the ratio it gives, and the task's speedup as
the geometric mean. "-" where there is no figure.
"""
import json
import os
import re
import sys

HEAD = ["task", "workload", "start ms", "vendor", "vendor ms", "vendor/start", "verdict"]


def number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def milliseconds(seconds):
    return "%.4f" % (seconds * 1e3) if number(seconds) else "-"


def task_baseline(kernels, task):
    try:
        with open(os.path.join(kernels, task, "task.json")) as handle:
            text = re.sub(r"^\s*//.*$", "", handle.read(), flags=re.M)
        return json.loads(text).get("baseline", {})
    except (OSError, ValueError):
        return {}


def task_rows(result, baseline):
    task, verdict = result.get("task", "?"), result.get("verdict", "?")
    if not result.get("workloads"):
        return [[task, "-", "-", "-", "-", "-", verdict]]
    rows = []
    top = result.get("vendor") if isinstance(result.get("vendor"), dict) else None
    for workload in result["workloads"]:
        own = (workload.get("candidate") or {}).get("median_s")
        vendor, vendor_s, ratio = "-", None, "-"
        figure = workload.get("vendor")
        if top is not None:
            vendor = top.get("name", "?")
            if isinstance(figure, dict):
                vendor_s = figure.get("median_s")
                if number(figure.get("fraction")):
                    ratio = "%.3f" % figure["fraction"]
            else:
                vendor += " (%s)" % top.get("status", "?")
        elif baseline.get("vendor"):
            vendor = baseline.get("name", "baseline")
            vendor_s = (workload.get("baseline") or {}).get("median_s")
        if ratio == "-" and number(vendor_s) and number(own):
            ratio = "%.3f" % (vendor_s / own)
        rows.append([task, workload.get("name", "?"), milliseconds(own), vendor, milliseconds(vendor_s), ratio, verdict])
    if top is not None and number(top.get("fraction")):
        rows.append([task, "(geomean)", "-", top.get("name", "?"), "-", "%.3f" % top["fraction"], verdict])
    elif top is not None:
        why = "%s: %s" % (top.get("status", "?"), top.get("detail", ""))
        rows.append([task, "(geomean)", "-", "%s (%s)" % (top.get("name", "?"), why[:120]), "-", "-", verdict])
    elif baseline.get("vendor") and number(result.get("speedup")):
        # The speedup over a vendor baseline is that baseline's latency over the starting kernel's.
        rows.append([task, "(geomean)", "-", baseline.get("name", "baseline"), "-", "%.3f" % result["speedup"], verdict])
    return rows


def main(argv):
    if len(argv) != 4 or argv[1] not in ("text", "markdown"):
        sys.stderr.write("usage: latency_table.py text|markdown EVAL_DIR KERNELS_DIR\n")
        return 2
    form, eval_dir, kernels = argv[1], argv[2], argv[3]
    rows = []
    for name in sorted(os.listdir(eval_dir)) if os.path.isdir(eval_dir) else []:
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(eval_dir, name)) as handle:
                result = json.load(handle)
        except ValueError:
            continue
        result.setdefault("task", name[:-5])
        rows += task_rows(result, task_baseline(kernels, result["task"]))
    if form == "markdown":
        print("| " + " | ".join(HEAD) + " |")
        print("|" + "|".join("---" for _ in HEAD) + "|")
        for row in rows:
            print("| " + " | ".join(cell.replace("|", "/") for cell in row) + " |")
    else:
        line = "%-42s %-14s %-10s %-12s %-10s %-12s %s"
        print(line % tuple(HEAD))
        for row in rows:
            print(line % tuple(row))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
