#pragma once
// The campaign report: a suite's runs read into one table, the way the field reports a suite — one row per
// workload with the starting kernel's time, the best candidate's, its speedup, FlashInfer's time and the
// fraction of FlashInfer's speed, and a summary in the field's terms (geometric mean over FlashInfer across
// workloads, faster on X of N, per op family). campaign.json only says which run belongs to which task and
// where it stands; every figure is read from the task's run directory through the run report's reader.
// Read-only like every report, except write_campaign_report, which writes report.html and report.md.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/report/run_report.hpp>

namespace evoteam {

// One task of the campaign as campaign.json lists it, with what its run says.
struct CampaignTaskResult {
  std::string name;
  std::string op_family;
  std::string state;              // pending, running, finished, stopped, failed, built_not_timed, skipped
  std::string reason;             // why, for skipped / built_not_timed / failed
  std::string run_id;             // empty until the runner started its run
  std::filesystem::path run_dir;  // absolute; empty until started
  std::string target;             // host or cuda, from the run's frozen task
  std::string run_status;         // the run's own status (running, finished, ...)
  std::string best_candidate;
  std::optional<double> best_speedup;
  int evaluations = 0;
  double tokens = 0;
  double cost_usd = 0;
  std::string vendor_name;  // the task's vendor baseline as its best's evaluation named it
  std::string vendor_note;  // why there is no vendor figure, when there is none
};

// One workload of one task: a row of the table.
struct CampaignRow {
  std::string task;
  std::string op_family;
  std::string workload;
  std::string run_id;             // the run that got the best
  std::filesystem::path run_dir;  // absolute; empty when no run
  std::string best_candidate;
  std::string device;                     // what measured it: "host", "cuda:<uuid>"; empty when nothing did
  std::optional<double> start_s;          // the starting kernel's median time
  std::optional<double> best_s;           // the best candidate's median time
  std::optional<double> speedup;          // start / best, as the evaluation measured it
  std::optional<double> vendor_s;         // FlashInfer's median time
  std::optional<double> vendor_fraction;  // FlashInfer's time / the best's: above 1 is faster than FlashInfer
  std::string note;         // why there are no times (not started, built not timed, no passing candidate ...)
  std::string vendor_note;  // why there is no FlashInfer time (host task, no baseline, unavailable ...)
  double tokens = 0;        // spent by the task's run
  double cost_usd = 0;
};

// The field's summary over a set of rows.
struct CampaignSummary {
  std::string family;                             // empty for the whole campaign
  int workloads = 0;                              // rows
  int measured = 0;                               // rows with a speedup over the starting kernel
  int with_vendor = 0;                            // rows with a FlashInfer figure
  int faster = 0;                                 // of those, rows faster than FlashInfer (fraction above 1)
  std::optional<double> geomean_vendor_fraction;  // over the rows with a FlashInfer figure
  std::optional<double> geomean_speedup;          // over the measured rows
};

// Geometric means and counts over hand-made or read rows; rows without a figure count only in `workloads`.
CampaignSummary summarize_rows(const std::vector<CampaignRow>& rows, const std::string& family = "");

struct CampaignReport {
  std::filesystem::path dir;
  std::string id;
  std::string suite;
  std::string created;
  std::string status;  // running, finished, stopped, failed (a run's words)
  nlohmann::json budgets = nlohmann::json::object();
  nlohmann::json settings = nlohmann::json::object();
  std::vector<CampaignTaskResult> tasks;
  std::vector<CampaignRow> rows;  // in campaign.json's task order, each task's workloads in its order
  CampaignSummary summary;
  std::vector<CampaignSummary> families;  // one per op family, in first-seen order
  std::vector<std::string> warnings;      // runs that could not be read, shown rather than failing the report
  double tokens = 0;
  double cost_usd = 0;

  // While the campaign runs its page reloads itself: a tab left open follows it.
  bool live() const;
};

// Reads <campaign_dir>/campaign.json and each task's run. Throws InvalidInput when campaign.json cannot be
// read or is not a campaign; a run that cannot be read becomes a warning and rows that say so.
CampaignReport load_campaign_report(const std::filesystem::path& campaign_dir);

std::string render_campaign_html(const CampaignReport& report);
std::string render_campaign_markdown(const CampaignReport& report);

// Reads <campaign_dir>/campaign.json and each run; writes report.html and report.md atomically; returns the paths.
std::vector<std::filesystem::path> write_campaign_report(const std::filesystem::path& campaign_dir);
// The same into out_dir, in the formats asked (`evoteam report CAMPAIGN --out --format`).
std::vector<std::filesystem::path> write_campaign_report(const CampaignReport& report,
                                                         const std::filesystem::path& out_dir,
                                                         const std::vector<ReportFormat>& formats);

// `evoteam compare CAMPAIGN_A CAMPAIGN_B`: the same table side by side, rows matched by task and workload.
// JSON: {"campaigns": [{id, dir, suite, status, budgets, settings, tokens, cost_usd, summary, families}],
//        "rows": [{task, op_family, workload, entries: [one per campaign: run, best_candidate, start_s, best_s,
//                  speedup, vendor_s, vendor_fraction, note, vendor_note; null where that campaign lacks the row]}],
//        "differences": ["..."]}
nlohmann::json compare_campaigns_json(const std::vector<CampaignReport>& campaigns);
std::string format_campaign_comparison(const std::vector<CampaignReport>& campaigns);
// What keeps two campaigns from being compared like for like: tasks only one has, budgets that differ.
std::vector<std::string> campaign_differences(const std::vector<CampaignReport>& campaigns);

nlohmann::json to_json(const CampaignSummary& summary);

}  // namespace evoteam
