// The campaign report's texts, shared by its HTML and Markdown pages and by `compare` of campaigns.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <evoteam/core/text.hpp>

#include "report/campaign_sections.hpp"

namespace evoteam {

std::string campaign_vendor_label(const CampaignReport& report) {
  std::set<std::string> names;
  for (const CampaignTaskResult& task : report.tasks)
    if (!task.vendor_name.empty()) names.insert(task.vendor_name == "flashinfer" ? "FlashInfer" : task.vendor_name);
  return names.empty() ? "FlashInfer" : join(names, "/");
}

std::string vendor_headline(const CampaignSummary& summary, const std::string& vendor) {
  if (!summary.geomean_vendor_fraction)
    return "no workload has a " + vendor + " time" + (summary.workloads > 0 ? "" : " (no workloads)");
  return fixed(*summary.geomean_vendor_fraction, 2) + "x of " + vendor + "'s speed (geometric mean over " +
         std::to_string(summary.with_vendor) + " workloads with a " + vendor + " time), faster on " +
         std::to_string(summary.faster) + " of " + std::to_string(summary.with_vendor);
}

std::string speedup_headline(const CampaignSummary& summary) {
  if (!summary.geomean_speedup) return "no workload measured yet";
  return fixed(*summary.geomean_speedup, 2) + "x over the starting kernels (geometric mean over " +
         std::to_string(summary.measured) + " measured workloads of " + std::to_string(summary.workloads) + ")";
}

std::string missing_vendor_text(const std::vector<CampaignRow>& rows) {
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  for (const CampaignRow& row : rows) {
    if (row.vendor_fraction) continue;
    const std::string& why = row.speedup ? row.vendor_note : row.note;
    // The kind of reason, not each task's detail: "built, not timed: no GPU on this machine" counts as its kind.
    const std::string kind = why.substr(0, why.find(':'));
    if (counts[kind]++ == 0) order.push_back(kind);
  }
  return join(order, "; ", [&](const std::string& kind) {
    return std::to_string(counts[kind]) + " " + (kind.empty() ? "not measured" : kind);
  });
}

std::string time_text(std::optional<double> seconds) { return seconds ? human_duration(*seconds) : "-"; }

std::string fraction_text(std::optional<double> fraction) { return fraction ? fixed(*fraction, 2) + "x" : "-"; }

std::string campaign_budgets_text(const nlohmann::json& budgets) {
  std::vector<std::string> given;
  for (const auto& [name, value] : budgets.items())
    if (value.is_number() && value.get<double>() > 0) given.push_back(name + " " + value.dump());
  return given.empty() ? "none" : join(given, ", ");
}

std::string task_states_text(const std::vector<CampaignTaskResult>& tasks) {
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  for (const CampaignTaskResult& task : tasks)
    if (counts[task.state]++ == 0) order.push_back(task.state);
  return join(order, ", ", [&](const std::string& state) {
    return std::to_string(counts[state]) + " " + (state.empty() ? "unknown" : state);
  });
}

std::string run_report_link(const std::filesystem::path& run_dir, const std::filesystem::path& from) {
  const std::filesystem::path page = run_dir / "report.html";
  const std::filesystem::path relative = page.lexically_relative(from);
  if (!relative.empty() && relative.begin()->string() != "..") return relative.generic_string();
  return "file://" + std::filesystem::absolute(page).generic_string();
}

}  // namespace evoteam
