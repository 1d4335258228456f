// How a run report names and colours verdicts and writes its numbers, shared by the HTML and Markdown pages.
#include <string>
#include <vector>

#include <evoteam/core/text.hpp>
#include <evoteam/eval/verdict.hpp>

#include "report/report_sections.hpp"

namespace evoteam {

std::string verdict_css_class(const ReportCandidate& candidate) {
  if (candidate.rejected) return "v-rejected";
  const std::optional<Verdict> verdict = parse_verdict(candidate.verdict);
  if (!verdict) return "v-incorrect";  // BLOCKED, or a verdict this build does not know
  if (*verdict == Verdict::pass) return "v-pass";
  switch (verdict_class(*verdict)) {
    case VerdictClass::pass: return "v-timing";  // NOISY: usable, but its timing did not converge
    case VerdictClass::build_failure: return "v-build";
    case VerdictClass::test_failure: {
      const bool crashed =
          *verdict == Verdict::runtime_fault || *verdict == Verdict::hang_timeout || *verdict == Verdict::worker_crash;
      return crashed ? "v-crash" : "v-incorrect";  // the numeric, determinism, shape, guard and recheck failures
    }
    case VerdictClass::timing_integrity: return "v-timing";
    case VerdictClass::infra: return "v-infra";
  }
  return "v-incorrect";
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
  const std::string counts = burn.counts.empty() ? "" : ": " + burn.counts;
  if (burn.limit > 0)
    return text + " of " + fixed(burn.limit, digits) + " (" + fixed(burn.percent.value_or(0), 0) + "%)" + counts;
  return text + " (no limit)" + counts;
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
