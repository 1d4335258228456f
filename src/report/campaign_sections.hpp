#pragma once
// What the HTML and Markdown renderings of a campaign report, and the comparison of campaigns, share: how the
// summary reads in the field's terms and how times, fractions and budgets are written.
#include <optional>
#include <string>
#include <vector>

#include <evoteam/report/campaign_report.hpp>

namespace evoteam {

// The name the vendor columns carry: the vendor baselines the runs measured against ("FlashInfer" when none
// named one, the suite's usual baseline).
std::string campaign_vendor_label(const CampaignReport& report);

// "1.21x of FlashInfer's speed (geometric mean over 47 workloads with a FlashInfer time), faster on 36 of 47",
// or why there is no such figure.
std::string vendor_headline(const CampaignSummary& summary, const std::string& vendor);
// "3.10x over the starting kernels (geometric mean over 12 measured workloads of 15)", or none measured.
std::string speedup_headline(const CampaignSummary& summary);
// The workloads without a vendor figure, counted by why: "9 built, not timed; 3 host task: no GPU, no FlashInfer".
std::string missing_vendor_text(const std::vector<CampaignRow>& rows);

std::string time_text(std::optional<double> seconds);       // "12.50 us", or "-"
std::string fraction_text(std::optional<double> fraction);  // "1.21x", or "-"
// The campaign's budgets as the user gave them: "evaluations 40, usd 5"; "none" when none was given.
std::string campaign_budgets_text(const nlohmann::json& budgets);
// The tasks counted by state: "2 finished, 1 built_not_timed".
std::string task_states_text(const std::vector<CampaignTaskResult>& tasks);
// The run's report page, as a link from a page in `from`: relative when the run is under it.
std::string run_report_link(const std::filesystem::path& run_dir, const std::filesystem::path& from);

}  // namespace evoteam
