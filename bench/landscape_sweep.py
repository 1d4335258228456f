#!/usr/bin/env python3
"""Measures every configuration of a host task's param space once with evoteam's own evaluator (`evoteam eval
--param ... --json`) and writes the exhaustive table: per configuration its verdict, the failure signature the
team sees, the speedup and the per-workload times, with the machine it was measured on.

Usage: bench/landscape_sweep.py EVOTEAM_BIN TASK_DIR OUT_JSON [--set KEY=VALUE ...]
The table is the landscape the replay fixture (tests/support/replay_evaluator) answers from and the search
benchmark (bench/search_bench.sh) scores against. A table in progress is rewritten after every configuration and
an interrupted sweep resumes where it stopped.
"""
import datetime
import itertools
import json
import os
import platform
import re
import subprocess
import sys
import time


def read_jsonc(path):
    text = open(path).read()
    return json.loads(re.sub(r"^\s*//.*$|\s//[^\"\n]*$", "", text, flags=re.M))


def satisfies(constraints, params):
    names = {k: int(v) if re.fullmatch(r"-?\d+", v) else float(v) for k, v in params.items()}
    for expr in constraints:
        py = expr.replace("&&", " and ").replace("||", " or ")
        if not eval(py, {"__builtins__": {}}, names):
            return False
    return True


def machine():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    compiler = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(), "compiler": compiler,
            "load_average_at_start": os.getloadavg()[0]}


def signature_of(result):
    # As the evaluator's measurement takes it (eval_types.cpp: measurement_of): verdict and the reason's start.
    return "" if result.get("passed") else result["verdict"] + ": " + result.get("reason", "")[:160]


def failed_stage(result):
    for stage in result.get("stages", []):
        if stage.get("status") == "failed":
            return stage.get("name", "")
    return ""


def row_of(params, result, wall_s):
    row = {"params": params, "verdict": result["verdict"], "stage": failed_stage(result),
           "signature": signature_of(result), "speedup": result.get("speedup"), "wall_s": round(wall_s, 3),
           "workloads": {}}
    for workload in result.get("workloads", []):
        candidate = workload.get("candidate", {})
        row["workloads"][workload["name"]] = {
            "median_s": candidate.get("median_s"), "relstdev": candidate.get("relstdev"),
            "samples": candidate.get("samples"), "speedup": workload.get("speedup"),
            "baseline_median_s": workload.get("baseline", {}).get("median_s")}
    return row


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    evoteam, task_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
    overrides = sys.argv[4:]
    task = read_jsonc(os.path.join(task_dir, "task.json"))
    names = [p["name"] for p in task["params"]]
    values = [[str(v) for v in p["values"]] for p in task["params"]]
    space = [dict(zip(names, combo)) for combo in itertools.product(*values)]
    space = [p for p in space if satisfies(task.get("param_constraints", []), p)]
    table = {"task": task["name"], "machine": machine(),
             "measured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
             "protocol": {"command": "evoteam eval TASK --param ... --json", "overrides": overrides},
             "params": [{"name": n, "values": v, "default": str(p["default"])}
                        for n, v, p in zip(names, values, task["params"])],
             "workloads": [w["name"] for w in task["workloads"]], "configs": []}
    if os.path.exists(out):
        previous = json.load(open(out))
        if previous.get("task") == table["task"] and previous.get("params") == table["params"]:
            table = previous
    done = {json.dumps(row["params"], sort_keys=True) for row in table["configs"]}
    started = time.time()
    for index, params in enumerate(space):
        if json.dumps(params, sort_keys=True) in done:
            continue
        command = [evoteam, "--quiet"]
        for item in overrides:
            command += ["--set", item]
        command += ["eval", task_dir, "--json", "--no-cache"]
        for name, value in params.items():
            command += ["--param", f"{name}={value}"]
        begin = time.time()
        proc = subprocess.run(command, capture_output=True, text=True)
        try:
            result = json.loads(proc.stdout)
        except json.JSONDecodeError:
            print(f"evoteam eval gave no JSON for {params} (exit {proc.returncode}): {proc.stderr[-400:]}")
            return 1
        table["configs"].append(row_of(params, result, time.time() - begin))
        tmp = out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(table, f, indent=None, separators=(",", ":"))
        os.replace(tmp, out)
        row = table["configs"][-1]
        elapsed = time.time() - started
        print(f"[{len(table['configs'])}/{len(space)}] {row['verdict']:<18} {row['speedup'] or 0:6.2f}x "
              f"{row['wall_s']:5.1f}s {params} ({elapsed / 60:.1f} min)", flush=True)
    table["machine"]["load_average_at_end"] = os.getloadavg()[0]
    with open(out + ".tmp", "w") as f:
        json.dump(table, f, indent=None, separators=(",", ":"))
    os.replace(out + ".tmp", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
