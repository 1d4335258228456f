// `optimize --executor slurm` end to end on a real single-node Slurm (tests/slurm/cluster.sh, started by CTest's
// "slurm" fixture; SLURM_CONF names it). Without a cluster every test here skips, saying so.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/store/store.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using namespace evoteam::testing;

constexpr std::chrono::seconds k_run_deadline{300};

ProcessResult slurm_command(std::vector<std::string> argv) {
  Command command;
  command.argv = std::move(argv);
  command.timeout = std::chrono::seconds(30);
  return system_runner().run(command);
}

bool cluster_answers() { return std::getenv("SLURM_CONF") != nullptr && slurm_command({"sinfo", "-h"}).ok(); }

#define REQUIRE_SLURM()                                                                                    \
  if (!cluster_answers())                                                                                  \
  GTEST_SKIP() << "no Slurm cluster answers (SLURM_CONF unset or sinfo fails): CTest starts one with the " \
                  "slurm fixture, tests/slurm/cluster.sh start"

// `optimize` of host_matmul through Slurm for one short cycle, plus `extra` arguments.
// clang-format off: flag and value pairs on one line
std::vector<std::string> slurm_optimize(const TempDir& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--set",        "eval.cache_dir=" + (dir / "cache").string(),
                                   "--set",        "cluster.slurm.poll_s=0.2",
                                   "--set",        "team.evaluations_per_cycle=4",
                                   "optimize",     k_task.string(),
                                   "--provider",   "builtin",
                                   "--executor",   "slurm",
                                   "--runs-dir",   (dir / "runs").string(),
                                   "--max-cycles", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}
// clang-format on

nlohmann::json jobs_of(const std::filesystem::path& run_dir) {
  return read_json_file(run_dir / "cluster" / "jobs.json");
}

// Job ids Slurm still runs or queues under this run's job name, once the jobs cancelled at the run's end had a
// few seconds to leave COMPLETING.
std::string live_jobs_of(const std::filesystem::path& run_dir) {
  std::string listed;
  for (int i = 0; i < 100; ++i) {
    listed =
        trim(slurm_command({"squeue", "-h", "-n", "evoteam-" + run_dir.filename().string(), "-o", "%i %T"}).out.text);
    if (listed.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return listed;
}

// The worker (its Slurm job id) that first holds a request of the run, waited for up to two minutes; "" if none.
std::string wait_for_a_claim(const std::filesystem::path& run_dir) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ignored;
    for (const auto& worker : std::filesystem::directory_iterator(run_dir / "cluster" / "claimed", ignored))
      if (!std::filesystem::is_empty(worker.path(), ignored)) return worker.path().filename();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

// A detached optimize through Slurm, once one of its workers holds a request: the run directory and that worker's
// job id ("" when none claimed one in time, or the run did not start).
std::pair<std::filesystem::path, std::string> start_until_a_worker_claims(const TempDir& dir) {
  ProcessResult started = run_evoteam(slurm_optimize(dir, {"--detach", "--json"}), std::chrono::seconds(60));
  EXPECT_TRUE(started.ok()) << describe(started);
  const nlohmann::json printed = parse_stdout(started);
  if (!printed.is_object() || !printed.contains("run_dir")) return {};
  const std::filesystem::path run_dir = printed["run_dir"].get<std::string>();
  return {run_dir, wait_for_a_claim(run_dir)};
}

TEST(SlurmExecutor, AnOptimizeThroughWorkerJobsFinishesWithWorkMeasuredOnTheNodes) {
  REQUIRE_SLURM();
  TempDir dir;
  ProcessResult result = run_evoteam(slurm_optimize(dir, {"--json"}), k_run_deadline);
  ASSERT_TRUE(result.ok()) << describe(result);
  const nlohmann::json summary = parse_stdout(result);
  EXPECT_EQ(summary["status"], "finished") << summary.dump();
  EXPECT_GE(summary["evaluations"].get<int>(), 2) << summary.dump();
  ASSERT_TRUE(summary["best_speedup"].is_number()) << summary.dump();
  const std::filesystem::path run_dir = summary["run_dir"].get<std::string>();

  // Every evaluation was measured by a worker job, and eval.json names it.
  const std::vector<nlohmann::json> records = evaluations(run_dir);
  ASSERT_FALSE(records.empty());
  const nlohmann::json jobs = jobs_of(run_dir);
  ASSERT_FALSE(jobs["jobs"].empty()) << jobs.dump();
  const std::string job = jobs["jobs"][0]["id"];
  const nlohmann::json first = read_json_file(run_dir / "candidates" / "c0001" / "eval.json");
  EXPECT_EQ(first["worker"]["name"], job) << first["worker"].dump();
  EXPECT_EQ(first["verdict"], "PASS");
  // The journal says which device, on which node and worker, measured each evaluation.
  EXPECT_EQ(records[0].value("device", ""), "host@" + first["worker"]["host"].get<std::string>() + "/" + job);
  EXPECT_TRUE(std::filesystem::is_regular_file(run_dir / "cluster" / "workers" / (job + ".log")));
  // The run's end released its allocation, and status says so.
  EXPECT_EQ(live_jobs_of(run_dir), "") << "jobs left behind";
  ProcessResult status = run_evoteam({"status", run_dir.string(), "--json"}, std::chrono::seconds(30));
  ASSERT_TRUE(status.ok()) << describe(status);
  const nlohmann::json view = parse_stdout(status);
  ASSERT_FALSE(view["slurm_jobs"].empty()) << view.dump();
  EXPECT_EQ(view["slurm_jobs"][0]["id"], job);
  EXPECT_EQ(view["slurm_jobs"][0]["state"], "CANCELLED");
}

TEST(SlurmExecutor, SrunModeRunsEachEvaluationAsItsOwnStep) {
  REQUIRE_SLURM();
  TempDir dir;
  ProcessResult result =
      run_evoteam(slurm_optimize(dir, {"--set", "cluster.slurm.mode=srun", "--json"}), k_run_deadline);
  ASSERT_TRUE(result.ok()) << describe(result);
  const nlohmann::json summary = parse_stdout(result);
  EXPECT_EQ(summary["status"], "finished") << summary.dump();
  const std::filesystem::path run_dir = summary["run_dir"].get<std::string>();
  const nlohmann::json first = read_json_file(run_dir / "candidates" / "c0001" / "eval.json");
  EXPECT_EQ(first["verdict"], "PASS");
  EXPECT_TRUE(first["worker"]["name"].get<std::string>().rfind("srun-", 0) == 0) << first["worker"].dump();
}

TEST(SlurmExecutor, AWorkerCancelledMidEvaluationIsReplacedAndItsEvaluationRunsAgain) {
  REQUIRE_SLURM();
  TempDir dir;
  // Once a worker holds a request, its job is cancelled under it.
  const auto [run_dir, victim] = start_until_a_worker_claims(dir);
  ASSERT_FALSE(victim.empty()) << "no worker ever claimed a request";
  ASSERT_TRUE(slurm_command({"scancel", victim}).ok());

  ProcessResult waited = run_evoteam({"wait", run_dir.string(), "--timeout", "240"}, k_run_deadline);
  EXPECT_EQ(waited.exit_code, 0) << describe(waited);
  const nlohmann::json jobs = jobs_of(run_dir);
  bool cancelled_recorded = false;
  for (const nlohmann::json& job : jobs["ended"])
    if (job["id"] == victim) cancelled_recorded = job["state"] != "RUNNING";
  EXPECT_TRUE(cancelled_recorded) << jobs.dump(2);
  // The cancelled worker's evaluation was served again by another job: no evaluation is an INFRA_ERROR.
  for (const nlohmann::json& record : evaluations(run_dir))
    EXPECT_NE(record.value("verdict", ""), "INFRA_ERROR") << record.dump();
  const std::string log = read_file(run_dir / "evoteam.log");
  EXPECT_NE(log.find("Slurm worker job " + victim + " ended"), std::string::npos) << log.substr(0, 3000);
  EXPECT_EQ(live_jobs_of(run_dir), "");
}

TEST(SlurmExecutor, AJobThatNeverStartsEndsTheRunNamingSlurmsReason) {
  REQUIRE_SLURM();
  TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  ProcessResult result = run_evoteam(
      slurm_optimize(dir, {"--set", "cluster.slurm.partition=down", "--set", "cluster.slurm.start_timeout_s=3"}),
      std::chrono::seconds(120));
  EXPECT_FALSE(result.ok()) << describe(result);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(60)) << "it must not hang";
  EXPECT_NE(result.err.text.find("has not started after 3 s"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.text.find("PartitionDown"), std::string::npos) << describe(result);
  const std::optional<std::filesystem::path> run_dir = only_run(dir / "runs");
  ASSERT_TRUE(run_dir);
  EXPECT_EQ(read_run_json(*run_dir)["status"], "failed");
  EXPECT_EQ(live_jobs_of(*run_dir), "") << "the pending job is cancelled";
}

TEST(SlurmExecutor, AnAllocationSlurmRefusesIsAClearErrorAtOnce) {
  REQUIRE_SLURM();
  TempDir dir;
  ProcessResult result =
      run_evoteam(slurm_optimize(dir, {"--set", "cluster.slurm.gres=gpu:64"}), std::chrono::seconds(60));
  EXPECT_FALSE(result.ok()) << describe(result);
  EXPECT_NE(result.err.text.find("Slurm refused the worker job"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.text.find("sbatch"), std::string::npos) << describe(result);
}

TEST(SlurmExecutor, StopReleasesTheRunsJobsAndResumeAsksForFreshOnes) {
  REQUIRE_SLURM();
  TempDir dir;
  const auto [run_dir, first_job] = start_until_a_worker_claims(dir);
  ASSERT_FALSE(first_job.empty()) << "no worker ever claimed a request";

  ASSERT_TRUE(run_evoteam({"stop", run_dir.string()}, std::chrono::seconds(30)).ok());
  ProcessResult waited = run_evoteam({"wait", run_dir.string(), "--timeout", "120"}, std::chrono::seconds(150));
  EXPECT_EQ(waited.exit_code, 130) << describe(waited);
  EXPECT_EQ(live_jobs_of(run_dir), "") << "a stopped run holds no allocation";

  ProcessResult resumed = run_evoteam({"resume", run_dir.string(), "--json"}, k_run_deadline);
  ASSERT_TRUE(resumed.ok()) << describe(resumed);
  EXPECT_EQ(parse_stdout(resumed)["status"], "finished");
  const nlohmann::json jobs = jobs_of(run_dir);
  ASSERT_FALSE(jobs["jobs"].empty()) << jobs.dump();
  EXPECT_NE(jobs["jobs"][0]["id"], first_job) << "the resumed run has jobs of its own";
  EXPECT_EQ(live_jobs_of(run_dir), "");
}

}  // namespace
}  // namespace evoteam
