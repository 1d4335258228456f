#!/usr/bin/env python3
"""The suite table of kernels/flashinfer_trace, from the `evoteam import --json` summaries import_all.sh collects.

Writes SUITE.md (summary, table, what did not import) and replaces the part of kernels/README.md between the
suite markers with the same text.
"""
import json
import sys
from collections import Counter

BEGIN = "<!-- flashinfer-trace suite: written by kernels/flashinfer_trace/import_all.sh -->"
END = "<!-- end of the flashinfer-trace suite -->"


def vendor_cell(vendor):
    return "FlashInfer (`baseline_flashinfer.cu`)" if vendor == "flashinfer" else "unavailable: " + vendor


def workloads_cell(entry):
    published = entry["published_workloads"]
    ours = entry["workloads"] - published
    text = f"{published} / {ours}"
    if entry["random_input_workloads"]:
        text += f" ({entry['random_input_workloads']} random inputs)"
    return text


def main():
    summaries_path, not_imported_path, suite_md, readme = sys.argv[1:5]
    with open(summaries_path) as f:
        entries = sorted((json.loads(line) for line in f if line.strip()), key=lambda e: e["name"])
    with open(not_imported_path) as f:
        failed = [line.rstrip("\n").split("\t", 1) for line in f if line.strip()]
    families = Counter(e["family"] for e in entries)
    with_kernel = [e for e in entries if e["starting_kernel"]]
    with_cpu = [e for e in entries if e["cpu_reference"].startswith("yes")]
    with_vendor = [e for e in entries if e["vendor"] == "flashinfer"]
    random_inputs = sum(e["random_input_workloads"] for e in entries)
    lines = [
        "## The FlashInfer-Trace suite (`kernels/flashinfer_trace/`)",
        "",
        "Every definition FlashInfer-Bench published at commit ecafa9c2 (kept verbatim with its licence in "
        "`kernels/flashinfer_trace/published/`) imported by `evoteam import` "
        "(`kernels/flashinfer_trace/import_all.sh` regenerates them; `evoteam campaign kernels/flashinfer_trace` "
        "runs them). The oracle of every task is the definition's PyTorch reference (`reference.py`, torch). "
        "Starting kernels are the naive CUDA translation of the reference, not FlashInfer. Workloads: published / "
        "ours; \"random inputs\" counts published workloads whose inputs were published as safetensors files that "
        "are not in the repository: their shapes are kept and their values generated (each says so in its "
        "`description`). CPU reference: in double, with how many workloads it runs in reasonable time "
        "(at most 2e11 flops).",
        "",
        f"- definitions published: {len(entries) + len(failed)}; imported: {len(entries)}; "
        f"with a starting kernel: {len(with_kernel)}; with a CPU reference: {len(with_cpu)}; "
        f"with a FlashInfer baseline: {len(with_vendor)}; published workloads with random inputs: {random_inputs}",
        "- by op family (imported / with a starting kernel): "
        + ", ".join(
            f"{family} {count} / {sum(1 for e in with_kernel if e['family'] == family)}"
            for family, count in sorted(families.items())
        ),
        "",
        "| definition | op family | workloads (published / ours) | oracle | CPU reference | vendor baseline | archs "
        "| starting kernel |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for e in entries:
        lines.append(
            f"| `{e['name']}` | {e['family']} | {workloads_cell(e)} | reference.py (torch) | {e['cpu_reference']} "
            f"| {vendor_cell(e['vendor'])} | {', '.join(e['archs'])} "
            f"| {'naive CUDA' if e['starting_kernel'] else 'none (stub)'} |"
        )
    lines += ["", "Did not import:" if failed else "Every published definition imported.", ""]
    for name, why in failed:
        lines.append(f"- `{name}`: {why}")
    text = "\n".join(lines).rstrip() + "\n"
    with open(suite_md, "w") as f:
        f.write("# " + text[3:])
    with open(readme) as f:
        current = f.read()
    block = BEGIN + "\n" + text + END
    if BEGIN in current and END in current:
        before = current.split(BEGIN)[0]
        after = current.split(END, 1)[1]
        current = before + block + after
    else:
        current = current.rstrip("\n") + "\n\n" + block + "\n"
    with open(readme, "w") as f:
        f.write(current)


if __name__ == "__main__":
    main()
