// How a run report names and colours verdicts and writes its numbers, shared by the HTML and Markdown pages.
#include <string>
#include <vector>

#include <evoteam/core/text.hpp>

#include "report/report_sections.hpp"

namespace evoteam {

namespace {

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

std::string verdict_class(const ReportCandidate& candidate) {
  const std::string& verdict = candidate.verdict;
  if (candidate.rejected) return "v-rejected";
  if (verdict == "PASS") return "v-pass";
  if (starts_with(verdict, "COMPILE_") || verdict == "STATIC_REJECT") return "v-build";
  if (verdict == "RUNTIME_FAULT" || verdict == "HANG_TIMEOUT" || verdict == "WORKER_CRASH") return "v-crash";
  if (starts_with(verdict, "TIMING_") || verdict == "IMPOSSIBLE_PERF" || verdict == "SUSPICIOUS_SPEEDUP" ||
      verdict == "NOISY")
    return "v-timing";
  if (verdict == "INFRA_ERROR") return "v-infra";
  return "v-incorrect";  // the numeric, determinism, shape, guard and recheck failures
}

std::string verdict_text(const ReportCandidate& candidate) {
  if (candidate.rejected) return "REJECTED" + (candidate.ruling.empty() ? "" : " (" + candidate.ruling + ")");
  if (candidate.speedup) return candidate.verdict + " " + speedup_text(candidate.speedup);
  return candidate.verdict;
}

std::string vendor_text(const RunReport& report) {
  if (report.vendor_name.empty()) return "";
  if (report.vendor_fraction)
    return fixed(*report.vendor_fraction, 2) + "x of " + report.vendor_name +
           "'s speed (geometric mean; above 1 is faster)";
  return report.vendor_name + " " + report.vendor_note;
}

std::string speedup_text(std::optional<double> speedup) { return speedup ? fixed(*speedup, 2) + "x" : "-"; }

std::string interval_text(std::optional<double> low, std::optional<double> high) {
  if (!low || !high) return "";
  return "[" + fixed(*low, 2) + ", " + fixed(*high, 2) + "]";
}

std::string budget_text(const BudgetBurn& burn) {
  const int digits = burn.name == "hours" || burn.name == "usd" || burn.name == "gpu_seconds" ? 2 : 0;
  std::string text = fixed(burn.spent, digits);
  if (burn.limit > 0)
    return text + " of " + fixed(burn.limit, digits) + " (" + fixed(burn.percent.value_or(0), 0) + "%)";
  return text + " (no limit)";
}

std::string change_label(const ReportCycle& cycle) {
  std::string label;
  for (const std::string& role : cycle.added) label += (label.empty() ? "+" : " +") + role;
  for (const std::string& role : cycle.removed) label += (label.empty() ? "\u2212" : " \u2212") + role;
  if (label.empty()) label = cycle.change;
  // The signals' names (their evidence is in the hover text): what made the supervisor act.
  std::vector<std::string> signals;
  for (const std::string& signal : cycle.signals) signals.push_back(signal.substr(0, signal.find(':')));
  if (!signals.empty()) label += " (" + join(signals, ", ") + ")";
  return "c" + std::to_string(cycle.cycle) + ": " + label;
}

std::string change_detail(const ReportCycle& cycle) {
  std::string detail = "cycle " + std::to_string(cycle.cycle) + " (" + cycle.pattern + ", decided by " +
                       cycle.decided_by + "): " + cycle.change;
  if (!cycle.signals.empty()) detail += ". Signals: " + join(cycle.signals, "; ");
  return detail;
}

}  // namespace evoteam
