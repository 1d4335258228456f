// The run's record: an evaluation record's verdict is typed, and the journal keeps today's spellings.
#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>
#include <evoteam/history/history.hpp>

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

}  // namespace
}  // namespace evoteam
