// The agent loop driven by the scripted provider: a whole conversation, every stop, malformed replies,
// escapes, resume.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include <evoteam/agent/agent.hpp>
#include <evoteam/agent/transcript.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>

#include "support/memory_knowledge.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;

fs::path script(const std::string& name) { return fs::path(EVOTEAM_SOURCE_DIR) / "tests/data/scripted" / name; }

class FakeEvaluator : public EvaluationBackend {
 public:
  ToolResult evaluate(const Workspace& workspace, Stage through, const std::string& params) override {
    asked_params.push_back(params);
    stages.push_back(through);
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    const bool tiled = workspace.read("kernel.cpp").find("tile = 16") != std::string::npos;
    return {"verdict: pass\nspeedup: " + std::string(tiled ? "1.50x" : "1.00x"), false};
  }
  ToolResult submit(const Workspace&, const std::string& summary, const std::string& params) override {
    submissions.push_back(summary);
    asked_params.push_back(params);
    return {"recorded", false};
  }
  std::vector<std::string> submissions;
  std::vector<std::string> asked_params;
  std::vector<Stage> stages;
  std::chrono::milliseconds delay{0};
};

// Keeps a copy of every request, then asks the real provider.
class RecordingProvider : public LlmProvider {
 public:
  explicit RecordingProvider(LlmProvider& inner) : m_inner(inner) {}
  LlmResult complete(const LlmRequest& request) override {
    requests.push_back(request);
    return m_inner.complete(request);
  }
  std::string name() const override { return m_inner.name(); }
  std::vector<LlmRequest> requests;

 private:
  LlmProvider& m_inner;
};

class AgentLoop : public ::testing::Test {
 protected:
  AgentLoop()
      : m_prices(PriceTable::load(fs::path(EVOTEAM_SOURCE_DIR) / "configs/models.json")),
        m_workspace(make_workspace()),
        m_tools(m_workspace, &m_evaluator, &m_knowledge) {
    m_settings.role = "optimizer";
    m_settings.model = "scripted";
    m_prompt.system = "You optimise kernels.";
    m_prompt.instance =
        render_instance("Make the kernel faster.", {"# Toy task", {"one change at a time"}, "", "", ""});
  }

  Workspace make_workspace() {
    fs::create_directories(m_dir / "task");
    write_file_atomic(m_dir / "task/kernel.cpp", "int tile = 8;\n");
    write_file_atomic(m_dir / "task/reference.cpp", "// the truth\n");
    write_file_atomic(m_dir / "secret.txt", "outside");
    return Workspace::create(m_dir / "ws", {{"kernel.cpp", m_dir / "task/kernel.cpp"}},
                             {{"reference.cpp", m_dir / "task/reference.cpp"}});
  }

  std::unique_ptr<LlmProvider> scripted(const fs::path& file) {
    ProviderSettings settings;
    settings.provider = "scripted";
    settings.scripted_file = file;
    return make_provider(settings, m_prices);
  }

  AgentResult run(LlmProvider& provider) {
    return run_agent(m_settings, m_prompt, provider, m_tools, m_meter, transcript());
  }
  AgentResult run(const std::string& script_name) { return run(*scripted(script(script_name))); }
  fs::path transcript() const { return m_dir / "cycles/0001/agents/optimizer/transcript.jsonl"; }

  fs::path write_script(const std::string& text) {
    write_file_atomic(m_dir / "script.jsonl", text);
    return m_dir / "script.jsonl";
  }

  testing::TempDir m_dir;
  PriceTable m_prices;
  Workspace m_workspace;
  FakeEvaluator m_evaluator;
  testing::MemoryKnowledge m_knowledge;
  Toolbox m_tools;
  Meter m_meter;
  AgentSettings m_settings;
  AgentPrompt m_prompt;
};

TEST_F(AgentLoop, ScriptedConversationReadsEditsCompilesTestsAndSubmits) {
  AgentResult result = run("edit_compile_submit.jsonl");
  EXPECT_EQ(result.stop, Stop::submitted) << result.detail;
  EXPECT_EQ(result.summary, "tile 8 -> 16: 1.5x on every workload");
  EXPECT_EQ(result.steps, 5);
  EXPECT_EQ(result.usage, (Usage{280, 100, 690, 50}));
  EXPECT_EQ(m_meter.totals().tokens, result.usage);
  EXPECT_EQ(m_meter.totals().calls, 5u);
  EXPECT_EQ(read_file(m_workspace.root() / "kernel.cpp"), "int tile = 16;\n");
  EXPECT_EQ(m_evaluator.stages, (std::vector<Stage>{Stage::build, Stage::correctness, Stage::timing}));

  std::vector<nlohmann::json> records = read_transcript(transcript());
  ASSERT_EQ(records.size(), 13u);  // system, instance, 5 x (reply, results), stop
  EXPECT_EQ(records[0]["role"], "system");
  EXPECT_EQ(records[0]["content"], "You optimise kernels.");
  EXPECT_NE(records[1]["content"][0]["text"].get<std::string>().find("## Directives\n\n- one change at a time"),
            std::string::npos);
  for (std::size_t i = 2; i < 12; i += 2) {
    EXPECT_EQ(records[i]["role"], "assistant");
    EXPECT_TRUE(records[i].contains("usage"));
    EXPECT_TRUE(records[i].contains("latency_s"));
    EXPECT_EQ(records[i]["model"], "scripted");
    EXPECT_EQ(records[i + 1]["role"], "user");
    EXPECT_EQ(records[i + 1]["content"][0]["type"], "tool_result");
  }
  EXPECT_EQ(records[3]["content"][0]["content"], "int tile = 8;\n");
  EXPECT_EQ(records[12]["type"], "stop");
  EXPECT_EQ(records[12]["stop"], "submitted");
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i]["seq"], i + 1);
    EXPECT_TRUE(records[i]["t"].is_string());
  }
}

TEST_F(AgentLoop, StepLimitStops) {
  m_settings.limits.max_steps = 2;
  AgentResult result = run("edit_compile_submit.jsonl");
  EXPECT_EQ(result.stop, Stop::step_limit);
  EXPECT_EQ(result.steps, 2);
  EXPECT_EQ(read_transcript(transcript()).back()["stop"], "step_limit");
}

TEST_F(AgentLoop, TokenLimitStops) {
  m_settings.limits.max_tokens = 100;
  AgentResult result = run("edit_compile_submit.jsonl");
  EXPECT_EQ(result.stop, Stop::token_limit);
  EXPECT_EQ(result.steps, 1);
}

TEST_F(AgentLoop, CostLimitStopsOnThePricedModel) {
  m_settings.model = "claude-sonnet-4-5";
  m_settings.limits.max_cost_usd = 1e-9;
  AgentResult result = run("edit_compile_submit.jsonl");
  EXPECT_EQ(result.stop, Stop::cost_limit);
  EXPECT_EQ(result.steps, 1);
  EXPECT_GT(result.cost_usd, 0.0);
  EXPECT_DOUBLE_EQ(m_meter.totals().cost_usd, result.cost_usd);
}

TEST_F(AgentLoop, TimeLimitStops) {
  m_evaluator.delay = std::chrono::milliseconds(300);
  m_settings.limits.max_wall_s = 0.2;
  AgentResult result = run("edit_compile_submit.jsonl");
  EXPECT_EQ(result.stop, Stop::time_limit);
  EXPECT_EQ(result.steps, 3);
}

TEST_F(AgentLoop, RunWideBudgetOfTheMeterStops) {
  m_meter.set_limits(MeterLimits{0, 0, 0});
  m_meter.charge(Usage{10, 10, 0, 0}, 5.0);
  m_meter.set_limits(MeterLimits{0, 1.0, 0});
  AgentResult result = run("edit_compile_submit.jsonl");
  EXPECT_EQ(result.stop, Stop::cost_limit);
  EXPECT_EQ(result.steps, 0);
  EXPECT_NE(result.detail.find("run's"), std::string::npos);
}

// The prompt is known before it is sent: a call whose prompt alone the run's token budget cannot pay for is not sent.
// The scripted provider counts it as its server would (the input tokens of the reply it would serve: 3,854 here,
// as in the run that first showed it), and the turn ends on the token budget, saying both figures.
TEST_F(AgentLoop, ACallWhosePromptAloneWouldCrossTheTokenBudgetIsNotSent) {
  m_meter.set_limits(MeterLimits{1000, 0, 0});
  std::unique_ptr<LlmProvider> provider = scripted(
      write_script(R"({"content":[{"type":"tool_use","id":"t1","name":"read_file","input":{"path":"kernel.cpp"}}],)"
                   R"("stop_reason":"tool_use","usage":{"input_tokens":3854,"output_tokens":20}})"
                   "\n"));
  AgentResult result = run(*provider);
  EXPECT_EQ(result.stop, Stop::token_limit) << result.detail;
  EXPECT_EQ(result.steps, 0);
  EXPECT_EQ(m_meter.totals().tokens.total(), 0u);
  EXPECT_EQ(m_meter.totals().calls, 0u);
  EXPECT_NE(result.detail.find("3854"), std::string::npos) << result.detail;
  EXPECT_NE(result.detail.find("1000 of 1000"), std::string::npos) << result.detail;
  EXPECT_EQ(read_transcript(transcript()).back()["stop"], "token_limit");
  // The budget counts as spent once a call was refused for it: no later turn asks.
  EXPECT_EQ(m_meter.check(), LimitHit::tokens);
}

// A provider that cannot count for free is weighed by the estimate from the prompt's text: a 12,000-character system
// prompt (about 3,000 tokens) is not sent against a budget of 1,000.
TEST_F(AgentLoop, AnEstimatedPromptOverTheTokenBudgetIsNotSentEither) {
  m_meter.set_limits(MeterLimits{1000, 0, 0});
  m_prompt.system = std::string(12000, 'x');
  std::unique_ptr<LlmProvider> inner = scripted(script("edit_compile_submit.jsonl"));
  RecordingProvider provider(*inner);
  AgentResult result = run(provider);
  EXPECT_EQ(result.stop, Stop::token_limit) << result.detail;
  EXPECT_TRUE(provider.requests.empty());
  EXPECT_EQ(m_meter.totals().tokens.total(), 0u);
}

// A budget the team shares with the evaluator (wall time, GPU-seconds, evaluations) ends a turn at its next tool
// call: the call is answered, not run, and the turn stops as budget_spent, journaled in the transcript.
TEST_F(AgentLoop, ASpentRunBudgetEndsTheTurnAtItsNextToolCall) {
  m_tools.set_budget_check([this]() -> std::optional<std::string> {
    if (m_evaluator.stages.empty()) return std::nullopt;
    return "the run's GPU-seconds budget is spent";
  });
  AgentResult result = run("edit_compile_submit.jsonl");
  EXPECT_EQ(result.stop, Stop::budget_spent);
  EXPECT_EQ(result.detail, "the run's GPU-seconds budget is spent");
  EXPECT_EQ(result.steps, 3);  // read, edit, then compile and run_tests in one reply: run_tests found it spent
  EXPECT_EQ(m_evaluator.stages, (std::vector<Stage>{Stage::build}));
  EXPECT_TRUE(m_evaluator.submissions.empty());
  EXPECT_EQ(read_transcript(transcript()).back()["stop"], "budget_spent");

  // A turn that starts with the budget spent costs no model call.
  fs::remove(transcript());
  const std::uint64_t calls = m_meter.totals().calls;
  EXPECT_EQ(run("edit_compile_submit.jsonl").stop, Stop::budget_spent);
  EXPECT_EQ(m_meter.totals().calls, calls);
}

TEST_F(AgentLoop, InterruptStopsBeforeTheNextCall) {
  install_interrupt_forwarding();
  std::raise(SIGINT);
  AgentResult result = run("edit_compile_submit.jsonl");
  uninstall_interrupt_forwarding();
  reset_interrupted_for_tests();
  EXPECT_EQ(result.stop, Stop::interrupted);
  EXPECT_EQ(result.steps, 0);
}

TEST_F(AgentLoop, MalformedRepliesStopAfterTheCap) {
  m_settings.limits.max_consecutive_malformed = 3;
  AgentResult result = run("malformed.jsonl");
  EXPECT_EQ(result.stop, Stop::malformed_replies);
  EXPECT_EQ(result.steps, 3);
  std::vector<nlohmann::json> records = read_transcript(transcript());
  // The text-only reply is answered with a note; the unparsable body is recorded as a failed call.
  EXPECT_EQ(records[3]["content"][0]["type"], "text");
  EXPECT_NE(records[3]["content"][0]["text"].get<std::string>().find("called no tool"), std::string::npos);
  EXPECT_EQ(records[4]["type"], "call_failed");
  EXPECT_EQ(records[4]["kind"], "malformed_reply");
}

TEST_F(AgentLoop, MalformedRepliesGoBackToTheModelAsErrors) {
  m_settings.limits.max_consecutive_malformed = 10;
  AgentResult result = run("malformed.jsonl");
  EXPECT_EQ(result.stop, Stop::submitted);
  EXPECT_EQ(result.steps, 6);
  std::map<std::string, nlohmann::json> results;
  for (const nlohmann::json& record : read_transcript(transcript()))
    if (record.value("role", "") == "user")
      for (const nlohmann::json& block : record["content"])
        if (block["type"] == "tool_result") results[block["tool_use_id"]] = block;
  EXPECT_TRUE(results["toolu_11"]["is_error"]);
  EXPECT_NE(results["toolu_11"]["content"].get<std::string>().find("unknown tool 'run_shell'"), std::string::npos);
  EXPECT_TRUE(results["toolu_12"]["is_error"]);
  EXPECT_NE(results["toolu_12"]["content"].get<std::string>().find("not a JSON object"), std::string::npos);
  EXPECT_TRUE(results["toolu_13"]["is_error"]);
  EXPECT_NE(results["toolu_13"]["content"].get<std::string>().find("missing argument 'path'"), std::string::npos);
}

TEST_F(AgentLoop, ProviderFailureStops) {
  AgentResult result =
      run(*scripted(write_script(R"({"failure": {"kind": "http_status", "http_status": 401, "message": "bad key"}})")));
  EXPECT_EQ(result.stop, Stop::provider_failed);
  EXPECT_NE(result.detail.find("bad key"), std::string::npos);
  // A refused key is permanent: asking again cannot help, and the run must know it.
  EXPECT_TRUE(result.provider_refused);
  std::vector<nlohmann::json> records = read_transcript(transcript());
  EXPECT_EQ(records[records.size() - 2]["http_status"], 401);
}

// An overloaded server, or a script that ran out, may answer later: not a refusal.
TEST_F(AgentLoop, ScriptRunningOutIsAProviderFailure) {
  AgentResult result = run(*scripted(write_script("// nothing to say\n")));
  EXPECT_EQ(result.stop, Stop::provider_failed);
  EXPECT_EQ(result.steps, 1);
  EXPECT_FALSE(result.provider_refused);
  AgentResult overloaded =
      run(*scripted(write_script(R"({"failure": {"kind": "http_status", "http_status": 529, "message": "busy"}})")));
  EXPECT_EQ(overloaded.stop, Stop::provider_failed);
  EXPECT_FALSE(overloaded.provider_refused);
}

TEST_F(AgentLoop, PathEscapesComeBackAsErrors) {
  fs::create_symlink(m_dir / "secret.txt", m_workspace.root() / "outside_link");
  AgentResult result = run("escapes.jsonl");
  EXPECT_EQ(result.stop, Stop::submitted);
  std::vector<nlohmann::json> records = read_transcript(transcript());
  const nlohmann::json& escapes = records[3]["content"];
  ASSERT_EQ(escapes.size(), 5u);
  for (const nlohmann::json& block : escapes) EXPECT_TRUE(block["is_error"]) << block.dump();
  EXPECT_NE(escapes[0]["content"].get<std::string>().find("leaves the workspace"), std::string::npos);
  EXPECT_NE(escapes[1]["content"].get<std::string>().find("absolute"), std::string::npos);
  EXPECT_NE(escapes[2]["content"].get<std::string>().find("outside the workspace"), std::string::npos);
  EXPECT_NE(escapes[3]["content"].get<std::string>().find("read-only"), std::string::npos);
  EXPECT_EQ(read_file(m_dir / "secret.txt"), "outside");
  EXPECT_EQ(read_file(m_workspace.root() / "reference.cpp"), "// the truth\n");
  EXPECT_FALSE(fs::exists(m_dir / "escape.txt"));
  EXPECT_EQ(read_file(m_workspace.root() / "notes/plan.md"), "try tiling");
}

TEST_F(AgentLoop, ResumeAnswersAToolCallLeftWithoutResult) {
  {
    Transcript crashed(transcript());
    crashed.append({{"type", "message"}, {"role", "system"}, {"content", "You optimise kernels."}});
    crashed.append({{"type", "message"}, {"role", "user"}, {"content", {{{"type", "text"}, {"text", "Go."}}}}});
    crashed.append(
        {{"type", "message"},
         {"role", "assistant"},
         {"content",
          {{{"type", "tool_use"}, {"id", "toolu_99"}, {"name", "compile"}, {"input", nlohmann::json::object()}}}},
         {"usage", {{"input", 7}, {"output", 3}}},
         {"cost_usd", 0.0},
         {"agent_elapsed_s", 1.5}});
  }
  std::unique_ptr<LlmProvider> inner = scripted(write_script(
      R"({"content":[{"type":"tool_use","id":"toolu_100","name":"submit","input":{"summary":"resumed"}}],"usage":{"input_tokens":5,"output_tokens":1}})"));
  RecordingProvider provider(*inner);
  AgentResult result = run(provider);
  EXPECT_EQ(result.stop, Stop::submitted);
  EXPECT_EQ(result.steps, 2);
  EXPECT_EQ(result.usage, (Usage{12, 4, 0, 0}));
  EXPECT_TRUE(m_evaluator.stages.empty());  // the cut-off compile is not silently re-run
  ASSERT_EQ(provider.requests.size(), 1u);
  const std::vector<Message>& sent = provider.requests[0].messages;
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(provider.requests[0].system, "You optimise kernels.");
  ASSERT_EQ(sent[2].content.size(), 1u);
  EXPECT_EQ(sent[2].content[0].kind, BlockKind::tool_result);
  EXPECT_EQ(sent[2].content[0].id, "toolu_99");
  EXPECT_TRUE(sent[2].content[0].is_error);
}

// The loop names the agent's role as the caller: a scripted line addressed to the role reaches it, and only it.
TEST_F(AgentLoop, EveryCallNamesTheAgentsRoleAsItsCaller) {
  m_settings.role = "debugger";
  std::unique_ptr<LlmProvider> inner = scripted(write_script(
      R"({"for":"optimizer","content":[{"type":"tool_use","id":"t1","name":"submit","input":{"summary":"not mine"}}],"usage":{"input_tokens":1,"output_tokens":1}})"
      "\n"
      R"({"for":"debugger","content":[{"type":"tool_use","id":"t2","name":"submit","input":{"summary":"mine"}}],"usage":{"input_tokens":1,"output_tokens":1}})"));
  RecordingProvider provider(*inner);
  AgentResult result = run(provider);
  EXPECT_EQ(result.stop, Stop::submitted) << result.detail;
  EXPECT_EQ(result.summary, "mine");
  ASSERT_EQ(provider.requests.size(), 1u);
  EXPECT_EQ(provider.requests[0].caller, "debugger");
}

TEST_F(AgentLoop, ResumeAfterSubmitReturnsWithoutCalling) {
  ASSERT_EQ(run("edit_compile_submit.jsonl").stop, Stop::submitted);
  std::unique_ptr<LlmProvider> inner = scripted(write_script(""));
  RecordingProvider provider(*inner);
  AgentResult again = run(provider);
  EXPECT_EQ(again.stop, Stop::submitted);
  EXPECT_EQ(again.summary, "tile 8 -> 16: 1.5x on every workload");
  EXPECT_TRUE(provider.requests.empty());
}

TEST_F(AgentLoop, OldToolResultsAreClearedNearTheContextWindow) {
  write_file_atomic(m_workspace.root() / "big.txt", std::string(1000, 'x'));
  std::string lines;
  for (int i = 0; i < 5; ++i)
    lines += R"({"content":[{"type":"tool_use","id":"t)" + std::to_string(i) +
             R"(","name":"read_file","input":{"path":"big.txt"}}],"usage":{"input_tokens":900,"output_tokens":1}})"
             "\n";
  lines +=
      R"({"content":[{"type":"tool_use","id":"t9","name":"submit","input":{"summary":"s"}}],"usage":{"input_tokens":1}})";
  m_settings.context_window = 1000;
  m_settings.context_clear_fraction = 0.5;
  std::unique_ptr<LlmProvider> inner = scripted(write_script(lines));
  RecordingProvider provider(*inner);
  ASSERT_EQ(run(provider).stop, Stop::submitted);
  const std::vector<Message>& last = provider.requests.back().messages;
  EXPECT_NE(last[2].content[0].text.find("cleared"), std::string::npos);
  EXPECT_EQ(last.back().content[0].text, std::string(1000, 'x'));
  // The transcript keeps what was really said.
  EXPECT_EQ(read_transcript(transcript())[3]["content"][0]["content"], std::string(1000, 'x'));
}

TEST(AgentStop, WordsRoundTrip) {
  for (Stop stop : {Stop::submitted, Stop::step_limit, Stop::token_limit, Stop::cost_limit, Stop::time_limit,
                    Stop::malformed_replies, Stop::interrupted, Stop::provider_failed})
    EXPECT_EQ(stop_from_string(to_string(stop)), stop);
}

}  // namespace
}  // namespace evoteam
