#!/usr/bin/env python3
"""Writes a landscape table (bench/landscapes/<task>.json) as a Kernel Tuner cache file, so that Kernel Tuner's
strategies can search the same measured landscape in its simulation mode (bench/kt_strategies.py).

Usage: bench/kt_cache.py LANDSCAPE_JSON CACHE_JSON

Kernel Tuner minimises "time": a configuration's is 1 / speedup (the geometric mean over the workloads of its time
relative to the starting kernel's, so the same order as evoteam's speedup). A configuration that failed is an error
entry: CompilationFailedConfig for the static and build stages, RuntimeFailedConfig for anything later (wrong
results, crashes, untrustworthy timing). Every configuration of the table is in the cache, as simulation mode
requires, and no restriction is derived from the failures: a strategy finds them by evaluating, as the team does.
"""
import json
import sys


def value_of(text):
    try:
        return int(text)
    except ValueError:
        return float(text)


def cache_of(table):
    names = [p["name"] for p in table["params"]]
    cache = {}
    for row in table["configs"]:
        values = [value_of(row["params"][n]) for n in names]
        key = ",".join(str(v) for v in values)
        entry = dict(zip(names, values))
        if row["verdict"] in ("PASS", "NOISY") and row.get("speedup"):
            entry["time"] = 1.0 / row["speedup"]
            entry["times"] = [entry["time"]]
        elif row.get("stage") in ("static", "build") or row["verdict"] in ("COMPILE_ERROR", "COMPILE_TIMEOUT",
                                                                             "STATIC_REJECT"):
            entry["time"] = "CompilationFailedConfig"
        else:
            entry["time"] = "RuntimeFailedConfig"
        entry["compile_time"] = 0
        entry["verification_time"] = 0
        entry["benchmark_time"] = 0
        cache[key] = entry
    return {"device_name": table["machine"]["cpu"], "kernel_name": table["task"], "problem_size": [1],
            "tune_params_keys": names,
            "tune_params": {p["name"]: [value_of(v) for v in p["values"]] for p in table["params"]},
            "objective": "time", "cache": cache}


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    table = json.load(open(sys.argv[1]))
    with open(sys.argv[2], "w") as f:
        json.dump(cache_of(table), f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
