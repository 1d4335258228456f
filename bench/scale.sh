#!/usr/bin/env bash
# Scale-out benchmark (rerunnable): what spreading evaluations over devices and Slurm workers buys, measured side by
# side in one run on this machine.
#
#  1. Local vs Slurm: the builtin team's first cycle on host_matmul (EVALS evaluations, a cache of its own so each
#     runs) evaluated here, then through a Slurm worker job on the same machine (tests/slurm/cluster.sh starts a
#     single-node Slurm when none answers). Prints evaluations per hour for both and the Slurm dispatch overhead
#     per evaluation: (wall through Slurm - wall here) / evaluations.
#  2. Device pool: a host task whose kernel sleeps SLEEP_US per call (a fixed-duration "device" that leaves the CPU
#     free, as a GPU does), optimized with --devices listing 1, 2, 4 and 8 simulated devices. Prints evaluations per
#     hour for each, against the ideal (n times the one-device figure), and their ratio.
#
# Usage: bench/scale.sh [EVALS] [SLEEP_US]     (defaults: 8 evaluations, 20000 us)
# Needs root for the Slurm part when Slurm is not running (it installs and starts it); set EVOTEAM_SCALE_SLURM=0 to
# skip that part.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EVALS="${1:-8}"
SLEEP_US="${2:-20000}"
EVOTEAM="${EVOTEAM:-$ROOT/build/evoteam}"
[ -x "$EVOTEAM" ] || { echo "scale: no evoteam binary at $EVOTEAM (scripts/evoteam builds it)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "scale: python3 is required" >&2; exit 2; }
WORK="$(mktemp -d)"
started_slurm=0
cleanup() {
  [ "$started_slurm" = 1 ] && "$ROOT/tests/slurm/cluster.sh" stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# One optimize cycle of EVALS evaluations; prints "<evaluations> <wall seconds>" measured around the whole command.
optimize_cycle() { # task name args...
  local task=$1 name=$2
  shift 2
  local start end
  start=$(date +%s.%N)
  "$EVOTEAM" -q --set "eval.cache_dir=$WORK/cache-$name" --set "team.evaluations_per_cycle=$EVALS" "$@" \
    optimize "$task" --provider builtin --max-cycles 1 --runs-dir "$WORK/runs-$name" --json >"$WORK/$name.json" ||
    [ $? = 5 ]  # a budget stop is still a measured run
  end=$(date +%s.%N)
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["evaluations"], float(sys.argv[3]) - float(sys.argv[2]))' \
    "$WORK/$name.json" "$start" "$end"
}

per_hour() { python3 -c 'import sys; e, w = map(float, sys.argv[1:]); print(f"{3600 * e / w:.0f}")' "$@"; }

echo "evoteam scale benchmark: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $EVALS evaluations per run"
echo
if [ "${EVOTEAM_SCALE_SLURM:-1}" = 1 ]; then
  if ! "$ROOT/tests/slurm/cluster.sh" status >/dev/null 2>&1; then
    "$ROOT/tests/slurm/cluster.sh" start
    started_slurm=1
  fi
  # shellcheck disable=SC1091
  source "${EVOTEAM_SLURM_DIR:-/tmp/evoteam-slurm}/env"
  read -r local_evals local_wall < <(optimize_cycle "$ROOT/kernels/host_matmul" local)
  read -r slurm_evals slurm_wall < <(optimize_cycle "$ROOT/kernels/host_matmul" slurm --set cluster.executor=slurm \
    --set cluster.slurm.poll_s=0.2)
  printf '%-28s %12s %10s %14s\n' "host_matmul, one device" "evaluations" "wall s" "evals/hour"
  printf '%-28s %12s %10.1f %14s\n' "here" "$local_evals" "$local_wall" "$(per_hour "$local_evals" "$local_wall")"
  printf '%-28s %12s %10.1f %14s\n' "through a Slurm worker" "$slurm_evals" "$slurm_wall" \
    "$(per_hour "$slurm_evals" "$slurm_wall")"
  python3 -c 'import sys; le, lw, se, sw = map(float, sys.argv[1:]); print(f"Slurm dispatch overhead: {(sw - lw) / se:.2f} s per evaluation (wall through Slurm minus wall here, over {se:.0f} evaluations)")' \
    "$local_evals" "$local_wall" "$slurm_evals" "$slurm_wall"
  echo
fi

# The fixed-duration task: host_matmul on one small workload, its kernel (and so the baseline) sleeping per call;
# the timing clock is the wall clock so the sleep is what is measured.
cp -r "$ROOT/kernels/host_matmul" "$WORK/sleepy"
python3 - "$WORK/sleepy" "$SLEEP_US" <<'PY'
import pathlib, re, sys
task, sleep_us = pathlib.Path(sys.argv[1]), sys.argv[2]
text = (task / "task.json").read_text()
text = re.sub(r'"workloads": \[.*?\]', '"workloads": [{"name": "small", "axes": {"M": 32, "N": 32, "K": 32}}]', text,
              flags=re.S)
text = re.sub(r'\s*"python_reference": \{[^}]*\},', "", text)
(task / "task.json").write_text(text.replace('"host_matmul"', '"sleepy_matmul"', 1))
kernel = (task / "kernel.cpp").read_text()
kernel = kernel.replace('extern "C" void matmul(', 'extern "C" int usleep(unsigned);\nextern "C" void matmul(', 1)
kernel = re.sub(r'(extern "C" void matmul\([^)]*\) \{)', r"\1\n  usleep(" + sleep_us + ");", kernel, count=1)
(task / "kernel.cpp").write_text(kernel)
PY
allowed=$(python3 - "$ROOT/configs/default.json" <<'PY'
import json, re, sys
text = re.sub(r"^\s*//.*$", "", open(sys.argv[1]).read(), flags=re.M)
allowed = json.loads(text)["eval"]["static"]["allowed_symbols"] + ["usleep"]
print(json.dumps(allowed))
PY
)
SLEEPY=(--set "eval.static.allowed_symbols=$allowed" --set eval.timing.clock=wall --set eval.timing.min_time_s=0.2
  --set eval.timing.max_time_s=1 --set eval.timing.min_samples=5)
printf '%-28s %12s %10s %14s %14s %8s\n' "sleepy task, devices" "evaluations" "wall s" "evals/hour" "ideal" "ratio"
one=""
for devices in 1 2 4 8; do
  list=$(seq -s, 0 $((devices - 1)))
  read -r evals wall < <(optimize_cycle "$WORK/sleepy" "pool$devices" "${SLEEPY[@]}" --set "cluster.devices=$list")
  rate=$(per_hour "$evals" "$wall")
  [ -n "$one" ] || one=$rate
  ideal=$((one * devices))
  printf '%-28s %12s %10.1f %14s %14s %8s\n' "$devices" "$evals" "$wall" "$rate" "$ideal" \
    "$(python3 -c "print(f'{$rate / $ideal:.2f}')")"
done
