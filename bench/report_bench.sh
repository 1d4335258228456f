#!/usr/bin/env bash
# Report benchmark (rerunnable; not a unit test):
#   1. writes one large finished run through the store: 10,000 candidates over 200 cycles, journal, run.json,
#      cycles/, candidates/, best/ and knowledge/ as a real LLM-team run leaves them (ReportBench test)
#   2. times `evoteam report RUN` on it                  -- target: wall <= 2 s
#   3. sizes what it wrote                               -- target: report.html <= 3 MB (report.md reported)
# Usage: bench/report_bench.sh [BUILD_DIR]      (default: build)
# EVOTEAM_BENCH_DIR=DIR puts the files on another file system (default: $TMPDIR or /tmp);
# EVOTEAM_BENCH_KEEP=1 keeps the work directory (the run and its report) and prints where it is.
# Exit status: 0 when every measured target is met, 1 otherwise, 2 when a binary is missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
tests_bin=$build/evoteam_tests
evoteam_bin=$build/evoteam
wall_target_s=2
html_target_bytes=$((3 * 1024 * 1024))

for bin in "$tests_bin" "$evoteam_bin"; do
  if [ ! -x "$bin" ]; then
    echo "missing: $bin is not built (cmake --build $build --target evoteam evoteam_tests)"
    exit 2
  fi
done

if ! "$evoteam_bin" --help 2>/dev/null | grep -qE '^[[:space:]]+report[[:space:]]'; then
  echo "missing: $evoteam_bin has no 'report' subcommand"
  exit 2
fi

base=${EVOTEAM_BENCH_DIR:-${TMPDIR:-/tmp}}
work=$(mktemp -d "$base/evoteam-report-bench.XXXXXX")
if [ "${EVOTEAM_BENCH_KEEP:-0}" = 1 ]; then
  trap 'echo "kept: $work"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi
status=0

have_gnu_time=0
if [ -x /usr/bin/time ] && /usr/bin/time -v true >/dev/null 2>&1; then have_gnu_time=1; fi

echo "== write a 10,000-candidate run ($work)"
write_rc=0
write_start_ns=$(date +%s%N)
EVOTEAM_BENCH_DIR=$work "$tests_bin" --gtest_also_run_disabled_tests --gtest_filter='ReportBench.*' \
  >"$work/write.txt" 2>&1 || write_rc=$?
write_end_ns=$(date +%s%N)
grep -v -e '^Running main' -e '^Note: Google Test filter' -e '^\[' -e '^$' -e 'DISABLED TEST' "$work/write.txt" || true
run_dir=$(sed -n 's/^report bench run: //p' "$work/write.txt" | tail -n 1)
if [ "$write_rc" != 0 ] || [ -z "$run_dir" ] || [ ! -f "$run_dir/run.json" ]; then
  grep -e 'Failure' -e 'exception' -A4 "$work/write.txt" || true
  echo "could not write the benchmark run"
  exit 1
fi
awk -v a="$write_start_ns" -v b="$write_end_ns" 'BEGIN { printf "written in %.2f s (test process, start to end)\n", (b - a) / 1e9 }'
echo "journal: $(wc -c <"$run_dir/journal.jsonl") bytes, $(($(wc -l <"$run_dir/journal.jsonl") - 1)) records"

echo
echo "== evoteam report $run_dir"
out=$work/report
mkdir -p "$out"
"$evoteam_bin" report "$run_dir" --out "$out" >/dev/null 2>&1 || true  # warm the page cache: measure evoteam, not the disk
rm -f "$out/report.html" "$out/report.md"
report_rc=0
start_ns=$(date +%s%N)
if [ "$have_gnu_time" = 1 ]; then
  /usr/bin/time -v -o "$work/time.txt" "$evoteam_bin" report "$run_dir" --out "$out" >"$work/report.txt" 2>&1 || report_rc=$?
else
  { time "$evoteam_bin" report "$run_dir" --out "$out" >"$work/report.txt" 2>&1; } 2>"$work/time.txt" || report_rc=$?
fi
end_ns=$(date +%s%N)
wall_s=$(awk -v a="$start_ns" -v b="$end_ns" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
if [ "$report_rc" != 0 ]; then
  tail -n 20 "$work/report.txt"
  echo "evoteam report failed (exit $report_rc)"
  exit 1
fi
sed 's/^/  wrote: /' "$work/report.txt"

html_bytes=-1
md_bytes=-1
[ -f "$out/report.html" ] && html_bytes=$(wc -c <"$out/report.html")
[ -f "$out/report.md" ] && md_bytes=$(wc -c <"$out/report.md")

echo
printf '%-22s %16s %16s\n' "measure" "measured" "target"
printf '%-22s %16s %16s\n' "report wall time" "$wall_s s" "<= $wall_target_s s"
if [ "$have_gnu_time" = 1 ]; then
  rss_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time.txt")
  printf '%-22s %16s %16s\n' "report peak RSS" "$((rss_kb / 1024)) MB" "(reported)"
else
  printf '%-22s %16s %16s\n' "report peak RSS" "not measured" "(no /usr/bin/time -v)"
fi
printf '%-22s %16s %16s\n' "report.html size" "$html_bytes B" "<= $html_target_bytes B"
printf '%-22s %16s %16s\n' "report.md size" "$md_bytes B" "(reported)"
echo

awk -v w="$wall_s" -v t="$wall_target_s" 'BEGIN { exit !(w <= t) }' || { echo "report: too slow"; status=1; }
if [ "$html_bytes" -lt 0 ]; then
  echo "report: no report.html in $out"; status=1
elif [ "$html_bytes" -gt "$html_target_bytes" ]; then
  echo "report: report.html too large"; status=1
fi
[ "$md_bytes" -ge 0 ] || { echo "report: no report.md in $out"; status=1; }
[ "$status" = 0 ] && echo "all targets met"
exit "$status"
