#include <evoteam/report/compare.hpp>

#include <iomanip>
#include <sstream>

#include <evoteam/core/text.hpp>

#include "report/report_sections.hpp"
#include "report/svg_chart.hpp"

namespace evoteam {

namespace {

// The share of the final best that "got there" means in evaluations_to_90 and tokens_to_90.
constexpr double k_reached_fraction = 0.9;

// Enough distinct colours for an ablation (three modes) over a few seeds; more runs reuse them.
constexpr const char* k_line_colours[] = {"#1c7ed6", "#e8590c", "#2f9e44", "#9c36b5",
                                          "#c92a2a", "#495057", "#0ca678", "#f08c00"};

double spent(const RunReport& report, const std::string& budget) {
  for (const BudgetBurn& burn : report.budgets)
    if (burn.name == budget) return burn.spent;
  return 0;
}

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

RunComparison compare_entry(const RunReport& report) {
  RunComparison run;
  run.run = report.id;
  run.dir = report.dir.string();
  run.task = report.task;
  run.team_mode = report.team_mode;
  run.provider = report.provider;
  run.model = report.model;
  run.status = report.status;
  run.stop_reason = report.stop_reason;
  run.evaluations = static_cast<int>(report.candidates.size());
  run.tokens = spent(report, "tokens");
  run.cost_usd = spent(report, "usd");
  run.hours = spent(report, "hours");
  run.gpu_seconds = spent(report, "gpu_seconds");
  run.best_so_far = report.best_so_far();
  if (!run.best_so_far.empty()) run.best_speedup = run.best_so_far.back();
  double area = 0;
  for (std::size_t i = 0; i < run.best_so_far.size(); ++i) {
    const std::optional<double>& best = run.best_so_far[i];
    area += best.value_or(0);
    if (!run.evaluations_to_90 && best && run.best_speedup && *best >= k_reached_fraction * *run.best_speedup) {
      run.evaluations_to_90 = static_cast<int>(i) + 1;
      run.tokens_to_90 = report.candidates[i].tokens;
    }
  }
  if (!run.best_so_far.empty()) run.auc_best = area / static_cast<double>(run.best_so_far.size());
  for (const BudgetBurn& burn : report.budgets) run.budget_limits[burn.name] = burn.limit;
  run.journal_skipped = report.journal_skipped;
  return run;
}

nlohmann::json to_json(const RunComparison& run) {
  return {
      {"run", run.run},
      {"dir", run.dir},
      {"task", run.task},
      {"team_mode", run.team_mode},
      {"provider", run.provider},
      {"model", run.model},
      {"status", run.status},
      {"stop_reason", run.stop_reason},
      {"evaluations", run.evaluations},
      {"tokens", run.tokens},
      {"cost_usd", run.cost_usd},
      {"hours", run.hours},
      {"gpu_seconds", run.gpu_seconds},
      {"best_speedup", optional_json(run.best_speedup)},
      {"evaluations_to_90", run.evaluations_to_90 ? nlohmann::json(*run.evaluations_to_90) : nlohmann::json(nullptr)},
      {"tokens_to_90", optional_json(run.tokens_to_90)},
      {"auc_best", run.auc_best},
      {"budgets", run.budget_limits},
      {"journal_skipped", run.journal_skipped}};
}

std::vector<std::string> budget_differences(const std::vector<RunComparison>& runs) {
  std::vector<std::string> differences;
  if (runs.empty()) return differences;
  for (const auto& [name, limit] : runs.front().budget_limits.items()) {
    std::vector<std::string> values;
    bool differ = false;
    for (const RunComparison& run : runs) {
      const nlohmann::json other = run.budget_limits.value(name, nlohmann::json(0));
      differ |= other != limit;
      values.push_back(run.run + "=" + other.dump());
    }
    if (differ) differences.push_back("budget " + name + " differs: " + join(values, ", "));
  }
  return differences;
}

std::string format_comparison_table(const std::vector<RunComparison>& runs) {
  std::ostringstream out;
  out << std::left << std::setw(36) << "run" << std::setw(10) << "mode" << std::setw(16) << "provider" << std::right
      << std::setw(7) << "evals" << std::setw(11) << "tokens" << std::setw(9) << "USD" << std::setw(8) << "hours"
      << std::setw(8) << "GPU-s" << std::setw(9) << "best" << std::setw(9) << "evals90" << std::setw(11) << "tokens90"
      << std::setw(8) << "AUC"
      << "\n";
  for (const RunComparison& run : runs) {
    const std::string provider = run.provider + (run.model.empty() ? "" : "/" + run.model);
    out << std::left << std::setw(36) << run.run << std::setw(10) << run.team_mode << std::setw(16) << provider
        << std::right << std::setw(7) << run.evaluations << std::setw(11) << fixed(run.tokens, 0) << std::setw(9)
        << fixed(run.cost_usd, 2) << std::setw(8) << fixed(run.hours, 3) << std::setw(8) << fixed(run.gpu_seconds, 1)
        << std::setw(9) << speedup_text(run.best_speedup) << std::setw(9)
        << (run.evaluations_to_90 ? std::to_string(*run.evaluations_to_90) : "-") << std::setw(11)
        << (run.tokens_to_90 ? fixed(*run.tokens_to_90, 0) : "-") << std::setw(8) << fixed(run.auc_best, 2) << "\n";
  }
  for (const std::string& difference : budget_differences(runs)) out << "note: " << difference << "\n";
  return out.str();
}

std::string render_comparison_html(const std::vector<RunComparison>& runs) {
  Chart chart;
  chart.id = "chart-compare";
  chart.x_label = "evaluations";
  chart.y_label = "best speedup so far";
  std::ostringstream style, legend;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string css = "l" + std::to_string(i);
    const char* colour = k_line_colours[i % std::size(k_line_colours)];
    ChartLine line{runs[i].run + " (" + runs[i].team_mode + ")", css, {}};
    for (std::size_t j = 0; j < runs[i].best_so_far.size(); ++j)
      line.steps.emplace_back(j + 1.0, runs[i].best_so_far[j]);
    chart.lines.push_back(line);
    style << "svg .line." << css << "{stroke:" << colour << "}";
    legend << "<tr><td><span style=\"color:" << colour << "\">\u2014\u2014</span> " << html_escape(runs[i].run)
           << "</td><td>" << html_escape(runs[i].team_mode) << "</td><td>" << html_escape(runs[i].provider)
           << "</td><td class=\"num\">" << runs[i].evaluations << "</td><td class=\"num\">" << fixed(runs[i].tokens, 0)
           << "</td><td class=\"num\">" << fixed(runs[i].cost_usd, 2) << "</td><td class=\"num\">"
           << speedup_text(runs[i].best_speedup) << "</td><td class=\"num\">"
           << (runs[i].evaluations_to_90 ? std::to_string(*runs[i].evaluations_to_90) : "-")
           << "</td><td class=\"num\">" << fixed(runs[i].auc_best, 2) << "</td></tr>";
  }
  std::ostringstream out;
  out << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>evoteam compare</title><style>"
         "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px}"
         "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #dde2ea;padding:3px "
         "8px}.num{text-align:right}"
         "svg.chart{width:100%;height:auto;border:1px solid #e6e9ef}svg .grid{stroke:#eef0f4}svg .axis,svg "
         ".tickmark{stroke:#8a93a3}"
         "svg .tick{font-size:11px;fill:#6b7482}svg .label{font-size:12px}svg .line{fill:none;stroke-width:2}"
      << style.str()
      << "</style></head><body><h1>Runs compared</h1><table><tr><th>run</th><th>mode</th><th>provider</th>"
         "<th>evaluations</th><th>tokens</th><th>USD</th><th>best</th><th>evaluations to 90%</th><th>AUC</th></tr>"
      << legend.str() << "</table>";
  for (const std::string& difference : budget_differences(runs))
    out << "<p>note: " << html_escape(difference) << "</p>";
  out << "<h2>Best so far against evaluations</h2>" << render_chart_svg(chart, 0) << "</body></html>\n";
  return out.str();
}

}  // namespace evoteam
