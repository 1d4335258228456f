// Read-only views of campaigns: `status`, `wait` and the lines `runs` shows. What a run did comes from the run's
// own files through the report module's readers.
#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>
#include <thread>

#include <evoteam/campaign/campaign.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/report/report.hpp>
#include <evoteam/report/status.hpp>

namespace evoteam {

namespace {

std::string budget_text(const CampaignBudgets& budgets) {
  std::vector<std::string> parts;
  if (budgets.evaluations) parts.push_back(std::to_string(*budgets.evaluations) + " evaluations");
  if (budgets.gpu_seconds) parts.push_back(fixed(*budgets.gpu_seconds, 1) + " GPU-s");
  if (budgets.tokens) parts.push_back(std::to_string(*budgets.tokens) + " tokens");
  if (budgets.usd) parts.push_back("$" + fixed(*budgets.usd, 2));
  if (budgets.wall_s) parts.push_back(fixed(*budgets.wall_s / 3600.0, 2) + " h");
  return parts.empty() ? "no limit" : join(parts, ", ");
}

// The campaign's status word, "running (dead)" when no daemon holds it though campaign.json says running.
std::string status_word(const std::filesystem::path& dir, const Campaign& campaign) {
  const std::string word = to_string(campaign.status);
  if (campaign.status == RunStatus::running && !lock_holder(dir, k_campaign_lock_name)) return word + " (dead)";
  return word;
}

std::string task_counts(const Campaign& campaign) {
  std::map<std::string, int> counts;
  for (const CampaignTask& task : campaign.tasks) ++counts[to_string(task.state)];
  std::vector<std::string> parts;
  for (const auto& [state, count] : counts) parts.push_back(std::to_string(count) + " " + state);
  return std::to_string(campaign.tasks.size()) + " tasks: " + join(parts, ", ");
}

std::string best_text(const RunSummary& run) { return run.best_speedup ? fixed(*run.best_speedup, 2) + "x" : "-"; }

}  // namespace

std::optional<std::filesystem::path> find_campaign(const std::string& name, const std::filesystem::path& runs_dir) {
  if (is_campaign_dir(name)) return std::filesystem::path(name);
  const std::filesystem::path under = runs_dir / k_campaigns_folder / name;
  if (is_campaign_dir(under)) return under;
  return std::nullopt;
}

nlohmann::json campaign_status_json(const std::filesystem::path& campaign_dir) {
  const Campaign campaign = read_campaign(campaign_dir);
  nlohmann::json value = campaign.to_json();
  value["dir"] = campaign_dir.string();
  const std::optional<int> holder = lock_holder(campaign_dir, k_campaign_lock_name);
  value["daemon_alive"] = holder.has_value();
  value["daemon_pid"] = holder.value_or(0);
  value["status_now"] = status_word(campaign_dir, campaign);
  value["budgets_left"] = budgets_left(campaign.budgets, committed_budgets(campaign)).to_json();
  for (std::size_t i = 0; i < campaign.tasks.size(); ++i)
    if (!campaign.tasks[i].run_dir.empty())
      value["tasks"][i]["run"] = to_json(summarize_run(campaign_dir / campaign.tasks[i].run_dir));
  return value;
}

std::string format_campaign_status(const std::filesystem::path& campaign_dir) {
  const Campaign campaign = read_campaign(campaign_dir);
  std::ostringstream out;
  out << "campaign " << campaign.id << " (" << campaign_dir.string() << ")\n";
  out << "  suite:   " << campaign.suite << "\n";
  out << "  status:  " << status_word(campaign_dir, campaign);
  if (campaign.exit_code) out << ", exit code " << *campaign.exit_code;
  out << "\n";
  if (const std::optional<int> holder = lock_holder(campaign_dir, k_campaign_lock_name))
    out << "  daemon:  pid " << *holder << "\n";
  out << "  budgets: " << budget_text(campaign.budgets) << "; left "
      << budget_text(budgets_left(campaign.budgets, committed_budgets(campaign))) << "\n";
  out << "  " << task_counts(campaign) << "\n";
  for (const CampaignTask& task : campaign.tasks) {
    out << "  " << std::left << std::setw(36) << task.name << " " << std::setw(16) << to_string(task.state);
    if (!task.run_dir.empty()) {
      const RunSummary run = summarize_run(campaign_dir / task.run_dir);
      out << run.id << "  " << run.evaluations << " evaluations, best " << best_text(run);
    }
    if (!task.reason.empty()) out << "  (" << task.reason << ")";
    out << "\n";
  }
  return out.str();
}

CampaignWait wait_for_campaign(const std::filesystem::path& campaign_dir,
                               std::optional<std::chrono::milliseconds> timeout, std::chrono::milliseconds poll) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    // The daemon records the campaign's end before it lets go of the lock.
    if (!lock_holder(campaign_dir, k_campaign_lock_name)) {
      const Campaign campaign = read_campaign(campaign_dir);
      if (campaign.status != RunStatus::running && campaign.exit_code)
        return {*campaign.exit_code, "campaign " + campaign_dir.string() + " " + to_string(campaign.status) + " (" +
                                         task_counts(campaign) + "), exit code " + std::to_string(*campaign.exit_code)};
      return {static_cast<int>(ExitCode::failure), "campaign " + campaign_dir.string() +
                                                       " died without recording its end (its daemon was killed?); "
                                                       "`evoteam resume` continues it"};
    }
    if (timeout && std::chrono::steady_clock::now() - start >= *timeout)
      return {k_wait_timeout_exit_code,
              "timed out waiting for campaign " + campaign_dir.string() + ": it is still running"};
    std::this_thread::sleep_for(poll);
  }
}

std::vector<std::filesystem::path> list_campaigns(const std::filesystem::path& runs_dir) {
  std::vector<std::filesystem::path> campaigns;
  const std::filesystem::path parent = runs_dir / k_campaigns_folder;
  std::error_code error;
  for (std::filesystem::directory_iterator it(parent, error), end; !error && it != end; it.increment(error))
    if (is_campaign_dir(it->path())) campaigns.push_back(it->path());
  std::sort(campaigns.begin(), campaigns.end(), std::greater<>());
  return campaigns;
}

nlohmann::json campaign_summary_json(const std::filesystem::path& campaign_dir) {
  nlohmann::json value = {{"kind", "campaign"}, {"dir", campaign_dir.string()}};
  try {
    const Campaign campaign = read_campaign(campaign_dir);
    value["id"] = campaign.id;
    value["suite"] = campaign.suite;
    value["status"] = status_word(campaign_dir, campaign);
    value["created"] = campaign.created;
    nlohmann::json runs = nlohmann::json::array();
    for (const CampaignTask& task : campaign.tasks) {
      nlohmann::json item = {{"task", task.name}, {"state", to_string(task.state)}, {"reason", task.reason}};
      if (!task.run_dir.empty()) item["run"] = to_json(summarize_run(campaign_dir / task.run_dir));
      runs.push_back(item);
    }
    value["tasks"] = runs;
  } catch (const Error& error) {
    value["status"] = "unreadable";
    value["error"] = error.what();
  }
  return value;
}

std::string format_campaign_lines(const std::vector<std::filesystem::path>& campaigns) {
  std::ostringstream out;
  for (const std::filesystem::path& dir : campaigns) {
    Campaign campaign;
    try {
      campaign = read_campaign(dir);
    } catch (const Error& error) {
      out << std::left << std::setw(36) << dir.filename().string() << "unreadable (" << error.what() << ")\n";
      continue;
    }
    out << std::left << std::setw(36) << campaign.id << std::setw(22) << campaign.suite << " " << std::setw(16)
        << status_word(dir, campaign) << task_counts(campaign) << "  " << campaign.created << "\n";
    for (const CampaignTask& task : campaign.tasks) {
      out << "  " << std::left << std::setw(34);
      if (task.run_dir.empty()) {
        out << "-" << std::setw(22) << task.name << " " << to_string(task.state);
        if (!task.reason.empty()) out << "  (" << task.reason << ")";
        out << "\n";
        continue;
      }
      const RunSummary run = summarize_run(dir / task.run_dir);
      out << run.id << std::setw(22) << task.name << " " << std::setw(16) << run.status << std::right << std::setw(7)
          << run.cycles << std::setw(7) << run.evaluations << std::setw(9) << best_text(run) << "\n";
    }
  }
  return out.str();
}

}  // namespace evoteam
