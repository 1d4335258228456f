// Resume trusts a run directory only after checking it: a run.json without what resume relies on, or a frozen
// task that is gone, is invalid input (exit 3, naming the file and field), and refusing writes nothing.
#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/supervisor/supervisor.hpp>

#include "supervisor/run_state.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;

class SupervisorResume : public ::testing::Test {
 protected:
  // A stopped run as optimize leaves it: run.json with its options and frozen config, a journal, the task.
  SupervisorResume() {
    OptimizeOptions options;
    options.task_dir = fs::path(EVOTEAM_SOURCE_DIR) / "kernels/host_matmul";
    options.runs_dir = dir / "runs";
    options.budgets.max_cycles = 2;
    nlohmann::json info = {{"options", options_to_json(options)}, {"config", config.json()}};
    RunDir run = RunDir::create(options.runs_dir, "host_matmul", info);
    run.update_run_json({{"status", "stopped"}});
    copy_tree(options.task_dir, run.path() / "task");
    run_dir = run.path();
  }

  // Resume must refuse with InvalidInput naming `wanted`, and leave run.json and the journal as they were.
  void expect_refused(const std::string& wanted) {
    const std::string run_json = read_file(run_dir / "run.json");
    const std::string journal = read_file(run_dir / "journal.jsonl");
    RunContext context(system_runner(), meter);
    try {
      resume(config, run_dir, context);
      FAIL() << "resumed a run that should be refused";
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find(wanted), std::string::npos) << error.what();
    }
    EXPECT_EQ(read_file(run_dir / "run.json"), run_json);
    EXPECT_EQ(read_file(run_dir / "journal.jsonl"), journal);
  }

  void patch_run_json(const std::function<void(nlohmann::json&)>& patch) {
    nlohmann::json value = read_json_file(run_dir / "run.json");
    patch(value);
    write_json_atomic(run_dir / "run.json", value);
  }

  testing::TempDir dir;
  Config config;
  Meter meter;
  fs::path run_dir;
};

TEST_F(SupervisorResume, TheRunAsOptimizeLeavesItValidates) {
  EXPECT_NO_THROW(validate_run_json(read_json_file(run_dir / "run.json"), run_dir / "run.json"));
}

TEST_F(SupervisorResume, AnEmptyRunJsonIsInvalidInputNotARunWithoutLimits) {
  write_file_atomic(run_dir / "run.json", "{}");
  expect_refused("run.json: field 'id' is missing");
}

TEST_F(SupervisorResume, MissingBudgetsAreNamed) {
  patch_run_json([](nlohmann::json& value) { value["options"].erase("budgets"); });
  expect_refused("field 'options.budgets' is missing");
}

TEST_F(SupervisorResume, ANegativeOrNullBudgetIsNamed) {
  patch_run_json([](nlohmann::json& value) { value["options"]["budgets"]["max_cycles"] = -1; });
  expect_refused("field 'options.budgets.max_cycles' must be a finite number, 0 or more");
  patch_run_json([](nlohmann::json& value) {
    value["options"]["budgets"]["max_cycles"] = 2;
    value["options"]["budgets"]["usd"] = nullptr;
  });
  expect_refused("field 'options.budgets.usd' must be a number");
}

TEST_F(SupervisorResume, AnUnknownStatusIsNamed) {
  patch_run_json([](nlohmann::json& value) { value["status"] = "sleeping"; });
  expect_refused("field 'status' is not valid");
}

// Deleting task/ and resuming must not rewrite a finished run's status to failed.
TEST_F(SupervisorResume, AMissingFrozenTaskLeavesTheRunAsItWas) {
  patch_run_json([](nlohmann::json& value) { value["status"] = "finished"; });
  fs::remove_all(run_dir / "task");
  expect_refused("task");
  EXPECT_EQ(read_json_file(run_dir / "run.json")["status"], "finished");
}

TEST_F(SupervisorResume, AnUnknownWorkloadsChoiceIsNamed) {
  patch_run_json([](nlohmann::json& value) { value["options"]["workloads"] = "theirs"; });
  expect_refused("field 'options.workloads' must be one of \"all\", \"published\", \"ours\"");
}

// The --workloads choice is kept in run.json and read back on resume; runs from before it evaluated every workload.
TEST_F(SupervisorResume, TheWorkloadsChoiceIsKeptForResume) {
  EXPECT_EQ(read_json_file(run_dir / "run.json")["options"]["workloads"], "all");
  OptimizeOptions options;
  options.workloads = WorkloadSelection::published;
  const nlohmann::json saved = options_to_json(options);
  EXPECT_EQ(saved["workloads"], "published");
  EXPECT_EQ(options_from_json(saved).workloads, WorkloadSelection::published);
  nlohmann::json older = saved;
  older.erase("workloads");
  EXPECT_EQ(options_from_json(older).workloads, WorkloadSelection::all);
  // host_matmul has only our workloads: a run that asks for published ones cannot continue.
  patch_run_json([](nlohmann::json& value) { value["options"]["workloads"] = "published"; });
  expect_refused("--workloads published");
}

// optimize --workloads published on a task without published workloads is refused before the run exists.
TEST_F(SupervisorResume, OptimizeRefusesPublishedWorkloadsOfATaskWithoutAnyAndCreatesNoRun) {
  OptimizeOptions options;
  options.task_dir = fs::path(EVOTEAM_SOURCE_DIR) / "kernels/host_matmul";
  options.runs_dir = dir / "other-runs";
  options.budgets.max_cycles = 1;
  options.workloads = WorkloadSelection::published;
  RunContext context(system_runner(), meter);
  try {
    optimize(config, options, context);
    FAIL() << "optimize ran a task without published workloads on --workloads published";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("host_matmul"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(fs::exists(options.runs_dir) && !fs::is_empty(options.runs_dir));
}

// A journal written by the main of 2026-12-04, before its records were typed, replays to the same history: the
// builtin team's candidates, its trial with the device time of that trial and of the profile, the profiled best.
TEST_F(SupervisorResume, AJournalWrittenBeforeTypedRecordsReplays) {
  const fs::path old_run = fs::path(EVOTEAM_SOURCE_DIR) / "tests/data/runs_before_typed_records/builtin_run";
  const RunState state =
      replay_run_state(read_json_file(old_run / "run.json"), replay_journal(old_run / "journal.jsonl"),
                       {"optimizer", "profiling-scientist", "debugger", "disciplinarian"});
  EXPECT_EQ(state.history.evaluations.size(), 21u);
  EXPECT_EQ(state.history.trials, 1);
  EXPECT_GT(state.history.trial_device_s, 0.0);
  EXPECT_EQ(state.last_finished_cycle, 3);
  EXPECT_EQ(state.history.cycles.size(), 3u);
  ASSERT_TRUE(state.history.best());
  EXPECT_EQ(state.history.best()->candidate_id, "c0015");
  int profiled = 0;
  for (const EvaluationRecord& record : state.history.evaluations) profiled += record.profiled ? 1 : 0;
  EXPECT_EQ(profiled, 1);

  // The scripted run's ruling, journaled as text alone, replays with the kind its words name.
  const fs::path scripted = fs::path(EVOTEAM_SOURCE_DIR) / "tests/data/runs_before_typed_records/scripted_run";
  const RunState ruled = replay_run_state(read_json_file(scripted / "run.json"),
                                          replay_journal(scripted / "journal.jsonl"), {"optimizer", "disciplinarian"});
  const EvaluationRecord* rejected = ruled.history.find("c0002");
  ASSERT_NE(rejected, nullptr);
  EXPECT_TRUE(rejected->rejected);
  EXPECT_TRUE(rejected->ruled(RulingKind::several_changes)) << rejected->ruling;
}

}  // namespace
}  // namespace evoteam
