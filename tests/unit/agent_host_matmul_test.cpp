// End to end: an agent edits the host demo kernel in its workspace, compiles, tests, benchmarks and submits it
// on the real evaluator, driven by the scripted provider and by the loopback server in each protocol; the
// transcript and the budget totals land in a run directory.
#include <gtest/gtest.h>

#include <evoteam/agent/agent.hpp>
#include <evoteam/agent/transcript.hpp>
#include <evoteam/core/config.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/eval_writeup.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/task/task.hpp>

#include "support/fake_llm_server.hpp"
#include "support/temp_dir.hpp"
#include "support/test_cache.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;
using testing::FakeProtocol;

constexpr const char* k_edit_note = "// Edited by the agent: one change at a time.";

// The evaluation tools straight on the evaluator (no lab, no run records), answering with the agents' write-up.
class DirectBackend : public EvaluationBackend {
 public:
  DirectBackend(Evaluator& evaluator, const Task& task, CachePolicy result_cache)
      : m_evaluator(evaluator), m_task(task), m_result_cache(result_cache) {}

  ToolResult evaluate(const Workspace& workspace, Stage through, const std::string& params) override {
    asked_params.push_back(params);
    EvalOptions options = EvalOptions::through(through);
    options.result_cache = m_result_cache;
    last = m_evaluator.evaluate(m_task, Candidate{workspace.root(), {}}, options);
    stages.push_back(through);
    return {describe_for_agent(*last), !last->passed()};
  }

  ToolResult submit(const Workspace&, const std::string& summary, const std::string& params) override {
    submissions.push_back(summary);
    asked_params.push_back(params);
    return {"recorded", false};
  }
  std::vector<std::string> submissions;
  std::vector<std::string> asked_params;
  std::vector<Stage> stages;
  std::optional<EvalResult> last;

 private:
  Evaluator& m_evaluator;
  const Task& m_task;
  CachePolicy m_result_cache;
};

// One evaluator for the suite and one cache in the build tree: the three agents produce the same candidate, so
// after the first (in this process or an earlier one, as under CTest) the harness build and the evaluations come
// from the cache, and the reference outputs are computed once per process.
class AgentHostMatmul : public ::testing::Test {
 protected:
  // Created once for both suites and kept until the process exits.
  static void SetUpTestSuite() {
    if (s_evaluator) return;
    EvalSettings settings = eval_settings(Config());
    settings.correctness.seeds = 2;
    settings.correctness.secret_scope = SecretScope::evaluator;
    settings.correctness.edge_values = {1, 17};
    settings.timing.warmup_s = 0.01;
    settings.timing.min_samples = 5;
    settings.timing.min_time_s = 0.05;
    settings.timing.max_time_s = 2.0;
    settings.timing.max_noise = 1.0;
    settings.profile.time_s = 0.05;
    settings.machine = {100000.0, 100000.0};
    s_task = std::make_unique<Task>(load_task(fs::path(EVOTEAM_SOURCE_DIR) / "kernels/host_matmul"));
    s_evaluator = std::make_unique<Evaluator>(settings, system_runner(),
                                              testing::test_cache_root() / "test-cache/agent-host-matmul");
  }

  AgentHostMatmul()
      : m_prices(PriceTable::load(fs::path(EVOTEAM_SOURCE_DIR) / "configs/models.json")),
        m_run(RunDir::create(m_dir / "runs", "host_matmul", {{"provider", "test"}})),
        m_workspace(Workspace::create(
            m_run.cycle_dir(1) / "agents/optimizer/workspace", {{"kernel.cpp", s_task->dir / "kernel.cpp"}},
            {{"reference.cpp", s_task->dir / s_task->reference_file}, {"task.json", s_task->dir / "task.json"}})),
        // The scripted agent's evaluations always run; the loopback agents may take them from the cache.
        m_backend(*s_evaluator, *s_task,
                  ::testing::UnitTest::GetInstance()->current_test_suite()->name() == std::string("AgentHostMatmul")
                      ? CachePolicy::refresh
                      : CachePolicy::use),
        m_tools(m_workspace, &m_backend, nullptr) {
    m_meter.set_journal_sink(
        [this](const MeterTotals& totals) { append_entry(m_run.journal(), BudgetTickEntry{totals}); });
    m_settings.role = "optimizer";
    m_prompt = {"You optimise the kernel of the task.",
                render_instance("Make the kernel faster.", {read_file(s_task->dir / "task.json"), {}, "", "", ""})};
    // The edit is derived from the kernel as it is, so the test does not pin its text.
    const std::string kernel = read_file(s_task->dir / "kernel.cpp");
    m_old = kernel.substr(0, kernel.find('\n'));
  }

  // read_file, edit_file, compile, run_tests, benchmark, submit.
  std::vector<std::vector<testing::FakeToolCall>> steps() const {
    return {{{"t1", "read_file", {{"path", "kernel.cpp"}}}},
            {{"t2", "edit_file", {{"path", "kernel.cpp"}, {"old", m_old}, {"new", m_old + "\n" + k_edit_note}}}},
            {{"t3", "compile", nlohmann::json::object()}},
            {{"t4", "run_tests", nlohmann::json::object()}},
            {{"t5", "benchmark", nlohmann::json::object()}},
            {{"t6", "submit", {{"summary", "noted the plan in the kernel"}}}}};
  }

  void expect_done(const AgentResult& result) {
    ASSERT_EQ(result.stop, Stop::submitted) << result.detail;
    EXPECT_EQ(result.summary, "noted the plan in the kernel");
    EXPECT_EQ(result.steps, 6);
    EXPECT_NE(read_file(m_workspace.root() / "kernel.cpp").find(k_edit_note), std::string::npos);
    EXPECT_EQ(m_backend.stages, (std::vector<Stage>{Stage::build, Stage::correctness, Stage::timing}));
    ASSERT_TRUE(m_backend.last.has_value());
    EXPECT_TRUE(m_backend.last->passed()) << describe_for_agent(*m_backend.last);
    EXPECT_TRUE(m_backend.last->speedup.has_value());

    std::map<std::string, nlohmann::json> results;
    for (const nlohmann::json& record : read_transcript(transcript()))
      if (record.value("role", "") == "user")
        for (const nlohmann::json& block : record["content"])
          if (block["type"] == "tool_result") results[block["tool_use_id"]] = block;
    for (const char* id : {"t1", "t2", "t3", "t4", "t5", "t6"})
      EXPECT_FALSE(results[id]["is_error"]) << id << results[id];
    EXPECT_NE(results["t3"]["content"].get<std::string>().find("verdict: PASS"), std::string::npos) << results["t3"];
    EXPECT_NE(results["t5"]["content"].get<std::string>().find("speedup (geometric mean"), std::string::npos);
    EXPECT_NE(results["t5"]["content"].get<std::string>().find("workload square512"), std::string::npos);

    // The run's journal holds the budget totals, and a resumed run gets them back.
    Meter restored;
    restored.restore(last_budget_tick(replay_journal(m_run.path() / k_journal_name).records).value());
    EXPECT_EQ(restored.totals().tokens, result.usage);
    EXPECT_EQ(restored.totals().calls, 6u);
  }

  fs::path transcript() const { return agent_transcript_path(m_run.cycle_dir(1), "optimizer"); }

  static std::unique_ptr<Task> s_task;
  static std::unique_ptr<Evaluator> s_evaluator;

  testing::TempDir m_dir;
  PriceTable m_prices;
  RunDir m_run;
  Workspace m_workspace;
  DirectBackend m_backend;
  Toolbox m_tools;
  Meter m_meter;
  AgentSettings m_settings;
  AgentPrompt m_prompt;
  std::string m_old;
};

std::unique_ptr<Task> AgentHostMatmul::s_task;
std::unique_ptr<Evaluator> AgentHostMatmul::s_evaluator;

TEST_F(AgentHostMatmul, ScriptedAgentEditsCompilesTestsBenchmarksAndSubmits) {
  std::string lines = "// generated by the test from the kernel's current text\n";
  for (const auto& calls : steps()) {
    nlohmann::json content = nlohmann::json::array();
    for (const testing::FakeToolCall& call : calls)
      content.push_back({{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", call.input}});
    lines += nlohmann::json{{"content", content},
                            {"stop_reason", "tool_use"},
                            {"usage", {{"input_tokens", 100}, {"output_tokens", 10}}}}
                 .dump() +
             "\n";
  }
  write_file_atomic(m_dir / "script.jsonl", lines);
  ProviderSettings settings;
  settings.provider = "scripted";
  settings.scripted_file = m_dir / "script.jsonl";
  std::unique_ptr<LlmProvider> provider = make_provider(settings, m_prices);
  m_settings.model = "scripted";
  expect_done(run_agent(m_settings, m_prompt, *provider, m_tools, m_meter, transcript()));
}

class AgentHostMatmulLoopback : public AgentHostMatmul, public ::testing::WithParamInterface<FakeProtocol> {};

TEST_P(AgentHostMatmulLoopback, AgentOverEachProtocolDoesTheSame) {
  testing::FakeLlmServer server(GetParam());
  const bool anthropic = GetParam() == FakeProtocol::anthropic;
  server.push(testing::fake_error(GetParam(), anthropic ? 529 : 429, "overloaded_error", "busy"));
  Usage expected;
  std::uint64_t n = 0;
  for (const auto& calls : steps()) {
    ++n;
    testing::FakeUsage usage{1000 + n, 50 + n, anthropic ? 500 * n : 0,
                             anthropic ? std::uint64_t{7} : std::uint64_t{0}};
    server.push(testing::fake_reply(GetParam(), "", calls, usage));
    expected += Usage{usage.input, usage.output, usage.cache_read, usage.cache_write};
  }
  ProviderSettings settings;
  settings.provider = anthropic ? "anthropic" : "openai";
  settings.model = anthropic ? "claude-sonnet-4-5" : "gpt-5";
  settings.base_url = server.base_url();
  settings.api_key = "sk-test-e2e-0000000000000000";
  settings.http.backoff_initial_s = 0.01;
  std::unique_ptr<LlmProvider> provider = make_provider(settings, m_prices);
  m_settings.model = settings.model;
  AgentResult result = run_agent(m_settings, m_prompt, *provider, m_tools, m_meter, transcript());
  expect_done(result);
  EXPECT_EQ(result.usage, expected);
  EXPECT_DOUBLE_EQ(result.cost_usd, m_prices.cost(settings.model, expected));
  EXPECT_DOUBLE_EQ(m_meter.totals().cost_usd, result.cost_usd);
  EXPECT_EQ(server.requests().size(), 7u);
}

INSTANTIATE_TEST_SUITE_P(Protocols, AgentHostMatmulLoopback,
                         ::testing::Values(FakeProtocol::anthropic, FakeProtocol::openai),
                         [](const ::testing::TestParamInfo<FakeProtocol>& param_info) {
                           return param_info.param == FakeProtocol::anthropic ? "anthropic" : "openai";
                         });

}  // namespace
}  // namespace evoteam
