// The LLM supervisor: a valid proposal becomes the team; an invalid one falls back to the rules, recorded.
#include <evoteam/supervisor/supervisor_llm.hpp>

#include <gtest/gtest.h>

#include <evoteam/core/config.hpp>
#include <evoteam/core/fs.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

class SupervisorLlm : public ::testing::Test {
 protected:
  void SetUp() override {
    m_prices = PriceTable::load(std::filesystem::path(EVOTEAM_SOURCE_DIR) / "configs" / "models.json");
    m_prices.allow_unpriced_models(true);
    m_roles = load_roles(default_roles_dir());
    m_previous.roles = {{"optimizer", 1.0, "best"}};
    m_previous.rationale = "first cycle";
    EvaluationRecord start;
    start.candidate_id = "c0001";
    start.cycle = 1;
    start.state = RecordState::evaluated;
    start.verdict = Verdict::pass;
    start.speedup = 1.0;
    m_history.evaluations.push_back(start);
    m_history.cycles.push_back(CycleRecord{1, m_previous, {}, 1.0, true});
    KnowledgeBase knowledge(m_dir / "knowledge");
    m_signals = compute_signals(m_history, knowledge, m_settings, 1);
  }

  static nlohmann::json reply_line(const std::string& reply_text) {
    return {{"content", {{{"type", "text"}, {"text", reply_text}}}},
            {"stop_reason", "end_turn"},
            {"usage", {{"input_tokens", 100}, {"output_tokens", 50}}}};
  }

  Decision decide(const std::string& reply_text) { return decide_with_script(reply_line(reply_text).dump() + "\n"); }

  Decision decide_with_script(const std::string& script) {
    write_file_atomic(m_dir / "script.jsonl", script);
    ProviderSettings settings;
    settings.provider = "scripted";
    settings.scripted_file = m_dir / "script.jsonl";
    std::unique_ptr<LlmProvider> provider = make_provider(settings, m_prices);
    LlmSupervisorInputs inputs{&m_signals,
                               &m_previous,
                               &m_history,
                               &m_settings,
                               &m_roles,
                               "scripted",
                               "host_matmul",
                               "host",
                               "TILE_N in {64, 128} default 64; ",
                               "- forbidden: no inline assembly\n",
                               "",
                               "c0001 1.0x",
                               "{}"};
    std::map<std::string, int> streak;
    return decide_by_llm(inputs, *provider, m_meter, streak);
  }

  testing::TempDir m_dir;
  SupervisorSettings m_settings = supervisor_settings(Config{});
  PriceTable m_prices;
  Meter m_meter;
  std::map<std::string, RoleDefinition> m_roles;
  TeamSpec m_previous;
  RunHistory m_history;
  Signals m_signals;
};

TEST_F(SupervisorLlm, ValidProposalBecomesTheTeam) {
  Decision decision = decide(R"(Here is the team: {"roles":[{"name":"profiling-scientist","budget_share":0.3},
    {"name":"optimizer","budget_share":0.7}],"pattern":"pipeline","directives":["profile first"],
    "knowledge":"digest","rationale":"the best was never profiled","evidence":[{"signal":"unprofiled_best"}]})");
  EXPECT_EQ(decision.team.decided_by, "llm");
  ASSERT_EQ(decision.team.roles.size(), 2u);
  EXPECT_EQ(decision.team.roles[0].name, "profiling-scientist");
  EXPECT_EQ(decision.team.pattern, Pattern::pipeline);
  EXPECT_EQ(m_meter.totals().tokens.input, 100u);
  EXPECT_FALSE(decision.stop);
}

// A reply that names a signal without evidence of its own keeps the measured evidence beside its words, so the
// run's record (and the report's team-change rows) still say what was measured.
TEST_F(SupervisorLlm, TheMeasuredEvidenceStaysBesideTheLlmsWords) {
  Decision decision = decide(R"({"roles":[{"name":"profiling-scientist","budget_share":0.3},
    {"name":"optimizer","budget_share":0.7}],"pattern":"pipeline","rationale":"profile it",
    "evidence":[{"signal":"unprofiled_best"},{"signal":"no_such_signal","evidence":"my words"}]})");
  ASSERT_EQ(decision.team.decided_by, "llm");
  ASSERT_EQ(decision.team.evidence.size(), 2u);
  const nlohmann::json& named = decision.team.evidence[0];
  ASSERT_TRUE(named.contains("measured")) << named.dump();
  EXPECT_EQ(named["measured"], m_signals.by_name.at("unprofiled_best").evidence);
  EXPECT_FALSE(named["measured"].get<std::string>().empty());
  EXPECT_EQ(decision.team.evidence[1].value("evidence", ""), "my words");
  EXPECT_FALSE(decision.team.evidence[1].contains("measured"));
}

// The supervisor names itself as the caller, so a script shared with the team can address its replies to it.
TEST_F(SupervisorLlm, ItAsksAsTheSupervisorSoAScriptCanAddressItsReplies) {
  nlohmann::json for_optimizer = reply_line("not a team");
  for_optimizer["for"] = "optimizer";
  nlohmann::json for_supervisor = reply_line(R"({"roles":[{"name":"debugger","budget_share":0.4},
    {"name":"optimizer","budget_share":0.6}],"pattern":"pipeline","rationale":"builds fail","evidence":[]})");
  for_supervisor["for"] = "supervisor";
  Decision decision = decide_with_script(for_optimizer.dump() + "\n" + for_supervisor.dump() + "\n");
  EXPECT_EQ(decision.team.decided_by, "llm") << decision.team.rationale;
  EXPECT_TRUE(decision.team.has_role("debugger"));
}

// The exchange a person audits: the prompt (with the task's params and constraints), the reply, the rules' decision
// beside it, and which was taken.
TEST_F(SupervisorLlm, ThePromptTheReplyAndTheRulesDecisionAreKept) {
  const std::string reply =
      R"({"roles":[{"name":"optimizer","budget_share":1}],"pattern":"solo","rationale":"go on","evidence":[]})";
  Decision taken = decide(reply);
  ASSERT_TRUE(taken.exchange.is_object());
  EXPECT_EQ(taken.exchange.value("taken", ""), "llm");
  EXPECT_EQ(taken.exchange.value("reply", ""), reply);
  EXPECT_NE(taken.exchange.value("system", "").find("TILE_N in {64, 128}"), std::string::npos);
  EXPECT_NE(taken.exchange.value("system", "").find("no inline assembly"), std::string::npos);
  EXPECT_TRUE(taken.exchange["rules_decision"].contains("roles")) << taken.exchange.dump(2);
  EXPECT_EQ(taken.exchange["usage"].value("input", 0), 100);

  Decision fallback = decide("no JSON here");
  EXPECT_EQ(fallback.exchange.value("taken", "").rfind("rules: ", 0), 0u) << fallback.exchange.dump(2);
  EXPECT_EQ(fallback.exchange.value("reply", ""), "no JSON here");
}

// A proposal to go on while the best is at the roofline does not keep the run going.
TEST_F(SupervisorLlm, TheRooflineStopHoldsWhateverTheLlmProposes) {
  m_history.evaluations[0].roofline = 0.99;
  KnowledgeBase knowledge(m_dir / "knowledge");
  m_signals = compute_signals(m_history, knowledge, m_settings, 1);
  ASSERT_TRUE(m_signals.triggered(k_signal_roofline));
  Decision proposed =
      decide(R"({"roles":[{"name":"optimizer","budget_share":1}],"pattern":"solo","rationale":"more","evidence":[]})");
  EXPECT_FALSE(proposed.stop);
  Decision held = with_hard_stops(proposed, m_signals);
  EXPECT_TRUE(held.stop);
  EXPECT_EQ(held.stop_reason, StopReason::roofline);
  EXPECT_NE(held.team.rationale.find("llm proposal to go on is overruled"), std::string::npos) << held.team.rationale;
  EXPECT_EQ(held.exchange.value("taken", ""), "llm");  // what the LLM said is still kept
}

TEST_F(SupervisorLlm, InvalidProposalFallsBackToRulesAndSaysSo) {
  Decision unknown_role =
      decide(R"({"roles":[{"name":"wizard","budget_share":1}],"pattern":"solo","rationale":"magic","evidence":[]})");
  EXPECT_EQ(unknown_role.team.decided_by, "llm-fallback-rules");
  EXPECT_NE(unknown_role.team.rationale.find("wizard"), std::string::npos) << unknown_role.team.rationale;
  EXPECT_TRUE(unknown_role.team.has_role("optimizer"));

  Decision no_json = decide("I think the team is fine as it is.");
  EXPECT_EQ(no_json.team.decided_by, "llm-fallback-rules");

  Decision over_budget =
      decide(R"({"roles":[{"name":"optimizer","budget_share":0.9},{"name":"debugger","budget_share":0.9}],
    "pattern":"pipeline","rationale":"more of everything","evidence":[]})");
  EXPECT_EQ(over_budget.team.decided_by, "llm-fallback-rules");
}

TEST_F(SupervisorLlm, StopFieldEndsTheRun) {
  Decision decision = decide(R"({"roles":[{"name":"optimizer","budget_share":1}],"pattern":"solo",
    "rationale":"at the roofline","evidence":[],"stop":true})");
  EXPECT_TRUE(decision.stop);
  EXPECT_EQ(to_string(decision.stop_reason), "supervisor_stop");
}

}  // namespace
}  // namespace evoteam
