// Signals and the rule-based supervisor over hand-built histories: each trigger adds its role with evidence,
// a cleared trigger removes it, the roofline stops the run, stagnation changes the pattern and lineage.
#include <gtest/gtest.h>

#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/supervisor/supervisor_policy.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

EvaluationRecord passing(const std::string& id, int cycle, double speedup, const std::string& parent = "c0001") {
  EvaluationRecord record;
  record.candidate_id = id;
  record.parent_id = id == "c0001" ? "" : parent;
  record.author_role = id == "c0001" ? "start" : "optimizer";
  record.cycle = cycle;
  record.params = {{"tile", id}};
  record.sources_hash = "h";
  record.changes = id == "c0001" ? 0 : 1;
  record.state = RecordState::evaluated;
  record.verdict = Verdict::pass;
  record.speedup = speedup;
  record.roofline = 0.2;
  record.profiled = true;
  record.profile_bound = "memory";
  return record;
}

EvaluationRecord failing(const std::string& id, int cycle, const std::string& verdict, const std::string& signature) {
  EvaluationRecord record = passing(id, cycle, 0);
  record.verdict = parse_verdict(verdict).value();
  record.speedup.reset();
  record.roofline.reset();
  record.profiled = false;
  record.failure_signature = signature;
  return record;
}

class SupervisorPolicy : public ::testing::Test {
 protected:
  SupervisorPolicy() : knowledge(dir / "knowledge") {}

  Decision decide(int cycle, const TeamSpec& previous) {
    signals = compute_signals(history, knowledge, settings, cycle);
    return decide_by_rules(signals, previous, settings, clear_streak);
  }

  static bool has_evidence(const TeamSpec& team, const std::string& signal) {
    for (const nlohmann::json& item : team.evidence)
      if (item.value("signal", "") == signal) return true;
    return false;
  }

  static bool has_directive(const TeamSpec& team, const std::string& prefix) {
    for (const std::string& directive : team.directives)
      if (directive.rfind(prefix, 0) == 0) return true;
    return false;
  }

  static double share_sum(const TeamSpec& team) {
    double total = 0;
    for (const RoleAssignment& role : team.roles) total += role.budget_share;
    return total;
  }

  testing::TempDir dir;
  KnowledgeBase knowledge;
  SupervisorSettings settings = supervisor_settings(Config{});
  RunHistory history;
  Signals signals;
  std::map<std::string, int> clear_streak;
  TeamSpec solo = initial_team(TeamMode::evolving, settings);
};

TEST_F(SupervisorPolicy, HealthyCycleKeepsTheSoloOptimizer) {
  history.evaluations = {passing("c0001", 1, 1.0), passing("c0002", 1, 1.5)};
  Decision decision = decide(1, solo);
  EXPECT_FALSE(decision.stop);
  EXPECT_EQ(decision.team.role_names(), std::vector<std::string>{"optimizer"});
  EXPECT_EQ(decision.team.pattern, Pattern::solo);
  EXPECT_DOUBLE_EQ(share_sum(decision.team), 1.0);
  EXPECT_FALSE(signals.triggered(k_signal_build_failure_rate));
  EXPECT_FALSE(signals.triggered(k_signal_unprofiled_best));
}

TEST_F(SupervisorPolicy, RepeatedBuildFailuresAddADebuggerWithEvidence) {
  history.evaluations = {passing("c0001", 1, 1.0)};
  for (const char* id : {"c0002", "c0003", "c0004", "c0005"})
    history.evaluations.push_back(failing(id, 1, "COMPILE_ERROR", "COMPILE_ERROR: identifier 'smem' is undefined"));
  history.evaluations.push_back(passing("c0006", 1, 1.2));
  Decision decision = decide(1, solo);
  EXPECT_TRUE(signals.triggered(k_signal_build_failure_rate));
  EXPECT_TRUE(signals.triggered(k_signal_recurring_error));
  EXPECT_NE(signals.get(k_signal_recurring_error).evidence.find("smem"), std::string::npos);
  EXPECT_TRUE(decision.team.has_role("debugger"));
  EXPECT_TRUE(decision.team.has_role("optimizer"));
  EXPECT_NE(decision.team.pattern, Pattern::solo);
  EXPECT_TRUE(has_evidence(decision.team, k_signal_build_failure_rate));
  EXPECT_NE(decision.team.rationale.find("+debugger"), std::string::npos) << decision.team.rationale;
  EXPECT_NEAR(share_sum(decision.team), 1.0, 1e-9);
}

// Every verdict the candidate answers for falls in exactly one failure class; the correctness verdicts
// (DISTRIBUTION_SPECIFIC among them) count towards the test-failure rate.
TEST_F(SupervisorPolicy, EveryCorrectnessVerdictCountsAsATestFailure) {
  for (Verdict verdict : all_verdicts()) {
    if (verdict_class(verdict) != VerdictClass::test_failure) continue;
    history.evaluations = {passing("c0001", 1, 1.0)};
    for (const char* id : {"c0002", "c0003", "c0004"})
      history.evaluations.push_back(failing(id, 1, to_string(verdict), to_string(verdict) + ": " + id));
    decide(1, solo);
    EXPECT_TRUE(signals.triggered(k_signal_test_failure_rate)) << to_string(verdict);
    EXPECT_FALSE(signals.triggered(k_signal_build_failure_rate)) << to_string(verdict);
  }
  EXPECT_EQ(verdict_class(Verdict::distribution_specific), VerdictClass::test_failure);
}

TEST_F(SupervisorPolicy, RepeatedRecordedFailureAddsACuratingKnowledgeIntegrator) {
  history.evaluations = {passing("c0001", 1, 1.0), passing("c0002", 1, 1.3)};
  EvaluationRecord repeat = failing("c0003", 1, "NUMERIC_MISMATCH", "NUMERIC_MISMATCH: max error 3.0");
  repeat.repeated_recorded_failure = true;
  history.evaluations.push_back(repeat);
  history.evaluations.push_back(passing("c0004", 1, 1.4));
  history.evaluations.push_back(passing("c0005", 1, 1.5));
  Decision decision = decide(1, solo);
  EXPECT_TRUE(signals.triggered(k_signal_repeated_failures));
  EXPECT_NE(signals.get(k_signal_repeated_failures).evidence.find("c0003"), std::string::npos);
  EXPECT_TRUE(decision.team.has_role("knowledge-integrator"));
  EXPECT_EQ(decision.team.knowledge, KnowledgeMode::curated);
  EXPECT_TRUE(has_evidence(decision.team, k_signal_repeated_failures));

  // Without the repeat, no integrator and the knowledge mode stays a digest.
  history.evaluations[2].repeated_recorded_failure = false;
  Decision plain = decide(1, solo);
  EXPECT_FALSE(plain.team.has_role("knowledge-integrator"));
  EXPECT_EQ(plain.team.knowledge, KnowledgeMode::digest);
}

TEST_F(SupervisorPolicy, MultiChangeCandidatesAddADisciplinarianWithTheOneChangeDirective) {
  history.evaluations = {passing("c0001", 1, 1.0)};
  for (const char* id : {"c0002", "c0003", "c0004"}) {
    EvaluationRecord record = passing(id, 1, 1.2);
    record.changes = 3;
    history.evaluations.push_back(record);
  }
  Decision decision = decide(1, solo);
  EXPECT_TRUE(signals.triggered(k_signal_changes_per_candidate));
  EXPECT_NE(signals.get(k_signal_changes_per_candidate).evidence.find("c0002 (3)"), std::string::npos);
  EXPECT_TRUE(decision.team.has_role("disciplinarian"));
  EXPECT_TRUE(has_directive(decision.team, "One measurable change per candidate"));
  EXPECT_TRUE(has_evidence(decision.team, k_signal_changes_per_candidate));
}

// The starting kernel is recorded in cycle 1 but is no attempt of the team's: the first cycle's rates and means
// read the team's candidates only, so one two-change candidate calls the Disciplinarian (it averaged 1.0 with
// the start) and one failed build is "1 of 1".
TEST_F(SupervisorPolicy, TheStartingKernelIsNoAttemptOfTheFirstCycle) {
  EvaluationRecord bundled = passing("c0002", 1, 1.5);
  bundled.changes = 2;
  history.evaluations = {passing("c0001", 1, 1.0), bundled};
  Decision decision = decide(1, solo);
  EXPECT_DOUBLE_EQ(signals.get(k_signal_changes_per_candidate).value, 2.0);
  EXPECT_TRUE(signals.triggered(k_signal_changes_per_candidate));
  EXPECT_TRUE(decision.team.has_role("disciplinarian"));

  history.evaluations = {passing("c0001", 1, 1.0), failing("c0002", 1, "COMPILE_ERROR", "COMPILE_ERROR: x")};
  decide(1, solo);
  EXPECT_DOUBLE_EQ(signals.get(k_signal_build_failure_rate).value, 1.0);
  EXPECT_EQ(signals.get(k_signal_build_failure_rate).evidence.rfind("1 of 1 failed to build", 0), 0u)
      << signals.get(k_signal_build_failure_rate).evidence;
}

TEST_F(SupervisorPolicy, UnprofiledBestAddsAProfilingScientist) {
  history.evaluations = {passing("c0001", 1, 1.0), passing("c0002", 1, 1.8)};
  history.evaluations[1].profiled = false;
  Decision decision = decide(1, solo);
  EXPECT_TRUE(signals.triggered(k_signal_unprofiled_best));
  EXPECT_NE(signals.get(k_signal_unprofiled_best).evidence.find("c0002"), std::string::npos);
  EXPECT_TRUE(decision.team.has_role("profiling-scientist"));
  // Measure first: the profiler leads the pipeline.
  EXPECT_EQ(decision.team.pattern, Pattern::pipeline);
  EXPECT_EQ(decision.team.roles.front().name, "profiling-scientist");
  EXPECT_TRUE(has_evidence(decision.team, k_signal_unprofiled_best));
}

TEST_F(SupervisorPolicy, ClearedTriggerRemovesTheRole) {
  history.evaluations = {passing("c0001", 1, 1.0)};
  for (const char* id : {"c0002", "c0003", "c0004"})
    history.evaluations.push_back(failing(id, 1, "COMPILE_ERROR", "COMPILE_ERROR: bad"));
  history.evaluations.push_back(passing("c0005", 1, 1.1));
  history.evaluations[4].profiled = false;
  Decision first = decide(1, solo);
  ASSERT_TRUE(first.team.has_role("debugger"));
  ASSERT_TRUE(first.team.has_role("profiling-scientist"));

  // Cycles 2 and 3 build, improve and are profiled; by cycle 3 the failures have left the two-cycle window.
  history.evaluations[4].profiled = true;
  history.evaluations.push_back(passing("c0006", 2, 1.3));
  history.evaluations.push_back(passing("c0007", 3, 1.4));
  Decision second = decide(3, first.team);
  EXPECT_FALSE(signals.triggered(k_signal_build_failure_rate));
  EXPECT_FALSE(signals.triggered(k_signal_recurring_error));
  EXPECT_FALSE(second.team.has_role("debugger")) << second.team.rationale;
  EXPECT_FALSE(second.team.has_role("profiling-scientist")) << second.team.rationale;
  EXPECT_TRUE(second.team.has_role("optimizer"));
  EXPECT_NE(second.team.rationale.find("-debugger"), std::string::npos) << second.team.rationale;
  EXPECT_EQ(second.team.pattern, Pattern::solo);
}

TEST_F(SupervisorPolicy, ClearAfterCyclesKeepsARoleUntilItsTriggerStaysClear) {
  settings.clear_after_cycles = 2;
  TeamSpec previous = solo;
  previous.roles = {{"optimizer", 0.5, "best"}, {"debugger", 0.5, "best"}};
  previous.pattern = Pattern::pipeline;
  history.evaluations = {passing("c0001", 1, 1.0), passing("c0002", 1, 1.2)};
  Decision kept = decide(1, previous);
  EXPECT_TRUE(kept.team.has_role("debugger"));
  history.evaluations.push_back(passing("c0003", 2, 1.4));
  Decision removed = decide(2, kept.team);
  EXPECT_FALSE(removed.team.has_role("debugger"));
}

TEST_F(SupervisorPolicy, RooflineAtThresholdStopsTheRun) {
  history.evaluations = {passing("c0001", 1, 1.0), passing("c0002", 1, 9.0)};
  history.evaluations[1].roofline = 0.94;
  Decision below = decide(1, solo);
  EXPECT_FALSE(below.stop);
  history.evaluations[1].roofline = 0.96;
  Decision at = decide(1, solo);
  EXPECT_TRUE(signals.triggered(k_signal_roofline));
  EXPECT_TRUE(at.stop);
  EXPECT_EQ(to_string(at.stop_reason), "roofline");
  EXPECT_TRUE(has_evidence(at.team, k_signal_roofline));
}

TEST_F(SupervisorPolicy, StagnationChangesPatternAndAddsTheNewLineageDirective) {
  history.evaluations = {passing("c0001", 1, 1.0), passing("c0002", 1, 1.5)};
  history.evaluations[1].profiled = false;  // keeps the profiler in, so the team has two roles
  history.evaluations.push_back(passing("c0003", 2, 1.2));
  history.evaluations.push_back(passing("c0004", 3, 1.4));
  TeamSpec previous = solo;
  previous.roles = {{"profiling-scientist", 0.5, "best"}, {"optimizer", 0.5, "best"}};
  previous.pattern = Pattern::pipeline;

  Decision early = decide(2, previous);
  EXPECT_FALSE(signals.triggered(k_signal_stagnation));
  EXPECT_FALSE(has_directive(early.team, "Stagnation"));

  Decision decision = decide(3, previous);
  EXPECT_TRUE(signals.triggered(k_signal_stagnation));
  EXPECT_EQ(signals.get(k_signal_stagnation).value, 2);
  EXPECT_TRUE(has_directive(decision.team, "Stagnation"));
  EXPECT_NE(decision.team.pattern, previous.pattern);
  EXPECT_TRUE(has_evidence(decision.team, k_signal_stagnation));
}

TEST_F(SupervisorPolicy, HardPathBlockedPutsTheDebuggerOnTheFailingLineInParallel) {
  history.evaluations = {passing("c0001", 1, 1.0), passing("c0002", 1, 1.5)};
  for (const char* id : {"c0003", "c0004", "c0005"}) {
    EvaluationRecord record = failing(id, 1, "NUMERIC_MISMATCH", "NUMERIC_MISMATCH: wgmma path");
    record.lineage = "failing";
    history.evaluations.push_back(record);
  }
  Decision decision = decide(1, solo);
  EXPECT_TRUE(signals.triggered(k_signal_hard_path_blocked));
  EXPECT_EQ(decision.team.pattern, Pattern::parallel);
  bool debugger_on_failing = false;
  for (const RoleAssignment& role : decision.team.roles)
    if (role.name == "debugger") debugger_on_failing = role.lineage == "failing";
  EXPECT_TRUE(debugger_on_failing);
}

TEST_F(SupervisorPolicy, FixedAndSingleModesHaveTheirAblationTeams) {
  TeamSpec fixed = initial_team(TeamMode::fixed, settings);
  EXPECT_EQ(fixed.roles.size(), 4u);
  for (const char* role : {"optimizer", "debugger", "profiling-scientist", "knowledge-integrator"})
    EXPECT_TRUE(fixed.has_role(role)) << role;
  EXPECT_EQ(fixed.pattern, Pattern::pipeline);
  EXPECT_EQ(fixed.decided_by, "fixed");
  EXPECT_NEAR(share_sum(fixed), 1.0, 1e-9);

  TeamSpec single = initial_team(TeamMode::single, settings);
  EXPECT_EQ(single.role_names(), std::vector<std::string>{"optimizer"});
  EXPECT_EQ(single.pattern, Pattern::solo);
  EXPECT_EQ(single.knowledge, KnowledgeMode::none);
  EXPECT_EQ(single.decided_by, "single");
  EXPECT_DOUBLE_EQ(share_sum(single), 1.0);

  EXPECT_EQ(initial_team(TeamMode::evolving, settings).decided_by, "rules");
  EXPECT_EQ(team_mode_from_string("fixed"), TeamMode::fixed);
  EXPECT_EQ(to_string(TeamMode::single), "single");
  EXPECT_THROW(team_mode_from_string("anarchy"), InvalidInput);
}

TEST_F(SupervisorPolicy, SignalsSerialiseWithEvidence) {
  history.evaluations = {passing("c0001", 1, 1.0)};
  signals = compute_signals(history, knowledge, settings, 1);
  nlohmann::json json = signals.to_json();
  EXPECT_EQ(json["cycle"], 1);
  EXPECT_GE(json["signals"].size(), 10u);
  EXPECT_NE(signals.to_text().find(k_signal_roofline), std::string::npos);
  EXPECT_ANY_THROW(signals.get("no_such_signal"));
}

}  // namespace
}  // namespace evoteam
