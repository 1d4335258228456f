// The lab and the builtin roles over a synthetic param space with a fake evaluator: speedup is a function of
// the params, and any config with C=1 fails to build with one fixed signature.
#include <set>

#include <gtest/gtest.h>

#include <atomic>

#include <evoteam/agent/workspace.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/team/lab.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/team/team.hpp>

#include "support/temp_dir.hpp"
#include "supervisor/run_state.hpp"
#include "team/lab_tool_backend.hpp"
#include "team/source_diff.hpp"

namespace evoteam {
namespace {

const char* const k_bad_signature = "COMPILE_ERROR: C=1 is not supported";

class FakeEvaluator : public CandidateEvaluator {
 public:
  explicit FakeEvaluator(std::filesystem::path start) : m_start(std::move(start)) {}

  Result evaluate(const std::filesystem::path& sources_dir, const ParamValues& params, Stage,
                  std::uint64_t) override {
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
    double b = params.at("B") == "2" ? 1.5 : 1.0;
    result.verdict = Verdict::pass;
    result.speedup = a * b;
    result.roofline = a * b / 100.0;
    result.summary = "passes";
    result.eval_json = {{"verdict", "PASS"}};
    return result;
  }

  Profile profile(const std::filesystem::path&, const ParamValues&) override {
    ++profiles;
    return {"compute", "fake profile", nlohmann::json::object()};
  }

  std::vector<ParamSpec> param_space() const override {
    return {{"A", {"1", "2", "4", "8"}, "1", "tile"}, {"B", {"1", "2", "4"}, "1", "unroll"}, {"C", {"0", "1"}, "0", "mode"}};
  }

  std::filesystem::path starting_sources() const override { return m_start; }

  std::atomic<int> calls{0};
  std::atomic<int> profiles{0};

 private:
  std::filesystem::path m_start;
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
  LabOutcome other = screened.evaluate(request({{"A", "4"}, {"B", "1"}, {"C", "0"}}), 1, Lab::Screening::against_knowledge);
  EXPECT_FALSE(other.record.blocked()) << other.summary;
  EXPECT_TRUE(other.record.passed()) << other.summary;
  mine.add(KnowledgeKind::constraint, KnowledgeEntry{"when A=8: fails here", {{"when", "A=8"}}, ""});
  LabOutcome own = screened.evaluate(request({{"A", "8"}, {"B", "1"}, {"C", "0"}}), 1, Lab::Screening::against_knowledge);
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
  const EvaluationRecord* reviewed = lab.snapshot().find(single.record.candidate_id);
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
  const ParamValues params = lab.snapshot().find("c0001")->params;
  LabToolBackend backend(lab, "c0001", params, {"kernel.cpp"});

  Workspace edited = Workspace::create(dir / "edited", {{"kernel.cpp", dir / "start" / "kernel.cpp"}}, {});
  write_file_atomic(edited.root() / "kernel.cpp", "// an edit\n");
  EXPECT_FALSE(backend.evaluate(edited, Stage::profile).is_error);
  EXPECT_FALSE(lab.snapshot().find("c0001")->profiled);
  EXPECT_EQ(journaled("profile"), 0);

  Workspace head = Workspace::create(dir / "head", {{"kernel.cpp", lab.sources_of("c0001") / "kernel.cpp"}}, {});
  EXPECT_NE(backend.evaluate(head, Stage::profile).content.find("bound: compute"), std::string::npos);
  EXPECT_TRUE(lab.snapshot().find("c0001")->profiled);
  EXPECT_EQ(journaled("profile"), 1);
  EXPECT_EQ(evaluator.profiles, 2);
  EXPECT_EQ(backend.calls(), 2);
}

// --budget-evaluations counts every use of the evaluator: candidates, the agents' tool trials and profiles. A trial
// is journaled before it runs, so a resumed run keeps what its trials spent.
TEST_F(LabWithFakeEvaluator, TrialsAndProfilesSpendTheEvaluationBudget) {
  lab.set_evaluation_limit(3);
  lab.ensure_start(1);
  const ParamValues params = lab.snapshot().find("c0001")->params;
  ASSERT_TRUE(lab.trial(dir / "start", params, Stage::build).has_value());
  ASSERT_TRUE(lab.trial_profile(dir / "start", params).has_value());
  EXPECT_EQ(lab.snapshot().evaluations_spent(), 3);

  EXPECT_FALSE(lab.trial(dir / "start", params, Stage::timing).has_value());
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
  auto with = [&](std::vector<std::pair<int, std::string>> edits) {
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

}  // namespace
}  // namespace evoteam
