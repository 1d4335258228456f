// The Markdown twin of the HTML campaign report, for terminals and git: the same summary, the op families, the
// fraction of the vendor's speed per workload sorted as a list, the table of workloads and the tasks.
#include <algorithm>
#include <sstream>

#include <evoteam/core/text.hpp>

#include "report/campaign_sections.hpp"
#include "report/report_sections.hpp"

namespace evoteam {

namespace campaign_markdown {

using markdown::cell;

void summary_section(std::ostringstream& out, const CampaignReport& report) {
  out << "| | |\n| --- | --- |\n";
  out << "| suite | " << cell(report.suite) << " |\n";
  out << "| status | " << cell(report.status) << " |\n";
  out << "| created | " << cell(report.created) << " |\n";
  out << "| budgets | " << cell(campaign_budgets_text(report.budgets)) << " |\n";
  for (const auto& [name, value] : report.settings.items())
    if (value.is_string() && !value.get<std::string>().empty())
      out << "| " << cell(name) << " | " << cell(value.get<std::string>()) << " |\n";
  out << "| tasks | " << report.tasks.size() << ": " << cell(task_states_text(report.tasks)) << " |\n";
  out << "| spent | " << fixed(report.tokens, 0) << " tokens, $" << fixed(report.cost_usd, 2) << " |\n";
  if (report.live()) out << "| live | rewritten as the campaign goes |\n";
}

void headline_section(std::ostringstream& out, const CampaignReport& report, const std::string& vendor) {
  out << "\n**" << vendor_headline(report.summary, vendor) << "**; " << speedup_headline(report.summary) << ".\n";
  const std::string missing = missing_vendor_text(report.rows);
  if (!missing.empty()) out << "\nWorkloads without a " << vendor << " figure: " << missing << ".\n";
  out << "\n## By op family\n\n| op family | workloads | with " << vendor << " | faster | of " << vendor
      << "'s speed (geo. mean) | over the starting kernel (geo. mean) |\n| --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (const CampaignSummary& family : report.families)
    out << "| " << cell(family.family) << " | " << family.workloads << " | " << family.with_vendor << " | "
        << family.faster << " | " << fraction_text(family.geomean_vendor_fraction) << " | "
        << fraction_text(family.geomean_speedup) << " |\n";
}

void fraction_section(std::ostringstream& out, const CampaignReport& report, const std::string& vendor) {
  std::vector<const CampaignRow*> rows;
  for (const CampaignRow& row : report.rows)
    if (row.vendor_fraction) rows.push_back(&row);
  out << "\n## Fraction of " << vendor << "'s speed per workload, slowest first\n\n";
  if (rows.empty()) {
    out << "No workload has a " << vendor << " time.\n";
    return;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const CampaignRow* a, const CampaignRow* b) {
    return *a->vendor_fraction < *b->vendor_fraction;
  });
  for (const CampaignRow* row : rows)
    out << "- " << fraction_text(row->vendor_fraction) << " " << row->task << " / " << row->workload
        << (*row->vendor_fraction > 1 ? " (faster)" : "") << "\n";
}

void workload_table(std::ostringstream& out, const CampaignReport& report, const std::string& vendor) {
  out << "\n## Workloads\n\n| task | workload | starting kernel | best | speedup | " << vendor << " | of " << vendor
      << "'s speed | measured on | run | tokens | USD |\n"
         "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |\n";
  for (const CampaignRow& row : report.rows) {
    out << "| " << cell(row.task) << " | " << cell(row.workload) << " | ";
    if (row.speedup) {
      out << time_text(row.start_s) << " | " << time_text(row.best_s) << " | " << speedup_text(row.speedup) << " | ";
      if (row.vendor_fraction)
        out << time_text(row.vendor_s) << " | " << fraction_text(row.vendor_fraction) << " | ";
      else
        out << cell(row.vendor_note) << " | - | ";
      out << cell(row.device) << " | ";
    } else {
      out << cell(row.note) << " | - | - | - | - | - | ";
    }
    out << cell(row.run_id.empty() ? "-" : row.run_id + (row.best_candidate.empty() ? "" : " " + row.best_candidate))
        << " | " << fixed(row.tokens, 0) << " | " << fixed(row.cost_usd, 2) << " |\n";
  }
}

void task_table(std::ostringstream& out, const CampaignReport& report) {
  out << "\n## Tasks\n\n| task | op family | state | run | evaluations | best | tokens | USD |\n"
         "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |\n";
  for (const CampaignTaskResult& task : report.tasks)
    out << "| " << cell(task.name) << " | " << cell(task.op_family) << " | "
        << cell(task.reason.empty() ? task.state : task.state + ": " + task.reason) << " | "
        << cell(task.run_id.empty() ? "-" : task.run_id + " (" + task.run_status + ")") << " | " << task.evaluations
        << " | "
        << cell(task.best_candidate.empty() ? "-" : task.best_candidate + " " + speedup_text(task.best_speedup))
        << " | " << fixed(task.tokens, 0) << " | " << fixed(task.cost_usd, 2) << " |\n";
}

}  // namespace campaign_markdown

std::string render_campaign_markdown(const CampaignReport& report) {
  const std::string vendor = campaign_vendor_label(report);
  std::ostringstream out;
  out << "# " << report.id << " \u2014 " << report.suite << "\n\n";
  campaign_markdown::summary_section(out, report);
  if (!report.warnings.empty()) {
    out << "\nWarnings:\n\n";
    for (const std::string& warning : report.warnings) out << "- " << warning << "\n";
  }
  campaign_markdown::headline_section(out, report, vendor);
  campaign_markdown::fraction_section(out, report, vendor);
  campaign_markdown::workload_table(out, report, vendor);
  campaign_markdown::task_table(out, report);
  return out.str();
}

}  // namespace evoteam
