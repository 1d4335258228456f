// Verdict and stage names, options, and the eval.json round trip.
#include <evoteam/core/error.hpp>
#include <evoteam/eval/evaluator.hpp>

#include <gtest/gtest.h>

namespace {

using namespace evoteam;

TEST(EvalVerdict, NamesRoundTripForTheWholeClosedSet) {
  EXPECT_GE(all_verdicts().size(), 21u);
  for (Verdict verdict : all_verdicts()) EXPECT_EQ(parse_verdict(to_string(verdict)), verdict);
  EXPECT_EQ(to_string(Verdict::static_reject), "STATIC_REJECT");
  EXPECT_FALSE(parse_verdict("OK").has_value());
  EXPECT_TRUE(is_infra(Verdict::infra_error));
  EXPECT_FALSE(is_infra(Verdict::hang_timeout));
  EXPECT_TRUE(outputs_verified(Verdict::noisy));
  EXPECT_FALSE(outputs_verified(Verdict::recheck_fail));
}

TEST(EvalStages, ParsesListsInPipelineOrder) {
  EXPECT_EQ(parse_stage_list("timing, static,build", "--stages"),
            (std::vector<Stage>{Stage::static_checks, Stage::build, Stage::timing}));
  EXPECT_THROW(parse_stage_list("static,bench", "--stages"), InvalidInput);
  EXPECT_EQ(EvalOptions::through(Stage::correctness).stages,
            (std::vector<Stage>{Stage::static_checks, Stage::build, Stage::correctness}));
  EXPECT_EQ(parse_sandbox_mode("auto"), SandboxMode::automatic);
  EXPECT_FALSE(parse_sandbox_mode("docker").has_value());
}

// GPU-seconds are the device's busy time: the timing stage's wait for another evaluation's timing lock is part of
// its wall time (eval.json keeps both) but never of the device time charged (one trial was charged 6.37 s of which
// 3.9 s was the wait). The build and the static checks are no device time either.
TEST(EvalResultJson, TheWaitForTheTimingLockIsNoDeviceTime) {
  EvalResult result;
  result.verdict = Verdict::pass;
  result.speedup = 1.5;
  result.stages = {{"static", StageStatus::passed, 0.1, ""},
                   {"build", StageStatus::passed, 2.0, ""},
                   {"correctness", StageStatus::passed, 0.5, ""},
                   {"timing", StageStatus::passed, 6.37, "lock wait 3.900 s", 3.9}};
  EXPECT_NEAR(measurement_of(result).device_s, 0.5 + 2.47, 1e-9);
  const EvalResult back = EvalResult::from_json(result.to_json());
  EXPECT_DOUBLE_EQ(back.stages[3].lock_wait_s, 3.9);
  EXPECT_NEAR(measurement_of(back).device_s, 2.97, 1e-9);
}

TEST(EvalResultJson, RoundTripsThroughEvalJson) {
  EvalResult result;
  result.verdict = Verdict::numeric_mismatch;
  result.reason = "numeric_mismatch in output C";
  result.evidence = {{"workload", "square512"}, {"seed", 3}, {"first_bad_index", 17}};
  result.task = "host_matmul";
  result.params = {{"TILE_N", "256"}};
  result.stages_requested = {Stage::static_checks, Stage::build, Stage::correctness};
  result.stages = {{"static", StageStatus::passed, 0.1, ""}, {"correctness", StageStatus::failed, 0.5, "numeric"}};
  WorkloadResult workload;
  workload.name = "square512";
  workload.axes = {{"M", 512}};
  workload.candidate.median_s = 0.003;
  workload.speedup = 2.5;
  workload.speedup_low = 2.4;
  workload.speedup_high = 2.6;
  workload.roofline_fraction = 0.6;
  workload.setup_s = 0.4;
  workload.setup_ahead_s = 0.25;
  result.workloads = {workload};
  result.speedup = 2.5;
  result.speedup_low = 2.4;
  result.speedup_high = 2.6;
  result.static_warnings = {"w"};
  nlohmann::json json = result.to_json();
  EXPECT_EQ(json["verdict"], "NUMERIC_MISMATCH");
  EXPECT_EQ(json["passed"], false);
  EXPECT_EQ(json["workloads"][0]["speedup_interval"][1], 2.6);
  EvalResult back = EvalResult::from_json(json);
  EXPECT_EQ(back.verdict, result.verdict);
  EXPECT_EQ(back.evidence, result.evidence);
  EXPECT_EQ(back.params, result.params);
  EXPECT_EQ(back.stages_requested, result.stages_requested);
  EXPECT_EQ(back.stages.size(), 2u);
  EXPECT_EQ(back.workloads[0].axes.at("M"), 512);
  EXPECT_EQ(back.workloads[0].roofline_fraction, 0.6);
  EXPECT_EQ(back.workloads[0].setup_ahead_s, 0.25);
  EXPECT_EQ(back.speedup_high, 2.6);
  EXPECT_EQ(back.to_json(), json);
  EXPECT_THROW(EvalResult::from_json({{"verdict", "MAYBE"}}), InvalidInput);
}

// Which once-adopted constraints a build met is known only once it got through the static stage: an absent list
// stays absent, an empty one stays empty.
TEST(EvalResultJson, AdoptedConstraintsRoundTripAndAbsentStaysAbsent) {
  EvalResult result;
  result.verdict = Verdict::pass;
  EXPECT_TRUE(result.to_json()["adopted_constraints"].is_null());
  EXPECT_FALSE(EvalResult::from_json(result.to_json()).adopted_constraints.has_value());
  result.adopted_constraints = std::vector<std::string>{};
  EXPECT_EQ(EvalResult::from_json(result.to_json()).adopted_constraints, std::vector<std::string>{});
  result.adopted_constraints = std::vector<std::string>{"wgmma_sm90a"};
  EXPECT_EQ(EvalResult::from_json(result.to_json()).adopted_constraints, std::vector<std::string>{"wgmma_sm90a"});
}

TEST(EvalResultJson, StageStatusesKeepTheirEvalJsonSpelling) {
  const std::vector<std::pair<StageStatus, std::string>> spellings = {
      {StageStatus::passed, "passed"}, {StageStatus::failed, "failed"},         {StageStatus::skipped, "skipped"},
      {StageStatus::cached, "cached"}, {StageStatus::static_profile, "static"},
  };
  EvalResult result;
  for (const auto& [status, text] : spellings) {
    EXPECT_EQ(to_string(status), text);
    EXPECT_EQ(parse_stage_status(text), status) << text;
    result.stages.push_back({"profile", status, 0.0, ""});
  }
  const nlohmann::json json = result.to_json();
  for (std::size_t i = 0; i < spellings.size(); ++i) EXPECT_EQ(json["stages"][i]["status"], spellings[i].second);
  const EvalResult back = EvalResult::from_json(json);
  ASSERT_EQ(back.stages.size(), spellings.size());
  for (std::size_t i = 0; i < spellings.size(); ++i) EXPECT_EQ(back.stages[i].status, spellings[i].first);
  EXPECT_FALSE(parse_stage_status("Passed").has_value());
  nlohmann::json unknown = json;
  unknown["stages"][0]["status"] = "maybe";
  EXPECT_THROW(EvalResult::from_json(unknown), InvalidInput);
}

}  // namespace
