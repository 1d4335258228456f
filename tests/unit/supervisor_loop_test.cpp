// The supervisor loop driven through its RunContext with fakes: a fake evaluator (speedup a function of the
// params, a fixed roofline), a clock the evaluations move, a meter of the test's own and a runner that records
// commands. Each stop reason fires for its own cause and is written as today's string.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/history/stop_reason.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/supervisor/supervisor.hpp>
#include <evoteam/team/lab.hpp>
#include <evoteam/team/role.hpp>

#include "supervisor/run_loop.hpp"
#include "supervisor/run_state.hpp"
#include "supervisor/start_from.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using Clock = RunContext::Clock;

class RecordingRunner : public ProcessRunner {
 public:
  ProcessResult run(const Command& command) override {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_programs.push_back(command.argv.front());
    ProcessResult result;
    result.spawned = true;
    result.exit_code = 0;
    return result;
  }
  std::vector<std::string> programs() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_programs;
  }

 private:
  mutable std::mutex m_mutex;
  std::vector<std::string> m_programs;
};

// A clock that only the fake evaluations move.
class FakeClock {
 public:
  Clock::time_point now() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_now;
  }
  void advance(std::chrono::seconds by) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_now += by;
  }

 private:
  mutable std::mutex m_mutex;
  Clock::time_point m_now{};
};

// What every fake evaluation costs and answers; the test sets it before the run.
struct FakeWorld {
  FakeClock clock;
  Meter* meter = nullptr;
  std::chrono::seconds seconds_per_evaluation{0};
  std::uint64_t tokens_per_evaluation = 0;  // charged to the meter, as if an agent had spent them
  double roofline = 0.1;
  bool fail = false;   // evaluations throw InvalidInput
  bool infra = false;  // every evaluation is the evaluator's own failure (INFRA_ERROR)
  std::atomic<int> evaluations{0};
  std::filesystem::path start;
};

class FakeEvaluator : public CandidateEvaluator {
 public:
  explicit FakeEvaluator(FakeWorld& world) : m_world(world) {}

  Result evaluate(const std::filesystem::path&, const ParamValues& params, Stage, std::uint64_t) override {
    if (m_world.fail) throw InvalidInput("the fake evaluator fails");
    ++m_world.evaluations;
    m_world.clock.advance(m_world.seconds_per_evaluation);
    if (m_world.tokens_per_evaluation > 0) m_world.meter->charge(Usage{m_world.tokens_per_evaluation, 0, 0, 0}, 0.0);
    Result result;
    if (m_world.infra) {
      result.verdict = Verdict::infra_error;
      result.failure_signature = "INFRA_ERROR: the harness could not be built";
      return result;
    }
    result.verdict = Verdict::pass;
    result.speedup = std::stod(params.at("A")) * (params.at("B") == "2" ? 1.5 : 1.0);
    result.roofline = m_world.roofline;
    result.summary = "passes";
    result.eval_json = {{"verdict", "PASS"}};
    return result;
  }
  Profile profile(const std::filesystem::path&, const ParamValues&) override {
    return {"compute", "fake profile", nlohmann::json::object()};
  }
  std::vector<ParamSpec> param_space() const override {
    return {{"A", {"1", "2", "4", "8"}, "1", "tile"}, {"B", {"1", "2"}, "1", "unroll"}};
  }
  std::filesystem::path starting_sources() const override { return m_world.start; }

 private:
  FakeWorld& m_world;
};

class SupervisorLoop : public ::testing::Test {
 protected:
  SupervisorLoop() : run(RunDir::create(dir / "runs", "synthetic", nlohmann::json::object())), context(runner, meter) {
    world.meter = &meter;
    world.start = dir / "start";
    std::filesystem::create_directories(world.start);
    write_file_atomic(world.start / "kernel.cpp", "// the starting kernel\n");
    config.overlay({{"team", {{"evaluations_per_cycle", 4}}}}, "test");
    state.options.provider = "builtin";
    state.options.mode = TeamMode::evolving;
    state.options.budgets.max_cycles = 5;  // a bound for every test; each one expects to stop earlier or here
    context.now = [this] { return world.clock.now(); };
    context.interrupted = [] { return false; };
    context.make_evaluator = [this](const ExecutorSettings&, const std::filesystem::path&) {
      return std::make_unique<FakeEvaluator>(world);
    };
  }
  ~SupervisorLoop() override {
    uninstall_interrupt_forwarding();
    reset_interrupted_for_tests();
  }

  RunOutcome run_the_loop() { return run_loop(config, run, state, context); }

  std::vector<nlohmann::json> journal(const std::string& type) const {
    std::vector<nlohmann::json> records;
    for (const nlohmann::json& record : replay_journal(run.path() / "journal.jsonl").records)
      if (record.value("type", "") == type) records.push_back(record);
    return records;
  }

  // The stop reason as every consumer of the run sees it: run.json, the journal and the --json summary.
  void expect_stop_written(const RunOutcome& outcome, const std::string& reason) {
    EXPECT_EQ(to_string(outcome.stop_reason), reason);
    EXPECT_EQ(outcome.to_json()["stop_reason"], reason);
    EXPECT_EQ(run.read_run_json()["stop_reason"], reason);
    std::vector<nlohmann::json> stops = journal("stop");
    ASSERT_EQ(stops.size(), 1u);
    EXPECT_EQ(stops[0]["reason"], reason);
    EXPECT_EQ(stops[0]["status"], to_string(outcome.status));
  }

  testing::TempDir dir;
  RunDir run;
  Config config;
  RunState state;
  RecordingRunner runner;
  Meter meter;
  FakeWorld world;
  RunContext context;
};

TEST_F(SupervisorLoop, MaxCyclesRunsThatManyCyclesAndRecordsEach) {
  state.options.budgets.max_cycles = 2;
  RunOutcome outcome = run_the_loop();
  expect_stop_written(outcome, "max_cycles");
  EXPECT_EQ(outcome.status, RunStatus::finished);
  EXPECT_EQ(outcome.exit_code, ExitCode::success);
  EXPECT_EQ(outcome.cycles, 2);
  for (int cycle : {1, 2}) {
    EXPECT_TRUE(std::filesystem::exists(run.cycle_dir(cycle) / "team.json")) << cycle;
    EXPECT_TRUE(std::filesystem::exists(run.cycle_dir(cycle) / "summary.json")) << cycle;
  }
  EXPECT_EQ(journal("cycle_end").size(), 2u);
  EXPECT_TRUE(std::filesystem::exists(run.path() / "best" / "changes.md"));
  // The source diff of best/changes.md ran through the context's runner, not a real process.
  std::vector<std::string> programs = runner.programs();
  EXPECT_NE(std::find(programs.begin(), programs.end(), "diff"), programs.end());
}

// With no cycle limit (0) and a param space the team exhausts, the run ends on its own instead of cycling.
TEST_F(SupervisorLoop, ATeamWithNothingLeftToTryStopsWithSearchExhausted) {
  state.options.budgets.max_cycles = 0;
  RunOutcome outcome = run_the_loop();
  expect_stop_written(outcome, "search_exhausted");
  EXPECT_EQ(outcome.status, RunStatus::finished);
  EXPECT_EQ(outcome.exit_code, ExitCode::success);
  EXPECT_LE(world.evaluations.load(), 8);  // the whole space, each point once
  EXPECT_LT(outcome.cycles, 20);
}

// A run whose every evaluation failed in the evaluator measured nothing: a failure (exit 1) that says why.
TEST_F(SupervisorLoop, ARunThatMeasuredNothingFailsWithInfraErrors) {
  state.options.budgets.max_cycles = 0;
  world.infra = true;
  RunOutcome outcome = run_the_loop();
  expect_stop_written(outcome, "infra_errors");
  EXPECT_EQ(outcome.status, RunStatus::failed);
  EXPECT_EQ(outcome.exit_code, ExitCode::failure);
  EXPECT_EQ(run.read_run_json()["status"], "failed");
  EXPECT_LT(outcome.cycles, 20);
}

// A cycle resumed after a kill keeps its allowance: the evaluations it recorded before count against it.
TEST_F(SupervisorLoop, AResumedCycleDoesNotGetAFreshEvaluationAllowance) {
  state.options.budgets.max_cycles = 1;
  for (int i = 1; i <= 5; ++i) {  // the start and the cycle's four evaluations, then the kill
    EvaluationRecord record;
    record.candidate_id = "c000" + std::to_string(i);
    record.author_role = i == 1 ? "start" : "optimizer";
    record.cycle = 1;
    record.params = {{"A", std::to_string(1 << (i - 1) % 4)}, {"B", "1"}};
    record.state = RecordState::evaluated;
    record.verdict = Verdict::pass;
    record.speedup = 1.0 + i;
    state.history.evaluations.push_back(record);
    std::filesystem::create_directories(run.candidate_dir(record.candidate_id) / "src");
    write_file_atomic(run.candidate_dir(record.candidate_id) / "src/kernel.cpp", "// the starting kernel\n");
  }
  state.unfinished_team = initial_team(TeamMode::evolving, supervisor_settings(config));
  state.unfinished_cycle = 1;
  state.history.cycles.push_back(CycleRecord{1, *state.unfinished_team, {}, std::nullopt, false});
  RunOutcome outcome = run_the_loop();
  EXPECT_EQ(world.evaluations.load(), 0);  // evaluations_per_cycle is 4: nothing was left of it
  EXPECT_EQ(outcome.cycles, 1);
  EXPECT_EQ(outcome.evaluations, 5);
}

TEST_F(SupervisorLoop, BudgetHoursFiresOnTheContextClock) {
  state.options.budgets.hours = 0.5;
  world.seconds_per_evaluation = std::chrono::minutes(10);  // a cycle of 4 evaluations takes 40 minutes
  RunOutcome outcome = run_the_loop();
  expect_stop_written(outcome, "budget_hours");
  EXPECT_EQ(outcome.cycles, 1);
  EXPECT_GE(state.elapsed_s, 1800.0);
  EXPECT_EQ(outcome.exit_code, ExitCode::budget_exhausted);
  // The deadline holds within the cycle: its fourth evaluation would start 30 minutes in.
  EXPECT_EQ(world.evaluations.load(), 3);
}

TEST_F(SupervisorLoop, BudgetTokensFiresOnTheContextMeter) {
  const std::uint64_t process_tokens = process_meter().totals().tokens.total();
  state.options.budgets.tokens = 20;
  world.tokens_per_evaluation = 10;
  RunOutcome outcome = run_the_loop();
  expect_stop_written(outcome, "budget_tokens");
  EXPECT_EQ(outcome.exit_code, ExitCode::budget_exhausted);
  EXPECT_EQ(outcome.cycles, 1);
  EXPECT_EQ(outcome.tokens["input"], meter.totals().tokens.input);
  EXPECT_GE(meter.totals().tokens.total(), 20u);
  // The loop journals the meter's ticks and never reaches the process's own meter.
  EXPECT_FALSE(journal("budget_tick").empty());
  EXPECT_EQ(process_meter().totals().tokens.total(), process_tokens);
}

TEST_F(SupervisorLoop, TargetReachedFinishesWithSuccessAndAMissedTargetDoesNot) {
  state.options.budgets.target_speedup = 1.5;
  RunOutcome reached = run_the_loop();
  expect_stop_written(reached, "target_reached");
  EXPECT_EQ(reached.exit_code, ExitCode::success);

  testing::TempDir other;
  RunDir missed_run = RunDir::create(other / "runs", "synthetic", nlohmann::json::object());
  RunState missed_state;
  missed_state.options = state.options;
  missed_state.options.budgets.target_speedup = 1000;
  missed_state.options.budgets.max_cycles = 1;
  RunOutcome missed = run_loop(config, missed_run, missed_state, context);
  EXPECT_EQ(to_string(missed.stop_reason), "max_cycles");
  EXPECT_EQ(missed.status, RunStatus::finished);
  EXPECT_EQ(missed.exit_code, ExitCode::budget_exhausted);
}

TEST_F(SupervisorLoop, InterruptDuringTheTeamStopsWithTheCycleUnfinished) {
  context.interrupted = [this] { return world.evaluations >= 2; };
  RunOutcome outcome = run_the_loop();
  expect_stop_written(outcome, "interrupted");
  EXPECT_EQ(outcome.status, RunStatus::stopped);
  EXPECT_EQ(outcome.exit_code, ExitCode::interrupted);
  EXPECT_EQ(outcome.cycles, 0);
  EXPECT_EQ(run.read_run_json()["status"], "stopped");
  // A resume runs the cycle again: its decision is recorded, its end is not.
  EXPECT_TRUE(std::filesystem::exists(run.cycle_dir(1) / "team.json"));
  EXPECT_FALSE(std::filesystem::exists(run.cycle_dir(1) / "summary.json"));
  EXPECT_EQ(journal("cycle_start").size(), 1u);
  EXPECT_TRUE(journal("cycle_end").empty());
}

TEST_F(SupervisorLoop, RooflineStopLeavesNoEmptyCycleDirectory) {
  world.roofline = 0.99;
  RunOutcome outcome = run_the_loop();
  expect_stop_written(outcome, "roofline");
  EXPECT_EQ(outcome.status, RunStatus::finished);
  EXPECT_EQ(outcome.cycles, 1);
  // The policy stopped the run before cycle 2: nothing of it exists (`evoteam show` would list an empty
  // cycle directory as a cycle whose team.json cannot be read).
  EXPECT_TRUE(std::filesystem::exists(run.cycle_dir(1) / "summary.json"));
  EXPECT_FALSE(std::filesystem::exists(run.cycle_dir(2)));
  EXPECT_EQ(journal("cycle_start").size(), 1u);
}

TEST_F(SupervisorLoop, AFailedLoopNoLongerJournalsTheMetersCharges) {
  world.fail = true;
  EXPECT_THROW(run_the_loop(), InvalidInput);
  const std::size_t records = replay_journal(run.path() / "journal.jsonl").records.size();
  meter.charge(Usage{5, 0, 0, 0}, 0.0);
  EXPECT_EQ(replay_journal(run.path() / "journal.jsonl").records.size(), records)
      << "the meter still appends to the journal of a run whose loop has ended";
}

TEST_F(SupervisorLoop, ReplayAfterAResumedCycleHoldsTheHistoryTheLoopHeld) {
  std::set<std::string> roles;
  for (const auto& [name, role] : load_roles(default_roles_dir())) roles.insert(name);
  state.options.budgets.max_cycles = 2;
  bool resumed = false;
  context.interrupted = [&] { return !resumed && world.evaluations >= 2; };
  ASSERT_EQ(run_the_loop().stop_reason, StopReason::interrupted);

  // Resume: the state from the journal, cycle 1 runs again with its recorded team.
  resumed = true;
  RunState live = replay_run_state(nlohmann::json::object(), replay_journal(run.path() / "journal.jsonl"), roles);
  live.options = state.options;
  ASSERT_EQ(live.unfinished_cycle, 1);
  RunOutcome outcome = run_loop(config, run, live, context);
  ASSERT_EQ(outcome.stop_reason, StopReason::max_cycles);
  ASSERT_EQ(journal("cycle_start").size(), 3u);  // cycle 1 twice (before and after the interrupt), cycle 2

  // A second resume must see what the loop saw: each cycle once, with the best after it.
  RunState replayed = replay_run_state(nlohmann::json::object(), replay_journal(run.path() / "journal.jsonl"), roles);
  ASSERT_EQ(replayed.history.cycles.size(), live.history.cycles.size());
  for (std::size_t i = 0; i < live.history.cycles.size(); ++i) {
    EXPECT_EQ(replayed.history.cycles[i].cycle, live.history.cycles[i].cycle);
    EXPECT_TRUE(replayed.history.cycles[i].finished);
    EXPECT_EQ(replayed.history.cycles[i].best_speedup_after, live.history.cycles[i].best_speedup_after) << i;
  }
}

TEST(SupervisorBudgetStop, EachBudgetNamesItsOwnReason) {
  RunState state;
  state.history.evaluations.resize(3);
  for (EvaluationRecord& record : state.history.evaluations) record.state = RecordState::evaluated, record.device_s = 3;
  state.history.trial_device_s = 1;  // 3 x 3 s of candidates and 1 s of trials
  MeterTotals spent;
  spent.cost_usd = 2;

  Budgets none;
  EXPECT_EQ(budget_stop(none, state, 4, 1e9, spent), std::nullopt);
  Budgets evaluations;
  evaluations.evaluations = 3;
  EXPECT_EQ(budget_stop(evaluations, state, 4, 0, spent), StopReason::budget_evaluations);
  Budgets usd;
  usd.usd = 1.5;
  EXPECT_EQ(budget_stop(usd, state, 4, 0, spent), StopReason::budget_usd);
  Budgets gpu;
  gpu.gpu_seconds = 10;
  EXPECT_EQ(budget_stop(gpu, state, 4, 0, spent), StopReason::budget_gpu_seconds);
  gpu.gpu_seconds = 10.5;
  EXPECT_EQ(budget_stop(gpu, state, 4, 0, spent), std::nullopt);
  Budgets cycles;
  cycles.max_cycles = 3;
  cycles.usd = 1.5;  // both are due: the cycle limit is checked first, as the run always has
  EXPECT_EQ(budget_stop(cycles, state, 4, 0, spent), StopReason::max_cycles);
}

// Exit code 5 says a budget ended the run: every budget_* reason, and any stop short of a target speedup.
TEST(StopReasonText, OnlyTheBudgetReasonsAreBudgets) {
  for (StopReason reason : {StopReason::budget_tokens, StopReason::budget_usd, StopReason::budget_hours,
                            StopReason::budget_gpu_seconds, StopReason::budget_evaluations})
    EXPECT_TRUE(is_budget(reason)) << to_string(reason);
  for (StopReason reason :
       {StopReason::max_cycles, StopReason::target_reached, StopReason::roofline, StopReason::supervisor_stop,
        StopReason::interrupted, StopReason::search_exhausted, StopReason::infra_errors, StopReason::provider_refused})
    EXPECT_FALSE(is_budget(reason)) << to_string(reason);
}

// An earlier run of `task_name` whose best, c0003, is a tuned kernel at A=4, B=2 (6x under the fake evaluator).
RunDir make_earlier_run(const std::filesystem::path& runs_dir, const std::string& task_name) {
  RunDir earlier = RunDir::create(runs_dir, task_name, nlohmann::json::object());
  const std::filesystem::path best = earlier.candidate_dir("c0003");
  evoteam::create_directories(best / "src");
  write_file_atomic(best / "src" / "kernel.cpp", "// the tuned kernel of an earlier run\n");
  write_json_atomic(best / "params.json", {{"A", "4"}, {"B", "2"}});
  earlier.update_run_json({{"summary", {{"best_candidate", "c0003"}, {"best_speedup", 6.0}}}});
  return earlier;
}

Task synthetic_task() {
  Task task;
  task.name = "synthetic";
  task.kernel_files = {"kernel.cpp"};
  task.params = {{"A", {"1", "2", "4", "8"}, "1", "tile"}, {"B", {"1", "2"}, "1", "unroll"}};
  return task;
}

// `optimize --from`: the earlier run's best (files and params) is the new run's first candidate, and the run's
// own best is kept in the knowledge directory under best/<task>/<run>/.
TEST_F(SupervisorLoop, AnImportedStartIsTheFirstCandidateAndTheBestIsKeptInTheKnowledgeDirectory) {
  RunDir earlier = make_earlier_run(dir / "earlier", "synthetic");
  EarlierBest best = read_earlier_best(earlier.path(), synthetic_task());
  EXPECT_EQ(best.run_id, earlier.id());
  EXPECT_EQ(best.candidate, "c0003");
  EXPECT_EQ(best.params, (ParamValues{{"A", "4"}, {"B", "2"}}));
  import_start(run.start_dir(), best);
  state.options.budgets.max_cycles = 1;
  RunOutcome outcome = run_the_loop();

  std::vector<nlohmann::json> evaluations = journal("evaluation");
  ASSERT_FALSE(evaluations.empty());
  const nlohmann::json first = evaluations.front()["record"];
  EXPECT_EQ(first["candidate_id"], "c0001");
  EXPECT_EQ(first["author_role"], "start");
  EXPECT_EQ(first["params"], nlohmann::json({{"A", "4"}, {"B", "2"}}));
  EXPECT_NE(first["hypothesis"].get<std::string>().find(earlier.id()), std::string::npos) << first.dump();
  EXPECT_EQ(read_file(run.candidate_dir("c0001") / "src" / "kernel.cpp"), "// the tuned kernel of an earlier run\n");
  ASSERT_TRUE(outcome.best_speedup.has_value());
  EXPECT_GE(*outcome.best_speedup, 6.0);

  const std::filesystem::path kept = run.knowledge_dir() / "best" / "synthetic" / run.id();
  ASSERT_TRUE(std::filesystem::exists(kept / "meta.json"));
  const nlohmann::json meta = read_json_file(kept / "meta.json");
  EXPECT_EQ(meta["candidate"], outcome.best_candidate);
  EXPECT_EQ(meta["run"], run.id());
  EXPECT_EQ(read_file(kept / "src" / "kernel.cpp"), "// the tuned kernel of an earlier run\n");
  // What knowledge the run began with is on record.
  EXPECT_EQ(run.read_run_json()["knowledge"]["entries_at_start"], 0);
}

TEST(SupervisorFrom, AnEarlierRunOfAnotherTaskOrWithoutABestIsRefused) {
  testing::TempDir dir;
  RunDir other = make_earlier_run(dir / "runs", "host_matmul");
  try {
    read_earlier_best(other.path(), synthetic_task());
    ADD_FAILURE() << "another task's run was accepted";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("optimised task 'host_matmul', not 'synthetic'"), std::string::npos)
        << error.what();
  }
  RunDir empty = RunDir::create(dir / "runs", "synthetic", nlohmann::json::object());
  EXPECT_THROW(read_earlier_best(empty.path(), synthetic_task()), InvalidInput);
  RunDir unfit = make_earlier_run(dir / "runs", "synthetic");
  write_json_atomic(unfit.candidate_dir("c0003") / "params.json", {{"A", "3"}, {"B", "2"}});
  EXPECT_THROW(read_earlier_best(unfit.path(), synthetic_task()), InvalidInput);
  std::filesystem::remove(unfit.candidate_dir("c0003") / "src" / "kernel.cpp");
  EXPECT_THROW(read_earlier_best(unfit.path(), synthetic_task()), InvalidInput);
}

TEST(StopReasonText, EveryReasonIsWrittenAsTodaysStringAndReadBack) {
  const std::vector<std::pair<StopReason, std::string>> reasons = {
      {StopReason::max_cycles, "max_cycles"},
      {StopReason::target_reached, "target_reached"},
      {StopReason::roofline, "roofline"},
      {StopReason::budget_tokens, "budget_tokens"},
      {StopReason::budget_usd, "budget_usd"},
      {StopReason::budget_hours, "budget_hours"},
      {StopReason::budget_gpu_seconds, "budget_gpu_seconds"},
      {StopReason::budget_evaluations, "budget_evaluations"},
      {StopReason::supervisor_stop, "supervisor_stop"},
      {StopReason::interrupted, "interrupted"},
      {StopReason::search_exhausted, "search_exhausted"},
      {StopReason::infra_errors, "infra_errors"},
      {StopReason::provider_refused, "provider_refused"}};
  for (const auto& [reason, text] : reasons) {
    EXPECT_EQ(to_string(reason), text);
    EXPECT_EQ(parse_stop_reason(text), reason) << text;
  }
  // A failed run's stop_reason is its error message: no reason of the set.
  EXPECT_EQ(parse_stop_reason("cannot read task.json"), std::nullopt);
}

}  // namespace
}  // namespace evoteam
