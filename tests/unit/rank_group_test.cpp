// Tasks with a ranks axis (one harness process per GPU): the ranks_axis field, the glue's signature, which
// workloads a machine can run, the communicator-id exchange between ranks, the launch of a group (a failing rank
// stops its peers), the merging of the ranks' records (times: the maximum; status: the worst; bits: every rank
// against rank 0), and the gemm_allreduce harness linking NCCL. The Gpu* tests evaluate gemm_allreduce for real
// and skip without two GPUs.
#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>

#include <chrono>
#include <thread>

#include "eval/battery.hpp"
#include "eval/cuda/cuda_backend.hpp"
#include "eval/cuda/cuda_tools.hpp"
#include "eval/glue.hpp"
#include "eval/group/rank_group.hpp"
#include "eval_test_support.hpp"
#include "kernels/common/cuda/rank_exchange.hpp"
#include "support/temp_dir.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;
using evoteam::testing::TempDir;

Task gemm_allreduce() { return load_task(install_root() / "kernels" / "gemm_allreduce"); }

// A copy of gemm_allreduce whose task.json is `edit`ed, loaded from `dir`.
Task edited_task(const fs::path& dir, const std::function<void(nlohmann::json&)>& edit) {
  const fs::path source = install_root() / "kernels" / "gemm_allreduce";
  for (const char* file : {"kernel.cu", "reference.cu"})
    fs::copy_file(source / file, dir / file, fs::copy_options::overwrite_existing);
  nlohmann::json task = read_json_file(source / "task.json");
  edit(task);
  write_json_atomic(dir / "task.json", task);
  return load_task(dir);
}

std::string load_error(const std::function<void(nlohmann::json&)>& edit) {
  TempDir dir;
  try {
    edited_task(dir.path(), edit);
  } catch (const InvalidInput& error) {
    return error.what();
  }
  return "";
}

Battery battery_of(const Task& task) {
  const EvalSettings settings = evoteam::testing::eval_test_settings();
  return design_battery(task, settings.correctness, settings.timing, 1234, 128.0 * (1 << 20));
}

HarnessRun finished_run(std::vector<nlohmann::json> records) {
  HarnessRun run;
  run.process.spawned = true;
  run.process.exit_code = 0;
  records.push_back({{"ev", "done"}});
  run.records = std::move(records);
  return run;
}

TEST(TaskLoaderRanksAxis, GemmAllreduceNamesWorldSizeAsItsRanksAxis) {
  const Task task = gemm_allreduce();
  EXPECT_EQ(task.ranks_axis, "world_size");
  EXPECT_EQ(task.min_devices, 2);
}

TEST(TaskLoaderRanksAxis, RejectsAMissingUnknownConstOrMisplacedRanksAxis) {
  EXPECT_NE(load_error([](nlohmann::json& task) { task.erase("ranks_axis"); }).find("ranks_axis"), std::string::npos);
  EXPECT_NE(load_error([](nlohmann::json& task) { task["ranks_axis"] = "ranks"; }).find("is not an axis"),
            std::string::npos);
  EXPECT_NE(load_error([](nlohmann::json& task) { task["ranks_axis"] = "N"; }).find("must be a var axis"),
            std::string::npos);
  EXPECT_NE(load_error([](nlohmann::json& task) { task.erase("min_devices"); }).find("min_devices > 1"),
            std::string::npos);
  const std::string small_group = load_error([](nlohmann::json& task) {
    task["min_devices"] = 4;
    task["constraints"] = nlohmann::json::array({"M >= 1", "K % world_size == 0"});
  });
  EXPECT_NE(small_group.find("m1_tp2"), std::string::npos) << small_group;
}

TEST(GlueRanks, ARankedTaskGetsTheCommunicatorAndItsRankBeforeTheStream) {
  const Task task = gemm_allreduce();
  const std::string glue = glue_source(task);
  EXPECT_NE(glue.find("#include <nccl.h>"), std::string::npos);
  EXPECT_NE(glue.find("std::int64_t, std::int64_t, ncclComm_t, std::int32_t, cudaStream_t);"), std::string::npos)
      << glue;
  EXPECT_NE(glue.find("axes[3], g_comm, g_rank, static_cast<cudaStream_t>(stream))"), std::string::npos) << glue;
  EXPECT_NE(glue.find("int evoteam_glue_ranks_axis(void) { return 3; }"), std::string::npos) << glue;
  EXPECT_NE(glue.find("ncclCommInitRank"), std::string::npos);
  EXPECT_NE(
      entry_declaration(task).find("std::int64_t world_size, ncclComm_t comm, std::int32_t rank, cudaStream_t stream)"),
      std::string::npos)
      << entry_declaration(task);
}

TEST(GlueRanks, AOneProcessCudaTaskKeepsItsSignatureAndRefusesCommunicators) {
  const Task task = load_task(install_root() / "kernels" / "rmsnorm_h4096");
  const std::string glue = glue_source(task);
  EXPECT_EQ(glue.find("nccl"), std::string::npos);
  EXPECT_NE(glue.find("int evoteam_glue_ranks_axis(void) { return -1; }"), std::string::npos);
  EXPECT_NE(glue.find("int evoteam_glue_comm_init(void** comm, int ranks, const void* id, int rank) {\n  (void)comm; "
                      "(void)ranks; (void)id; (void)rank;\n  return -1;"),
            std::string::npos);
  EXPECT_EQ(entry_declaration(task).find("comm"), std::string::npos);
}

TEST(RankGroupBattery, HiddenShapesKeepTheWorkloadsGroupSizesAndVaryMAlone) {
  const Task task = gemm_allreduce();
  const auto shapes = hidden_shapes(task, {1, 3, 17, 131}, 24);
  // world_size 2, 4, 8 x M 1, 3, 17, 131, less m1_tp2 and m1_tp8 (workloads already)
  EXPECT_EQ(shapes.size(), 3u * 4u - 2u);
  for (const auto& axes : shapes) {
    EXPECT_TRUE(axes.at("world_size") == 2 || axes.at("world_size") == 4 || axes.at("world_size") == 8);
    EXPECT_TRUE(axes.at("M") == 1 || axes.at("M") == 3 || axes.at("M") == 17 || axes.at("M") == 131);
    EXPECT_FALSE(axes.at("M") == 1 && axes.at("world_size") == 2) << "m1_tp2 is a workload, not a hidden shape";
  }
}

TEST(RankGroupBattery, WorkloadsNeedingMoreGpusThanTheMachineHasAreSkippedAndReported) {
  const Task task = gemm_allreduce();
  Battery battery = battery_of(task);
  const std::size_t before = battery.workloads.size();
  EXPECT_EQ(skip_unrunnable_workloads(battery, task, 4), 2 + 3);  // m1_tp8, m4096_tp8 and three hidden shapes
  EXPECT_EQ(battery.workloads.size(), before - 5);
  ASSERT_EQ(battery.skipped_workloads.size(), 2u);
  EXPECT_EQ(battery.skipped_workloads[0].value("workload", ""), "m1_tp8");
  EXPECT_NE(battery.skipped_workloads[0].value("reason", "").find("needs 8 GPUs; this machine has 4"),
            std::string::npos);
  EXPECT_EQ(battery.describe()["skipped_workloads"].size(), 2u);
  for (std::size_t i = 0; i < battery.trials.size(); ++i) {
    EXPECT_EQ(battery.trials[i].id, static_cast<int>(i));
    EXPECT_LE(group_size(task, battery.workloads[static_cast<std::size_t>(battery.trials[i].workload)].axes), 4);
  }
  for (const auto& [workload, sets] : battery.rotation) {
    EXPECT_LT(workload, static_cast<int>(battery.workloads.size()));
    for (int id : sets) EXPECT_EQ(battery.trial(id).workload, workload);
  }
  EXPECT_EQ(battery.rotation.size(), 5u);
  ASSERT_GE(battery.determinism_trial, 0);

  Battery none = battery_of(task);
  skip_unrunnable_workloads(none, task, 1);
  EXPECT_TRUE(none.rotation.empty());
  EXPECT_TRUE(none.trials.empty());
  EXPECT_EQ(none.skipped_workloads.size(), task.workloads.size());
}

TEST(RankGroupBattery, TrialsAreGroupedByGroupSize) {
  const Task task = gemm_allreduce();
  const Battery battery = battery_of(task);
  std::vector<int> ids;
  for (const Trial& trial : battery.trials) ids.push_back(trial.id);
  const auto groups = trials_by_group(battery, task, ids);
  ASSERT_EQ(groups.size(), 3u);
  for (const auto& [ranks, members] : groups)
    for (int id : members)
      EXPECT_EQ(group_size(task, battery.workloads[static_cast<std::size_t>(battery.trial(id).workload)].axes), ranks);
}

TEST(RankGroupExchange, AReaderGetsTheIdOnceItIsPublishedWhole) {
  TempDir dir;
  const std::string path = evoteam_harness::ranks::id_file((dir / "comm").string(), 0);
  unsigned char published[128];
  for (int i = 0; i < 128; ++i) published[i] = static_cast<unsigned char>(i * 7);
  std::thread rank0([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::string error;
    EXPECT_TRUE(evoteam_harness::ranks::publish_file(path, published, sizeof(published), &error)) << error;
  });
  unsigned char got[128] = {0};
  const auto status = evoteam_harness::ranks::await_file(path, got, sizeof(got), 10.0, (dir / "abort").string());
  rank0.join();
  EXPECT_EQ(status, evoteam_harness::ranks::AwaitStatus::ok);
  EXPECT_EQ(std::memcmp(got, published, sizeof(got)), 0);
  EXPECT_FALSE(fs::exists(path + ".tmp." + std::to_string(::getpid()))) << "the temporary is renamed, not left behind";
}

TEST(RankGroupExchange, AReaderGivesUpAtItsDeadlineAndOnTheAbortFile) {
  TempDir dir;
  unsigned char got[128];
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(evoteam_harness::ranks::await_file((dir / "never.0.id").string(), got, sizeof(got), 0.3,
                                               (dir / "abort").string()),
            evoteam_harness::ranks::AwaitStatus::timed_out);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(waited, 0.3);
  EXPECT_LT(waited, 3.0);
  // A short file (a writer that did not publish atomically) is never taken for an id.
  write_file_atomic(dir / "short.0.id", "abc");
  EXPECT_EQ(evoteam_harness::ranks::await_file((dir / "short.0.id").string(), got, sizeof(got), 0.2,
                                               (dir / "abort").string()),
            evoteam_harness::ranks::AwaitStatus::timed_out);
  std::thread evaluator([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    write_file_atomic(dir / "abort", "rank 1 failed\n");
  });
  EXPECT_EQ(evoteam_harness::ranks::await_file((dir / "never.0.id").string(), got, sizeof(got), 30.0,
                                               (dir / "abort").string()),
            evoteam_harness::ranks::AwaitStatus::aborted);
  evaluator.join();
}

// A stand-in harness: rank 1 faults at once, rank 0 waits for the abort file like a rank stuck in a collective.
const char* k_fake_rank = R"(#!/bin/sh
plan=$2
rank=$(grep -o '"rank": *[0-9]*' "$plan" | head -n1 | tr -dc 0-9)
abort=$(grep -o '"abort_file": *"[^"]*"' "$plan" | cut -d'"' -f4)
echo '{"ev":"start","mode":"correctness"}' >&3
if [ "$rank" = 1 ]; then
  echo '{"ev":"begin","trial":0,"workload":0}' >&3
  echo '{"ev":"fault","phase":"candidate","signal":"SIGSEGV","trial":0}' >&3
  exit 3
fi
while [ ! -e "$abort" ]; do sleep 0.05; done
echo '{"ev":"peer_failed","message":"another rank of the group failed"}' >&3
exit 3
)";

TEST(RankGroupLaunch, EachRankHasItsOwnPlanAndAFailingRankStopsItsPeers) {
  TempDir dir;
  const fs::path fake = dir / "fake_harness.sh";
  write_file_atomic(fake, k_fake_rank);
  fs::permissions(fake, fs::perms::owner_all);
  GroupLaunch launch;
  launch.name = "correctness-w2";
  launch.plan = {{"mode", "correctness"}, {"trials", nlohmann::json::array()}};
  launch.ranks = 2;
  launch.ranks_axis = 3;
  launch.spec.harness = fake;
  launch.spec.scratch = dir.path();
  launch.spec.timeout_s = 60;
  const nlohmann::json plan = rank_plan(launch, 1, dir.path());
  EXPECT_EQ(plan["ranks"].value("rank", -1), 1);
  EXPECT_EQ(plan["ranks"].value("device", -1), 1);
  EXPECT_EQ(plan["ranks"].value("axis", -1), 3);
  EXPECT_EQ(plan["ranks"].value("abort_file", ""), abort_file(dir.path(), launch.name).string());

  const auto start = std::chrono::steady_clock::now();
  const GroupRun group = run_group(system_runner(), launch);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20.0)
      << "rank 0 was not stopped";
  ASSERT_EQ(group.ranks.size(), 2u);
  EXPECT_EQ(group.first_failed, 1);
  EXPECT_NE(group.ranks[0].last("peer_failed"), nullptr);
  EXPECT_TRUE(fs::is_regular_file(dir / "plan-correctness-w2-r0.json"));
  EXPECT_TRUE(fs::is_regular_file(dir / "plan-correctness-w2-r1.json"));
  EXPECT_EQ(culprit_rank(group), 1);
  const Battery battery = battery_of(gemm_allreduce());
  const HarnessRun merged = merge_group(group);
  const std::optional<Judgement> judgement = judge_group_process(group, merged, battery, false);
  ASSERT_TRUE(judgement.has_value());
  EXPECT_EQ(judgement->verdict, Verdict::runtime_fault) << judgement->reason;
  EXPECT_EQ(judgement->evidence.value("rank", -1), 1);
  EXPECT_NE(judgement->reason.find("rank 1"), std::string::npos) << judgement->reason;
}

TEST(RankGroupMerge, TimesAreTheMaximumOverRanksAndTheWorstRanksStatusWins) {
  GroupRun group;
  group.ranks.push_back(
      finished_run({{{"ev", "trial"}, {"trial", 0}, {"status", "ok"}, {"wall_s", 0.25}, {"output_hash", "aa"}},
                    {{"ev", "trial"}, {"trial", 1}, {"status", "ok"}, {"wall_s", 0.1}, {"output_hash", "bb"}},
                    {{"ev", "timing"},
                     {"workload", 0},
                     {"candidate", {1.0, 4.0}},
                     {"baseline", {2.0, 2.0}},
                     {"side_work", false}}}));
  group.ranks.push_back(
      finished_run({{{"ev", "trial"}, {"trial", 0}, {"status", "ok"}, {"wall_s", 0.5}, {"output_hash", "aa"}},
                    {{"ev", "trial"}, {"trial", 1}, {"status", "numeric_mismatch"}, {"wall_s", 0.05}, {"tensor", "C"}},
                    {{"ev", "timing"},
                     {"workload", 0},
                     {"candidate", {3.0, 2.0}},
                     {"baseline", {1.0, 5.0}},
                     {"side_work", true},
                     {"side_work_evidence", "kernel x ran outside every measured window"}}}));
  const HarnessRun merged = merge_group(group);
  const std::vector<const nlohmann::json*> trials = merged.all("trial");
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_DOUBLE_EQ(trials[0]->value("wall_s", 0.0), 0.5);
  EXPECT_EQ((*trials[0])["output_hashes"], (nlohmann::json{{"0", "aa"}, {"1", "aa"}}));
  EXPECT_EQ(trials[1]->value("status", ""), "numeric_mismatch");
  EXPECT_EQ(trials[1]->value("rank", -1), 1);
  EXPECT_DOUBLE_EQ(trials[1]->value("wall_s", 0.0), 0.1);
  const nlohmann::json* timing = merged.last("timing");
  ASSERT_NE(timing, nullptr);
  EXPECT_EQ((*timing)["candidate"], (nlohmann::json{3.0, 4.0}));
  EXPECT_EQ((*timing)["baseline"], (nlohmann::json{2.0, 5.0}));
  EXPECT_TRUE(timing->value("side_work", false));
  EXPECT_EQ(timing->value("side_work_rank", -1), 1);
  EXPECT_TRUE(merged.finished());
  EXPECT_EQ(culprit_rank(group), -1);
}

TEST(RankGroupMerge, ADisagreeingRepeatOnAnyRankIsWhatClassificationReads) {
  GroupRun group;
  group.ranks.push_back(finished_run({{{"ev", "determinism"}, {"trial", 0}, {"identical", true}}}));
  group.ranks.push_back(
      finished_run({{{"ev", "determinism"}, {"trial", 0}, {"identical", false}, {"tensor", "C"}, {"first_bad", 7}}}));
  const HarnessRun merged = merge_group(group);
  ASSERT_NE(merged.last("determinism"), nullptr);
  EXPECT_FALSE(merged.last("determinism")->value("identical", true));
  EXPECT_EQ(merged.last("determinism")->value("rank", -1), 1);
}

TEST(RankGroupAgreement, RanksWithDifferentBitsAreNondeterministicAndNamed) {
  const Battery battery = battery_of(gemm_allreduce());
  HarnessRun merged = finished_run({{{"ev", "trial"},
                                     {"trial", 0},
                                     {"status", "ok"},
                                     {"output_hashes", {{"0", "aa"}, {"1", "aa"}, {"2", "ab"}, {"3", "ac"}}}}});
  const std::optional<Judgement> judgement = judge_rank_agreement(merged, battery);
  ASSERT_TRUE(judgement.has_value());
  EXPECT_EQ(judgement->verdict, Verdict::nondeterministic);
  EXPECT_EQ(judgement->evidence["disagreeing_ranks"], (nlohmann::json{2, 3}));
  EXPECT_NE(judgement->reason.find("ranks 2, 3"), std::string::npos) << judgement->reason;
  EXPECT_EQ(judgement->evidence.value("workload", ""), battery.workloads[0].name);

  HarnessRun agreeing =
      finished_run({{{"ev", "trial"}, {"trial", 0}, {"status", "ok"}, {"output_hashes", {{"0", "aa"}, {"1", "aa"}}}}});
  EXPECT_FALSE(judge_rank_agreement(agreeing, battery).has_value());
}

TEST(RankGroupMachine, TheGroupSizeComesFromTheRanksAxis) {
  const Task task = gemm_allreduce();
  EXPECT_TRUE(is_ranked(task));
  EXPECT_EQ(group_size(task, workload_axes(task, task.workloads[1])), 8);
  EXPECT_FALSE(is_ranked(load_task(install_root() / "kernels" / "rmsnorm_h4096")));
  EXPECT_GE(visible_gpu_count(), 0);
}

TEST(RankGroupHarness, TheGemmAllreduceHarnessLinksNcclAndPassesItsSelfTest) {
  if (!cuda::find_cuda_tool("nvcc")) GTEST_SKIP() << "nvcc is not installed (set EVOTEAM_NVCC)";
  CompileSlots slots{2};
  CudaBuilder builder{evoteam::testing::eval_test_settings(), system_runner(),
                      evoteam::testing::eval_test_cache() / "cuda", slots};
  const fs::path harness = builder.harness(gemm_allreduce());
  Command linked;
  linked.argv = {"ldd", harness.string()};
  const ProcessResult libraries = system_runner().run(linked);
  EXPECT_NE(libraries.out.text.find("libnccl"), std::string::npos) << libraries.out.text;
  Command self_test;
  self_test.argv = {harness.string(), "--result-fd", "3", "--self-test"};
  self_test.result_fd = 3;
  const ProcessResult result = system_runner().run(self_test);
  EXPECT_TRUE(result.ok()) << result.describe() << result.err.text << result.result.text;
  const nlohmann::json record = nlohmann::json::parse(result.result.text, nullptr, false);
  ASSERT_FALSE(record.is_discarded()) << result.result.text;
  EXPECT_EQ(record.value("failed", -1), 0) << result.result.text;
}

// --- on a machine with two or more GPUs --------------------------------------------------------------------

EvalResult evaluate_on_gpus(const Task& task, const fs::path& candidate_dir) {
  Evaluator evaluator(evoteam::testing::eval_test_settings(), system_runner(), evoteam::testing::eval_test_cache());
  EvalOptions options;
  options.result_cache = CachePolicy::bypass;
  options.stages = {Stage::static_checks, Stage::build, Stage::correctness, Stage::timing};
  Candidate candidate = Candidate::starting(task);
  if (!candidate_dir.empty()) candidate.source_dir = candidate_dir;
  return evaluator.evaluate(task, candidate, options);
}

#define REQUIRE_TWO_GPUS()                                                                                   \
  do {                                                                                                       \
    if (!cuda::find_cuda_tool("nvcc")) GTEST_SKIP() << "nvcc is not installed";                              \
    if (visible_gpu_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << visible_gpu_count(); \
  } while (0)

TEST(GpuRankGroup, TheStartingKernelPassesCorrectnessAndTimingOnEveryGroupThatFits) {
  REQUIRE_TWO_GPUS();
  const Task task = gemm_allreduce();
  const EvalResult result = evaluate_on_gpus(task, {});
  EXPECT_TRUE(result.verdict == Verdict::pass || result.verdict == Verdict::noisy)
      << to_string(result.verdict) << ": " << result.reason << "\n"
      << result.evidence.dump();
  std::size_t fitting = 0;
  for (const Workload& workload : task.workloads)
    fitting += workload.axes.at("world_size") <= visible_gpu_count() ? 1 : 0;
  EXPECT_EQ(result.workloads.size(), fitting);
  EXPECT_EQ(result.protocol.value("skipped_workloads", nlohmann::json::array()).size(),
            task.workloads.size() - fitting);
  for (const WorkloadResult& workload : result.workloads) EXPECT_GT(workload.candidate.median_s, 0) << workload.name;
}

TEST(GpuRankGroup, ACandidateWhoseRanksRoundDifferentlyIsNondeterministicNamingThem) {
  REQUIRE_TWO_GPUS();
  const Task task = gemm_allreduce();
  TempDir dir;
  std::string kernel = read_file(task.dir / "kernel.cu");
  // Ranks other than 0 round toward zero: within tolerance, but not the same bits as rank 0.
  const std::string rounding = "c[i] = __float2bfloat16_rn(sum[i]);";
  ASSERT_NE(kernel.find(rounding), std::string::npos);
  kernel.replace(kernel.find(rounding), rounding.size(),
                 "c[i] = rank == 0 ? __float2bfloat16_rn(sum[i]) : __float2bfloat16_rz(sum[i]);");
  const std::string signature =
      "round_to_bf16(const float* __restrict__ sum, __nv_bfloat16* __restrict__ c, std::int64_t count)";
  kernel.replace(
      kernel.find(signature), signature.size(),
      "round_to_bf16(const float* __restrict__ sum, __nv_bfloat16* __restrict__ c, std::int64_t count, int rank)");
  const std::string launch = "(workspace, C, count);";
  kernel.replace(kernel.find(launch), launch.size(), "(workspace, C, count, rank);");
  write_file_atomic(dir / "kernel.cu", kernel);
  const EvalResult result = evaluate_on_gpus(task, dir.path());
  EXPECT_EQ(result.verdict, Verdict::nondeterministic) << result.reason << "\n" << result.evidence.dump();
  EXPECT_EQ(result.evidence["disagreeing_ranks"][0], 1) << result.evidence.dump();
}

TEST(GpuRankGroup, ACandidateThatSkipsTheAllReduceIsWrong) {
  REQUIRE_TWO_GPUS();
  const Task task = gemm_allreduce();
  TempDir dir;
  std::string kernel = read_file(task.dir / "kernel.cu");
  const std::string reduce = "if (ncclAllReduce(";
  ASSERT_NE(kernel.find(reduce), std::string::npos);
  kernel.replace(kernel.find(reduce), reduce.size(), "if (false && ncclAllReduce(");
  write_file_atomic(dir / "kernel.cu", kernel);
  const EvalResult result = evaluate_on_gpus(task, dir.path());
  EXPECT_EQ(result.verdict, Verdict::numeric_mismatch) << to_string(result.verdict) << ": " << result.reason;
}

}  // namespace
}  // namespace evoteam::eval
