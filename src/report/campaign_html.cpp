// The HTML campaign report: the run report's page style, the summary in the field's terms, a chart of the
// per-workload fraction of the vendor's speed sorted, one table row per workload linking to the run that got it.
// One file, nothing fetched; while the campaign runs it reloads itself.
#include <algorithm>
#include <sstream>

#include <evoteam/core/text.hpp>

#include "report/campaign_sections.hpp"
#include "report/report_sections.hpp"
#include "report/svg_chart.hpp"

namespace evoteam {

namespace campaign_html {

constexpr const char* k_style =
    "td.num{white-space:nowrap}td.faster{color:#2f9e44}td.slower{color:#c92a2a}td.none{color:#6b7482;font-style:italic}"
    "p.headline{font-size:16px;margin:10px 0}svg .line.parity{stroke:#8a93a3;stroke-dasharray:5 4;stroke-width:1.5}";

std::string e(std::string_view text) { return html_escape(text); }

void summary_section(std::ostringstream& out, const CampaignReport& report) {
  const auto row = [&](const std::string& name, const std::string& value) {
    out << "<dt>" << e(name) << "</dt><dd>" << e(value) << "</dd>";
  };
  out << "<dl class=\"summary\">";
  row("suite", report.suite);
  row("status", report.status);
  row("created", report.created);
  row("budgets", campaign_budgets_text(report.budgets));
  for (const auto& [name, value] : report.settings.items())
    if (value.is_string() && !value.get<std::string>().empty()) row(name, value.get<std::string>());
  row("tasks", std::to_string(report.tasks.size()) + ": " + task_states_text(report.tasks));
  row("spent", fixed(report.tokens, 0) + " tokens, $" + fixed(report.cost_usd, 2));
  if (report.live())
    out << "<dt>live</dt><dd id=\"live\">this page is rewritten as the campaign goes and reloads itself</dd>";
  out << "</dl>";
}

void headline_section(std::ostringstream& out, const CampaignReport& report, const std::string& vendor) {
  out << "<p class=\"headline\" id=\"headline\" data-workloads=\"" << report.summary.workloads
      << "\" data-with-vendor=\"" << report.summary.with_vendor << "\" data-faster=\"" << report.summary.faster
      << "\"><b>" << e(vendor_headline(report.summary, vendor)) << "</b>; " << e(speedup_headline(report.summary))
      << ".</p>";
  const std::string missing = missing_vendor_text(report.rows);
  if (!missing.empty())
    out << "<p class=\"caption\">Workloads without a " << e(vendor) << " figure: " << e(missing) << ".</p>";
  out << "<h2>By op family</h2><table><tr><th>op family</th><th>workloads</th><th>with " << e(vendor)
      << "</th><th>faster</th><th>of " << e(vendor)
      << "'s speed (geo. mean)</th><th>over the starting kernel (geo. mean)</th></tr>";
  for (const CampaignSummary& family : report.families)
    out << "<tr><td>" << e(family.family) << "</td><td class=\"num\">" << family.workloads << "</td><td class=\"num\">"
        << family.with_vendor << "</td><td class=\"num\">" << family.faster << "</td><td class=\"num\">"
        << fraction_text(family.geomean_vendor_fraction) << "</td><td class=\"num\">"
        << fraction_text(family.geomean_speedup) << "</td></tr>";
  out << "</table>";
}

// The per-workload fraction of the vendor's speed, slowest first, against the line where both are as fast.
void fraction_chart(std::ostringstream& out, const CampaignReport& report, const std::string& vendor) {
  out << "<h2>Fraction of " << e(vendor) << "'s speed per workload</h2>";
  std::vector<const CampaignRow*> rows;
  for (const CampaignRow& row : report.rows)
    if (row.vendor_fraction) rows.push_back(&row);
  if (rows.empty()) {
    out << "<p>No workload has a " << e(vendor) << " time, so there is nothing to plot.</p>";
    return;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const CampaignRow* a, const CampaignRow* b) {
    return *a->vendor_fraction < *b->vendor_fraction;
  });
  Chart chart;
  chart.id = "chart-vendor-fraction";
  chart.x_label = "workloads, slowest to fastest against " + vendor;
  chart.y_label = "fraction of " + vendor + "'s speed";
  chart.failure_label = "";
  for (std::size_t i = 0; i < rows.size(); ++i)
    chart.points.push_back(
        {static_cast<double>(i + 1), rows[i]->vendor_fraction, *rows[i]->vendor_fraction > 1 ? "v-pass" : "v-build",
         rows[i]->task + " / " + rows[i]->workload + ": " + fraction_text(rows[i]->vendor_fraction)});
  chart.lines.push_back({"as fast as " + vendor, "parity", {{1.0, 1.0}, {static_cast<double>(rows.size()), 1.0}}});
  // Every point is drawn: a suite has tens of workloads, not the thousands that thinning is for.
  out << render_chart_svg(chart, rows.size()) << "<p class=\"caption\">" << rows.size()
      << " workloads; green: faster than " << e(vendor) << ", red: slower; the dashed line is " << e(vendor)
      << "'s speed.</p>";
}

std::string number_cell(const std::string& text, const std::string& css = "") {
  return "<td class=\"num" + (css.empty() ? "" : " " + css) + "\">" + text + "</td>";
}

// One row per workload; the task, its run and what the run spent span the task's rows.
void workload_table(std::ostringstream& out, const CampaignReport& report, const std::string& vendor) {
  out << "<h2>Workloads</h2><div class=\"scroll\"><table id=\"workloads\"><tr><th>task</th><th>workload</th>"
      << "<th>starting kernel</th><th>best</th><th>speedup</th><th>" << e(vendor) << "</th><th>of " << e(vendor)
      << "'s speed</th><th>measured on</th><th>run</th><th>tokens</th><th>USD</th></tr>";
  for (std::size_t i = 0; i < report.rows.size();) {
    std::size_t end = i;
    while (end < report.rows.size() && report.rows[end].task == report.rows[i].task) ++end;
    const std::string span = "rowspan=\"" + std::to_string(end - i) + "\"";
    for (std::size_t j = i; j < end; ++j) {
      const CampaignRow& row = report.rows[j];
      out << "<tr data-task=\"" << e(row.task) << "\" data-workload=\"" << e(row.workload) << "\">";
      if (j == i) out << "<td " << span << ">" << e(row.task) << "</td>";
      out << "<td>" << e(row.workload) << "</td>";
      if (row.speedup) {
        out << number_cell(time_text(row.start_s)) << number_cell(time_text(row.best_s))
            << number_cell(speedup_text(row.speedup));
        if (row.vendor_fraction)
          out << number_cell(time_text(row.vendor_s))
              << number_cell(fraction_text(row.vendor_fraction), *row.vendor_fraction > 1 ? "faster" : "slower");
        else
          out << "<td class=\"none\" colspan=\"2\">" << e(row.vendor_note) << "</td>";
        out << "<td>" << e(row.device) << "</td>";
      } else {
        out << "<td class=\"none\" colspan=\"6\">" << e(row.note) << "</td>";
      }
      if (j == i) {
        out << "<td " << span << ">";
        if (row.run_id.empty())
          out << "-";
        else
          out << "<a href=\"" << e(run_report_link(row.run_dir, report.dir)) << "\">" << e(row.run_id) << "</a>"
              << (row.best_candidate.empty() ? "" : " " + e(row.best_candidate));
        out << "</td><td class=\"num\" " << span << ">" << fixed(row.tokens, 0) << "</td><td class=\"num\" " << span
            << ">" << fixed(row.cost_usd, 2) << "</td>";
      }
      out << "</tr>";
    }
    i = end;
  }
  out << "</table></div>";
}

void task_table(std::ostringstream& out, const CampaignReport& report) {
  out << "<h2>Tasks</h2><table><tr><th>task</th><th>op family</th><th>state</th><th>run</th><th>evaluations</th>"
         "<th>best</th><th>tokens</th><th>USD</th></tr>";
  for (const CampaignTaskResult& task : report.tasks)
    out << "<tr><td>" << e(task.name) << "</td><td>" << e(task.op_family) << "</td><td>"
        << e(task.reason.empty() ? task.state : task.state + ": " + task.reason) << "</td><td>"
        << e(task.run_id.empty() ? "-" : task.run_id + " (" + task.run_status + ")") << "</td><td class=\"num\">"
        << task.evaluations << "</td><td class=\"num\">"
        << e(task.best_candidate.empty() ? "-" : task.best_candidate + " " + speedup_text(task.best_speedup))
        << "</td><td class=\"num\">" << fixed(task.tokens, 0) << "</td><td class=\"num\">" << fixed(task.cost_usd, 2)
        << "</td></tr>";
  out << "</table>";
}

}  // namespace campaign_html

std::string render_campaign_html(const CampaignReport& report) {
  const std::string vendor = campaign_vendor_label(report);
  std::ostringstream out;
  out << report_page_head("evoteam campaign " + report.id, report.live(), campaign_html::k_style) << "<h1>"
      << campaign_html::e(report.id) << " \u2014 " << campaign_html::e(report.suite) << "</h1>";
  campaign_html::summary_section(out, report);
  for (const std::string& warning : report.warnings) out << "<p class=\"warn\">" << campaign_html::e(warning) << "</p>";
  campaign_html::headline_section(out, report, vendor);
  campaign_html::fraction_chart(out, report, vendor);
  campaign_html::workload_table(out, report, vendor);
  campaign_html::task_table(out, report);
  out << "</body></html>\n";
  return out.str();
}

}  // namespace evoteam
