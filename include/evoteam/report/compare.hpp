#pragma once
// `evoteam compare`: runs side by side, the way the single / fixed / evolving ablation is read — what each
// spent, how far it got, and how fast it got there. Read-only.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/report/run_report.hpp>

namespace evoteam {

struct RunComparison {
  std::string run;  // the run's id
  std::string dir;
  std::string task;
  std::string team_mode;
  std::string provider;
  std::string model;
  std::string status;
  std::string stop_reason;
  int evaluations = 0;
  double tokens = 0;
  double cost_usd = 0;
  double hours = 0;
  double gpu_seconds = 0;
  std::optional<double> best_speedup;
  // The first evaluation whose best so far reached 90% of the run's final best, and the tokens spent by then.
  std::optional<int> evaluations_to_90;
  std::optional<double> tokens_to_90;
  // The area under the best-so-far curve over the run's evaluations divided by their number: the mean best
  // speedup the run held (0 before its first pass). At equal budgets, higher means it got there sooner.
  double auc_best = 0;
  nlohmann::json budget_limits;  // the run's budgets, to tell whether the runs compared are at equal budget
  std::vector<std::optional<double>> best_so_far;  // per evaluation, for the overlay
  std::vector<std::string> journal_skipped;        // what of its journal was left out (the figures lack it)
};

RunComparison compare_entry(const RunReport& report);

// The comparison as JSON (the curve left out): one object per run with the fields above under these keys:
// run, dir, task, team_mode, provider, model, status, stop_reason, evaluations, tokens, cost_usd, hours,
// gpu_seconds, best_speedup, evaluations_to_90, tokens_to_90, auc_best, budgets.
nlohmann::json to_json(const RunComparison& run);

// One line per budget whose limit differs between the runs: they are then not at equal budget.
std::vector<std::string> budget_differences(const std::vector<RunComparison>& runs);

std::string format_comparison_table(const std::vector<RunComparison>& runs);

// A self-contained HTML page: the table and the best-so-far curves overlaid against evaluations.
std::string render_comparison_html(const std::vector<RunComparison>& runs);

}  // namespace evoteam
