// What real local servers do that hosted APIs do not, each played by the loopback fake server: replies without
// usage, replies cut at the length limit, a context-length error, tool calls written as text, arguments that are
// not an object, several calls in one reply, a body cut short, and a slow first token.
#include <gtest/gtest.h>

#include <evoteam/agent/agent.hpp>
#include <evoteam/agent/transcript.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/llm/meter.hpp>

#include "llm/providers.hpp"
#include "support/fake_llm_server.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;
using testing::FakeLlmServer;
using testing::FakeProtocol;
using testing::FakeReply;

class QuietBackend : public EvaluationBackend {
 public:
  ToolResult evaluate(const Workspace&, Stage, const std::string&) override { return {"verdict: pass", false}; }
  ToolResult submit(const Workspace&, const std::string&, const std::string&) override { return {"recorded", false}; }
};

// A Chat Completions reply as llama.cpp writes it: `usage` only when given.
nlohmann::json chat_reply(const std::string& content, const std::vector<nlohmann::json>& tool_calls,
                          const std::string& finish, const std::optional<std::pair<int, int>>& usage) {
  nlohmann::json message = {{"role", "assistant"}, {"content", content}};
  if (!tool_calls.empty()) message["tool_calls"] = tool_calls;
  nlohmann::json reply = {{"id", "chatcmpl-1"},
                          {"object", "chat.completion"},
                          {"model", "tiny-local"},
                          {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", finish}}}}};
  if (usage)
    reply["usage"] = {{"prompt_tokens", usage->first},
                      {"completion_tokens", usage->second},
                      {"total_tokens", usage->first + usage->second}};
  return reply;
}

nlohmann::json call(const std::string& id, const std::string& name, const std::string& arguments) {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}};
}

// llama.cpp's answer to a prompt longer than its context (server-common.cpp, ERROR_TYPE_EXCEED_CONTEXT_SIZE).
FakeReply context_error() {
  return FakeReply::json(400, {{"error",
                                {{"code", 400},
                                 {"message",
                                  "request (5000 tokens) exceeds the available context size (4096 tokens), "
                                  "try increasing it"},
                                 {"type", "exceed_context_size_error"}}}});
}

class AgentLocalServer : public ::testing::Test {
 protected:
  AgentLocalServer()
      : m_prices(PriceTable::load(fs::path(EVOTEAM_SOURCE_DIR) / "configs/models.json")),
        m_workspace(make_workspace()),
        m_tools(m_workspace, &m_backend, nullptr) {
    m_settings.role = "optimizer";
    m_settings.model = "tiny-local";
  }

  Workspace make_workspace() {
    write_file_atomic(m_dir / "kernel.cpp", "int tile = 8;\n");
    return Workspace::create(m_dir / "run/ws", {{"kernel.cpp", m_dir / "kernel.cpp"}}, {});
  }

  ProviderSettings settings(double request_timeout_s = 5) const {
    ProviderSettings settings;
    settings.provider = "openai";
    settings.model = "tiny-local";
    settings.base_url = m_server.base_url();
    settings.local_endpoint = true;
    settings.http.connect_timeout_s = 2;
    settings.http.request_timeout_s = request_timeout_s;
    settings.http.max_retries = 0;
    return settings;
  }

  AgentResult run() {
    std::unique_ptr<LlmProvider> llm = make_provider(settings(), m_prices);
    return run_agent(m_settings, {"You optimise kernels.", "Make it fast."}, *llm, m_tools, m_meter, transcript());
  }

  fs::path transcript() const { return m_dir / "run/transcript.jsonl"; }

  // The tool results the model was sent, by call id.
  std::map<std::string, nlohmann::json> results() const {
    std::map<std::string, nlohmann::json> found;
    for (const nlohmann::json& record : read_transcript(transcript()))
      if (record.value("role", "") == "user")
        for (const nlohmann::json& block : record["content"])
          if (block["type"] == "tool_result") found[block["tool_use_id"]] = block;
    return found;
  }

  FakeLlmServer m_server{FakeProtocol::openai};
  testing::TempDir m_dir;
  PriceTable m_prices;
  Workspace m_workspace;
  QuietBackend m_backend;
  Toolbox m_tools;
  Meter m_meter;
  AgentSettings m_settings;
};

// Without usage the tokens are estimated from the text and marked so: in the reply, the meter (and its journal
// record), the transcript. A token budget therefore still ends the run instead of being passed unseen.
TEST_F(AgentLocalServer, AReplyWithoutUsageIsEstimatedMarkedAndHeldToTheTokenBudget) {
  const LlmResult parsed = parse_openai_reply(chat_reply("Reading.", {}, "stop", std::nullopt).dump());
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed.response().usage_estimated);
  EXPECT_EQ(parsed.response().usage.output, 2u);  // "Reading." is 8 characters
  EXPECT_FALSE(
      parse_openai_reply(chat_reply("Reading.", {}, "stop", std::pair{10, 2}).dump()).response().usage_estimated);

  for (int i = 0; i < 30; ++i)
    m_server.push(
        FakeReply::json(200, chat_reply("", {call("c" + std::to_string(i), "read_file", R"({"path": "kernel.cpp"})")},
                                        "tool_calls", std::nullopt)));
  // Room for the first prompt (a call whose prompt alone would cross the budget is never sent), not for many.
  m_meter.set_limits({6000, 0, 0});
  const AgentResult result = run();
  EXPECT_EQ(result.stop, Stop::token_limit) << result.detail;
  EXPECT_GE(result.steps, 1) << result.detail;
  EXPECT_LT(result.steps, 30);
  EXPECT_GT(m_meter.totals().tokens.input, 0u);
  EXPECT_GT(m_meter.totals().tokens.output, 0u);
  EXPECT_EQ(m_meter.totals().estimated_calls, m_meter.totals().calls);
  // The journal's budget_tick carries the count, and a resume restores it.
  const nlohmann::json tick = to_json(JournalEntry{BudgetTickEntry{m_meter.totals()}});
  EXPECT_EQ(tick.at("estimated_calls"), m_meter.totals().calls);
  const std::optional<MeterTotals> read_back = last_budget_tick({tick});
  ASSERT_TRUE(read_back.has_value());
  Meter restored;
  restored.restore(*read_back);
  EXPECT_EQ(restored.totals().estimated_calls, m_meter.totals().calls);
  int marked = 0;
  for (const nlohmann::json& record : read_transcript(transcript()))
    if (record.value("role", "") == "assistant") marked += record.value("usage_estimated", false) ? 1 : 0;
  EXPECT_EQ(marked, result.steps);
}

// finish_reason "length" with its tool call's arguments cut mid-string: the reply counts, the call is answered
// with an error the model can read, and the loop goes on.
TEST_F(AgentLocalServer, AReplyCutAtTheLengthLimitIsAnsweredAndTheLoopGoesOn) {
  m_server.push(
      FakeReply::json(200, chat_reply("", {call("c1", "write_file", R"({"path": "kernel.cpp", "content": "int ti)")},
                                      "length", std::pair{50, 16})));
  m_server.push(FakeReply::json(
      200, chat_reply("", {call("c2", "submit", R"({"summary": "done"})")}, "tool_calls", std::pair{60, 5})));
  const AgentResult result = run();
  ASSERT_EQ(result.stop, Stop::submitted) << result.detail << read_file(transcript());
  EXPECT_EQ(result.usage, (Usage{110, 21, 0, 0}));
  const std::map<std::string, nlohmann::json> answered = results();
  EXPECT_TRUE(answered.at("c1")["is_error"]);
  EXPECT_NE(answered.at("c1")["content"].get<std::string>().find("not a JSON object"), std::string::npos);
  EXPECT_EQ(read_file(m_workspace.root() / "kernel.cpp"), "int tile = 8;\n");
  const LlmResult cut = parse_openai_reply(chat_reply("", {}, "length", std::pair{1, 1}).dump());
  EXPECT_EQ(cut.response().finish, FinishReason::max_tokens);
}

// A context-length error: the conversation is shortened as for the window share and asked once more; a second
// error ends the turn as context_overflow, a typed stop the team goes on from.
TEST_F(AgentLocalServer, AContextLengthErrorShortensOnceThenEndsTheTurnTyped) {
  const LlmResult failed = [&] {
    m_server.push(context_error());
    LlmRequest request;
    request.messages.push_back({Role::user, {ContentBlock::make_text("hi")}});
    return make_provider(settings(), m_prices)->complete(request);
  }();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.failure().kind, FailureKind::context_overflow);
  EXPECT_NE(failed.failure().message.find("exceeds the available context size"), std::string::npos);

  // Four long tool results, overflow, shortened, then it fits and the agent submits.
  write_file_atomic(m_workspace.root() / "notes.txt", std::string(1000, 'x'));
  for (int i = 0; i < 4; ++i)
    m_server.push(
        FakeReply::json(200, chat_reply("", {call("r" + std::to_string(i), "read_file", R"({"path": "notes.txt"})")},
                                        "tool_calls", std::pair{100, 10})));
  m_server.push(context_error());
  m_server.push(FakeReply::json(
      200, chat_reply("", {call("s", "submit", R"({"summary": "ok"})")}, "tool_calls", std::pair{50, 5})));
  const AgentResult recovered = run();
  ASSERT_EQ(recovered.stop, Stop::submitted) << recovered.detail;
  const std::string retried = m_server.requests().back().body;
  EXPECT_NE(retried.find("output cleared to save context"), std::string::npos);

  m_server.push(context_error());
  m_server.push(context_error());
  m_settings.role = "debugger";  // a fresh transcript
  std::unique_ptr<LlmProvider> llm = make_provider(settings(), m_prices);
  const AgentResult ended =
      run_agent(m_settings, {"sys", "go"}, *llm, m_tools, m_meter, m_dir / "run/debugger/transcript.jsonl");
  EXPECT_EQ(ended.stop, Stop::context_overflow);
  EXPECT_EQ(to_string(ended.stop), "context_overflow");
  EXPECT_NE(ended.detail.find("context size"), std::string::npos) << ended.detail;
}

// Models without native tool calling write <tool_call>{...}</tool_call> into their text; with no tool_calls in
// the reply, those become calls (several, in order), and a tag that holds no call stays text.
TEST_F(AgentLocalServer, ToolCallsWrittenAsTextAreTakenWhenTheServerReturnedNone) {
  const std::string text =
      "I will read it.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"kernel.cpp\"}}\n</tool_call>"
      "<tool_call>{\"name\": \"compile\", \"arguments\": {}}</tool_call><tool_call>not json</tool_call>";
  const LlmResult parsed = parse_openai_reply(chat_reply(text, {}, "stop", std::pair{10, 40}).dump());
  ASSERT_TRUE(parsed.ok());
  const std::vector<ContentBlock>& content = parsed.response().content;
  ASSERT_EQ(content.size(), 3u);
  EXPECT_EQ(content[0].kind, BlockKind::text);
  EXPECT_NE(content[0].text.find("I will read it."), std::string::npos);
  EXPECT_NE(content[0].text.find("not json"), std::string::npos);
  EXPECT_EQ(content[0].text.find("read_file"), std::string::npos);
  EXPECT_EQ(content[1].name, "read_file");
  EXPECT_EQ(content[1].input, (nlohmann::json{{"path", "kernel.cpp"}}));
  EXPECT_EQ(content[2].name, "compile");
  EXPECT_EQ(parsed.response().finish, FinishReason::tool_use);

  // Native tool calls win: the text is left as it is.
  const LlmResult native = parse_openai_reply(
      chat_reply(text, {call("n1", "list_files", R"({"path": "."})")}, "tool_calls", std::pair{1, 1}).dump());
  ASSERT_EQ(native.response().content.size(), 2u);
  EXPECT_EQ(native.response().content[1].name, "list_files");

  // Through the loop: both text calls run and are answered (ids are made up for them).
  m_server.push(FakeReply::json(200, chat_reply(text, {}, "stop", std::pair{10, 40})));
  m_server.push(FakeReply::json(
      200, chat_reply("<tool_call>{\"name\": \"submit\", \"arguments\": {\"summary\": \"ok\"}}</tool_call>", {}, "stop",
                      std::pair{10, 5})));
  const AgentResult result = run();
  ASSERT_EQ(result.stop, Stop::submitted) << result.detail;
  EXPECT_GE(results().size(), 3u);
}

// Arguments that are JSON but not an object, and several calls in one reply: each call is answered in order.
TEST_F(AgentLocalServer, ArgumentsThatAreNotAnObjectAreRefusedAndEveryCallOfAReplyIsAnswered) {
  m_server.push(
      FakeReply::json(200, chat_reply("",
                                      {call("a", "read_file", R"(["kernel.cpp"])"), call("b", "read_file", "42"),
                                       call("c", "read_file", R"({"path": "kernel.cpp"})")},
                                      "tool_calls", std::pair{30, 30})));
  m_server.push(FakeReply::json(
      200, chat_reply("", {call("s", "submit", R"({"summary": "ok"})")}, "tool_calls", std::pair{5, 5})));
  ASSERT_EQ(run().stop, Stop::submitted);
  const std::map<std::string, nlohmann::json> answered = results();
  EXPECT_TRUE(answered.at("a")["is_error"]);
  EXPECT_TRUE(answered.at("b")["is_error"]);
  EXPECT_FALSE(answered.at("c")["is_error"]);
  EXPECT_NE(answered.at("c")["content"].get<std::string>().find("int tile = 8;"), std::string::npos);
}

// A slow first token runs into the request timeout (llm.request_timeout_s, apart from llm.connect_timeout_s), and the
// error names that setting and its value.
TEST_F(AgentLocalServer, ASlowFirstTokenRunsIntoTheRequestTimeoutWhichTheErrorNames) {
  FakeReply slow = FakeReply::json(200, chat_reply("late", {}, "stop", std::pair{1, 1}));
  slow.delay = std::chrono::milliseconds(3000);
  m_server.push(slow);
  LlmRequest request;
  request.messages.push_back({Role::user, {ContentBlock::make_text("hi")}});
  const LlmResult timed_out = make_provider(settings(0.5), m_prices)->complete(request);
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.failure().kind, FailureKind::timeout);
  EXPECT_NE(timed_out.failure().message.find("llm.request_timeout_s = 0.5 s"), std::string::npos)
      << timed_out.failure().message;

  // A body cut short is a network failure after the request went out (it may have been billed).
  const std::string whole = chat_reply("cut", {}, "stop", std::pair{1, 1}).dump();
  FakeReply cut;
  cut.action = FakeReply::Action::truncate_body;
  cut.body = whole;
  m_server.push(cut);
  const LlmResult truncated = make_provider(settings(), m_prices)->complete(request);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.failure().kind, FailureKind::network);
  EXPECT_EQ(truncated.failure().unknown_cost_attempts, 1);
}

}  // namespace
}  // namespace evoteam
