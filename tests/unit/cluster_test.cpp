// The executor table and its factory, and the Slurm executor's parts that need no cluster: the request queue's
// moves, squeue's lines, and the results that cross from a worker to the daemon. tests/e2e/slurm_test.cpp runs the
// whole executor on a real Slurm.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/config_rules.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include "cluster/device_pool.hpp"
#include "cluster/remote_result.hpp"
#include "cluster/request_queue.hpp"
#include "cluster/slurm.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using cluster::RequestQueue;

// A candidate's sources: one kernel file.
std::filesystem::path sources_in(const testing::TempDir& dir, const std::string& text = "int k;\n") {
  const std::filesystem::path sources = dir / "sources";
  std::filesystem::create_directories(sources);
  write_file_atomic(sources / "kernel.cpp", text);
  return sources;
}

nlohmann::json give_up(const nlohmann::json& request) { return {{"gave_up", request["id"]}}; }

TEST(ClusterQueue, ARequestGoesFromSubmitThroughOneWorkerToItsResult) {
  testing::TempDir dir;
  RequestQueue queue(dir / "cluster");
  const std::string id = queue.submit({{"kind", "evaluate"}, {"through", "timing"}}, sources_in(dir));

  std::optional<cluster::Claim> claim = queue.claim("101");
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->id, id);
  EXPECT_EQ(claim->request["attempt"], 1);
  EXPECT_EQ(read_file(claim->dir / "src" / "kernel.cpp"), "int k;\n");  // a copy travels with the request
  EXPECT_FALSE(queue.claim("102")) << "a claimed request is no longer pending";
  EXPECT_FALSE(queue.take_result(id)) << "no result before the worker completes it";
  EXPECT_EQ(queue.claim_holders(), std::vector<std::string>{"101"});

  queue.complete(*claim, {{"verdict", "PASS"}});
  std::optional<nlohmann::json> result = queue.take_result(id);
  ASSERT_TRUE(result);
  EXPECT_EQ((*result)["verdict"], "PASS");
  EXPECT_FALSE(queue.take_result(id)) << "a result is taken once";
  EXPECT_TRUE(queue.claim_holders().empty());
}

TEST(ClusterQueue, WorkersRacingForRequestsEachClaimEveryRequestExactlyOnce) {
  testing::TempDir dir;
  RequestQueue queue(dir / "cluster");
  const std::filesystem::path sources = sources_in(dir);
  std::set<std::string> submitted;
  for (int i = 0; i < 40; ++i) submitted.insert(queue.submit({{"kind", "evaluate"}}, sources));

  std::vector<std::vector<std::string>> claimed(4);
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < claimed.size(); ++w)
    workers.emplace_back([&, w] {
      while (std::optional<cluster::Claim> claim = queue.claim("w" + std::to_string(w)))
        claimed[w].push_back(claim->id);
    });
  for (std::thread& worker : workers) worker.join();

  std::multiset<std::string> all;
  for (const auto& ids : claimed) all.insert(ids.begin(), ids.end());
  EXPECT_EQ(all.size(), submitted.size());
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()), submitted) << "each request claimed once, none lost";
}

TEST(ClusterQueue, WorkersServeTheOldestRequestFirst) {
  testing::TempDir dir;
  RequestQueue queue(dir / "cluster");
  const std::string first = queue.submit({}, sources_in(dir));
  const std::string second = queue.submit({}, sources_in(dir));
  EXPECT_EQ(queue.claim("1")->id, first);
  EXPECT_EQ(queue.claim("1")->id, second);
}

TEST(ClusterQueue, ALostWorkersClaimsGoBackUntilTheirAttemptsAreSpent) {
  testing::TempDir dir;
  RequestQueue queue(dir / "cluster");
  const std::string id = queue.submit({{"kind", "evaluate"}}, sources_in(dir));

  ASSERT_TRUE(queue.claim("lost-1"));
  EXPECT_EQ(queue.return_claims("lost-1", 2, give_up), std::vector<std::string>{id});
  std::optional<cluster::Claim> again = queue.claim("lost-2");
  ASSERT_TRUE(again) << "the request is pending again for another worker";
  EXPECT_EQ(again->request["attempt"], 2);
  EXPECT_TRUE(std::filesystem::exists(again->dir / "src" / "kernel.cpp"));

  // Its second loss spends the last attempt: it is finished with the give-up answer, not put back.
  EXPECT_TRUE(queue.return_claims("lost-2", 2, give_up).empty());
  EXPECT_FALSE(queue.claim("3"));
  std::optional<nlohmann::json> result = queue.take_result(id);
  ASSERT_TRUE(result);
  EXPECT_EQ((*result)["gave_up"], id);
}

TEST(ClusterQueue, AWorkerGivenUpForLostFinishingLateChangesNothing) {
  testing::TempDir dir;
  RequestQueue queue(dir / "cluster");
  const std::string id = queue.submit({}, sources_in(dir));
  std::optional<cluster::Claim> slow = queue.claim("slow");
  ASSERT_TRUE(slow);
  queue.return_claims("slow", 3, give_up);
  std::optional<cluster::Claim> fresh = queue.claim("fresh");
  ASSERT_TRUE(fresh);

  queue.complete(*slow, {{"from", "slow"}});  // its claim is gone: nothing is written
  EXPECT_FALSE(queue.take_result(id));
  queue.complete(*fresh, {{"from", "fresh"}});
  EXPECT_EQ((*queue.take_result(id))["from"], "fresh");
}

TEST(ClusterQueue, ResetLeavesNoRequestAndClearsTheStopMark) {
  testing::TempDir dir;
  RequestQueue queue(dir / "cluster");
  queue.submit({}, sources_in(dir));
  queue.request_stop();
  EXPECT_TRUE(queue.stop_requested());
  queue.reset();
  EXPECT_FALSE(queue.stop_requested());
  EXPECT_FALSE(queue.claim("1"));
}

TEST(ClusterSlurm, SqueueLinesSayWhetherAJobStillServes) {
  const std::optional<cluster::JobState> running = cluster::parse_job_state("RUNNING|None|vm\n");
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, "RUNNING");
  EXPECT_EQ(running->node, "vm");
  EXPECT_TRUE(running->alive());
  EXPECT_FALSE(running->waiting());

  const std::optional<cluster::JobState> pending = cluster::parse_job_state("PENDING|PartitionDown|");
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->reason, "PartitionDown");
  EXPECT_TRUE(pending->waiting());

  for (const char* ended : {"CANCELLED|None|vm", "PREEMPTED|None|vm", "TIMEOUT|None|vm", "NODE_FAIL|None|vm",
                            "COMPLETED|None|vm", "FAILED|NonZeroExitCode|vm"})
    EXPECT_FALSE(cluster::parse_job_state(ended)->alive()) << ended;
  EXPECT_FALSE(cluster::parse_job_state("  \n"));
}

TEST(ClusterResult, AnEvaluationCrossesAsJsonUnchanged) {
  CandidateEvaluator::Result result;
  result.verdict = Verdict::pass;
  result.speedup = 1.75;
  result.failure_signature = "";
  result.summary = "PASS 1.75x";
  result.eval_json = {{"device", "host"}};
  result.build_log = "ok";
  result.device_s = 2.5;
  result.adopted_constraints = std::vector<std::string>{"no_local_memory"};
  const CandidateEvaluator::Result back = cluster::result_from_json(cluster::result_to_json(result));
  EXPECT_EQ(back.verdict, Verdict::pass);
  EXPECT_EQ(back.speedup, 1.75);
  EXPECT_FALSE(back.roofline);
  EXPECT_EQ(back.summary, "PASS 1.75x");
  EXPECT_EQ(back.eval_json, result.eval_json);
  EXPECT_EQ(back.device_s, 2.5);
  EXPECT_EQ(back.adopted_constraints, result.adopted_constraints);

  nlohmann::json damaged = cluster::result_to_json(result);
  damaged["verdict"] = "MAYBE";
  EXPECT_THROW(cluster::result_from_json(damaged), InvalidInput);
  damaged = cluster::result_to_json(result);
  damaged["device_s"] = "two";
  EXPECT_THROW(cluster::result_from_json(damaged), InvalidInput);
  EXPECT_EQ(cluster::result_from_json(cluster::result_to_json(cluster::infra_failure("node died"))).verdict,
            Verdict::infra_error);
}

Task task_for(Target target, const std::string& ranks_axis = "") {
  Task task;
  task.target = target;
  task.ranks_axis = ranks_axis;
  return task;
}

const std::vector<cluster::GpuInfo> k_two_h100 = {{"0", "GPU-aaa", "NVIDIA H100 80GB HBM3"},
                                                  {"1", "GPU-bbb", "NVIDIA H100 80GB HBM3"}};

TEST(ClusterDevices, AllMeansEveryVisibleGpuAndAListNamesSome) {
  const Task cuda = task_for(Target::cuda);
  EXPECT_EQ(cluster::resolve_devices("all", cuda, k_two_h100, std::nullopt), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(cluster::resolve_devices("1", cuda, k_two_h100, std::nullopt), std::vector<std::string>{"1"});
  EXPECT_THROW(cluster::resolve_devices("0,2", cuda, k_two_h100, std::nullopt), InvalidInput);
  EXPECT_THROW(cluster::resolve_devices(",", cuda, k_two_h100, std::nullopt), InvalidInput);
  // No GPU: one evaluator on the default device, which then reports that it has none.
  EXPECT_EQ(cluster::resolve_devices("all", cuda, {}, std::nullopt), std::vector<std::string>{""});
}

TEST(ClusterDevices, TheGpusSlurmHandsAJobAreTheOnesUsed) {
  // Slurm sets CUDA_VISIBLE_DEVICES to the job's GPUs; each evaluator's harnesses get one of its entries.
  const std::vector<cluster::GpuInfo> node = {
      {"0", "GPU-a", "H100"}, {"1", "GPU-b", "H100"}, {"2", "GPU-c", "H100"}, {"3", "GPU-d", "H100"}};
  EXPECT_EQ(cluster::resolve_devices("all", task_for(Target::cuda), node, std::string("2,3")),
            (std::vector<std::string>{"2", "3"}));
  EXPECT_THROW(cluster::resolve_devices("0", task_for(Target::cuda), node, std::string("2,3")), InvalidInput);
}

TEST(ClusterDevices, GpusOfDifferentModelsAreNeverPooled) {
  const std::vector<cluster::GpuInfo> mixed = {{"0", "GPU-a", "NVIDIA H100 80GB HBM3"}, {"1", "GPU-b", "NVIDIA B200"}};
  try {
    cluster::resolve_devices("all", task_for(Target::cuda), mixed, std::nullopt);
    FAIL() << "a pool of two models was accepted";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("different models"), std::string::npos) << error.what();
  }
  EXPECT_EQ(cluster::resolve_devices("1", task_for(Target::cuda), mixed, std::nullopt), std::vector<std::string>{"1"});
}

TEST(ClusterDevices, TheHostIsOneDeviceUnlessAListSimulatesMore) {
  EXPECT_EQ(cluster::resolve_devices("all", task_for(Target::host), {}, std::nullopt), std::vector<std::string>{""});
  EXPECT_EQ(cluster::resolve_devices("0,1,2", task_for(Target::host), {}, std::nullopt),
            (std::vector<std::string>{"0", "1", "2"}));
  // A multi-GPU task's group uses every GPU itself.
  EXPECT_EQ(cluster::resolve_devices("all", task_for(Target::cuda, "ranks"), k_two_h100, std::nullopt),
            std::vector<std::string>{""});
}

TEST(ClusterExecutors, EachExecutorHasOneNameAndTheConfigurationAcceptsExactlyThose) {
  std::set<std::string> names;
  for (const ExecutorKind& kind : executors()) {
    EXPECT_TRUE(names.insert(std::string(kind.name)).second) << kind.name << " is named twice";
    EXPECT_EQ(executor_from_string(std::string(kind.name)), kind.executor);
    EXPECT_EQ(to_string(kind.executor), kind.name);
  }
  EXPECT_THROW(executor_from_string("ssh"), InvalidInput);
  const ConfigRule* rule = find_config_rule("cluster.executor");
  ASSERT_NE(rule, nullptr);
  EXPECT_EQ(rule->choices, executor_names());
  EXPECT_TRUE(executor_kind(Executor::local).evaluates_here);
  EXPECT_FALSE(executor_kind(Executor::slurm).evaluates_here);
}

TEST(ClusterExecutors, TheLocalExecutorIsTheTaskEvaluatorOrAPoolOfOnePerListedDevice) {
  testing::TempDir dir;
  const std::filesystem::path run_dir = dir / "run";
  std::filesystem::create_directories(run_dir);
  std::filesystem::copy(std::filesystem::path(EVOTEAM_SOURCE_DIR) / "kernels" / "host_matmul", run_dir / "task",
                        std::filesystem::copy_options::recursive);
  Config config;
  config.overlay_assignment("eval.cache_dir=" + (dir / "cache").string(), "--set");
  const std::unique_ptr<CandidateEvaluator> plain =
      make_executor(executor_settings(config), {run_dir, system_runner(), WorkloadSelection::all, nullptr});
  ASSERT_NE(plain->task(), nullptr);
  EXPECT_EQ(plain->task()->name, "host_matmul");
  EXPECT_EQ(plain->parallel_width(), 1);

  config.overlay_assignment("cluster.devices=0,1", "--set");
  const std::unique_ptr<CandidateEvaluator> pool =
      make_executor(executor_settings(config), {run_dir, system_runner(), WorkloadSelection::all, nullptr});
  EXPECT_EQ(pool->parallel_width(), 2);
}

}  // namespace
}  // namespace evoteam
