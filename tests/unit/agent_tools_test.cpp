// The tool contract: names, schemas, argument checks, output cutting, evaluation and knowledge seams.
#include <gtest/gtest.h>

#include <evoteam/agent/agent.hpp>
#include <evoteam/agent/tools.hpp>
#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/llm/meter.hpp>

#include "support/memory_knowledge.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

class RecordingEvaluator : public EvaluationBackend {
 public:
  ToolResult evaluate(const Workspace& workspace, Stage through, const std::string& params) override {
    asked_params.push_back(params);
    stages.push_back(through);
    files = workspace.files();
    return {"verdict: " + to_string(through) + " passed", through == Stage::profile};
  }
  ToolResult submit(const Workspace&, const std::string& summary, const std::string& params) override {
    submissions.push_back(summary);
    asked_params.push_back(params);
    return {"recorded", false};
  }
  std::vector<std::string> submissions;
  std::vector<std::string> asked_params;
  std::vector<Stage> stages;
  std::vector<std::string> files;
};

class AgentTools : public ::testing::Test {
 protected:
  AgentTools()
      : m_workspace(Workspace::create(m_dir / "ws", {}, {})), m_tools(m_workspace, &m_evaluator, &m_knowledge) {
    write_file_atomic(m_dir / "ws/kernel.cpp", "int tile = 8;\n");
  }

  testing::TempDir m_dir;
  Workspace m_workspace;
  RecordingEvaluator m_evaluator;
  testing::MemoryKnowledge m_knowledge;
  Toolbox m_tools;
};

TEST_F(AgentTools, ContractNamesWithSchemas) {
  const std::vector<std::string> expected = {
      "read_file", "write_file",     "edit_file",        "list_files", "compile",          "run_tests", "benchmark",
      "profile",   "read_knowledge", "record_knowledge", "rule",       "record_candidate", "submit"};
  EXPECT_EQ(tool_names(), expected);
  std::vector<ToolSpec> specs = m_tools.specs();
  ASSERT_EQ(specs.size(), expected.size());
  for (const ToolSpec& spec : specs) {
    EXPECT_FALSE(spec.description.empty()) << spec.name;
    EXPECT_EQ(spec.input_schema["type"], "object") << spec.name;
    EXPECT_EQ(spec.description.find('\n'), std::string::npos) << spec.name;
  }
  EXPECT_EQ(specs[2].input_schema["required"], (nlohmann::json{"path", "old", "new"}));
  EXPECT_EQ(specs[9].input_schema["required"], (nlohmann::json{"kind", "text"}));
  EXPECT_EQ(specs[10].input_schema["required"], (nlohmann::json{"candidate", "ruling", "reason"}));
  EXPECT_EQ(specs[10].input_schema["properties"]["ruling"]["enum"], (nlohmann::json{"accept", "reject"}));
  EXPECT_EQ(specs[11].input_schema["required"], (nlohmann::json{"summary"}));
  EXPECT_EQ(specs[12].input_schema["required"], (nlohmann::json{"summary"}));
  EXPECT_TRUE(specs[8].input_schema["required"].empty());
  // Every tool that builds takes param changes.
  for (std::size_t i : {4u, 5u, 6u, 7u, 11u, 12u})
    EXPECT_TRUE(specs[i].input_schema["properties"].contains("params")) << specs[i].name;
}

// The rule tool hands a ruling to the review seam; a ruling outside accept/reject is the model's format error.
TEST_F(AgentTools, RuleGoesThroughTheReviewSeam) {
  struct RecordingReview : ReviewAccess {
    ToolResult rule(const std::string& candidate_id, bool accepted, const std::string& reason) override {
      rulings.push_back(candidate_id + (accepted ? " accept " : " reject ") + reason);
      return {"ruled", false};
    }
    std::vector<std::string> rulings;
  } review;
  Toolbox tools(m_workspace, nullptr, nullptr, {"rule"}, {}, &review);
  EXPECT_EQ(tools.call("rule", {{"candidate", "c0007"}, {"ruling", "reject"}, {"reason", "two changes"}}).content,
            "ruled");
  const ToolOutcome maybe = tools.call("rule", {{"candidate", "c0007"}, {"ruling", "maybe"}, {"reason", "?"}});
  EXPECT_EQ(maybe.status, ToolStatus::format_error);
  EXPECT_NE(maybe.content.find("must be one of accept, reject"), std::string::npos) << maybe.content;
  EXPECT_EQ(review.rulings, std::vector<std::string>{"c0007 reject two changes"});
  Toolbox without(m_workspace, nullptr, nullptr, {"rule"});
  EXPECT_EQ(without.call("rule", {{"candidate", "c1"}, {"ruling", "accept"}, {"reason", "ok"}}).status,
            ToolStatus::failed);
}

TEST_F(AgentTools, RoleSubsetKeepsContractOrderAndRefusesOthers) {
  Toolbox limited(m_workspace, nullptr, nullptr, {"submit", "read_file"});
  std::vector<ToolSpec> specs = limited.specs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "read_file");
  ToolOutcome outcome = limited.call("write_file", {{"path", "x"}, {"content", "y"}});
  EXPECT_EQ(outcome.status, ToolStatus::format_error);
  EXPECT_NE(outcome.content.find("your tools are: read_file, submit"), std::string::npos);
  EXPECT_THROW(Toolbox(m_workspace, nullptr, nullptr, {"bash"}), InvalidInput);
}

TEST_F(AgentTools, ArgumentsAreCheckedAgainstTheSchema) {
  EXPECT_EQ(m_tools.call("read_file", nlohmann::json::object()).status, ToolStatus::format_error);
  EXPECT_EQ(m_tools.call("read_file", {{"path", 3}}).status, ToolStatus::format_error);
  ToolOutcome extra = m_tools.call("read_file", {{"path", "kernel.cpp"}, {"offset", "1"}});
  EXPECT_EQ(extra.status, ToolStatus::format_error);
  EXPECT_NE(extra.content.find("unknown argument 'offset'"), std::string::npos);
  EXPECT_EQ(m_tools.call("record_knowledge", {{"kind", "gossip"}, {"text", "x"}}).status, ToolStatus::format_error);
  EXPECT_EQ(m_tools.call("nope", nlohmann::json::object()).status, ToolStatus::format_error);
}

TEST_F(AgentTools, FileToolsGoThroughTheSandbox) {
  EXPECT_EQ(m_tools.call("read_file", {{"path", "kernel.cpp"}}).content, "int tile = 8;\n");
  EXPECT_TRUE(m_tools.call("edit_file", {{"path", "kernel.cpp"}, {"old", "8"}, {"new", "16"}}).status ==
              ToolStatus::ok);
  EXPECT_EQ(read_file(m_dir / "ws/kernel.cpp"), "int tile = 16;\n");
  ToolOutcome escape = m_tools.call("write_file", {{"path", "../evil"}, {"content", "x"}});
  EXPECT_EQ(escape.status, ToolStatus::failed);
  EXPECT_NE(escape.content.find("error: "), std::string::npos);
  EXPECT_NE(m_tools.call("list_files", {{"path", "."}}).content.find("kernel.cpp"), std::string::npos);
}

TEST_F(AgentTools, EvaluationToolsMapToStages) {
  m_tools.call("compile", nlohmann::json::object());
  m_tools.call("run_tests", nlohmann::json::object());
  m_tools.call("benchmark", nlohmann::json::object());
  ToolOutcome profiled = m_tools.call("profile", nlohmann::json::object());
  EXPECT_EQ(m_evaluator.stages, (std::vector<Stage>{Stage::build, Stage::correctness, Stage::timing, Stage::profile}));
  EXPECT_EQ(m_evaluator.files, std::vector<std::string>{"kernel.cpp"});
  EXPECT_EQ(profiled.status, ToolStatus::failed);  // the fake fails the profile stage
  Toolbox without(m_workspace, nullptr, nullptr);
  EXPECT_EQ(without.call("compile", nlohmann::json::object()).status, ToolStatus::failed);
}

TEST_F(AgentTools, KnowledgeIsRecordedAndReadBack) {
  EXPECT_EQ(m_tools.call("read_knowledge", nlohmann::json::object()).content, "(no knowledge recorded yet)");
  ASSERT_EQ(
      m_tools.call("record_knowledge", {{"kind", "failed_attempt"}, {"text", "tile 64\nspills registers"}}).status,
      ToolStatus::ok);
  m_tools.call("record_knowledge", {{"kind", "strategy"}, {"text", "tile 16 wins 1.5x"}});
  EXPECT_EQ(m_knowledge.notes.at("failed_attempt"), "tile 64\nspills registers\n");
  const std::string one = m_tools.call("read_knowledge", {{"topic", "strategy"}}).content;
  EXPECT_NE(one.find("tile 16 wins"), std::string::npos);
  EXPECT_EQ(one.find("tile 64"), std::string::npos);
  const std::string all = m_tools.call("read_knowledge", nlohmann::json::object()).content;
  EXPECT_NE(all.find("tile 64"), std::string::npos);
  EXPECT_EQ(m_tools.call("read_knowledge", {{"topic", "gossip"}}).status, ToolStatus::failed);
}

TEST_F(AgentTools, SubmitCarriesTheSummary) {
  ToolOutcome outcome = m_tools.call("submit", {{"summary", "tile 16"}});
  EXPECT_TRUE(outcome.submitted);
  EXPECT_EQ(outcome.summary, "tile 16");
  EXPECT_EQ(m_evaluator.submissions, (std::vector<std::string>{"tile 16"}));
}

// record_candidate records and the turn goes on; submit records and ends it; both pass the model's params through.
// A role that cannot edit has no kernel of its own: its submit records nothing.
TEST_F(AgentTools, RecordCandidateKeepsTheTurnGoingAndParamsReachTheBackend) {
  ToolOutcome kept = m_tools.call("record_candidate", {{"summary", "tile 16"}, {"params", "TILE=16"}});
  EXPECT_FALSE(kept.submitted);
  EXPECT_EQ(kept.content, "recorded");
  EXPECT_TRUE(m_tools.call("benchmark", {{"params", "TILE=32"}}).content.find("timing") != std::string::npos);
  EXPECT_TRUE(m_tools.call("submit", {{"summary", "tile 32"}, {"params", "TILE=32"}}).submitted);
  EXPECT_EQ(m_evaluator.submissions, (std::vector<std::string>{"tile 16", "tile 32"}));
  EXPECT_EQ(m_evaluator.asked_params, (std::vector<std::string>{"TILE=16", "TILE=32", "TILE=32"}));

  Toolbox reviewer(m_workspace, &m_evaluator, &m_knowledge, {"read_file", "submit"});
  EXPECT_TRUE(reviewer.call("submit", {{"summary", "reviewed"}}).submitted);
  EXPECT_EQ(m_evaluator.submissions.size(), 2u);
  EXPECT_EQ(reviewer.call("record_candidate", {{"summary", "x"}}).status, ToolStatus::format_error);
}

TEST_F(AgentTools, LongOutputKeepsHeadAndTail) {
  const std::string log = std::string(3000, 'a') + std::string(3000, 'b');
  write_file_atomic(m_dir / "ws/build.log", log);
  Toolbox small(m_workspace, nullptr, nullptr, {}, ToolSettings{1000});
  const std::string shown = small.call("read_file", {{"path", "build.log"}}).content;
  EXPECT_LT(shown.size(), 1200u);
  EXPECT_EQ(shown.substr(0, 500), std::string(500, 'a'));
  EXPECT_EQ(shown.substr(shown.size() - 500), std::string(500, 'b'));
  EXPECT_NE(shown.find("5000 characters left out"), std::string::npos) << shown;
}

TEST(AgentTruncate, CutsOnCharacterBoundaries) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "\xC3\xA9";  // é
  const std::string cut = truncate_middle(text, 11);
  const nlohmann::json as_json = cut;
  EXPECT_NO_THROW((void)as_json.dump());
  EXPECT_EQ(truncate_middle("short", 100), "short");
}

TEST(AgentConfig, EveryKeyReadsFromTheBuiltInDefaults) {
  Config config;
  AgentSettings settings = agent_settings_from_config(config);
  EXPECT_EQ(settings.limits.max_steps, 100);
  EXPECT_EQ(settings.max_reply_tokens, 8192);
  EXPECT_FALSE(settings.temperature.has_value());
  EXPECT_EQ(workspace_limits_from_config(config).max_write_bytes, 1048576u);
  EXPECT_EQ(tool_settings_from_config(config).max_output_chars, 20000u);
  config.overlay_assignment("llm.temperature=0.2", "--set");
  config.overlay_assignment("agent.tool_output_max_chars=500", "--set");
  EXPECT_EQ(agent_settings_from_config(config).temperature, 0.2);
  EXPECT_EQ(tool_settings_from_config(config).max_output_chars, 500u);
}

}  // namespace
}  // namespace evoteam
