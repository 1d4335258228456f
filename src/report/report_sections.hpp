#pragma once
// What the HTML and Markdown renderings of a run report share: how a candidate's verdict is grouped and
// coloured, how numbers read, and the lineage tree.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <evoteam/report/run_report.hpp>

namespace evoteam {

// The colour class of a candidate: v-pass, v-rejected, v-build (build and static), v-incorrect (wrong
// results of any kind), v-crash (faults and hangs), v-timing (timing refused), v-infra.
std::string verdict_css_class(const ReportCandidate& candidate);
std::string verdict_text(const ReportCandidate& candidate);  // PASS 8.27x, COMPILE_ERROR, REJECTED (ruling)

std::string speedup_text(std::optional<double> speedup);                           // 8.27x, or -
std::string interval_text(std::optional<double> low, std::optional<double> high);  // [7.60, 9.03], or empty

// The best against the task's vendor baseline: "0.74x of flashinfer's speed (geometric mean)", or why there
// is no figure. Empty when the task has no vendor baseline.
std::string vendor_text(const RunReport& report);

// One budget's use against its limit: "6 of 10 (60%)", "0.25 (no limit)".
std::string budget_text(const BudgetBurn& burn);

// What changed in a cycle's team and the signals behind it, for a chart label: "c4: +debugger (recurring_error)".
std::string change_label(const ReportCycle& cycle);
// Everything about it, for hover text and tables: the change, then the signals that caused it.
std::string change_detail(const ReportCycle& cycle);

// While a run or campaign is live its HTML page reloads itself this often (seconds): often enough to follow a
// cycle of a few minutes, rarely enough not to flicker while someone reads.
inline constexpr int k_live_reload_s = 15;

// The opening of a report page up to <body>: the title, the house style every report page shares, and while
// `live` a reload every k_live_reload_s seconds; a page's own rules follow the shared ones.
std::string report_page_head(const std::string& title, bool live, std::string_view extra_style = "");

// A report's pages written atomically into `out_dir` (report.html, report.md), those `formats` asks for, each
// rendered only when asked; returns the paths written. The run report and the campaign report both write this way.
std::vector<std::filesystem::path> write_report_pages(const std::filesystem::path& out_dir,
                                                      const std::vector<ReportFormat>& formats,
                                                      const std::function<std::string()>& render_html,
                                                      const std::function<std::string()>& render_markdown);

// A Markdown table cell: pipes and line breaks would end the cell or the row.
namespace markdown {
std::string cell(const std::string& text);
}

// The candidates as a tree of <details>: from each root the path to its best descendant runs flat (the
// run's best path marked), branches off it fold under one line each, failed leaves are counted on one line.
std::string render_lineage_html(const RunReport& report);

}  // namespace evoteam
