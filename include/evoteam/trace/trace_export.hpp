#pragma once
// FlashInfer-Trace interop, outward: a run's best candidate as a Solution and one Trace per workload of its
// final evaluation, in flashinfer-bench's layout (solutions/<definition>/<name>.json, traces/<definition>.jsonl).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

struct ExportOptions {
  // The Definition the solution implements; empty: the task's name (which is the definition's name for tasks
  // that follow one, and names no published definition for the others: the notes say so).
  std::string definition;
};

struct ExportedRun {
  std::string definition;
  nlohmann::ordered_json solution;
  std::vector<nlohmann::ordered_json> traces;
  std::filesystem::path solution_file;
  std::filesystem::path traces_file;
  std::vector<std::string> notes;  // where evoteam's figures differ in meaning from FlashInfer-Trace's
};

// Reads RUN/best (eval.json, meta.json, params.json, src/) and the run's frozen task, and writes the Solution
// and the Traces under out_dir. Throws InvalidInput for a directory that is not a run or a run without a best.
ExportedRun export_run(const std::filesystem::path& run_dir, const std::filesystem::path& out_dir,
                       const ExportOptions& options);

}  // namespace evoteam
