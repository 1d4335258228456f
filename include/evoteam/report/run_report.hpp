#pragma once
// The run report (`evoteam report`): one run's files read into a RunReport, and two renderings of it — a
// self-contained HTML page (inline SVG and CSS, no network, opens from file://) and its Markdown twin for
// terminals and git. Read-only like every report: it reads run.json, the journal, cycles/*/team.json, best/
// and the knowledge files, and writes nothing into the run unless asked to (write_run_report).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/report/status.hpp>

namespace evoteam {

// One evaluated candidate, in the journal's order.
struct ReportCandidate {
  int ordinal = 0;  // 1-based: the run's n-th evaluation
  std::string id;
  std::string parent;  // empty for the starting kernel
  std::string role;
  int cycle = 0;
  std::string verdict;
  bool rejected = false;  // passed, but a binding ruling kept it from head and best
  std::string ruling;
  std::optional<double> speedup;  // set when it passed
  // The run's totals when it was recorded: what it took to get this far.
  double tokens = 0;
  double cost_usd = 0;
  double wall_s = 0;  // wall time of the run's sessions so far (time between a kill and a resume not counted)

  // Passed and not rejected: it may be the run's best.
  bool counts() const { return speedup.has_value() && !rejected; }
};

// One cycle's team, as team.json recorded it, and where it starts on the run's axes.
struct ReportCycle {
  int cycle = 0;
  std::vector<std::string> roles;
  std::string pattern;
  std::string decided_by;  // rules, llm, llm-fallback-rules, fixed, single
  std::string change;      // "+debugger, pattern solo→pipeline", "no change", "initial team"
  std::string rationale;
  std::vector<std::string> directives;
  std::vector<std::string> signals;  // the triggered signals' evidence: "unprofiled_best: c0002 has no profile"
  std::vector<std::string> added;    // roles against the cycle before
  std::vector<std::string> removed;
  // The run's totals when the cycle began.
  int evaluations_before = 0;
  double tokens_before = 0;
  double cost_before = 0;
  double wall_before = 0;
  // What the cycle itself spent, from the meter's ticks between its start and the next cycle's (the run's end for
  // the last): the cycles' rows add up to the run's totals.
  double tokens_spent = 0;
  double cost_spent = 0;
  double wall_spent = 0;

  // The team differs from the cycle before (the first cycle's team is no change).
  bool changed() const;
};

struct ReportWorkload {
  std::string name;
  std::optional<double> speedup;
  std::optional<double> low;  // the speedup's interval
  std::optional<double> high;
  std::optional<double> roofline_fraction;
  std::optional<double> vendor_fraction;  // the candidate's speed as a fraction of the vendor baseline's
  // Median times of one call: the starting kernel's (the evaluation's baseline), the candidate's and the vendor
  // baseline's, where measured.
  std::optional<double> start_s;
  std::optional<double> best_s;
  std::optional<double> vendor_s;
};

struct ReportKnowledge {
  std::string file;     // strategies.md, failed_attempts.md, action_plan.md
  std::string excerpt;  // its first entries
  bool truncated = false;
};

struct RunReport {
  std::filesystem::path dir;
  std::string id;
  std::string task;
  std::string target;  // host or cuda
  std::string archs;   // "sm_90a, sm_100a" for a CUDA run
  std::string provider;
  std::string model;
  std::map<std::string, std::string> agents;  // role -> the coding-agent CLI, its version and model that worked it
  // The server the model was asked at, and how it was priced when not by the table ("" for a provider's own).
  std::string endpoint;
  std::string team_mode;
  std::string status;
  std::string stop_reason;
  std::string started;
  int cycles_finished = 0;
  // run.json says running and a live daemon holds the run: the page reloads itself while this holds.
  bool live = false;
  std::vector<std::string> task_workloads;  // the frozen task's workload names, in its order

  std::string best_candidate;
  std::optional<double> best_speedup;
  std::optional<double> best_low;
  std::optional<double> best_high;
  std::vector<ReportWorkload> best_workloads;
  std::string best_device;  // what measured the best: "host", "cuda:<uuid>"
  std::string best_bound;   // compute or memory, where the best was profiled
  std::optional<double> best_roofline_fraction;
  // The task's vendor baseline (FlashInfer) for the best: its name, the best's fraction of its speed (geometric
  // mean), and when not measured, why (its status and detail from the evaluation).
  std::string vendor_name;
  std::optional<double> vendor_fraction;
  std::string vendor_note;

  std::vector<BudgetBurn> budgets;  // as `evoteam status` computes them
  std::vector<ReportCandidate> candidates;
  std::vector<ReportCycle> cycles;
  std::map<std::string, int> failures;  // verdict (or "REJECTED") → count, the passing ones left out
  std::vector<ReportKnowledge> knowledge;
  std::vector<std::string> warnings;  // what could not be read, shown in the report rather than failing it
  // What of the journal was left out (missing, torn, damaged lines or records): also among the warnings; the
  // commands print it, and `compare --json` carries it per run.
  std::vector<std::string> journal_skipped;

  double total_tokens = 0;
  double total_cost_usd = 0;
  double total_wall_s = 0;

  // best_so_far()[i]: the best speedup among candidates[0..i] that count; nullopt before the first.
  std::vector<std::optional<double>> best_so_far() const;
  // The best candidate's ancestry from the starting kernel to it (ids, oldest first).
  std::vector<std::string> best_path() const;
};

// Reads a run directory. Throws InvalidInput when run.json cannot be read (not a run); anything else that is
// missing or damaged becomes a warning in the report.
RunReport load_run_report(const std::filesystem::path& run_dir);

std::string render_report_markdown(const RunReport& report);
std::string render_report_html(const RunReport& report);

enum class ReportFormat { html, markdown };

// Writes report.html and/or report.md atomically into out_dir and returns the paths written.
std::vector<std::filesystem::path> write_run_report(const RunReport& report, const std::filesystem::path& out_dir,
                                                    const std::vector<ReportFormat>& formats);

}  // namespace evoteam
