// Reads a campaign directory into a CampaignReport: campaign.json says which run belongs to which task and where
// the task stands; each run is read by the run report's reader (best/eval.json's per-workload times, the journal's
// totals), so the campaign's table and each run's own report can never disagree. A run that cannot be read is a
// warning and rows that say so: a report of a campaign that is half done, or damaged, is still worth having.
#include <evoteam/report/campaign_report.hpp>

#include <algorithm>
#include <cmath>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/store/store.hpp>

#include "report/report_sections.hpp"
#include "report/run_files.hpp"

namespace evoteam {

namespace {

constexpr const char* k_campaign_file = "campaign.json";

// A task's state in campaign.json: the runner's words, read once here so that no comparison spells them.
enum class TaskState { pending, running, finished, stopped, failed, built_not_timed, skipped, unknown };

TaskState parse_task_state(const std::string& text) {
  static const std::pair<const char*, TaskState> k_states[] = {
      {"pending", TaskState::pending}, {"running", TaskState::running}, {"finished", TaskState::finished},
      {"stopped", TaskState::stopped}, {"failed", TaskState::failed},   {"built_not_timed", TaskState::built_not_timed},
      {"skipped", TaskState::skipped}};
  for (const auto& [name, state] : k_states)
    if (text == name) return state;
  return TaskState::unknown;
}

std::string with_reason(const std::string& what, const std::string& reason) {
  return reason.empty() ? what : what + ": " + reason;
}

// Why a task's workloads have no times, when they have none: from its state first (the runner knows why it did
// not time a task), then from its run.
std::string missing_times_note(const CampaignTaskResult& task, const RunReport* run) {
  switch (parse_task_state(task.state)) {
    case TaskState::skipped: return with_reason("skipped", task.reason);
    case TaskState::built_not_timed: return with_reason("built, not timed", task.reason);
    case TaskState::pending: return "not started yet";
    default: break;
  }
  if (run == nullptr) return with_reason(task.run_dir.empty() ? "no run" : "run not readable", task.reason);
  if (run->best_workloads.empty()) {
    if (parse_task_state(task.state) == TaskState::running) return "running: no passing candidate yet";
    return with_reason("no passing candidate", task.reason);
  }
  return "not in the best candidate's evaluation";
}

// Why a row has no FlashInfer figure.
std::string missing_vendor_note(const CampaignTaskResult& task, const RunReport* run) {
  if (task.target == "host") return "host task: no GPU, no FlashInfer";
  if (run == nullptr || run->best_workloads.empty()) return "";
  if (task.vendor_name.empty()) return "no vendor baseline";
  return task.vendor_note.empty() ? task.vendor_name + " not measured" : task.vendor_name + " " + task.vendor_note;
}

// The workloads a task's rows are: its best's evaluation, else the run's frozen task, else the task directory.
std::vector<std::string> workload_names(const RunReport* run, const std::filesystem::path& task_dir) {
  std::vector<std::string> names;
  if (run != nullptr) {
    for (const ReportWorkload& workload : run->best_workloads) names.push_back(workload.name);
    if (names.empty()) names = run->task_workloads;
  }
  if (!names.empty() || task_dir.empty()) return names;
  try {
    const nlohmann::json task = read_json_file(task_dir / "task.json");
    for (const nlohmann::json& workload : task.value("workloads", nlohmann::json::array()))
      if (workload.is_object()) names.push_back(text_or(workload, "name"));
  } catch (const Error&) {
    // No task to read: the task's one row says why it has no times.
  }
  return names;
}

void add_rows(CampaignReport& report, const CampaignTaskResult& task, const RunReport* run,
              const std::filesystem::path& task_dir) {
  std::vector<std::string> names = workload_names(run, task_dir);
  if (names.empty()) names.push_back("-");
  for (const std::string& name : names) {
    CampaignRow row;
    row.task = task.name;
    row.op_family = task.op_family;
    row.workload = name;
    row.run_id = task.run_id;
    row.run_dir = task.run_dir;
    row.best_candidate = task.best_candidate;
    row.tokens = task.tokens;
    row.cost_usd = task.cost_usd;
    const ReportWorkload* measured = nullptr;
    if (run != nullptr)
      for (const ReportWorkload& workload : run->best_workloads)
        if (workload.name == name) measured = &workload;
    const bool timed = parse_task_state(task.state) != TaskState::built_not_timed;
    if (measured != nullptr && timed) {
      row.device = run->best_device;
      row.start_s = measured->start_s;
      row.best_s = measured->best_s;
      row.speedup = measured->speedup;
      row.vendor_s = measured->vendor_s;
      row.vendor_fraction = measured->vendor_fraction;
    }
    if (!row.speedup) row.note = missing_times_note(task, run);
    if (!row.vendor_fraction) row.vendor_note = row.speedup ? missing_vendor_note(task, run) : "";
    report.rows.push_back(row);
  }
}

CampaignTaskResult task_of(const nlohmann::json& item, const std::filesystem::path& campaign_dir) {
  CampaignTaskResult task;
  task.name = text_or(item, "name");
  task.op_family = text_or(item, "op_family");
  if (task.op_family.empty()) task.op_family = task.name;
  task.state = text_or(item, "state");
  task.reason = text_or(item, "reason");
  const std::string run_dir = text_or(item, "run_dir");
  if (!run_dir.empty()) {
    const std::filesystem::path path(run_dir);
    task.run_dir = path.is_absolute() ? path : campaign_dir / path;
  }
  return task;
}

void take_run(CampaignTaskResult& task, const RunReport& run) {
  task.run_id = run.id;
  task.target = run.target;
  task.run_status = run.status;
  task.best_candidate = run.best_candidate;
  task.best_speedup = run.best_speedup;
  task.evaluations = static_cast<int>(run.candidates.size());
  task.tokens = run.total_tokens;
  task.cost_usd = run.total_cost_usd;
  task.vendor_name = run.vendor_name;
  task.vendor_note = run.vendor_note;
}

std::optional<double> geometric_mean_of(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double logs = 0;
  for (double value : values) logs += std::log(value);
  return std::exp(logs / static_cast<double>(values.size()));
}

}  // namespace

CampaignSummary summarize_rows(const std::vector<CampaignRow>& rows, const std::string& family) {
  CampaignSummary summary;
  summary.family = family;
  std::vector<double> fractions, speedups;
  for (const CampaignRow& row : rows) {
    if (!family.empty() && row.op_family != family) continue;
    ++summary.workloads;
    // A figure of 0 or less is a damaged record, not a measurement: it has no logarithm and counts as none.
    if (row.speedup && *row.speedup > 0) speedups.push_back(*row.speedup);
    if (row.vendor_fraction && *row.vendor_fraction > 0) {
      fractions.push_back(*row.vendor_fraction);
      if (*row.vendor_fraction > 1) ++summary.faster;
    }
  }
  summary.measured = static_cast<int>(speedups.size());
  summary.with_vendor = static_cast<int>(fractions.size());
  summary.geomean_speedup = geometric_mean_of(speedups);
  summary.geomean_vendor_fraction = geometric_mean_of(fractions);
  return summary;
}

nlohmann::json to_json(const CampaignSummary& summary) {
  const auto optional = [](const std::optional<double>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  nlohmann::json value = {{"workloads", summary.workloads},
                          {"measured", summary.measured},
                          {"with_vendor", summary.with_vendor},
                          {"faster_than_vendor", summary.faster},
                          {"geomean_vendor_fraction", optional(summary.geomean_vendor_fraction)},
                          {"geomean_speedup", optional(summary.geomean_speedup)}};
  if (!summary.family.empty()) value["op_family"] = summary.family;
  return value;
}

bool CampaignReport::live() const { return parse_run_status(status) == RunStatus::running; }

CampaignReport load_campaign_report(const std::filesystem::path& campaign_dir) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(campaign_dir / k_campaign_file, ec))
    throw InvalidInput(campaign_dir.string() + " is not a campaign: it holds no " + k_campaign_file);
  const nlohmann::json campaign = read_json_file(campaign_dir / k_campaign_file);
  if (!campaign.is_object() || text_or(campaign, "kind") != "campaign")
    throw InvalidInput((campaign_dir / k_campaign_file).string() +
                       " is not a campaign (its \"kind\" is not \"campaign\")");
  CampaignReport report;
  report.dir = campaign_dir;
  report.id = text_or(campaign, "id");
  report.suite = text_or(campaign, "suite");
  report.created = text_or(campaign, "created");
  report.status = text_or(campaign, "status");
  if (campaign.contains("budgets") && campaign["budgets"].is_object()) report.budgets = campaign["budgets"];
  if (campaign.contains("settings") && campaign["settings"].is_object()) report.settings = campaign["settings"];
  const nlohmann::json tasks = campaign.value("tasks", nlohmann::json::array());
  for (const nlohmann::json& item : tasks.is_array() ? tasks : nlohmann::json::array()) {
    if (!item.is_object()) continue;
    CampaignTaskResult task = task_of(item, campaign_dir);
    std::optional<RunReport> run;
    if (!task.run_dir.empty()) {
      try {
        run = load_run_report(task.run_dir);
        take_run(task, *run);
      } catch (const Error& error) {
        report.warnings.push_back(task.name + ": its run was not read: " + error.what());
      }
    }
    if (!run && task.target.empty()) task.target = text_or(item, "target");
    add_rows(report, task, run ? &*run : nullptr, text_or(item, "task_dir"));
    report.tokens += task.tokens;
    report.cost_usd += task.cost_usd;
    report.tasks.push_back(task);
  }
  report.summary = summarize_rows(report.rows);
  std::vector<std::string> families;
  for (const CampaignRow& row : report.rows)
    if (std::find(families.begin(), families.end(), row.op_family) == families.end()) families.push_back(row.op_family);
  for (const std::string& family : families) report.families.push_back(summarize_rows(report.rows, family));
  return report;
}

std::vector<std::filesystem::path> write_campaign_report(const CampaignReport& report,
                                                         const std::filesystem::path& out_dir,
                                                         const std::vector<ReportFormat>& formats) {
  return write_report_pages(
      out_dir, formats, [&] { return render_campaign_html(report); }, [&] { return render_campaign_markdown(report); });
}

std::vector<std::filesystem::path> write_campaign_report(const std::filesystem::path& campaign_dir) {
  return write_campaign_report(load_campaign_report(campaign_dir), campaign_dir,
                               {ReportFormat::html, ReportFormat::markdown});
}

}  // namespace evoteam
