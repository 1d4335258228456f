// The Markdown twin of the HTML report, for terminals and git: the same sections as tables and lists, with
// the progress charts as one row per cycle (best so far by then and what the cycle spent).
#include <algorithm>
#include <map>
#include <sstream>

#include <evoteam/core/text.hpp>

#include "report/report_sections.hpp"

namespace evoteam {

// Named, not anonymous: a unity batch may hold report_html.cpp, whose sections have the same names.
namespace markdown {

// How many of the fastest candidates the Markdown lists; the HTML lineage shows them all.
constexpr std::size_t k_top_candidates = 10;

std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

void summary_section(std::ostringstream& out, const RunReport& report) {
  out << "| | |\n| --- | --- |\n";
  out << "| task | " << cell(report.task) << " |\n";
  out << "| target | " << cell(report.target + (report.archs.empty() ? "" : " (" + report.archs + ")")) << " |\n";
  out << "| provider | " << cell(report.provider + (report.model.empty() ? "" : " / " + report.model)) << " |\n";
  if (!report.endpoint.empty()) out << "| endpoint | " << cell(report.endpoint) << " |\n";
  for (const auto& [role, agent] : report.agents) out << "| agent of " << cell(role) << " | " << cell(agent) << " |\n";
  out << "| team mode | " << cell(report.team_mode) << " |\n";
  out << "| status | " << cell(report.status + (report.stop_reason.empty() ? "" : " (" + report.stop_reason + ")"))
      << " |\n";
  if (report.live)
    out << "| live | " << report.cycles_finished << " cycles finished; rewritten at every cycle's end |\n";
  out << "| best | "
      << (report.best_candidate.empty() ? "none passed"
                                        : cell(report.best_candidate + " " + speedup_text(report.best_speedup) + " " +
                                               interval_text(report.best_low, report.best_high)))
      << " |\n";
  if (!report.vendor_name.empty())
    out << "| vs " << cell(report.vendor_name) << " | " << cell(vendor_text(report)) << " |\n";
  for (const BudgetBurn& burn : report.budgets) out << "| " << burn.name << " | " << budget_text(burn) << " |\n";
}

void cycles_section(std::ostringstream& out, const RunReport& report) {
  out << "\n## Progress and team by cycle\n\n";
  if (report.cycles.empty()) {
    out << "No cycle started.\n";
    return;
  }
  const std::vector<std::optional<double>> best = report.best_so_far();
  // Candidates, tokens, USD and wall time are what the cycle spent (the meter's ticks), so each column adds up to
  // the total row; the best is as of the cycle's end.
  out << "| cycle | pattern | team | decided by | candidates | tokens spent | USD spent | wall s spent | best so far "
         "| change |\n"
         "| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n";
  for (std::size_t i = 0; i < report.cycles.size(); ++i) {
    const ReportCycle& cycle = report.cycles[i];
    const int end = i + 1 < report.cycles.size() ? report.cycles[i + 1].evaluations_before
                                                 : static_cast<int>(report.candidates.size());
    const bool any = end > 0 && end <= static_cast<int>(best.size());
    out << "| " << cycle.cycle << " | " << cell(cycle.pattern) << " | " << cell(join(cycle.roles, ", ")) << " | "
        << cell(cycle.decided_by) << " | " << end - std::min(cycle.evaluations_before, end) << " | "
        << fixed(cycle.tokens_spent, 0) << " | " << fixed(cycle.cost_spent, 2) << " | " << fixed(cycle.wall_spent, 1)
        << " | " << speedup_text(any ? best[end - 1] : std::nullopt) << " | " << cell(cycle.change) << " |\n";
  }
  out << "| total | | | | " << report.candidates.size() << " | " << fixed(report.total_tokens, 0) << " | "
      << fixed(report.total_cost_usd, 2) << " | " << fixed(report.total_wall_s, 1) << " | "
      << speedup_text(best.empty() ? std::nullopt : best.back()) << " | |\n";
  out << "\nTeam changes and the signals behind them:\n\n";
  bool any_change = false;
  for (const ReportCycle& cycle : report.cycles) {
    if (!cycle.changed() || cycle.cycle <= 1) continue;
    any_change = true;
    out << "- " << change_detail(cycle) << "\n";
    for (const std::string& directive : cycle.directives) out << "  - directive: " << directive << "\n";
  }
  if (!any_change) out << "- none: the team stayed as the first cycle set it\n";
}

void lineage_section(std::ostringstream& out, const RunReport& report) {
  out << "\n## Lineage\n\n";
  int passed = 0;
  for (const ReportCandidate& candidate : report.candidates) passed += candidate.counts() ? 1 : 0;
  out << report.candidates.size() << " candidates evaluated, " << passed << " passed.\n\n";
  std::map<std::string, const ReportCandidate*> by_id;
  for (const ReportCandidate& candidate : report.candidates) by_id.emplace(candidate.id, &candidate);
  const std::vector<std::string> path = report.best_path();
  if (!path.empty()) {
    out << "Best path: " << join(path, " \u2192 ", [&](const std::string& id) {
      return id + " (" + speedup_text(by_id.at(id)->speedup) + ")";
    }) << "\n\n";
  }
  std::vector<const ReportCandidate*> fastest;
  for (const ReportCandidate& candidate : report.candidates)
    if (candidate.counts()) fastest.push_back(&candidate);
  std::stable_sort(fastest.begin(), fastest.end(),
                   [](const ReportCandidate* a, const ReportCandidate* b) { return *a->speedup > *b->speedup; });
  if (fastest.size() > k_top_candidates) fastest.resize(k_top_candidates);
  if (fastest.empty()) return;
  out << "| candidate | parent | role | cycle | speedup |\n| --- | --- | --- | ---: | ---: |\n";
  for (const ReportCandidate* candidate : fastest)
    out << "| " << cell(candidate->id) << " | " << cell(candidate->parent.empty() ? "-" : candidate->parent) << " | "
        << cell(candidate->role) << " | " << candidate->cycle << " | " << speedup_text(candidate->speedup) << " |\n";
}

void best_section(std::ostringstream& out, const RunReport& report) {
  out << "\n## Best candidate per workload\n\n";
  if (report.best_workloads.empty()) {
    out << "No passing candidate, so no per-workload figures.\n";
  } else {
    const bool vendor = !report.vendor_name.empty();
    out << "| workload | speedup | interval | roofline fraction |"
        << (vendor ? " vs " + cell(report.vendor_name) + " |" : "") << "\n| --- | ---: | ---: | ---: |"
        << (vendor ? " ---: |" : "") << "\n";
    for (const ReportWorkload& workload : report.best_workloads)
      out << "| " << cell(workload.name) << " | " << speedup_text(workload.speedup) << " | "
          << interval_text(workload.low, workload.high) << " | "
          << (workload.roofline_fraction ? fixed(100 * *workload.roofline_fraction, 1) + "%" : "-") << " |"
          << (vendor ? " " + speedup_text(workload.vendor_fraction) + " |" : "") << "\n";
  }
  if (report.best_roofline_fraction || !report.best_bound.empty())
    out << "\nRoofline: "
        << (report.best_roofline_fraction ? fixed(100 * *report.best_roofline_fraction, 1) + "% of peak" : "")
        << (report.best_bound.empty() ? " (not profiled)" : ", " + report.best_bound + "-bound (profiled)") << "\n";
}

void failures_section(std::ostringstream& out, const RunReport& report) {
  out << "\n## Failures by verdict\n\n";
  if (report.failures.empty()) {
    out << "Every candidate passed.\n";
    return;
  }
  out << "| verdict | candidates |\n| --- | ---: |\n";
  for (const auto& [verdict, count] : report.failures) out << "| " << cell(verdict) << " | " << count << " |\n";
}

void knowledge_section(std::ostringstream& out, const RunReport& report) {
  out << "\n## Knowledge\n\n";
  if (report.knowledge.empty()) out << "No validated strategy, failed attempt or action plan was recorded.\n";
  for (const ReportKnowledge& item : report.knowledge) {
    out << "### " << item.file << "\n\n";
    std::istringstream lines(item.excerpt);
    for (std::string line; std::getline(lines, line);) out << "> " << line << "\n";
    if (item.truncated) out << "> \u2026\n";
    out << "\n";
  }
}

}  // namespace markdown

std::string render_report_markdown(const RunReport& report) {
  std::ostringstream out;
  out << "# " << report.task << " \u2014 " << report.id << "\n\n";
  markdown::summary_section(out, report);
  if (!report.warnings.empty()) {
    out << "\nWarnings:\n\n";
    for (const std::string& warning : report.warnings) out << "- " << warning << "\n";
  }
  markdown::cycles_section(out, report);
  markdown::lineage_section(out, report);
  markdown::best_section(out, report);
  markdown::failures_section(out, report);
  markdown::knowledge_section(out, report);
  return out.str();
}

}  // namespace evoteam
