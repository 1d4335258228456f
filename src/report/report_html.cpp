// The HTML run report: one file with its CSS and SVG inline and a few lines of script that only count
// what was drawn, so it opens from file:// on a machine with no network and reads the same without script.
#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include <evoteam/core/text.hpp>

#include "report/report_sections.hpp"
#include "report/svg_chart.hpp"

namespace evoteam {

namespace {

// Past this many candidates a chart thins its points (never the best-so-far line): ten thousand circles
// would make the page slow and large while showing no more than this many do.
constexpr std::size_t k_max_points_per_chart = 2500;

constexpr const char* k_style = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#1d2430}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde2ea;padding-bottom:4px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #dde2ea;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f5f8}.num{text-align:right;font-variant-numeric:tabular-nums}.muted{color:#6b7482}
dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}dl.summary dt{color:#6b7482}dl.summary dd{margin:0}
svg.chart{width:100%;height:auto;background:#fff;border:1px solid #e6e9ef;margin:4px 0}
svg .grid{stroke:#eef0f4}svg .axis,svg .tickmark{stroke:#8a93a3}svg .tick{font-size:11px;fill:#6b7482}svg .label{font-size:12px;fill:#3b4352}
svg .line{fill:none;stroke:#1d2430;stroke-width:2}svg .team-change line{stroke:#c2410c;stroke-dasharray:4 3}
svg .team-change text{font-size:11px;fill:#c2410c}svg circle.cand{stroke:#fff;stroke-width:.5;opacity:.85}
.v-pass{fill:#2f9e44;color:#2f9e44}.v-rejected{fill:#f59f00;color:#b07000}.v-build{fill:#e03131;color:#c92a2a}
.v-incorrect{fill:#9c36b5;color:#862e9c}.v-crash{fill:#495057;color:#495057}.v-timing{fill:#1c7ed6;color:#1864ab}.v-infra{fill:#adb5bd;color:#868e96}
.legend span{margin-right:14px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px;background:currentColor}
.caption{font-size:12px;color:#6b7482;margin:0 0 14px}
table.timeline td.on{background:#4263eb}table.timeline td{min-width:14px;padding:2px 4px;text-align:center}table.timeline th{font-weight:normal;font-size:12px}
table.timeline td.changed{box-shadow:inset 2px 0 #c2410c}
ol.path{list-style:none;padding-left:0;margin:2px 0}ol.path>li{padding-left:16px;position:relative;color:#1d2430}
ol.path>li:before{content:"\21b3";position:absolute;left:0;color:#adb5bd}ol.path>li.best{font-weight:600}ol.path>li.best:before{color:#2f9e44;content:"\2605"}
li.n b{font-family:ui-monospace,monospace;font-weight:inherit}details{margin-left:16px;font-weight:normal}details.failed summary{color:#c92a2a}
details.branch summary{color:#3b4352}summary{cursor:pointer;font-size:13px}pre{background:#f6f8fa;padding:10px;overflow:auto;font-size:12px;white-space:pre-wrap}
.bar{display:inline-block;height:10px;background:#c92a2a;vertical-align:middle}.warn{color:#c92a2a}.scroll{overflow-x:auto}
)";

// Counts the drawn points and marks in the page as rendered, so the caption says what is on screen.
constexpr const char* k_script = R"(
for (const svg of document.querySelectorAll('svg.chart')) {
  const caption = document.getElementById(svg.id + '-count');
  if (!caption) continue;
  const drawn = svg.querySelectorAll('circle.cand').length;
  const marks = svg.querySelectorAll('g.team-change').length;
  caption.dataset.drawn = drawn;
  caption.dataset.marks = marks;
  caption.textContent = drawn + ' of ' + svg.dataset.candidates + ' candidates drawn, ' + marks + ' team changes marked';
}
)";

std::string e(std::string_view text) { return html_escape(text); }

void summary_section(std::ostringstream& out, const RunReport& report) {
  const auto row = [&](const std::string& name, const std::string& value) {
    out << "<dt>" << e(name) << "</dt><dd>" << e(value) << "</dd>";
  };
  out << "<dl class=\"summary\">";
  row("task", report.task);
  row("target", report.target + (report.archs.empty() ? "" : " (" + report.archs + ")"));
  row("provider", report.provider + (report.model.empty() ? "" : " / " + report.model));
  if (!report.endpoint.empty()) row("endpoint", report.endpoint);
  for (const auto& [role, agent] : report.agents) row("agent of " + role, agent);
  row("team mode", report.team_mode);
  row("status", report.status + (report.stop_reason.empty() ? "" : " (" + report.stop_reason + ")"));
  row("started", report.started);
  if (report.live)
    out << "<dt>live</dt><dd id=\"live\" data-cycles=\"" << report.cycles_finished << "\">" << report.cycles_finished
        << " cycles finished; this page is rewritten at every cycle's end and reloads itself</dd>";
  row("best", report.best_candidate.empty() ? "none passed"
                                            : report.best_candidate + " " + speedup_text(report.best_speedup) + " " +
                                                  interval_text(report.best_low, report.best_high));
  if (!report.vendor_name.empty()) row("vs " + report.vendor_name, vendor_text(report));
  for (const BudgetBurn& burn : report.budgets) row(burn.name, budget_text(burn));
  out << "</dl>";
}

// One chart of best speedup against one measure of effort (evaluations, tokens, dollars, wall time).
void progress_chart(std::ostringstream& out, const RunReport& report, const std::string& id, const std::string& title,
                    const std::function<double(const ReportCandidate&)>& x_of,
                    const std::function<double(const ReportCycle&)>& mark_x) {
  Chart chart;
  chart.id = id;
  chart.x_label = title;
  chart.y_label = "speedup over the starting kernel";
  const std::vector<std::optional<double>> best = report.best_so_far();
  ChartLine line{"best so far", "best", {}};
  double low = 0, high = 0;
  for (std::size_t i = 0; i < report.candidates.size(); ++i) {
    const ReportCandidate& candidate = report.candidates[i];
    const double x = x_of(candidate);
    low = i ? std::min(low, x) : x;
    high = i ? std::max(high, x) : x;
    chart.points.push_back({x, candidate.counts() || candidate.rejected ? candidate.speedup : std::nullopt,
                            verdict_css_class(candidate),
                            candidate.id + " " + candidate.role + ", cycle " + std::to_string(candidate.cycle) + ": " +
                                verdict_text(candidate)});
    line.steps.emplace_back(x, best[i]);
  }
  out << "<h3>Best speedup against " << e(title) << "</h3>";
  if (!report.candidates.empty() && high <= low) {
    out << "<p class=\"muted\">Every candidate was recorded at " << e(title) << " = " << fixed(low, 2)
        << " (the builtin team spends no tokens or dollars), so there is nothing to plot.</p>";
    return;
  }
  chart.lines.push_back(line);
  for (const ReportCycle& cycle : report.cycles)
    if (cycle.changed() && cycle.cycle > 1)
      chart.marks.push_back({mark_x(cycle), cycle.cycle, change_label(cycle), change_detail(cycle)});
  out << render_chart_svg(chart, k_max_points_per_chart);
  const std::size_t drawn = plotted_points(chart, k_max_points_per_chart);
  out << "<p class=\"caption\" id=\"" << e(id) << "-count\">" << drawn << " of " << chart.points.size()
      << " candidates drawn, " << chart.marks.size() << " team changes marked"
      << (drawn < chart.points.size() ? " (points thinned where they overlap; the line is exact)" : "") << "</p>";
}

void progress_section(std::ostringstream& out, const RunReport& report) {
  out << "<h2>Progress</h2><div class=\"legend\">";
  for (const auto& [css, name] :
       std::vector<std::pair<const char*, const char*>>{{"v-pass", "passed"},
                                                        {"v-rejected", "rejected by a ruling"},
                                                        {"v-build", "build/static"},
                                                        {"v-incorrect", "incorrect"},
                                                        {"v-crash", "crash/hang"},
                                                        {"v-timing", "timing refused"},
                                                        {"v-infra", "infrastructure"}})
    out << "<span class=\"" << css << "\"><i></i>" << name << "</span>";
  out << "<span>\u2014 best so far</span><span style=\"color:#c2410c\">\u2506 team change</span></div>";
  progress_chart(
      out, report, "chart-evaluations", "evaluations",
      [](const ReportCandidate& c) { return static_cast<double>(c.ordinal); },
      [](const ReportCycle& c) { return c.evaluations_before + 0.5; });
  progress_chart(
      out, report, "chart-tokens", "tokens", [](const ReportCandidate& c) { return c.tokens; },
      [](const ReportCycle& c) { return c.tokens_before; });
  progress_chart(
      out, report, "chart-usd", "USD", [](const ReportCandidate& c) { return c.cost_usd; },
      [](const ReportCycle& c) { return c.cost_before; });
  progress_chart(
      out, report, "chart-wall", "wall time (s)", [](const ReportCandidate& c) { return c.wall_s; },
      [](const ReportCycle& c) { return c.wall_before; });
}

void cycle_details(std::ostringstream& out, const RunReport& report);

// Roles × cycles as a grid, with the pattern and who decided under each cycle.
void timeline_section(std::ostringstream& out, const RunReport& report) {
  out << "<h2>Team timeline</h2>";
  if (report.cycles.empty()) {
    out << "<p>No cycle started.</p>";
    return;
  }
  std::vector<std::string> roles;
  for (const ReportCycle& cycle : report.cycles)
    for (const std::string& role : cycle.roles)
      if (std::find(roles.begin(), roles.end(), role) == roles.end()) roles.push_back(role);
  out << "<div class=\"scroll\"><table class=\"timeline\"><tr><th>cycle</th>";
  for (const ReportCycle& cycle : report.cycles)
    out << "<th title=\"" << e(change_detail(cycle)) << "\">" << cycle.cycle << "</th>";
  out << "</tr>";
  for (const std::string& role : roles) {
    out << "<tr><th>" << e(role) << "</th>";
    for (const ReportCycle& cycle : report.cycles) {
      const bool on = std::find(cycle.roles.begin(), cycle.roles.end(), role) != cycle.roles.end();
      out << "<td class=\"" << (on ? "on" : "") << (cycle.changed() ? " changed" : "") << "\"></td>";
    }
    out << "</tr>";
  }
  out << "<tr><th>pattern</th>";
  for (const ReportCycle& cycle : report.cycles)
    out << "<td title=\"" << e(cycle.pattern) << "\">" << e(cycle.pattern.substr(0, 2)) << "</td>";
  out << "</tr><tr><th>decided by</th>";
  for (const ReportCycle& cycle : report.cycles)
    out << "<td title=\"" << e(cycle.decided_by) << "\">" << e(cycle.decided_by.substr(0, 1)) << "</td>";
  out << "</tr></table></div><p class=\"caption\">Patterns: so = solo, pi = pipeline, pa = parallel. Decided by: r = "
         "rules, "
         "l = LLM, f = fixed team, s = single agent. An orange edge marks a cycle whose team changed.</p>";
  cycle_details(out, report);
}

// Under the grid, one folded line per cycle worth reading: the first, every change, every cycle with directives.
void cycle_details(std::ostringstream& out, const RunReport& report) {
  for (const ReportCycle& cycle : report.cycles) {
    if (!cycle.changed() && cycle.directives.empty() && cycle.cycle > 1) continue;
    out << "<details><summary>cycle " << cycle.cycle << ": " << e(cycle.pattern) << " [" << e(join(cycle.roles, ", "))
        << "] \u2014 " << e(cycle.change) << "</summary><p>" << e(cycle.rationale) << "</p>";
    if (!cycle.signals.empty()) out << "<p><b>signals:</b> " << e(join(cycle.signals, "; ")) << "</p>";
    if (!cycle.directives.empty()) {
      out << "<ul>";
      for (const std::string& directive : cycle.directives) out << "<li>" << e(directive) << "</li>";
      out << "</ul>";
    }
    out << "</details>";
  }
}

void best_section(std::ostringstream& out, const RunReport& report) {
  out << "<h2>Best candidate per workload</h2>";
  if (report.best_workloads.empty()) {
    out << "<p>No passing candidate, so no per-workload figures.</p>";
  } else {
    const bool vendor = !report.vendor_name.empty();
    out << "<table><tr><th>workload</th><th>speedup</th><th>interval</th><th>roofline fraction</th>"
        << (vendor ? "<th>vs " + e(report.vendor_name) + "</th>" : "") << "</tr>";
    for (const ReportWorkload& workload : report.best_workloads)
      out << "<tr><td>" << e(workload.name) << "</td><td class=\"num\">" << speedup_text(workload.speedup)
          << "</td><td class=\"num\">" << interval_text(workload.low, workload.high) << "</td><td class=\"num\">"
          << (workload.roofline_fraction ? fixed(100 * *workload.roofline_fraction, 1) + "%" : "-") << "</td>"
          << (vendor ? "<td class=\"num\">" + speedup_text(workload.vendor_fraction) + "</td>" : "") << "</tr>";
    out << "</table>";
  }
  if (report.best_roofline_fraction || !report.best_bound.empty())
    out << "<p>Roofline: "
        << (report.best_roofline_fraction ? fixed(100 * *report.best_roofline_fraction, 1) + "% of peak" : "")
        << (report.best_bound.empty() ? " (not profiled)" : ", " + e(report.best_bound) + "-bound (profiled)")
        << "</p>";
}

void failures_section(std::ostringstream& out, const RunReport& report) {
  out << "<h2>Failures by verdict</h2>";
  if (report.failures.empty()) {
    out << "<p>Every candidate passed.</p>";
    return;
  }
  int most = 0;
  for (const auto& [verdict, count] : report.failures) most = std::max(most, count);
  out << "<table><tr><th>verdict</th><th>candidates</th><th></th></tr>";
  for (const auto& [verdict, count] : report.failures)
    out << "<tr><td>" << e(verdict) << "</td><td class=\"num\">" << count
        << "</td><td><span class=\"bar\" style=\"width:" << 1 + 200 * count / most << "px\"></span></td></tr>";
  out << "</table>";
}

void knowledge_section(std::ostringstream& out, const RunReport& report) {
  out << "<h2>Knowledge</h2>";
  if (report.knowledge.empty()) out << "<p>No validated strategy, failed attempt or action plan was recorded.</p>";
  for (const ReportKnowledge& item : report.knowledge)
    out << "<h3>" << e(item.file) << "</h3><pre>" << e(item.excerpt) << (item.truncated ? "\n\u2026" : "") << "</pre>";
}

}  // namespace

std::string report_page_head(const std::string& title, bool live, std::string_view extra_style) {
  std::ostringstream out;
  out << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">";
  // A browser tab left open on a live run follows it with no server: the daemon rewrites the file at every
  // cycle's end and the page reads it again. The last rewrite, as the run ends, drops the reload.
  if (live) out << "<meta http-equiv=\"refresh\" content=\"" << k_live_reload_s << "\">";
  out << "<title>" << e(title) << "</title><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      << "<style>" << k_style << extra_style << "</style></head><body>";
  return out.str();
}

std::string render_report_html(const RunReport& report) {
  std::ostringstream out;
  out << report_page_head("evoteam report " + report.id, report.live) << "<h1>" << e(report.task) << " \u2014 "
      << e(report.id) << "</h1>";
  summary_section(out, report);
  for (const std::string& warning : report.warnings) out << "<p class=\"warn\">" << e(warning) << "</p>";
  progress_section(out, report);
  timeline_section(out, report);
  out << "<h2>Lineage</h2><p class=\"caption\">From the starting kernel along each path to its best descendant; "
         "\u2605 marks the run's best path. Branches and failed leaves fold.</p>"
      << render_lineage_html(report);
  best_section(out, report);
  failures_section(out, report);
  knowledge_section(out, report);
  out << "<script>" << k_script << "</script></body></html>\n";
  return out.str();
}

}  // namespace evoteam
