// The run's record: an evaluation record's verdict is typed, and the journal keeps today's spellings.
#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>
#include <evoteam/history/history.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/history/stop_reason.hpp>

namespace evoteam {
namespace {

EvaluationRecord evaluated(Verdict verdict, std::optional<double> speedup) {
  EvaluationRecord record;
  record.candidate_id = "c0002";
  record.state = RecordState::evaluated;
  record.verdict = verdict;
  record.speedup = speedup;
  return record;
}

TEST(EvaluationRecords, PassAndNoisyWithASpeedupPassEverythingElseDoesNot) {
  EXPECT_TRUE(evaluated(Verdict::pass, 1.2).passed());
  EXPECT_TRUE(evaluated(Verdict::noisy, 1.2).passed());
  EXPECT_FALSE(evaluated(Verdict::pass, std::nullopt).passed());
  EXPECT_FALSE(evaluated(Verdict::suspicious_speedup, 9.0).passed());
  EXPECT_TRUE(evaluated(Verdict::numeric_mismatch, std::nullopt).failed());
  EXPECT_FALSE(evaluated(Verdict::infra_error, std::nullopt).failed());  // the evaluator's fault, not the candidate's
  EvaluationRecord pending;
  EXPECT_FALSE(pending.passed());
  EXPECT_FALSE(pending.failed());
  EXPECT_FALSE(pending.has(Verdict::infra_error));
}

TEST(EvaluationRecords, JournalSpellingsRoundTrip) {
  for (Verdict verdict : all_verdicts()) {
    const nlohmann::json value = evaluated(verdict, 1.5).to_json();
    EXPECT_EQ(value["verdict"], to_string(verdict));
    const EvaluationRecord back = EvaluationRecord::from_json(value);
    EXPECT_TRUE(back.has(verdict)) << value;
    EXPECT_EQ(value["passed"], back.passed());
  }
  const std::pair<RecordState, const char*> states[] = {
      {RecordState::pending, "PENDING"}, {RecordState::blocked, "BLOCKED"}, {RecordState::over_budget, "BUDGET"}};
  for (const auto& [state, spelling] : states) {
    EvaluationRecord record;
    record.state = state;
    const nlohmann::json value = record.to_json();
    EXPECT_EQ(value["verdict"], spelling);
    EXPECT_EQ(value["passed"], false);
    EXPECT_EQ(value["blocked_by_knowledge"], state == RecordState::blocked);
    EXPECT_EQ(EvaluationRecord::from_json(value).state, state);
  }
}

// The journal keeps which once-adopted constraints a candidate met, and the lab's ruling on it, for resume.
TEST(EvaluationRecords, AdoptedConstraintsAndRulingsSurviveTheJournal) {
  EvaluationRecord record = evaluated(Verdict::pass, 3.0);
  EXPECT_FALSE(EvaluationRecord::from_json(record.to_json()).adopted_constraints.has_value());
  record.adopted_constraints = std::vector<std::string>{"wgmma_sm90a"};
  record.rejected = true;
  record.ruling = "slid back from wgmma_sm90a: keep it";
  const EvaluationRecord back = EvaluationRecord::from_json(record.to_json());
  EXPECT_EQ(back.adopted_constraints, std::vector<std::string>{"wgmma_sm90a"});
  EXPECT_TRUE(back.rejected);
  EXPECT_EQ(back.ruling, record.ruling);
}

TEST(EvaluationRecords, AnUnknownVerdictInTheJournalIsInvalidInputNamingTheField) {
  nlohmann::json value = evaluated(Verdict::pass, 1.0).to_json();
  value["verdict"] = "GREAT";
  try {
    EvaluationRecord::from_json(value);
    FAIL() << "accepted an unknown verdict";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("'verdict'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("GREAT"), std::string::npos) << error.what();
  }
}

TEST(EvaluationRecords, BlockedRecordsCostNoEvaluationAndAreNeverTheBest) {
  RunHistory history;
  history.evaluations = {evaluated(Verdict::pass, 1.0), evaluated(Verdict::noisy, 2.0)};
  history.evaluations[1].candidate_id = "c0003";
  EvaluationRecord blocked;
  blocked.candidate_id = "c0004";
  blocked.state = RecordState::blocked;
  blocked.speedup = 9.0;
  history.evaluations.push_back(blocked);
  EXPECT_EQ(history.evaluation_count(), 2);
  ASSERT_TRUE(history.best().has_value());
  EXPECT_EQ(history.best()->candidate_id, "c0003");
}

// --- The record layer: every journal record with one JSON form each way --------------------------------------

JournalEntry round_trip(const JournalEntry& entry) {
  const JournalLine line = read_journal_line(to_json(entry));
  EXPECT_TRUE(line.entry.has_value()) << to_json(entry).dump();
  return line.entry.value_or(entry);
}

TEST(JournalRecords, EveryRecordTypeReadsBackAsWritten) {
  EvaluationRecord record = evaluated(Verdict::pass, 2.5);
  record.set_ruling(false, Ruling{RulingKind::slid_back, "slid back from uses_wgmma: gone"});
  MeterTotals totals;
  totals.tokens = Usage{10, 20, 30, 40};
  totals.cost_usd = 0.5;
  totals.calls = 3;
  totals.wall_s = 12;
  const std::vector<JournalEntry> entries = {
      RunStartEntry{"host_matmul", {{"provider", "builtin"}}, "earlier-run"},
      ResumeEntry{2, 7},
      CycleStartEntry{3, {{"pattern", "solo"}}, "initial team", nlohmann::json::array()},
      TurnEntry{3, "optimizer", "two candidates", RoleUsage{2, 100, 0.25, 4}, ""},
      CycleEndEntry{3, {{"optimizer", RoleUsage{2, 100, 0.25, 4}}}, 40, 9.5, {{"debugger", 1}}, "c0002"},
      StopEntry{RunStatus::finished, "max_cycles"},
      EvaluationEntry{record},
      RulingEntry{"c0002", false, "disciplinarian", Ruling{RulingKind::several_changes, "several changes at once"}},
      ProfileEntry{"c0002", "memory", "dram bound"},
      DeviceTimeEntry{1.5, "cuda:0"},
      TrialEntry{Stage::correctness},
      BudgetTickEntry{totals},
      UnrecordedFailureEntry{UnrecordedFailure{4, "optimizer", "c0003", std::nullopt, Verdict::compile_error,
                                               "COMPILE_ERROR: kernel.cpp:3: error", "best"}},
  };
  ASSERT_EQ(entries.size(), all_record_types().size()) << "a record type without a case here";
  for (const JournalEntry& entry : entries) {
    const nlohmann::json written = to_json(entry);
    EXPECT_EQ(written["type"], to_string(type_of(entry)));
    EXPECT_EQ(to_json(round_trip(entry)), written);
  }
  const auto ruling = std::get<RulingEntry>(round_trip(entries[7]));
  EXPECT_EQ(ruling.ruling.kind, RulingKind::several_changes);
  const auto evaluation = std::get<EvaluationEntry>(round_trip(entries[6]));
  EXPECT_TRUE(evaluation.record.ruled(RulingKind::slid_back));
  EXPECT_EQ(std::get<BudgetTickEntry>(round_trip(entries[11])).totals.tokens, (Usage{10, 20, 30, 40}));
}

// Journals written before rulings carried their kind: the kind is read once from the words they were written with.
TEST(JournalRecords, RulingsWithoutAKindGetItFromTheirWords) {
  const auto kind_of = [](const std::string& reason) {
    const JournalLine line = read_journal_line(
        {{"type", "ruling"}, {"candidate_id", "c0003"}, {"accepted", false}, {"role", "x"}, {"reason", reason}});
    return std::get<RulingEntry>(*line.entry).ruling.kind;
  };
  EXPECT_EQ(kind_of("several changes at once: TILE_M 32->64, UNROLL 1->4"), RulingKind::several_changes);
  EXPECT_EQ(kind_of("reached by one change from c0002"), RulingKind::reached_by_one_change);
  EXPECT_EQ(kind_of("slid back from uses_wgmma: no wgmma (the run's best, c0004, meets it)"), RulingKind::slid_back);
  EXPECT_EQ(kind_of("re-verification with fresh seeds failed: NUMERIC_MISMATCH"), RulingKind::reverification);
  EXPECT_EQ(kind_of("two changes at once: A and the epilogue"), RulingKind::review);
  // A record that says its kind is believed over its words.
  const JournalLine line = read_journal_line({{"type", "ruling"},
                                              {"candidate_id", "c0003"},
                                              {"kind", "review"},
                                              {"reason", "several changes, but each was measured alone"}});
  EXPECT_EQ(std::get<RulingEntry>(*line.entry).ruling.kind, RulingKind::review);

  const EvaluationRecord old = EvaluationRecord::from_json(
      {{"candidate_id", "c0002"}, {"verdict", "PASS"}, {"rejected", true}, {"ruling", "several changes at once: X"}});
  EXPECT_TRUE(old.ruled(RulingKind::several_changes));
  EXPECT_FALSE(EvaluationRecord::from_json({{"candidate_id", "c0002"}, {"verdict", "PASS"}})
                   .ruled(RulingKind::review));  // no ruling at all
}

TEST(JournalRecords, UnknownTypesAreSkippedAndDamagedRecordsNamed) {
  const JournalLine future = read_journal_line({{"type", "campaign_step"}, {"t", "2026-12-04T10:00:00.000Z"}});
  EXPECT_FALSE(future.entry);
  EXPECT_EQ(future.type, "campaign_step");
  EXPECT_EQ(future.at, "2026-12-04T10:00:00.000Z");
  const nlohmann::json damaged = {{"type", "evaluation"}, {"record", {{"candidate_id", "c0001"}, {"verdict", "OK"}}}};
  EXPECT_THROW(read_journal_line(damaged), InvalidInput);
  std::string problem;
  EXPECT_FALSE(read_journal_line(damaged, &problem).entry);
  EXPECT_NE(problem.find("evaluation record"), std::string::npos) << problem;
  EXPECT_THROW(read_journal_line({{"type", "device_time"}, {"seconds", "many"}}), InvalidInput);
  EXPECT_THROW(read_journal_line({{"type", "stop"}, {"status", "paused"}}), InvalidInput);
}

// The one rule from a stop reason to the run's status and exit code, shared by the run loop and `evoteam wait`.
TEST(JournalRecords, TheRunEndRuleGivesStatusAndExitCode) {
  EXPECT_EQ(run_end(StopReason::interrupted, 0).status, RunStatus::stopped);
  EXPECT_EQ(run_end(StopReason::interrupted, 0).exit_code, ExitCode::interrupted);
  EXPECT_EQ(run_end(StopReason::infra_errors, 0).status, RunStatus::failed);
  EXPECT_EQ(run_end(StopReason::infra_errors, 0).exit_code, ExitCode::failure);
  EXPECT_EQ(run_end(StopReason::max_cycles, 0).exit_code, ExitCode::success);
  EXPECT_EQ(run_end(StopReason::max_cycles, 2.0).exit_code, ExitCode::budget_exhausted);
  EXPECT_EQ(run_end(StopReason::target_reached, 2.0).exit_code, ExitCode::success);
  EXPECT_EQ(run_end(StopReason::budget_usd, 0).status, RunStatus::finished);
  EXPECT_EQ(run_end(StopReason::budget_usd, 0).exit_code, ExitCode::budget_exhausted);
  // The provider refused every member: a failed run with its own code (README, "Exit codes"), never success.
  EXPECT_EQ(run_end(StopReason::provider_refused, 0).status, RunStatus::failed);
  EXPECT_EQ(static_cast<int>(run_end(StopReason::provider_refused, 0).exit_code), 6);
  EXPECT_EQ(parse_stop_reason("provider_refused"), StopReason::provider_refused);
}

}  // namespace
}  // namespace evoteam
