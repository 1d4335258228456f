#!/usr/bin/env python3
"""JSON checks for bench/reliability.sh (a benchmark helper, not a test).

  reliability_check.py journals SAVED... FINAL
      Each saved journal (a copy taken right after a kill -9) and the final one: every line parses as a JSON
      object except possibly a torn last line (no newline at its end), and the complete lines of each are a
      prefix of the complete lines of the next. Prints "parsed P/N torn T prefix Q/M" and exits 1 on any failure.
  reliability_check.py candidates RUN_DIR
      The run's evaluation records: "COUNT DIGEST RECORDS MOST" -- COUNT distinct candidates, DIGEST a
      fingerprint of their sorted params (equal digests: the same candidates were evaluated), RECORDS evaluation
      records (more than COUNT: a candidate evaluated twice), MOST the most evaluations any cycle made besides
      the starting kernel's (above team.evaluations_per_cycle: a cycle given a fresh allowance).
  reliability_check.py field FILE KEY
      A top-level field of a JSON file ("" when absent or unreadable); a nested one with dots (tokens.input).
"""
import hashlib
import json
import sys


def complete_lines(path):
    """The journal's complete lines (parsed), whether its tail is torn, and whether every line parsed."""
    with open(path, "rb") as handle:
        data = handle.read()
    lines = data.split(b"\n")
    torn = lines[-1] != b""  # a final line without its newline: a write cut by the kill
    whole = lines[:-1]
    ok = True
    records = []
    for raw in whole:
        try:
            value = json.loads(raw)
        except ValueError:
            ok = False
            continue
        if not isinstance(value, dict):
            ok = False
        records.append(raw)
    return records, torn, ok


def journals(paths):
    parsed = 0
    torn_count = 0
    prefix_ok = 0
    previous = None
    failures = []
    for path in paths:
        records, torn, ok = complete_lines(path)
        parsed += ok
        torn_count += torn
        if not ok:
            failures.append(f"{path}: a complete line does not parse")
        if previous is not None:
            if records[: len(previous)] == previous:
                prefix_ok += 1
            else:
                failures.append(f"{path}: the previous journal's complete lines are not its prefix")
        previous = records
    print(f"parsed {parsed}/{len(paths)} torn {torn_count} prefix {prefix_ok}/{max(len(paths) - 1, 0)}")
    for failure in failures:
        print(failure, file=sys.stderr)
    return 0 if not failures else 1


def candidates(run_dir):
    seen = {}
    evaluations = 0
    per_cycle = {}
    records, _, _ = complete_lines(f"{run_dir}/journal.jsonl")
    for raw in records:
        record = json.loads(raw)
        if record.get("type") == "evaluation" and isinstance(record.get("record"), dict):
            inner = record["record"]
            evaluations += 1
            seen[inner.get("candidate_id", "")] = json.dumps(inner.get("params", {}), sort_keys=True)
            if inner.get("author_role") != "start":
                per_cycle[inner.get("cycle")] = per_cycle.get(inner.get("cycle"), 0) + 1
    digest = hashlib.sha256("\n".join(sorted(seen.values())).encode()).hexdigest()[:12]
    print(f"{len(seen)} {digest} {evaluations} {max(per_cycle.values(), default=0)}")
    return 0


def field(path, key):
    try:
        with open(path) as handle:
            value = json.load(handle)
        for part in key.split("."):
            value = value[part]
    except (OSError, ValueError, KeyError, TypeError):
        value = ""
    print(value)
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "journals":
        return journals(argv[1:])
    if len(argv) == 2 and argv[0] == "candidates":
        return candidates(argv[1])
    if len(argv) == 3 and argv[0] == "field":
        return field(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
