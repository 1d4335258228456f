// `optimize --detach`, `status`, `stop`, `wait` and `resume` end to end through the real binary with the builtin
// offline team on kernels/host_matmul: the exit codes a script sees are the ones the README's table promises.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/store/store.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using namespace evoteam::testing;

constexpr std::chrono::seconds k_quick{60};

// A detached daemon outlives a failed assertion: kill whatever still holds the run when the test ends.
struct DaemonReaper {
  std::filesystem::path run_dir;
  ~DaemonReaper() {
    if (run_dir.empty()) return;
    const std::optional<int> pid = lock_holder(run_dir);
    if (!pid || *pid <= 0) return;
    ::kill(-*pid, SIGKILL);  // its process group: the compilers and harnesses it runs
    ::kill(*pid, SIGKILL);
  }
};

// `optimize --detach --json` with the given extra arguments; the run directory it printed.
std::filesystem::path start_detached(const testing::TempDir& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--set",      "eval.cache_dir=" + (dir / "cache").string(),
                                   "optimize",   k_task.string(),
                                   "--provider", "builtin",
                                   "--runs-dir", (dir / "runs").string(),
                                   "--detach",   "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto started = std::chrono::steady_clock::now();
  ProcessResult result = run_evoteam(args, k_quick);
  EXPECT_TRUE(result.ok()) << describe(result);
  // It returns as soon as the run exists, long before an uncached evaluation could finish.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(15)) << describe(result);
  nlohmann::json printed = parse_stdout(result);
  if (!printed.is_object() || !printed.contains("run_dir")) return {};
  EXPECT_GT(printed.value("pid", 0), 0) << printed.dump();
  return printed["run_dir"].get<std::string>();
}

nlohmann::json status_of(const std::filesystem::path& run_dir) {
  ProcessResult result = run_evoteam({"status", run_dir.string(), "--json"}, k_quick);
  EXPECT_TRUE(result.ok()) << describe(result);
  return parse_stdout(result);
}

// Polls `evoteam status` until `done` holds or the deadline passes; the last status seen.
template <typename Predicate>
nlohmann::json poll_status(const std::filesystem::path& run_dir, std::chrono::seconds limit, Predicate done) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  nlohmann::json status = status_of(run_dir);
  while (!done(status) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    status = status_of(run_dir);
  }
  return status;
}

TEST(DetachE2E, DetachedRunShowsInStatusAndWaitExitsWithTheBudgetCode) {
  testing::TempDir dir;
  // A cache of its own: every evaluation really runs, so the run is still going when --detach returns.
  const std::filesystem::path run_dir = start_detached(dir, {"--budget-evaluations", "4"});
  ASSERT_FALSE(run_dir.empty());
  DaemonReaper reaper{run_dir};
  ASSERT_TRUE(std::filesystem::exists(run_dir / "run.json"));

  nlohmann::json status = status_of(run_dir);
  EXPECT_EQ(status["id"], run_dir.filename().string()) << status.dump(2);
  EXPECT_EQ(status["task"], "host_matmul") << status.dump(2);
  EXPECT_EQ(status["status"], "running") << status.dump(2);
  EXPECT_TRUE(status["daemon"]["alive"].get<bool>()) << status.dump(2);
  bool has_evaluation_budget = false;
  for (const nlohmann::json& burn : status["budgets"])
    if (burn["name"] == "evaluations") has_evaluation_budget = burn["limit"] == 4.0;
  EXPECT_TRUE(has_evaluation_budget) << status.dump(2);

  ProcessResult text = run_evoteam({"status", run_dir.string()}, k_quick);
  ASSERT_TRUE(text.ok()) << describe(text);
  EXPECT_NE(text.out.text.find("evaluations: "), std::string::npos) << text.out.text;

  ProcessResult waited = run_evoteam({"wait", run_dir.string(), "--timeout", "240"}, std::chrono::seconds(300));
  EXPECT_EQ(waited.exit_code, 5) << describe(waited);
  const nlohmann::json run = read_json_file(run_dir / "run.json");
  EXPECT_EQ(run["status"], "finished") << run.dump(2);
  EXPECT_EQ(run["stop_reason"], "budget_evaluations") << run.dump(2);
  EXPECT_EQ(run["exit_code"], 5) << run.dump(2);

  status = status_of(run_dir);
  EXPECT_FALSE(status["daemon"]["alive"].get<bool>()) << status.dump(2);
  EXPECT_EQ(status["cycles_finished"], run["summary"]["cycles"]) << status.dump(2);
  EXPECT_TRUE(status["best_speedup"].is_number()) << status.dump(2);
  EXPECT_FALSE(status["team"].empty()) << status.dump(2);
  // The daemon's own output went to the run directory, not to the caller.
  EXPECT_TRUE(std::filesystem::exists(run_dir / "daemon.log"));
}

TEST(DetachE2E, InvalidTaskIsRefusedAtOnceWithItsExitCode) {
  testing::TempDir dir;
  ProcessResult result = run_evoteam({"optimize", (dir / "no-such-task").string(), "--provider", "builtin",
                                      "--runs-dir", (dir / "runs").string(), "--detach"},
                                     k_quick);
  EXPECT_EQ(result.exit_code, 3) << describe(result);
  EXPECT_NE(result.err.text.find("no-such-task"), std::string::npos) << describe(result);
  EXPECT_FALSE(only_run(dir / "runs")) << "a refused task left a run behind";
}

TEST(DetachE2E, StopWaitResumeLockAndKillGiveTheirExitCodes) {
  testing::TempDir dir;
  const std::filesystem::path run_dir = start_detached(dir, {"--max-cycles", "50", "--budget-evaluations", "200"});
  ASSERT_FALSE(run_dir.empty());
  DaemonReaper reaper{run_dir};

  // A wait that runs out of time says so, with its own code, and leaves the run alone.
  ProcessResult timed_out = run_evoteam({"wait", run_dir.string(), "--timeout", "0.5"}, k_quick);
  EXPECT_EQ(timed_out.exit_code, 124) << describe(timed_out);
  EXPECT_NE(timed_out.err.text.find("timed out"), std::string::npos) << describe(timed_out);

  ProcessResult stop = run_evoteam({"stop", run_dir.string()}, k_quick);
  ASSERT_TRUE(stop.ok()) << describe(stop);
  ProcessResult waited = run_evoteam({"wait", run_dir.string(), "--timeout", "240"}, std::chrono::seconds(300));
  EXPECT_EQ(waited.exit_code, 130) << describe(waited);
  EXPECT_EQ(read_json_file(run_dir / "run.json")["status"], "stopped");
  // The stopped daemon says how to continue (its output is daemon.log).
  EXPECT_NE(read_file(run_dir / "daemon.log").find("continue it with: evoteam resume " + run_dir.string()),
            std::string::npos)
      << read_file(run_dir / "daemon.log");
  const int cycles_before = status_of(run_dir)["cycles_finished"].get<int>();

  // `resume` continues it in the foreground; a second resume meanwhile is refused: the run is locked.
  std::future<ProcessResult> resumed = std::async(std::launch::async, [&] {
    return run_evoteam({"resume", run_dir.string(), "--json"}, std::chrono::seconds(300));
  });
  nlohmann::json status = poll_status(run_dir, std::chrono::seconds(60), [](const nlohmann::json& s) {
    return s["daemon"]["alive"].get<bool>() && s["daemon"]["pid"].get<int>() > 0 && s["status"] == "running";
  });
  ASSERT_TRUE(status["daemon"]["alive"].get<bool>()) << status.dump(2);
  ProcessResult second = run_evoteam({"resume", run_dir.string()}, k_quick);
  EXPECT_EQ(second.exit_code, 4) << describe(second);

  // The resumed run makes progress past where it was stopped.
  status = poll_status(run_dir, std::chrono::seconds(180),
                       [&](const nlohmann::json& s) { return s["cycles_finished"].get<int>() > cycles_before; });
  EXPECT_GT(status["cycles_finished"].get<int>(), cycles_before) << status.dump(2);

  // A daemon killed outright leaves no end recorded: wait says so and exits 1.
  const int pid = status["daemon"]["pid"].get<int>();
  ASSERT_GT(pid, 0) << status.dump(2);
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  resumed.get();
  ProcessResult after_kill = run_evoteam({"wait", run_dir.string(), "--timeout", "60"}, k_quick);
  EXPECT_EQ(after_kill.exit_code, 1) << describe(after_kill);
  EXPECT_NE(after_kill.err.text.find("died"), std::string::npos) << describe(after_kill);
}

}  // namespace
}  // namespace evoteam
