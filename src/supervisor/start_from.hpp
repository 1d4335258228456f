#pragma once
// `optimize --from RUN`: a run that starts from an earlier run's best kernel instead of the task's starting
// kernel. The earlier run is checked against the task before anything is created; its best candidate's files
// and params (which its candidates/ folder keeps) are copied into the new run's start/, so the new run stands
// alone (resume reads nothing outside it), and become the lab's starting point.
#include <filesystem>
#include <optional>
#include <string>

#include <evoteam/history/history.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/team/lab.hpp>

namespace evoteam {

struct EarlierBest {
  std::filesystem::path run_dir;
  std::string run_id;
  std::string candidate;
  std::optional<double> speedup;
  ParamValues params;
};

// Reads the earlier run's best: the run must be of `task` (by name), have a best candidate whose files include
// every kernel file of the task, and params the task accepts. Throws InvalidInput saying what is wrong.
EarlierBest read_earlier_best(const std::filesystem::path& run_dir, const Task& task);
// Copies it into `start` (the run's start/, before run.json exists): src/, params.json and from.json (run,
// candidate, speedup).
void import_start(const std::filesystem::path& start, const EarlierBest& best);
// The run's imported starting point when it was started with --from (its start/ exists), else nothing.
std::optional<StartingPoint> imported_start(const RunDir& run);

}  // namespace evoteam
