// An agent talking to the loopback server in each protocol, through every fault the issue lists: the work
// gets done, usage is summed exactly as reported, and the key never reaches a file.
#include <gtest/gtest.h>

#include <evoteam/agent/agent.hpp>
#include <evoteam/agent/transcript.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/store/store.hpp>

#include "support/fake_llm_server.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;
using testing::FakeLlmServer;
using testing::FakeProtocol;
using testing::FakeReply;
using testing::FakeToolCall;
using testing::FakeUsage;

constexpr const char* k_key = "sk-test-agent-loopback-DO-NOT-LEAK-42";

class StageRecorder : public EvaluationBackend {
 public:
  ToolResult evaluate(const Workspace& workspace, Stage through, const std::string& params) override {
    asked_params.push_back(params);
    stages.push_back(through);
    return {"verdict: pass (" + workspace.read("kernel.cpp") + ")", false};
  }
  ToolResult submit(const Workspace&, const std::string& summary, const std::string& params) override {
    submissions.push_back(summary);
    asked_params.push_back(params);
    return {"recorded", false};
  }
  std::vector<std::string> submissions;
  std::vector<std::string> asked_params;
  std::vector<Stage> stages;
};

// Log lines go to a file inside the test's directory while the test runs, so the key scan covers them.
class LogFileGuard {
 public:
  explicit LogFileGuard(const fs::path& path) {
    setup_console_logging(Verbosity::quiet);
    add_log_file(path);
  }
  ~LogFileGuard() { remove_log_file(); }
};

class AgentLoopback : public ::testing::TestWithParam<FakeProtocol> {
 protected:
  AgentLoopback()
      : m_server(GetParam()),
        m_prices(PriceTable::load(fs::path(EVOTEAM_SOURCE_DIR) / "configs/models.json")),
        m_workspace(make_workspace()),
        m_tools(m_workspace, &m_evaluator, nullptr) {}

  Workspace make_workspace() {
    write_file_atomic(m_dir / "kernel.cpp", "int tile = 8;\n");
    return Workspace::create(m_dir / "run/ws", {{"kernel.cpp", m_dir / "kernel.cpp"}}, {});
  }

  std::unique_ptr<LlmProvider> provider() {
    ProviderSettings settings;
    settings.provider = anthropic() ? "anthropic" : "openai";
    settings.model = anthropic() ? "claude-sonnet-4-5" : "gpt-5";
    settings.base_url = m_server.base_url();
    settings.api_key = k_key;
    settings.http.request_timeout_s = 1.5;
    settings.http.max_retries = 3;
    settings.http.backoff_initial_s = 0.01;
    settings.http.backoff_max_s = 0.05;
    return make_provider(settings, m_prices);
  }

  bool anthropic() const { return GetParam() == FakeProtocol::anthropic; }

  void reply(const std::string& text, const std::vector<FakeToolCall>& calls, const FakeUsage& usage) {
    m_server.push(testing::fake_reply(GetParam(), text, calls, usage));
    m_expected += Usage{usage.input, usage.output, usage.cache_read, usage.cache_write};
  }
  FakeReply error(int status, const std::string& type) { return testing::fake_error(GetParam(), status, type, type); }

  FakeLlmServer m_server;
  testing::TempDir m_dir;
  PriceTable m_prices;
  Workspace m_workspace;
  StageRecorder m_evaluator;
  Toolbox m_tools;
  Meter m_meter;
  Usage m_expected;
};

TEST_P(AgentLoopback, WorkGetsDoneThroughEveryFaultWithExactUsageAndNoKeyOnDisk) {
  const std::uint64_t cache_write = anthropic() ? 40 : 0;  // the OpenAI fake reports no cache writes
  LogFileGuard log(m_dir / "run/evoteam.log");
  Journal journal(m_dir / "run/journal.jsonl");
  m_meter.set_journal_sink([&](const MeterTotals& totals) { append_entry(journal, BudgetTickEntry{totals}); });

  FakeReply limited = error(429, "rate_limit_error");
  limited.headers.push_back({"retry-after", "0.05"});
  m_server.push(limited);
  reply("Reading the kernel.", {{"c1", "read_file", {{"path", "kernel.cpp"}}}}, {101, 11, 0, cache_write});
  m_server.push(error(529, "overloaded_error"));
  // Arguments that are not an object (for OpenAI: a JSON string cut short).
  reply("", {{"c2", "edit_file", nlohmann::json("{\"path\": \"kernel.cpp\", ")}}, {102, 12, 30, 0});
  m_server.push(FakeReply::reset_connection());
  reply("", {{"c3", "shell", {{"command", "make"}}}}, {103, 13, 31, 0});
  m_server.push(error(500, "api_error"));
  reply("", {{"c4", "edit_file", {{"path", "kernel.cpp"}, {"old", "tile = 8"}, {"new", "tile = 16"}}}},
        {104, 14, 32, 0});
  FakeReply slow = testing::fake_reply(GetParam(), "late", {}, {999, 999, 0, 0});
  slow.delay = std::chrono::milliseconds(6000);
  m_server.push(slow);
  reply("",
        {{"c5", "compile", nlohmann::json::object()},
         {"c6", "run_tests", nlohmann::json::object()},
         {"c7", "benchmark", nlohmann::json::object()}},
        {105, 15, 33, 0});
  const std::string whole = testing::fake_reply_body(GetParam(), "cut", {}, {1, 1, 0, 0}).dump();
  m_server.push(FakeReply::text(200, whole.substr(0, whole.size() - 7)));
  reply("Done.", {{"c8", "submit", {{"summary", "tile 16"}}}}, {106, 16, 34, 0});

  AgentSettings settings;
  settings.role = "optimizer";
  settings.model = anthropic() ? "claude-sonnet-4-5" : "gpt-5";
  std::unique_ptr<LlmProvider> llm = provider();
  const fs::path transcript = m_dir / "run/cycles/0001/agents/optimizer/transcript.jsonl";
  AgentResult result =
      run_agent(settings, {"You optimise kernels.", "Make it fast."}, *llm, m_tools, m_meter, transcript);

  ASSERT_EQ(result.stop, Stop::submitted) << result.detail;
  EXPECT_EQ(result.summary, "tile 16");
  EXPECT_EQ(result.steps, 7);  // six replies and one malformed body
  EXPECT_EQ(m_server.pending(), 0u);
  EXPECT_EQ(read_file(m_workspace.root() / "kernel.cpp"), "int tile = 16;\n");
  EXPECT_EQ(m_evaluator.stages, (std::vector<Stage>{Stage::build, Stage::correctness, Stage::timing}));

  // Usage: exactly what the server reported for the replies that arrived, in every place it is kept.
  EXPECT_EQ(result.usage, m_expected);
  EXPECT_EQ(m_meter.totals().tokens, m_expected);
  EXPECT_EQ(m_meter.totals().calls, 6u);
  EXPECT_DOUBLE_EQ(m_meter.totals().cost_usd, result.cost_usd);
  EXPECT_DOUBLE_EQ(result.cost_usd, m_prices.cost(settings.model, m_expected));
  Usage in_transcript;
  std::map<std::string, nlohmann::json> results;
  for (const nlohmann::json& record : read_transcript(transcript)) {
    if (record.value("role", "") == "assistant") in_transcript += usage_from_json(record["usage"]);
    if (record.value("role", "") == "user")
      for (const nlohmann::json& block : record["content"])
        if (block["type"] == "tool_result") results[block["tool_use_id"]] = block;
  }
  EXPECT_EQ(in_transcript, m_expected);
  Meter restored;
  restored.restore(last_budget_tick(replay_journal(journal.path()).records).value());
  EXPECT_EQ(restored.totals().tokens, m_expected);
  EXPECT_EQ(restored.totals().calls, 6u);

  // Invalid arguments and the unknown tool went back to the model as error results.
  EXPECT_TRUE(results["c2"]["is_error"]);
  EXPECT_NE(results["c2"]["content"].get<std::string>().find("not a JSON object"), std::string::npos);
  EXPECT_TRUE(results["c3"]["is_error"]);
  EXPECT_NE(results["c3"]["content"].get<std::string>().find("unknown tool 'shell'"), std::string::npos);
  EXPECT_FALSE(results["c4"]["is_error"]);

  // The key went in the protocol's header of every request, and nowhere else.
  std::vector<testing::RecordedRequest> requests = m_server.requests();
  EXPECT_EQ(requests.size(), 12u);
  for (const testing::RecordedRequest& request : requests) {
    if (anthropic())
      EXPECT_EQ(request.headers.at("x-api-key"), k_key);
    else
      EXPECT_EQ(request.headers.at("authorization"), std::string("Bearer ") + k_key);
    EXPECT_EQ(request.body.find(k_key), std::string::npos);
  }
  remove_log_file();
  EXPECT_NE(read_file(m_dir / "run/evoteam.log").find("retry"), std::string::npos);
  int scanned = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(m_dir.path())) {
    if (!entry.is_regular_file()) continue;
    ++scanned;
    EXPECT_EQ(read_file(entry.path()).find(k_key), std::string::npos) << entry.path();
  }
  EXPECT_GE(scanned, 4);  // workspace, transcript, journal, log
}

TEST_P(AgentLoopback, ResumedAgentContinuesTheConversationAfterACrash) {
  AgentSettings settings;
  settings.role = "optimizer";
  settings.model = anthropic() ? "claude-sonnet-4-5" : "gpt-5";
  const fs::path transcript = m_dir / "run/transcript.jsonl";
  reply("", {{"c1", "read_file", {{"path", "kernel.cpp"}}}}, {10, 1, 0, 0});
  m_server.push(error(401, "authentication_error"));
  std::unique_ptr<LlmProvider> llm = provider();
  AgentResult first = run_agent(settings, {"sys", "go"}, *llm, m_tools, m_meter, transcript);
  ASSERT_EQ(first.stop, Stop::provider_failed);
  EXPECT_NE(first.detail.find("401"), std::string::npos);

  reply("", {{"c2", "submit", {{"summary", "ok"}}}}, {20, 2, 0, 0});
  AgentResult second = run_agent(settings, {"sys", "go"}, *llm, m_tools, m_meter, transcript);
  ASSERT_EQ(second.stop, Stop::submitted) << second.detail;
  EXPECT_EQ(second.steps, 3);
  EXPECT_EQ(second.usage, m_expected);
  // The last request carried the whole conversation, the first tool round included.
  const std::string body = m_server.requests().back().body;
  EXPECT_NE(body.find("int tile = 8;"), std::string::npos);
  EXPECT_NE(body.find("c1"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Protocols, AgentLoopback, ::testing::Values(FakeProtocol::anthropic, FakeProtocol::openai),
                         [](const ::testing::TestParamInfo<FakeProtocol>& param_info) {
                           return param_info.param == FakeProtocol::anthropic ? "anthropic" : "openai";
                         });

}  // namespace
}  // namespace evoteam
