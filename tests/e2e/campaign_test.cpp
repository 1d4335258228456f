// `evoteam campaign` end to end through the real binary: three host tasks (kernels/host_matmul at small sizes, so the
// suite runs within seconds) with a small evaluation budget split by weight, run detached, its daemon and the live
// run's daemon killed with -9 mid-task, resumed, waited for; then campaign.json is checked against the runs' own files.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include <evoteam/campaign/campaign.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/store/store.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using namespace evoteam::testing;

constexpr std::chrono::seconds k_campaign_command{60};
constexpr long long k_campaign_evaluations = 4;

// Whatever a failed assertion leaves alive (the campaign's daemon, its runs) is killed with its process group.
struct CampaignReaper {
  std::filesystem::path campaign_dir;
  ~CampaignReaper() {
    if (campaign_dir.empty()) return;
    auto reap = [](std::optional<int> pid) {
      if (!pid || *pid <= 0) return;
      ::kill(-*pid, SIGKILL);
      ::kill(*pid, SIGKILL);
    };
    reap(lock_holder(campaign_dir, k_campaign_lock_name));
    std::error_code error;
    for (std::filesystem::directory_iterator it(campaign_dir / "runs", error), end; !error && it != end;
         it.increment(error))
      reap(lock_holder(it->path()));
  }
};

std::vector<std::string> quick_settings(const TempDir& dir) {
  // Short timing: the campaign's machinery is under test, not the measurements.
  return {"--set", "eval.cache_dir=" + (dir / "cache").string(),
          "--set", "eval.timing.min_time_s=0.02",
          "--set", "eval.timing.warmup_s=0.005",
          "--set", "eval.timing.min_samples=3",
          "--set", "team.evaluations_per_cycle=1"};
}

nlohmann::json campaign_json(const std::filesystem::path& dir) { return read_json_file(dir / k_campaign_json_name); }

// The first task's run that is alive, with its daemon's pid; polls until there is one or the deadline passes.
std::optional<std::pair<std::filesystem::path, int>> live_run(const std::filesystem::path& campaign_dir,
                                                              std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    const nlohmann::json campaign = campaign_json(campaign_dir);
    for (const nlohmann::json& task : campaign["tasks"])
      if (task["state"] == "running" && task["run_dir"].is_string()) {
        const std::filesystem::path run = campaign_dir / task["run_dir"].get<std::string>();
        if (const std::optional<int> pid = lock_holder(run); pid && *pid > 0) return std::make_pair(run, *pid);
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

// What every run would refuse with exit 3 is refused before the campaign exists, as optimize refuses it before its
// run: an unknown team, an agent program that is not installed, and --devices "" (as --set cluster.devices=).
TEST(CampaignE2E, WhatEveryRunWouldRefuseIsRefusedBeforeTheCampaignExists) {
  TempDir dir;
  const std::string task =
      (std::filesystem::path(EVOTEAM_SOURCE_DIR) / "tests/data/campaign_suite/host_matmul_small").string();
  const std::vector<std::vector<std::string>> refused = {
      {"--team", "bogus"}, {"--agent", "/nonexistent/agent-cli {prompt}"}, {"--devices", ""}};
  for (const std::vector<std::string>& flags : refused) {
    std::vector<std::string> args = {
        "campaign", task, "--provider", "builtin", "--runs-dir", (dir / "runs").string(), "--max-cycles", "1"};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProcessResult result = run_evoteam(args, k_campaign_command);
    EXPECT_EQ(result.exit_code, 3) << flags[0] << ": " << describe(result);
    EXPECT_FALSE(std::filesystem::exists(dir / "runs" / "campaigns")) << flags[0] << " made a campaign";
  }
  const ProcessResult optimize =
      run_evoteam({"optimize", task, "--runs-dir", (dir / "runs").string(), "--max-cycles", "1", "--devices", ""},
                  k_campaign_command);
  EXPECT_EQ(optimize.exit_code, 3) << describe(optimize);
  EXPECT_FALSE(only_run(dir / "runs")) << "--devices \"\" started a run";
}

TEST(CampaignE2E, AKilledCampaignResumesAndItsRecordMatchesTheRuns) {
  TempDir dir;
  // The small matmul twice the weight of the others: 2, 1 and 1 of the 4 evaluations, less what a run leaves unspent.
  const std::filesystem::path source = EVOTEAM_SOURCE_DIR;
  std::ofstream(dir / "suite.txt") << "# three host tasks\n"
                                   << (source / "tests/data/campaign_suite/host_matmul_small").string() << " 2\n"
                                   << (source / "kernels/host_gemm_packed").string() << "\n"
                                   << (source / "kernels/host_conv2d").string() << "  # weight 1\n";
  std::vector<std::string> args = quick_settings(dir);
  args.insert(args.end(), {"campaign", (dir / "suite.txt").string(), "--provider", "builtin", "--runs-dir",
                           (dir / "runs").string(), "--budget-evaluations", std::to_string(k_campaign_evaluations),
                           "--max-cycles", "2", "--detach", "--json"});
  const ProcessResult started = run_evoteam(args, k_campaign_command);
  ASSERT_TRUE(started.ok()) << describe(started);
  const nlohmann::json printed = parse_stdout(started);
  ASSERT_TRUE(printed.contains("campaign_dir")) << printed.dump();
  const std::filesystem::path campaign_dir = printed["campaign_dir"].get<std::string>();
  CampaignReaper reaper{campaign_dir};
  EXPECT_EQ(campaign_dir.parent_path(), dir / "runs" / "campaigns");

  // Mid-task: the campaign's daemon and the run it was watching die at once, without a word.
  const std::optional<std::pair<std::filesystem::path, int>> live = live_run(campaign_dir, std::chrono::seconds(60));
  ASSERT_TRUE(live) << campaign_json(campaign_dir).dump(2);
  const auto& [killed_run, run_pid] = *live;
  const std::optional<int> campaign_pid = lock_holder(campaign_dir, k_campaign_lock_name);
  ASSERT_TRUE(campaign_pid && *campaign_pid > 0);
  ::kill(*campaign_pid, SIGKILL);
  ::kill(-run_pid, SIGKILL);
  ::kill(run_pid, SIGKILL);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((lock_holder(campaign_dir, k_campaign_lock_name) || lock_holder(killed_run)) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const ProcessResult dead = run_evoteam({"wait", campaign_dir.string()}, k_campaign_command);
  EXPECT_EQ(dead.exit_code, 1) << describe(dead);  // died without recording its end
  EXPECT_EQ(campaign_json(campaign_dir)["status"], "running");

  const ProcessResult resumed = run_evoteam({"resume", campaign_dir.string(), "--detach"}, k_campaign_command);
  ASSERT_TRUE(resumed.ok()) << describe(resumed);
  const ProcessResult waited =
      run_evoteam({"wait", campaign_dir.string(), "--timeout", "150"}, std::chrono::seconds(180));
  // Every run was ended by its share of the evaluation budget (or by its cycles): finished, exit 5 or 0.
  EXPECT_TRUE(waited.exit_code == 5 || waited.exit_code == 0) << describe(waited);

  const nlohmann::json campaign = campaign_json(campaign_dir);
  EXPECT_EQ(campaign["status"], "finished") << campaign.dump(2);
  EXPECT_EQ(campaign["exit_code"], waited.exit_code);
  ASSERT_EQ(campaign["tasks"].size(), 3u);
  long long spent = 0;
  for (const nlohmann::json& task : campaign["tasks"]) {
    SCOPED_TRACE(task.dump());
    EXPECT_EQ(task["state"], "finished");
    ASSERT_TRUE(task["run_dir"].is_string());
    const std::filesystem::path run_dir = campaign_dir / task["run_dir"].get<std::string>();
    const nlohmann::json run_json = read_json_file(run_dir / "run.json");
    EXPECT_EQ(run_json["status"], "finished");
    EXPECT_EQ(run_json["task"], task["name"]);
    EXPECT_EQ(task["exit_code"], run_json["exit_code"]);
    // What the campaign says a run spent is what the run itself recorded: its evaluations and trials, as the run
    // counts them against its budget.
    const nlohmann::json& summary = run_json["summary"];
    const int evaluations = summary["evaluations"].get<int>() + summary.value("trials", 0);
    EXPECT_EQ(task["spent"]["evaluations"], evaluations);
    EXPECT_LE(evaluations, task["budget"]["evaluations"].get<long long>());
    EXPECT_EQ(run_json["budgets"]["evaluations"], task["budget"]["evaluations"]);
    spent += evaluations;
  }
  EXPECT_LE(spent, k_campaign_evaluations);
  EXPECT_EQ(campaign["tasks"][0]["budget"]["evaluations"], 2);  // weight 2 of 4

  // The killed run was resumed rather than started again: its journal says so.
  bool resumed_record = false;
  for (const nlohmann::json& record : journal_records(killed_run))
    resumed_record |= record.value("type", "") == "resume";
  EXPECT_TRUE(resumed_record) << killed_run.string();

  // `runs` shows the campaign as one line with its three runs under it; `status` reads it.
  const ProcessResult listed = run_evoteam({"runs", "--runs-dir", (dir / "runs").string()}, k_campaign_command);
  ASSERT_TRUE(listed.ok()) << describe(listed);
  EXPECT_NE(listed.out.text.find(campaign["id"].get<std::string>()), std::string::npos) << listed.out.text;
  for (const nlohmann::json& task : campaign["tasks"])
    EXPECT_NE(
        listed.out.text.find("  " + std::filesystem::path(task["run_dir"].get<std::string>()).filename().string()),
        std::string::npos)
        << listed.out.text;
  const ProcessResult status = run_evoteam({"status", campaign_dir.string(), "--json"}, k_campaign_command);
  ASSERT_TRUE(status.ok()) << describe(status);
  EXPECT_EQ(parse_stdout(status)["daemon_alive"], false);
}

}  // namespace
}  // namespace evoteam
