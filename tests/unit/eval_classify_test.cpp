// From harness records to verdicts, on synthetic records.
#include <evoteam/core/config.hpp>
#include <evoteam/eval/eval_settings.hpp>
#include <evoteam/task/task.hpp>

#include <gtest/gtest.h>

#include "eval/classify.hpp"

namespace {

using namespace evoteam;
using namespace evoteam::eval;

const Task& matmul_task() {
  static const Task task = load_task(install_root() / "kernels" / "host_matmul");
  return task;
}

const EvalSettings& default_settings() {
  static const EvalSettings settings = eval_settings(Config());
  return settings;
}

Battery battery(std::uint64_t secret = 42) {
  return design_battery(matmul_task(), default_settings().correctness, default_settings().timing, secret, 0);
}

HarnessRun finished_run(const std::vector<nlohmann::json>& records) {
  HarnessRun run;
  run.process.spawned = true;
  run.process.exit_code = 0;
  run.records = records;
  run.records.push_back({{"ev", "done"}});
  return run;
}

// Trial records: every correctness trial ok, except those in `failing` with their status.
std::vector<nlohmann::json> trials(const Battery& b, const std::map<int, std::string>& failing) {
  std::vector<nlohmann::json> records;
  for (const Trial& trial : b.trials) {
    if (!trial.correctness) continue;
    auto found = failing.find(trial.id);
    records.push_back({{"ev", "trial"},
                       {"trial", trial.id},
                       {"status", found == failing.end() ? "ok" : found->second},
                       {"tensor", "C"},
                       {"normwise", 1e-7},
                       {"first_bad", 3}});
  }
  return records;
}

TEST(EvalBattery, CyclesDistributionsAndAddsHiddenShapes) {
  Battery b = battery();
  int visible = 0, hidden = 0;
  for (const BatteryWorkload& workload : b.workloads) (workload.hidden ? hidden : visible)++;
  EXPECT_EQ(visible, 3);
  EXPECT_GE(hidden, 8);
  std::set<std::string> distributions;
  for (const Trial& trial : b.trials)
    if (trial.workload == 0 && trial.correctness) distributions.insert(trial.distribution);
  EXPECT_EQ(distributions.size(), 3u);
  // Seeds are salted: another secret gives other seeds, the same public numbers.
  Battery other = battery(43);
  EXPECT_NE(b.trials[0].seed, other.trials[0].seed);
  EXPECT_EQ(b.trials[0].public_seed, other.trials[0].public_seed);
  EXPECT_EQ(b.rotation.size(), 3u);
  EXPECT_EQ(b.probes.at(0).size(), 2u);
  for (const auto& shape : hidden_shapes(matmul_task(), {1, 17}, 8)) EXPECT_EQ(shape.size(), 3u);
}

TEST(EvalClassify, OnlyHiddenShapeFailuresAreShapeSpecialized) {
  Battery b = battery();
  int hidden_trial = -1;
  for (const Trial& trial : b.trials)
    if (b.workloads[static_cast<std::size_t>(trial.workload)].hidden) hidden_trial = trial.id;
  Judgement judgement = judge_correctness(finished_run(trials(b, {{hidden_trial, "numeric_mismatch"}})), b);
  EXPECT_EQ(judgement.verdict, Verdict::shape_specialized);
  EXPECT_EQ(judgement.evidence["hidden"], true);
  EXPECT_EQ(judgement.evidence["kind"], "numeric_mismatch");
  EXPECT_EQ(judgement.evidence["first_bad_index"], 3);
}

TEST(EvalClassify, FailuresOnOneDistributionAreDistributionSpecific) {
  Battery b = battery();
  std::map<int, std::string> failing;
  for (const Trial& trial : b.trials)
    if (trial.correctness && trial.distribution == "heavy_tailed" &&
        !b.workloads[static_cast<std::size_t>(trial.workload)].hidden)
      failing[trial.id] = "numeric_mismatch";
  Judgement judgement = judge_correctness(finished_run(trials(b, failing)), b);
  EXPECT_EQ(judgement.verdict, Verdict::distribution_specific);
  EXPECT_EQ(judgement.evidence["distribution"], "heavy_tailed");
  // Failing on two distributions is a plain mismatch; memory safety outranks everything.
  failing[1] = "numeric_mismatch";
  EXPECT_EQ(judge_correctness(finished_run(trials(b, failing)), b).verdict, Verdict::numeric_mismatch);
  failing[2] = "unwritten_output";
  EXPECT_EQ(judge_correctness(finished_run(trials(b, failing)), b).verdict, Verdict::unwritten_output);
  failing[4] = "oob_write";
  EXPECT_EQ(judge_correctness(finished_run(trials(b, failing)), b).verdict, Verdict::oob_write);
}

TEST(EvalClassify, DeterminismAndMissingTrials) {
  Battery b = battery();
  std::vector<nlohmann::json> records = trials(b, {});
  records.push_back({{"ev", "determinism"}, {"trial", 0}, {"identical", false}, {"tensor", "C"}, {"first_bad", 0}});
  EXPECT_EQ(judge_correctness(finished_run(records), b).verdict, Verdict::nondeterministic);
  records.pop_back();
  EXPECT_EQ(judge_correctness(finished_run(records), b).verdict, Verdict::pass);
  records.pop_back();
  EXPECT_EQ(judge_correctness(finished_run(records), b).verdict, Verdict::infra_error);
}

TEST(EvalClassify, ProcessEndsBecomeTypedVerdicts) {
  Battery b = battery();
  HarnessRun run;
  run.process.spawned = true;
  run.process.exit_code = 97;
  run.records = {{{"ev", "begin"}, {"trial", 2}},
                 {{"ev", "fault"},
                  {"signal", "SIGSEGV"},
                  {"phase", "candidate"},
                  {"trial", 2},
                  {"write", true},
                  {"region", "page_after"},
                  {"tensor", "C"}}};
  EXPECT_EQ(judge_process(run, b, false)->verdict, Verdict::oob_write);
  EXPECT_EQ(judge_process(run, b, false)->evidence["seed"], b.trial(2).public_seed);
  EXPECT_EQ(judge_process(run, b, true)->verdict, Verdict::infra_error);  // the reference crashing is ours
  run.records[1]["region"] = "unknown";
  run.records[1].erase("tensor");
  EXPECT_EQ(judge_process(run, b, false)->verdict, Verdict::runtime_fault);
  EXPECT_EQ(judge_process(run, b, false)->reason, "SIGSEGV");
  run.records[1]["phase"] = "baseline";
  EXPECT_EQ(judge_process(run, b, false)->verdict, Verdict::infra_error);
  run.records = {{{"ev", "hang"}, {"phase", "candidate"}, {"trial", 1}, {"deadline_ms", 2000}}};
  EXPECT_EQ(judge_process(run, b, false)->verdict, Verdict::hang_timeout);
  run.records = {{{"ev", "begin"}, {"trial", 1}}};
  run.process.timed_out = true;
  EXPECT_EQ(judge_process(run, b, false)->verdict, Verdict::hang_timeout);
  run.process.timed_out = false;
  run.process.signal = 9;
  EXPECT_EQ(judge_process(run, b, false)->verdict, Verdict::worker_crash);
  run.process.signal = 0;
  run.process.exit_code = 0;
  EXPECT_EQ(judge_process(run, b, false)->verdict, Verdict::worker_crash);  // exit 0 without "done"
  run.process.spawned = false;
  EXPECT_EQ(judge_process(run, b, false)->verdict, Verdict::infra_error);
  EXPECT_FALSE(judge_process(finished_run({}), b, false).has_value());
}

TEST(EvalClassify, TimingRecordsBecomeStatisticsAndGates) {
  Battery b = battery();
  std::vector<double> candidate(30, 0.001), baseline(30, 0.002);
  nlohmann::json timing = {{"ev", "timing"},
                           {"workload", 0},
                           {"stop", "noise_stable"},
                           {"candidate", candidate},
                           {"baseline", baseline},
                           {"sets", 5},
                           {"timed_s", 0.09},
                           {"side_work", false},
                           {"candidate_probe", {0.0011, 0.0012}},
                           {"baseline_probe", {0.0021, 0.0022}}};
  TimingOutcome outcome = analyze_timing(finished_run({timing}), b, 200, 3.0, Peaks{100, 10});
  ASSERT_FALSE(outcome.failure.has_value());
  ASSERT_EQ(outcome.workloads.size(), 1u);
  EXPECT_NEAR(outcome.workloads[0].speedup, 2.0, 1e-9);
  EXPECT_NEAR(*outcome.workloads[0].roofline_fraction, 2.0 * 512 * 512 * 512 / 0.001 / 1e9 / 100, 1e-9);
  timing["candidate_probe"] = {0.02, 0.03};  // fresh inputs 20x slower: results were reused
  EXPECT_EQ(analyze_timing(finished_run({timing}), b, 200, 3.0, std::nullopt).failure->verdict,
            Verdict::timing_inconsistent);
  timing["side_work"] = true;
  EXPECT_EQ(analyze_timing(finished_run({timing}), b, 200, 3.0, std::nullopt).failure->verdict,
            Verdict::timing_side_work);
  // The CUDA harness's kernel trace names what it saw.
  timing["side_work_evidence"] = "kernel late_work ran outside every measured window";
  const std::optional<Judgement> traced = analyze_timing(finished_run({timing}), b, 200, 3.0, std::nullopt).failure;
  ASSERT_TRUE(traced.has_value());
  EXPECT_EQ(traced->verdict, Verdict::timing_side_work);
  EXPECT_NE(traced->reason.find("late_work"), std::string::npos) << traced->reason;
  EXPECT_EQ(traced->evidence.value("kernels", ""), "kernel late_work ran outside every measured window");
  HarnessRun recheck =
      finished_run({{{"ev", "recheck_fail"}, {"side", "candidate"}, {"status", "unwritten_output"}, {"trial", 0}}});
  EXPECT_EQ(analyze_timing(recheck, b, 200, 3.0, std::nullopt).failure->verdict, Verdict::recheck_fail);
  recheck.records[0]["side"] = "baseline";
  EXPECT_EQ(analyze_timing(recheck, b, 200, 3.0, std::nullopt).failure->verdict, Verdict::infra_error);
}

}  // namespace
