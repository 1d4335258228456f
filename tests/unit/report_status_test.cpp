// The `status` view and the exit code `wait` gives, over run directories written by hand: no daemon, no GPU.
#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include <evoteam/core/fs.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/report/report.hpp>
#include <evoteam/report/status.hpp>
#include <evoteam/store/store.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

nlohmann::json finished_run(const std::string& status, const std::string& reason) {
  return {{"id", "r1"},
          {"task", "host_matmul"},
          {"status", status},
          {"stop_reason", reason},
          {"budgets", {{"max_cycles", 0}, {"evaluations", 8}, {"tokens", 1000}, {"target_speedup", 0}}}};
}

TEST(ReportStatus, RecordedExitCodeWinsOverTheStatus) {
  nlohmann::json run = finished_run("finished", "max_cycles");
  run["exit_code"] = 74;
  EXPECT_EQ(recorded_exit_code(run), 74);
}

TEST(ReportStatus, ExitCodeOfRunsWithoutARecordedOne) {
  EXPECT_EQ(recorded_exit_code(finished_run("finished", "budget_evaluations")), 5);
  EXPECT_EQ(recorded_exit_code(finished_run("finished", "max_cycles")), 0);
  EXPECT_EQ(recorded_exit_code(finished_run("stopped", "interrupted")), 130);
  EXPECT_EQ(recorded_exit_code(finished_run("failed", "disk full")), 1);
  EXPECT_EQ(recorded_exit_code(finished_run("running", "")), std::nullopt);
  nlohmann::json missed = finished_run("finished", "max_cycles");
  missed["budgets"]["target_speedup"] = 3.0;
  EXPECT_EQ(recorded_exit_code(missed), 5);
  missed["stop_reason"] = "target_reached";
  EXPECT_EQ(recorded_exit_code(missed), 0);
}

TEST(ReportStatus, BurnTeamAndBestOfAnEndedRun) {
  testing::TempDir dir;
  nlohmann::json run = finished_run("finished", "budget_evaluations");
  run["summary"] = {{"cycles", 2},
                    {"evaluations", 6},
                    {"best_candidate", "c0004"},
                    {"best_speedup", 2.5},
                    {"tokens", {{"input", 200}, {"output", 50}}},
                    {"cost_usd", 0.0},
                    {"elapsed_s", 120.0},
                    {"gpu_seconds", 0.0}};
  write_json_atomic(dir / "run.json", run);
  std::filesystem::create_directories(dir / "cycles" / "0001");
  std::filesystem::create_directories(dir / "cycles" / "0002");
  write_json_atomic(dir / "cycles" / "0001" / "team.json", {{"pattern", "solo"}, {"roles", {{{"name", "optimizer"}}}}});
  write_json_atomic(dir / "cycles" / "0002" / "team.json",
                    {{"pattern", "pipeline"}, {"roles", {{{"name", "profiler"}}, {{"name", "optimizer"}}}}});

  const RunStatusView view = run_status(dir.path());
  EXPECT_FALSE(view.daemon_alive);
  EXPECT_EQ(view.cycles_finished, 2);
  EXPECT_EQ(view.current_cycle, 2);
  EXPECT_EQ(view.pattern, "pipeline");
  EXPECT_EQ(view.team, (std::vector<std::string>{"profiler", "optimizer"}));
  EXPECT_EQ(view.best_candidate, "c0004");
  ASSERT_TRUE(view.best_speedup);
  EXPECT_DOUBLE_EQ(*view.best_speedup, 2.5);
  std::map<std::string, BudgetBurn> burns;
  for (const BudgetBurn& burn : view.budgets) burns[burn.name] = burn;
  ASSERT_TRUE(burns["evaluations"].percent);
  EXPECT_DOUBLE_EQ(*burns["evaluations"].percent, 75.0);
  ASSERT_TRUE(burns["tokens"].percent);
  EXPECT_DOUBLE_EQ(*burns["tokens"].percent, 25.0);
  EXPECT_FALSE(burns["usd"].percent) << "no USD budget, no percentage";
  // An ended run has nothing left to extrapolate.
  EXPECT_FALSE(view.eta_s);
  EXPECT_NE(format_run_status(view).find("evaluations: 6 of 8 (75%; 6 candidates, 0 trials)"), std::string::npos)
      << format_run_status(view);
}

// --budget-evaluations counts the agents' trials as well as candidates: the burn shows what the lab enforced, and
// says what it counts, rather than "2 of 8 (25%)" for a run that stopped at 2 candidates and 6 trials.
// A run stopped by --budget-evaluations 8 after 2 candidates and 6 trials, written by hand.
void write_run_of_two_candidates_and_six_trials(const std::filesystem::path& dir) {
  nlohmann::json run = finished_run("finished", "budget_evaluations");
  run["summary"] = {{"cycles", 1}, {"evaluations", 2}, {"elapsed_s", 60.0}, {"gpu_seconds", 0.0}};
  write_json_atomic(dir / "run.json", run);
  {
    Journal journal(dir / k_journal_name);
    for (const char* id : {"c0001", "c0002"}) {
      EvaluationRecord record;
      record.candidate_id = id;
      record.state = RecordState::evaluated;
      record.verdict = Verdict::pass;
      record.speedup = 1.0;
      append_entry(journal, EvaluationEntry{record});
    }
    for (int i = 0; i < 6; ++i) append_entry(journal, TrialEntry{Stage::build});
  }
}

TEST(ReportStatus, TheEvaluationBudgetCountsCandidatesAndTrialsAndSaysSo) {
  testing::TempDir dir;
  write_run_of_two_candidates_and_six_trials(dir.path());
  const RunStatusView view = run_status(dir.path());
  std::map<std::string, BudgetBurn> burns;
  for (const BudgetBurn& burn : view.budgets) burns[burn.name] = burn;
  EXPECT_DOUBLE_EQ(burns["evaluations"].spent, 8.0);
  ASSERT_TRUE(burns["evaluations"].percent);
  EXPECT_DOUBLE_EQ(*burns["evaluations"].percent, 100.0);
  const std::string text = format_run_status(view);
  EXPECT_NE(text.find("evaluations: 8 of 8 (100%; 2 candidates, 6 trials)"), std::string::npos) << text;
  EXPECT_NE(text.find("trials"), std::string::npos) << text;
  // Every budget says what it counts, in the JSON too.
  const nlohmann::json view_json = to_json(view);
  for (const nlohmann::json& burn : view_json["budgets"]) EXPECT_FALSE(burn.value("counts", "").empty()) << burn.dump();
}

// `show` gives the figure status and the budget give, with the same parts, not the candidates alone ("2
// evaluations" beside a budget of 8 spent).
TEST(ReportStatus, ShowGivesTheEvaluationsFigureStatusGivesWithItsParts) {
  testing::TempDir dir;
  write_run_of_two_candidates_and_six_trials(dir.path());
  const std::string shown = format_run_description(describe_run(dir.path()));
  EXPECT_NE(shown.find("8 evaluations (2 candidates, 6 trials)"), std::string::npos) << shown;
  EXPECT_EQ(shown.find(" 2 evaluations"), std::string::npos) << shown;
}

// One figure, one meaning: the device seconds status shows per device and the GPU-seconds the budget has spent are
// the same time — every candidate's latest record (one journaled again for a ruling counts once) and the trials'
// and profiles' "device_time" records. They used to differ (device_seconds {"host": 0.0} beside 20.57 spent).
TEST(ReportStatus, DeviceSecondsAndTheGpuSecondsBudgetAreOneFigure) {
  testing::TempDir dir;
  nlohmann::json run = finished_run("running", "");
  run["budgets"]["gpu_seconds"] = 100;
  run["summary"] = {{"cycles", 1}, {"evaluations", 2}, {"elapsed_s", 60.0}, {"gpu_seconds", 0.0}};
  write_json_atomic(dir / "run.json", run);
  {
    Journal journal(dir / k_journal_name);
    EvaluationRecord record;
    record.candidate_id = "c0001";
    record.state = RecordState::evaluated;
    record.verdict = Verdict::pass;
    record.speedup = 1.0;
    record.device = "host";
    record.device_s = 2.5;
    append_entry(journal, EvaluationEntry{record});
    record.rejected = true;  // journaled again with a ruling: the same 2.5 s
    append_entry(journal, EvaluationEntry{record});
    append_entry(journal, TrialEntry{Stage::timing});
    append_entry(journal, DeviceTimeEntry{1.25, "host"});
  }
  const RunStatusView view = run_status(dir.path());
  EXPECT_EQ(view.device_seconds, (std::map<std::string, double>{{"host", 3.75}}));
  bool shown = false;
  for (const BudgetBurn& burn : view.budgets) {
    if (burn.name != "gpu_seconds") continue;
    shown = true;
    EXPECT_DOUBLE_EQ(burn.spent, 3.75);
  }
  EXPECT_TRUE(shown);
}

TEST(ReportStatus, WaitOnARunWhoseDaemonVanishedSaysSo) {
  testing::TempDir dir;
  write_json_atomic(dir / "run.json", finished_run("running", ""));
  const WaitOutcome outcome = wait_for_run(dir.path(), std::chrono::milliseconds(1000), std::chrono::milliseconds(10));
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_NE(outcome.message.find("died"), std::string::npos) << outcome.message;
}

}  // namespace
}  // namespace evoteam
