// The lab and the builtin roles over a synthetic param space with a fake evaluator: speedup is a function of
// the params, and any config with C=1 fails to build with one fixed signature.
#include <set>

#include <gtest/gtest.h>

#include <atomic>

#include <evoteam/agent/workspace.hpp>
#include <evoteam/core/config.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/supervisor/supervisor_policy.hpp>
#include <evoteam/team/lab.hpp>
#include <evoteam/team/team.hpp>

#include "supervisor/run_state.hpp"
#include "support/temp_dir.hpp"
#include "team/lab_tool_backend.hpp"
#include "team/source_diff.hpp"

namespace evoteam {
namespace {

const char* const k_bad_signature = "COMPILE_ERROR: C=1 is not supported";

class FakeEvaluator : public CandidateEvaluator {
 public:
  explicit FakeEvaluator(std::filesystem::path start) : m_start(std::move(start)) {}

  Result evaluate(const std::filesystem::path& sources_dir, const ParamValues& params, Stage, std::uint64_t) override {
    ++calls;
    EXPECT_TRUE(std::filesystem::exists(sources_dir / "kernel.cpp")) << sources_dir;
    Result result;
    if (params.at("C") == "1") {
      result.verdict = Verdict::compile_error;
      result.failure_signature = k_bad_signature;
      result.summary = "does not build";
      return result;
    }
    double a = std::stod(params.at("A"));
    // With adoption on, B=4 (wgmma) is also the fastest B, so a search that finds it builds on it.
    double b = params.at("B") == "2" ? 1.5 : adoption && params.at("B") == "4" ? 2.0 : 1.0;
    result.verdict = Verdict::pass;
    result.speedup = a * b;
    result.roofline = a * b / 100.0;
    result.summary = "passes";
    result.eval_json = {{"verdict", "PASS"}};
    result.device_s = 0.5;  // a failed build ran nothing on the device
    // With adoption on, B=4 stands for code that issues wgmma: the build meets the once-adopted constraint.
    if (adoption)
      result.adopted_constraints =
          params.at("B") == "4" ? std::vector<std::string>{k_adopted} : std::vector<std::string>{};
    return result;
  }

  Profile profile(const std::filesystem::path&, const ParamValues&) override {
    ++profiles;
    return {"compute", "fake profile", nlohmann::json::object(), 0.25};
  }

  std::vector<ParamSpec> param_space() const override {
    return {{"A", {"1", "2", "4", "8"}, "1", "tile"},
            {"B", {"1", "2", "4"}, "1", "unroll"},
            {"C", {"0", "1"}, "0", "mode"}};
  }

  std::filesystem::path starting_sources() const override { return m_start; }
  const Task* task() const override { return adoption ? &m_task : nullptr; }

  // Turns on the once-adopted constraint: the task declares it and builds report whether they meet it.
  void adopt_wgmma() {
    StaticConstraint constraint;
    constraint.name = k_adopted;
    constraint.scope = "ptx";
    constraint.pattern = "wgmma\\.mma_async";
    constraint.required = true;
    constraint.archs = {"sm_90a"};
    constraint.once_adopted = true;
    constraint.message = "keep warpgroup MMA once adopted";
    m_task.static_constraints = {constraint};
    m_task.params = param_space();
    adoption = true;
  }

  static constexpr const char* k_adopted = "wgmma_sm90a";
  std::atomic<int> calls{0};
  std::atomic<int> profiles{0};
  bool adoption = false;

 private:
  std::filesystem::path m_start;
  Task m_task;
};

class LabWithFakeEvaluator : public ::testing::Test {
 protected:
  LabWithFakeEvaluator()
      : evaluator(start_sources()),
        run(RunDir::create(dir / "runs", "synthetic", nlohmann::json::object())),
        knowledge(run.knowledge_dir()),
        lab(run, evaluator, knowledge) {}

  std::filesystem::path start_sources() {
    std::filesystem::create_directories(dir / "start");
    write_file_atomic(dir / "start" / "kernel.cpp", "// the starting kernel\n");
    return dir / "start";
  }

  LabRequest request(const ParamValues& params, const std::string& parent = "c0001",
                     const std::string& role = "optimizer") {
    return LabRequest{parent, role, "best", "test", params, dir / "start"};
  }

  TurnOutcome act(const std::string& role, int cycle, int budget, KnowledgeMode mode = KnowledgeMode::digest) {
    return act_on(lab, knowledge, role, cycle, budget, mode);
  }

  // A role's turn on another lab and knowledge base (another run, a shared knowledge directory).
  TurnOutcome act_on(Lab& on_lab, KnowledgeBase& on_knowledge, const std::string& role, int cycle, int budget,
                     KnowledgeMode mode) {
    team.roles = {{role, 1.0, "best"}};
    team.knowledge = mode;
    TurnContext context;
    context.cycle = cycle;
    context.team = &team;
    context.role = team.roles.front();
    context.evaluation_budget = budget;
    context.handoff_note = "none";
    context.lab = &on_lab;
    context.knowledge = &on_knowledge;
    context.seed = 7;
    std::unique_ptr<TeamMember> member = make_builtin_member(role, 100.0);
    return member->act(context);
  }

  SubmissionTarget submitting(const std::string& role, int allowance) {
    return SubmissionTarget{role, "best", 1, Lab::Screening::off, allowance, dir / "staged"};
  }

  int journaled(const std::string& type) {
    int count = 0;
    for (const nlohmann::json& record : replay_journal(run.journal().path()).records)
      if (record.value("type", "") == type) ++count;
    return count;
  }

  testing::TempDir dir;
  FakeEvaluator evaluator;
  RunDir run;
  KnowledgeBase knowledge;
  Lab lab;
  TeamSpec team;
};

TEST_F(LabWithFakeEvaluator, IdenticalCandidateIsNotEvaluatedTwice) {
  LabOutcome start = lab.ensure_start(1);
  EXPECT_EQ(start.record.candidate_id, "c0001");
  EXPECT_TRUE(start.record.passed());
  LabOutcome first = lab.evaluate(request({{"A", "2"}, {"B", "1"}, {"C", "0"}}), 1, Lab::Screening::off);
  EXPECT_FALSE(first.reused);
  EXPECT_EQ(first.record.candidate_id, "c0002");
  EXPECT_EQ(first.record.changes, 1);
  EXPECT_DOUBLE_EQ(first.record.speedup.value_or(0), 2.0);
  const int calls = evaluator.calls;

  LabOutcome again = lab.evaluate(request({{"A", "2"}, {"B", "1"}, {"C", "0"}}), 2, Lab::Screening::off);
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.record.candidate_id, "c0002");
  EXPECT_EQ(evaluator.calls, calls);
  EXPECT_EQ(lab.ensure_start(2).record.candidate_id, "c0001");
  EXPECT_EQ(evaluator.calls, calls);
  EXPECT_EQ(lab.snapshot().evaluation_count(), 2);
  EXPECT_EQ(journaled("evaluation"), 2);
  EXPECT_TRUE(std::filesystem::exists(run.candidate_dir("c0002") / "src" / "kernel.cpp"));
  EXPECT_TRUE(std::filesystem::exists(run.candidate_dir("c0002") / "params.json"));
}

TEST_F(LabWithFakeEvaluator, NewFailureIsRecordedAndASecondOneIsARepeat) {
  lab.ensure_start(1);
  LabOutcome first = lab.evaluate(request({{"A", "1"}, {"B", "1"}, {"C", "1"}}), 1, Lab::Screening::off);
  EXPECT_FALSE(first.record.passed());
  EXPECT_EQ(first.record.failure_signature, k_bad_signature);
  EXPECT_FALSE(first.record.repeated_recorded_failure);
  EXPECT_TRUE(knowledge.has_failure(k_bad_signature));
  LabOutcome second = lab.evaluate(request({{"A", "2"}, {"B", "1"}, {"C", "1"}}), 1, Lab::Screening::off);
  EXPECT_TRUE(second.record.repeated_recorded_failure);
}

// A knowledge directory shared with another task: its constraints name params this task also has, and screen
// nothing here; this task's own constraints do.
TEST_F(LabWithFakeEvaluator, ScreeningIgnoresTheConstraintsOfOtherTasks) {
  const std::filesystem::path shared = dir / "shared";
  KnowledgeBase(shared, Provenance{"other_task", "host", "run-of-other"})
      .add(KnowledgeKind::constraint, KnowledgeEntry{"when A=4: fails there", {{"when", "A=4"}}, ""});
  KnowledgeBase mine(shared, Provenance{"synthetic", "host", run.id()});
  Lab screened(run, evaluator, mine);
  screened.ensure_start(1);
  LabOutcome other =
      screened.evaluate(request({{"A", "4"}, {"B", "1"}, {"C", "0"}}), 1, Lab::Screening::against_knowledge);
  EXPECT_FALSE(other.record.blocked()) << other.summary;
  EXPECT_TRUE(other.record.passed()) << other.summary;
  mine.add(KnowledgeKind::constraint, KnowledgeEntry{"when A=8: fails here", {{"when", "A=8"}}, ""});
  LabOutcome own =
      screened.evaluate(request({{"A", "8"}, {"B", "1"}, {"C", "0"}}), 1, Lab::Screening::against_knowledge);
  EXPECT_TRUE(own.record.blocked()) << own.summary;
  EXPECT_NE(own.summary.find("when A=8"), std::string::npos) << own.summary;
}

// Two runs of one task sharing a knowledge directory each have a c0002, each a different validated change: the
// second run's Integrator records its own (before, a strategy recorded for "c0002" hid it), and a failure one
// run recorded is a repeat in the other.
TEST_F(LabWithFakeEvaluator, TheIntegratorOfASecondRunRecordsItsOwnStrategiesInASharedDirectory) {
  const std::filesystem::path shared = dir / "shared";
  const std::vector<ParamValues> changes = {{{"A", "4"}, {"B", "1"}, {"C", "0"}}, {{"A", "1"}, {"B", "2"}, {"C", "0"}}};
  std::vector<std::string> runs;
  for (const ParamValues& change : changes) {
    RunDir other = RunDir::create(dir / "runs-shared", "synthetic", nlohmann::json::object());
    runs.push_back(other.id());
    KnowledgeBase kb(shared, Provenance{"synthetic", "host", other.id()});
    Lab other_lab(other, evaluator, kb);
    other_lab.ensure_start(1);
    ASSERT_EQ(other_lab.evaluate(request(change), 1, Lab::Screening::off).record.candidate_id, "c0002");
    LabOutcome failing = other_lab.evaluate(request({{"A", "2"}, {"B", "1"}, {"C", "1"}}), 1, Lab::Screening::off);
    EXPECT_EQ(failing.record.repeated_recorded_failure, runs.size() == 2) << other.id();
    act_on(other_lab, kb, "knowledge-integrator", 1, 2, KnowledgeMode::curated);
    act_on(other_lab, kb, "knowledge-integrator", 2, 2, KnowledgeMode::curated);  // nothing new: nothing added
  }
  ASSERT_NE(runs[0], runs[1]);
  std::vector<KnowledgeEntry> strategies = KnowledgeBase(shared).entries(KnowledgeKind::strategy);
  ASSERT_EQ(strategies.size(), 2u);
  EXPECT_EQ(strategies[0].fields.at("param"), "A");
  EXPECT_EQ(strategies[0].fields.at("run"), runs[0]);
  EXPECT_EQ(strategies[1].fields.at("param"), "B");
  EXPECT_EQ(strategies[1].fields.at("run"), runs[1]);
  for (const KnowledgeEntry& strategy : strategies) EXPECT_EQ(strategy.fields.at("candidate"), "c0002");
  // The failed configuration is one constraint of the task, whichever run met it.
  EXPECT_EQ(KnowledgeBase(shared).entries(KnowledgeKind::constraint).size(), 1u);
}

TEST_F(LabWithFakeEvaluator, DebuggerBisectionIsolatesTheFailingParamAndScreeningThenBlocksIt) {
  lab.ensure_start(1);
  // Three changes at once from a passing parent; only C=1 breaks the build.
  LabOutcome failing = lab.evaluate(request({{"A", "2"}, {"B", "2"}, {"C", "1"}}), 1, Lab::Screening::off);
  ASSERT_FALSE(failing.record.passed());

  TurnOutcome outcome = act("debugger", 2, 4);
  EXPECT_GE(outcome.usage.evaluations, 1);
  EXPECT_LE(outcome.usage.evaluations, 4);
  std::vector<KnowledgeEntry> constraints = knowledge.entries(KnowledgeKind::constraint);
  ASSERT_EQ(constraints.size(), 1u) << outcome.summary;
  EXPECT_EQ(constraints[0].fields.at("when"), "C=1") << outcome.summary;
  EXPECT_EQ(constraints[0].fields.at("signature"), k_bad_signature);
  EXPECT_EQ(constraints[0].fields.at("candidate"), failing.record.candidate_id);

  // A later attempt with C=1 is blocked before it costs an evaluation, when screening is on.
  const int calls = evaluator.calls;
  LabOutcome blocked =
      lab.evaluate(request({{"A", "8"}, {"B", "1"}, {"C", "1"}}), 3, Lab::Screening::against_knowledge);
  EXPECT_TRUE(blocked.record.blocked());
  EXPECT_EQ(blocked.record.verdict_text(), "BLOCKED");
  EXPECT_EQ(evaluator.calls, calls);
  EXPECT_NE(blocked.summary.find("C=1"), std::string::npos) << blocked.summary;
  LabOutcome allowed =
      lab.evaluate(request({{"A", "8"}, {"B", "1"}, {"C", "0"}}), 3, Lab::Screening::against_knowledge);
  EXPECT_FALSE(allowed.record.blocked());
  EXPECT_EQ(evaluator.calls, calls + 1);
  // Blocked attempts are not spent evaluations.
  RunHistory snapshot = lab.snapshot();
  EXPECT_EQ(snapshot.evaluation_count(), static_cast<int>(snapshot.evaluations.size()) - 1);

  // Nothing left to diagnose: the next turn spends nothing.
  TurnOutcome idle = act("debugger", 3, 4);
  EXPECT_EQ(idle.usage.evaluations, 0);
  EXPECT_EQ(knowledge.entries(KnowledgeKind::constraint).size(), 1u);
}

TEST_F(LabWithFakeEvaluator, DisciplinarianRejectsATwoChangeNewBestAndDecomposesIt) {
  lab.ensure_start(1);
  LabOutcome bundle = lab.evaluate(request({{"A", "4"}, {"B", "2"}, {"C", "0"}}), 2, Lab::Screening::off);
  ASSERT_TRUE(bundle.record.passed());
  ASSERT_EQ(bundle.record.changes, 2);

  TurnOutcome outcome = act("disciplinarian", 2, 4);
  RunHistory snapshot = lab.snapshot();
  const EvaluationRecord* reviewed = snapshot.find(bundle.record.candidate_id);
  ASSERT_NE(reviewed, nullptr);
  EXPECT_TRUE(reviewed->rejected);
  EXPECT_EQ(reviewed->ruling.rfind("several changes", 0), 0u) << reviewed->ruling;
  ASSERT_TRUE(snapshot.best().has_value());
  EXPECT_NE(snapshot.best()->candidate_id, bundle.record.candidate_id);
  EXPECT_GE(journaled("ruling"), 1);

  // Decomposed into the two single changes from the same parent.
  bool a_alone = false, b_alone = false;
  for (const EvaluationRecord& record : snapshot.evaluations) {
    if (record.author_role != "disciplinarian") continue;
    EXPECT_EQ(record.parent_id, "c0001");
    EXPECT_EQ(record.changes, 1);
    a_alone |= record.params == ParamValues{{"A", "4"}, {"B", "1"}, {"C", "0"}};
    b_alone |= record.params == ParamValues{{"A", "1"}, {"B", "2"}, {"C", "0"}};
  }
  EXPECT_TRUE(a_alone);
  EXPECT_TRUE(b_alone);
  EXPECT_EQ(outcome.usage.evaluations, 2);

  // Reaching the bundle by one change from a decomposed single accepts it again, without re-evaluating it.
  const int calls = evaluator.calls;
  std::string a_id;
  for (const EvaluationRecord& record : snapshot.evaluations)
    if (record.params == ParamValues{{"A", "4"}, {"B", "1"}, {"C", "0"}}) a_id = record.candidate_id;
  LabOutcome reached = lab.evaluate(request({{"A", "4"}, {"B", "2"}, {"C", "0"}}, a_id), 3, Lab::Screening::off);
  EXPECT_TRUE(reached.reused);
  EXPECT_EQ(evaluator.calls, calls);
  EXPECT_EQ(lab.best()->candidate_id, bundle.record.candidate_id);
}

TEST_F(LabWithFakeEvaluator, DisciplinarianAcceptsASingleChangeNewBest) {
  lab.ensure_start(1);
  LabOutcome single = lab.evaluate(request({{"A", "2"}, {"B", "1"}, {"C", "0"}}), 2, Lab::Screening::off);
  act("disciplinarian", 2, 4);
  const RunHistory history = lab.snapshot();  // find() points into it, so it must outlive `reviewed`
  const EvaluationRecord* reviewed = history.find(single.record.candidate_id);
  ASSERT_NE(reviewed, nullptr);
  EXPECT_FALSE(reviewed->rejected);
  EXPECT_NE(reviewed->ruling.find("accepted"), std::string::npos) << reviewed->ruling;
}

TEST_F(LabWithFakeEvaluator, KnowledgeIntegratorRecordsValidatedStrategiesAndThePlan) {
  lab.ensure_start(1);
  LabOutcome better = lab.evaluate(request({{"A", "4"}, {"B", "1"}, {"C", "0"}}), 1, Lab::Screening::off);
  lab.evaluate(request({{"A", "1"}, {"B", "1"}, {"C", "1"}}), 1, Lab::Screening::off);
  lab.evaluate(request({{"A", "1"}, {"B", "4"}, {"C", "1"}}), 1, Lab::Screening::off);

  act("knowledge-integrator", 1, 2, KnowledgeMode::curated);
  std::vector<KnowledgeEntry> strategies = knowledge.entries(KnowledgeKind::strategy);
  ASSERT_EQ(strategies.size(), 1u);
  EXPECT_EQ(strategies[0].fields.at("param"), "A");
  EXPECT_EQ(strategies[0].fields.at("from"), "1");
  EXPECT_EQ(strategies[0].fields.at("to"), "4");
  EXPECT_EQ(strategies[0].fields.at("candidate"), better.record.candidate_id);
  // Each failed configuration is recorded exactly (a general rule needs the Debugger's probes).
  std::set<std::string> recorded;
  for (const KnowledgeEntry& entry : knowledge.entries(KnowledgeKind::constraint))
    if (entry.fields.count("when")) recorded.insert(entry.fields.at("when"));
  EXPECT_EQ(recorded, (std::set<std::string>{"A=1,B=1,C=1", "A=1,B=4,C=1"}));
  EXPECT_NE(knowledge.action_plan().find(better.record.candidate_id), std::string::npos) << knowledge.action_plan();
  EXPECT_EQ(knowledge.role_records("knowledge-integrator").size(), 1u);

  // A second pass records nothing twice.
  act("knowledge-integrator", 1, 2, KnowledgeMode::curated);
  EXPECT_EQ(knowledge.entries(KnowledgeKind::strategy).size(), 1u);
}

TEST_F(LabWithFakeEvaluator, ProfileMarksTheCandidateProfiled) {
  lab.ensure_start(1);
  std::optional<CandidateEvaluator::Profile> profile = lab.profile("c0001");
  ASSERT_TRUE(profile.has_value());
  EXPECT_EQ(profile->bound, "compute");
  EXPECT_TRUE(lab.snapshot().find("c0001")->profiled);
  EXPECT_EQ(lab.snapshot().find("c0001")->profile_bound, "compute");
  EXPECT_TRUE(std::filesystem::exists(run.candidate_dir("c0001") / "profile.json"));
  EXPECT_EQ(journaled("profile"), 1);
}

// An LLM agent's profile tool on the head's own code profiles the head, as the builtin Profiler does: the
// unprofiled_best signal then reads the same fact whichever team profiled. Edited code stays a trial.
TEST_F(LabWithFakeEvaluator, TheProfileToolOnTheHeadsCodeMarksTheHeadProfiled) {
  lab.ensure_start(1);
  LabToolBackend backend(lab, *lab.snapshot().find("c0001"), {"kernel.cpp"}, submitting("optimizer", 1));

  Workspace edited = Workspace::create(dir / "edited", {{"kernel.cpp", dir / "start" / "kernel.cpp"}}, {});
  write_file_atomic(edited.root() / "kernel.cpp", "// an edit\n");
  EXPECT_FALSE(backend.evaluate(edited, Stage::profile, "").is_error);
  EXPECT_FALSE(lab.snapshot().find("c0001")->profiled);
  EXPECT_EQ(journaled("profile"), 0);

  // The head's code at other params is not the head either.
  Workspace head = Workspace::create(dir / "head", {{"kernel.cpp", lab.sources_of("c0001") / "kernel.cpp"}}, {});
  EXPECT_FALSE(backend.evaluate(head, Stage::profile, "A=2").is_error);
  EXPECT_FALSE(lab.snapshot().find("c0001")->profiled);
  EXPECT_NE(backend.evaluate(head, Stage::profile, "").content.find("bound: compute"), std::string::npos);
  EXPECT_TRUE(lab.snapshot().find("c0001")->profiled);
  EXPECT_EQ(journaled("profile"), 1);
  EXPECT_EQ(evaluator.profiles, 3);
  EXPECT_EQ(backend.trials(), 3);
}

// Agents change params as the builtin Optimizer does: trials and candidates at the params the model wrote, over
// the head's values and within the declared ones; a role records several candidates in one turn, up to its
// allowance, and what it records carries the params to the build.
TEST_F(LabWithFakeEvaluator, AnAgentChangesParamsAndRecordsSeveralCandidatesInATurn) {
  lab.ensure_start(1);
  LabToolBackend backend(lab, *lab.snapshot().find("c0001"), {"kernel.cpp"}, submitting("optimizer", 2));
  Workspace workspace = Workspace::create(dir / "ws", {{"kernel.cpp", lab.sources_of("c0001") / "kernel.cpp"}}, {});

  ToolResult bad = backend.evaluate(workspace, Stage::timing, "A=3");
  EXPECT_TRUE(bad.is_error);
  EXPECT_NE(bad.content.find("not one of the declared values"), std::string::npos) << bad.content;
  EXPECT_TRUE(backend.evaluate(workspace, Stage::timing, "TILE=3").is_error);  // not a param of the task
  EXPECT_TRUE(backend.submit(workspace, "odd", "A=3").is_error);
  EXPECT_EQ(evaluator.calls, 1);  // the start only: bad params cost nothing

  EXPECT_FALSE(backend.submit(workspace, "wider tile", "A=4").is_error);
  EXPECT_FALSE(backend.submit(workspace, "wider and unrolled", "A=4, B=2").is_error);
  const ToolResult third = backend.submit(workspace, "one more", "A=8");
  EXPECT_FALSE(third.is_error);
  EXPECT_NE(third.content.find("not recorded"), std::string::npos) << third.content;

  ASSERT_EQ(backend.submissions().size(), 2u);
  const RunHistory history = lab.snapshot();
  ASSERT_EQ(history.evaluations.size(), 3u);
  EXPECT_EQ(history.evaluations[1].params.at("A"), "4");
  EXPECT_EQ(history.evaluations[1].params.at("B"), "1");
  EXPECT_EQ(history.evaluations[2].params.at("B"), "2");
  EXPECT_EQ(history.evaluations[2].changes, 2);  // two params changed against the head, the code not at all
  EXPECT_EQ(history.evaluations[2].parent_id, "c0001");
  EXPECT_EQ(lab.best()->candidate_id, history.evaluations[2].candidate_id);  // 4 x 1.5
}

// --budget-evaluations counts every use of the evaluator: candidates, the agents' tool trials and profiles. A trial
// is journaled before it runs, so a resumed run keeps what its trials spent.
TEST_F(LabWithFakeEvaluator, TrialsAndProfilesSpendTheEvaluationBudget) {
  lab.set_budget(Lab::Budget{3, 0, {}});
  lab.ensure_start(1);
  const ParamValues params = lab.snapshot().find("c0001")->params;
  ASSERT_TRUE(lab.trial(dir / "start", params, Stage::build, 1, "optimizer").has_value());
  ASSERT_TRUE(lab.trial_profile(dir / "start", params).has_value());
  EXPECT_EQ(lab.snapshot().evaluations_spent(), 3);

  EXPECT_FALSE(lab.trial(dir / "start", params, Stage::timing, 1, "optimizer").has_value());
  EXPECT_FALSE(lab.profile("c0001").has_value());
  ParamValues other = params;
  other["A"] = "2";
  EXPECT_EQ(lab.evaluate(request(other), 1, Lab::Screening::off).record.state, RecordState::over_budget);
  EXPECT_EQ(evaluator.calls, 2);  // the start and one trial
  EXPECT_EQ(evaluator.profiles, 1);

  EXPECT_EQ(journaled("trial"), 2);
  const RunState replayed = replay_run_state(nlohmann::json::object(), replay_journal(run.journal().path()), {});
  EXPECT_EQ(replayed.history.trials, 2);
  EXPECT_EQ(replayed.history.evaluations_spent(), 3);
}

// Resubmitting a candidate identical to a failure costs nothing ("identical to c0002 (COMPILE_ERROR), not
// re-evaluated"), and used to leave its cycle with "0 of 0 failed to build": the Debugger was dismissed while the
// team kept resubmitting the broken code and the run stalled. The cycle's signals count it now, from the lab's
// history and from the journal alike.
TEST_F(LabWithFakeEvaluator, AResubmittedFailureIsAFailureOfTheCycleThatResubmittedIt) {
  lab.ensure_start(1);
  const ParamValues bad = {{"A", "2"}, {"B", "1"}, {"C", "1"}};
  const LabOutcome first = lab.evaluate(request(bad), 1, Lab::Screening::off);
  ASSERT_EQ(first.record.verdict, Verdict::compile_error);
  const LabOutcome again = lab.evaluate(request(bad), 2, Lab::Screening::off);
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.summary, "identical to " + first.record.candidate_id + " (COMPILE_ERROR), not re-evaluated");
  EXPECT_EQ(evaluator.calls, 2);  // nothing was spent on it

  const SupervisorSettings settings = supervisor_settings(Config{});
  const std::string resubmitted = first.record.candidate_id + " resubmitted by optimizer COMPILE_ERROR";
  const Signals live = compute_signals(lab.snapshot(), knowledge, settings, 2);
  EXPECT_TRUE(live.triggered(k_signal_build_failure_rate)) << live.to_text();
  EXPECT_EQ(live.get(k_signal_build_failure_rate).evidence, "1 of 1 failed to build: " + resubmitted);
  // The same failure twice in two cycles recurs.
  EXPECT_TRUE(live.triggered(k_signal_recurring_error)) << live.to_text();

  const RunState replayed = replay_run_state(nlohmann::json::object(), replay_journal(run.journal().path()), {});
  const Signals resumed = compute_signals(replayed.history, knowledge, settings, 2);
  EXPECT_EQ(resumed.get(k_signal_build_failure_rate).evidence, live.get(k_signal_build_failure_rate).evidence);
}

// An agent's compile or run_tests trial that fails is a failure of its cycle, though no candidate records it; a
// Debugger reproducing the failure it works on (its trials on the failing lineage) is not.
TEST_F(LabWithFakeEvaluator, AFailedTrialIsAFailureOfItsCycle) {
  lab.ensure_start(1);
  const ParamValues bad = {{"A", "2"}, {"B", "1"}, {"C", "1"}};
  ASSERT_TRUE(lab.trial(dir / "start", bad, Stage::build, 3, "optimizer").has_value());
  ASSERT_TRUE(lab.trial(dir / "start", lab.default_params(), Stage::correctness, 3, "optimizer").has_value());
  ASSERT_TRUE(lab.trial(dir / "start", bad, Stage::build, 3, "debugger", "failing").has_value());
  const Signals signals = compute_signals(lab.snapshot(), knowledge, supervisor_settings(Config{}), 3);
  EXPECT_TRUE(signals.triggered(k_signal_build_failure_rate)) << signals.to_text();
  EXPECT_EQ(signals.get(k_signal_build_failure_rate).evidence,
            "1 of 1 failed to build: optimizer's build trial COMPILE_ERROR");
  const RunState replayed = replay_run_state(nlohmann::json::object(), replay_journal(run.journal().path()), {});
  ASSERT_EQ(replayed.history.unrecorded_failures.size(), 2u);
  EXPECT_EQ(replayed.history.unrecorded_failures[1].lineage, "failing");
  EXPECT_EQ(replayed.history.unrecorded_failures[0].stage, Stage::build);
  EXPECT_EQ(replayed.history.unrecorded_failures[0].failure_signature, k_bad_signature);
}

// GPU-seconds are the device time the evaluator measured, ledgered per evaluation (the candidate's record) and per
// trial or profile ("device_time" records), replayed on resume; once they reach the budget, nothing more is
// evaluated. The starting kernel is measured whatever the budget: speedups are read against it.
TEST_F(LabWithFakeEvaluator, DeviceTimeIsLedgeredPerEvaluationAndItsBudgetStopsEvaluations) {
  lab.set_budget(Lab::Budget{0, 1.0, {}});
  lab.set_budget(Lab::Budget{0, 0.4, {}});
  lab.ensure_start(1);  // 0.5 s, past the budget already: measured all the same
  EXPECT_EQ(lab.budget_spent().value_or(""), "the run's GPU-seconds budget is spent");
  EXPECT_FALSE(lab.trial(dir / "start", lab.default_params(), Stage::timing, 1, "optimizer").has_value());

  lab.set_budget(Lab::Budget{0, 1.3, {}});
  const ParamValues params = lab.default_params();
  ASSERT_TRUE(lab.trial(dir / "start", params, Stage::timing, 1, "optimizer").has_value());  // 1.0 s
  ASSERT_TRUE(lab.profile("c0001").has_value());                                             // 1.25 s
  ParamValues other = params;
  other["A"] = "2";
  EXPECT_EQ(lab.evaluate(request(other), 1, Lab::Screening::off).record.state, RecordState::evaluated);  // 1.75 s
  other["A"] = "4";
  const LabOutcome refused = lab.evaluate(request(other), 1, Lab::Screening::off);
  EXPECT_EQ(refused.record.state, RecordState::over_budget);
  EXPECT_NE(refused.summary.find("GPU-seconds"), std::string::npos) << refused.summary;

  const RunHistory history = lab.snapshot();
  EXPECT_DOUBLE_EQ(history.device_seconds(), 1.75);
  EXPECT_DOUBLE_EQ(history.find("c0002")->device_s, 0.5);
  EXPECT_EQ(journaled("device_time"), 2);
  const RunState replayed = replay_run_state(nlohmann::json::object(), replay_journal(run.journal().path()), {});
  EXPECT_DOUBLE_EQ(replayed.history.device_seconds(), 1.75);
}

// The run's wall-time deadline reaches the lab as a check: past it, neither candidates nor trials are evaluated.
TEST_F(LabWithFakeEvaluator, PastTheDeadlineNothingIsEvaluated) {
  bool late = false;
  lab.set_budget(Lab::Budget{0, 0, [&late]() -> std::optional<std::string> {
                               if (late) return "the run's time budget is spent";
                               return std::nullopt;
                             }});
  lab.ensure_start(1);
  EXPECT_FALSE(lab.budget_spent().has_value());
  late = true;
  EXPECT_FALSE(lab.trial(dir / "start", lab.default_params(), Stage::build, 1, "optimizer").has_value());
  ParamValues other = lab.default_params();
  other["A"] = "2";
  EXPECT_EQ(lab.evaluate(request(other), 1, Lab::Screening::off).record.state, RecordState::over_budget);
  EXPECT_EQ(evaluator.calls, 1);
}

// An LLM reviewer's rejection binds as the builtin Disciplinarian's does: the candidate stops being the best, and
// the ruling lands in the knowledge with its reason.
TEST_F(LabWithFakeEvaluator, TheRuleToolMakesARejectionBinding) {
  lab.ensure_start(1);
  ParamValues faster = lab.snapshot().find("c0001")->params;
  faster["A"] = "4";
  const std::string id = lab.evaluate(request(faster), 1, Lab::Screening::off).record.candidate_id;
  ASSERT_EQ(lab.best()->candidate_id, id);

  LabReview review(lab, knowledge, "disciplinarian");
  EXPECT_TRUE(review.rule("c0999", false, "no such candidate").is_error);
  const ToolResult ruled = review.rule(id, false, "two changes at once: A and the epilogue");
  EXPECT_FALSE(ruled.is_error);
  EXPECT_EQ(lab.best()->candidate_id, "c0001");
  EXPECT_TRUE(lab.snapshot().find(id)->rejected);
  EXPECT_EQ(journaled("ruling"), 1);
  const std::vector<KnowledgeEntry> failed = knowledge.entries(KnowledgeKind::failed_attempt);
  ASSERT_FALSE(failed.empty());
  EXPECT_EQ(failed.back().text, "two changes at once: A and the epilogue");
  EXPECT_EQ(failed.back().fields.at("candidate"), id);
}

// The code half of a candidate's change count: separate edited places, nearby lines counting as one.
TEST(SourceDiff, ChangedRegionsCountSeparateEdits) {
  std::string base;
  for (int i = 0; i < 30; ++i) base += "line " + std::to_string(i) + "\n";
  auto with = [&](const std::vector<std::pair<int, std::string>>& edits) {
    std::string text;
    for (int i = 0; i < 30; ++i) {
      std::string line = "line " + std::to_string(i);
      for (const auto& [at, replacement] : edits)
        if (at == i) line = replacement;
      text += line + "\n";
    }
    return text;
  };
  EXPECT_EQ(changed_regions(base, base), 0);
  EXPECT_EQ(changed_regions(base, with({{5, "tile = 64"}})), 1);
  EXPECT_EQ(changed_regions(base, with({{5, "tile = 64"}, {6, "unroll = 4"}})), 1);   // one place
  EXPECT_EQ(changed_regions(base, with({{5, "tile = 64"}, {20, "unroll = 4"}})), 2);  // two places
  EXPECT_EQ(changed_regions(base, base + "extra\n"), 1);
  EXPECT_EQ(changed_regions(base, "new\n" + base + "extra\n"), 2);
  EXPECT_EQ(changed_regions("a", "a\n"), 1);
}

// A candidate's changes: its changed params plus its changed code regions against its parent, whoever wrote it.
TEST_F(LabWithFakeEvaluator, ChangesCountParamsAndEditedRegions) {
  lab.ensure_start(1);
  std::string code;
  for (int i = 0; i < 40; ++i) code += "int v" + std::to_string(i) + " = " + std::to_string(i) + ";\n";
  write_file_atomic(dir / "start" / "kernel.cpp", code);
  ParamValues params = lab.snapshot().find("c0001")->params;
  const std::string base = lab.evaluate(request(params), 1, Lab::Screening::off).record.candidate_id;

  std::filesystem::create_directories(dir / "edited");
  std::string edited = code;
  edited.replace(edited.find("int v3 = 3;"), 11, "int v3 = 33;");
  edited.replace(edited.find("int v30 = 30;"), 13, "int v30 = 300;");
  write_file_atomic(dir / "edited" / "kernel.cpp", edited);
  params["A"] = "2";
  LabRequest two_places = request(params, base);
  two_places.sources_dir = dir / "edited";
  const EvaluationRecord record = lab.evaluate(two_places, 1, Lab::Screening::off).record;
  EXPECT_TRUE(record.structural_change);
  EXPECT_EQ(record.changes, 3);  // one param, two places in the code
}

TEST_F(LabWithFakeEvaluator, OptimizerSpendsItsBudgetOnCoverRootsThenSingleChanges) {
  lab.ensure_start(1);
  TurnOutcome outcome = act("optimizer", 1, 3);
  EXPECT_LE(outcome.usage.evaluations, 3);
  RunHistory snapshot = lab.snapshot();
  EXPECT_GE(snapshot.evaluations.size(), 2u);
  EXPECT_LE(snapshot.evaluation_count(), 4);
  std::set<std::string> keys;
  for (const EvaluationRecord& record : snapshot.evaluations)
    EXPECT_TRUE(keys.insert(record.key()).second) << "evaluated twice: " << record.candidate_id;
}

// Binding rulings of the lab itself: once the run's best meets a once-adopted constraint, a later candidate that
// does not is rejected (neither head nor best, the reason in the knowledge), whoever submitted it.
TEST_F(LabWithFakeEvaluator, ACandidateThatSlidBackFromAnAdoptedConstraintIsRejected) {
  evaluator.adopt_wgmma();
  lab.ensure_start(1);
  auto with = [](const std::string& a, const std::string& b, const std::string& c = "0") {
    return ParamValues{{"A", a}, {"B", b}, {"C", c}};
  };
  // Before adoption nothing is held against a candidate that lacks it.
  const EvaluationRecord faster = lab.evaluate(request(with("2", "1")), 1, Lab::Screening::off).record;
  EXPECT_FALSE(faster.rejected) << faster.ruling;
  ASSERT_TRUE(faster.adopted_constraints.has_value());
  EXPECT_TRUE(faster.adopted_constraints->empty());
  const EvaluationRecord adopted = lab.evaluate(request(with("4", "4")), 1, Lab::Screening::off).record;
  EXPECT_FALSE(adopted.rejected) << adopted.ruling;
  EXPECT_EQ(*adopted.adopted_constraints, std::vector<std::string>{FakeEvaluator::k_adopted});
  ASSERT_EQ(lab.best()->candidate_id, adopted.candidate_id);

  // Faster, but without wgmma: rejected, so it becomes neither the best nor the head a role builds on.
  const EvaluationRecord slid =
      lab.evaluate(request(with("8", "2"), adopted.candidate_id), 2, Lab::Screening::off).record;
  EXPECT_TRUE(slid.passed());
  EXPECT_GT(*slid.speedup, *adopted.speedup);
  EXPECT_TRUE(slid.rejected);
  EXPECT_EQ(slid.ruling.rfind("slid back from wgmma_sm90a: keep warpgroup MMA once adopted", 0), 0u) << slid.ruling;
  EXPECT_NE(slid.ruling.find(adopted.candidate_id), std::string::npos) << slid.ruling;
  EXPECT_EQ(lab.best()->candidate_id, adopted.candidate_id);
  EXPECT_TRUE(lab.snapshot().find(slid.candidate_id)->rejected);
  const std::vector<KnowledgeEntry> failed = knowledge.entries(KnowledgeKind::failed_attempt);
  ASSERT_FALSE(failed.empty());
  EXPECT_EQ(failed.back().fields.at("candidate"), slid.candidate_id);
  EXPECT_EQ(failed.back().text, slid.ruling);

  // A reviewer cannot accept it back into the running.
  LabReview review(lab, knowledge, "disciplinarian");
  EXPECT_TRUE(review.rule(slid.candidate_id, true, "looks fine to me").is_error);
  EXPECT_TRUE(lab.snapshot().find(slid.candidate_id)->rejected);
  EXPECT_EQ(journaled("ruling"), 0);

  // A build that never reached the static stage says nothing about wgmma: it is not ruled on.
  const EvaluationRecord broken = lab.evaluate(request(with("2", "1", "1")), 2, Lab::Screening::off).record;
  EXPECT_FALSE(broken.adopted_constraints.has_value());
  EXPECT_FALSE(broken.rejected);
  // Keeping wgmma and going faster is the way on.
  const EvaluationRecord kept =
      lab.evaluate(request(with("8", "4"), adopted.candidate_id), 2, Lab::Screening::off).record;
  EXPECT_FALSE(kept.rejected) << kept.ruling;
  EXPECT_EQ(lab.best()->candidate_id, kept.candidate_id);

  // Resumed from the journal, the lab keeps the ruling and keeps holding later candidates to it.
  const RunState replayed = replay_run_state(nlohmann::json::object(), replay_journal(run.journal().path()), {});
  const EvaluationRecord* replayed_slid = replayed.history.find(slid.candidate_id);
  ASSERT_NE(replayed_slid, nullptr);
  EXPECT_TRUE(replayed_slid->rejected);
  EXPECT_EQ(replayed_slid->ruling, slid.ruling);
  EXPECT_EQ(*replayed.history.find(kept.candidate_id)->adopted_constraints,
            std::vector<std::string>{FakeEvaluator::k_adopted});
  Lab resumed(run, evaluator, knowledge, replayed.history);
  EXPECT_EQ(resumed.best()->candidate_id, kept.candidate_id);
  const LabOutcome resumed_outcome =
      resumed.evaluate(request(with("4", "1"), kept.candidate_id), 3, Lab::Screening::off);
  EXPECT_FALSE(resumed_outcome.reused);
  const EvaluationRecord& again = resumed_outcome.record;
  EXPECT_TRUE(again.passed());
  EXPECT_TRUE(again.rejected);
  EXPECT_EQ(again.ruling.rfind("slid back from wgmma_sm90a", 0), 0u) << again.ruling;
  EXPECT_EQ(resumed.best()->candidate_id, kept.candidate_id);
}

// The ruling is the lab's, so the builtin team's search meets it as an LLM team's submissions do: walking the
// record in order, every candidate recorded after the best adopted wgmma and lacking it is rejected, no other is,
// and the best at the end has it.
TEST_F(LabWithFakeEvaluator, TheBuiltinOptimizerIsHeldToAnAdoptedConstraint) {
  evaluator.adopt_wgmma();
  lab.ensure_start(1);
  act("optimizer", 1, 16);
  const RunHistory history = lab.snapshot();
  RunHistory before;
  int held = 0;
  for (const EvaluationRecord& record : history.evaluations) {
    const std::optional<EvaluationRecord> best = before.best();
    const auto has_wgmma = [](const EvaluationRecord& r) {
      return r.adopted_constraints && std::find(r.adopted_constraints->begin(), r.adopted_constraints->end(),
                                                FakeEvaluator::k_adopted) != r.adopted_constraints->end();
    };
    const bool slid = best && has_wgmma(*best) && record.adopted_constraints && !has_wgmma(record);
    EXPECT_EQ(record.rejected, slid) << record.candidate_id << " " << describe_params(record.params) << " "
                                     << record.ruling;
    held += slid ? 1 : 0;
    before.evaluations.push_back(record);
  }
  ASSERT_TRUE(lab.best().has_value());
  EXPECT_EQ(lab.best()->params.at("B"), "4") << "the search covers B=4, and B=4 stays once it is best";
  EXPECT_GT(held, 0) << "the search never slid back, so this test checked nothing";
}

}  // namespace
}  // namespace evoteam
