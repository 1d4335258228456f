#!/usr/bin/env python3
"""Runs Kernel Tuner's strategies in simulation mode over a cache written by bench/kt_cache.py and prints one JSON
line per run: the strategy, the budget (max_fevals), the seed, the best speedup reached and its fraction of the
landscape's best, and the evaluations until 95% of it. Runs in the bench environment where `kernel-tuner` is
installed (bench/search_bench.sh makes it).

Usage: kt_strategies.py CACHE_JSON STRATEGIES BUDGETS SEEDS
  STRATEGIES: comma-separated Kernel Tuner strategy names; BUDGETS: evaluations, comma-separated; SEEDS: how many
"""
import json
import random
import sys
import warnings

import numpy as np
from kernel_tuner import tune_kernel


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    cache_path, strategies, budgets, seeds = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(","), int(
        sys.argv[4])
    cache = json.load(open(cache_path))
    times = [e["time"] for e in cache["cache"].values() if isinstance(e["time"], (int, float))]
    best_time = min(times)
    for strategy in strategies:
        for budget in budgets:
            for seed in range(1, seeds + 1):
                random.seed(seed)
                np.random.seed(seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    results, _ = tune_kernel(cache["kernel_name"], "", tuple(cache["problem_size"]), [],
                                             cache["tune_params"], strategy=strategy,
                                             strategy_options={"max_fevals": int(budget)}, cache=cache_path,
                                             simulation_mode=True, verbose=False, quiet=True)
                # Unique configurations in the order evaluated: a revisit costs nothing in simulation mode.
                found, to_95, seen, visited = [], 0, 0, set()
                for result in results:
                    if not result:
                        continue
                    key = tuple(result.get(name) for name in cache["tune_params_keys"])
                    if key in visited:
                        continue
                    visited.add(key)
                    seen += 1
                    if seen > int(budget):
                        break
                    t = result.get("time")
                    if isinstance(t, (int, float)) and "__error__" not in result:
                        found.append(t)
                        if not to_95 and best_time / t >= 0.95:
                            to_95 = seen
                best = min(found) if found else None
                print(json.dumps({"landscape": cache["kernel_name"], "team": "kt:" + strategy, "budget": int(budget),
                                  "seed": seed, "best_speedup": 1.0 / best if best else 0.0,
                                  "fraction": best_time / best if best else 0.0, "evaluations": min(seen, int(budget)),
                                  "evaluations_to_95": to_95}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
