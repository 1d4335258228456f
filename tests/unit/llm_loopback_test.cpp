// Both network providers against the loopback fake server: tool calls, retries, faults, keys, interrupts.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

#include <evoteam/core/config.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/llm/llm.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/supervisor/supervisor.hpp>

#include "supervisor/run_loop.hpp"
#include "support/fake_llm_server.hpp"

namespace evoteam {
namespace {

using testing::FakeLlmServer;
using testing::FakeProtocol;
using testing::FakeReply;

constexpr const char* k_key = "sk-test-loopback-0123456789abcdef";

class LlmLoopback : public ::testing::TestWithParam<FakeProtocol> {
 protected:
  LlmLoopback()
      : m_server(GetParam()),
        m_prices(PriceTable::load(std::filesystem::path(EVOTEAM_SOURCE_DIR) / "configs/models.json")) {}

  std::unique_ptr<LlmProvider> provider(double request_timeout_s = 5, int max_retries = 3) {
    ProviderSettings settings;
    settings.provider = GetParam() == FakeProtocol::anthropic ? "anthropic" : "openai";
    settings.model = GetParam() == FakeProtocol::anthropic ? "claude-sonnet-4-5" : "gpt-5";
    settings.base_url = m_server.base_url();
    settings.api_key = k_key;
    settings.http.connect_timeout_s = 5;
    settings.http.request_timeout_s = request_timeout_s;
    settings.http.max_retries = max_retries;
    settings.http.backoff_initial_s = 0.01;
    settings.http.backoff_max_s = 0.05;
    settings.http.retry_after_max_s = 2;
    return make_provider(settings, m_prices);
  }

  LlmRequest request() const {
    LlmRequest request;
    request.system = "You optimise kernels.";
    request.max_tokens = 256;
    request.messages.push_back({Role::user, {ContentBlock::make_text("Make it fast.")}});
    request.tools = {{"compile", "Build.", {{"type", "object"}, {"properties", nlohmann::json::object()}}}};
    return request;
  }

  FakeReply ok_reply() {
    return testing::fake_reply(GetParam(), "Compiling.", {{"call_ok", "compile", nlohmann::json::object()}},
                               {100, 20, 50, 0});
  }
  FakeReply error(int status, const std::string& type) {
    return testing::fake_error(GetParam(), status, type, "fake " + type);
  }

  FakeLlmServer m_server;
  PriceTable m_prices;
};

// Parallel team members share one provider and call it at once: each call goes out on its own connection, so four
// calls that each wait 0.8 s on the model take about 0.8 s, not 3.2 s (the bound leaves room for a loaded machine
// and still fails for calls taken in turn), and the meter they all charge sums every reply exactly.
TEST_P(LlmLoopback, ParallelMembersCallOneProviderAtOnceAndTheMeterStaysExact) {
  constexpr int k_members = 4;
  const std::chrono::milliseconds model_time(800);
  for (int i = 0; i < k_members; ++i) {
    FakeReply reply =
        testing::fake_reply(GetParam(), "Compiling.",
                            {{"call_" + std::to_string(i), "compile", nlohmann::json::object()}}, {100, 20, 50, 0});
    reply.delay = model_time;
    m_server.push(reply);
  }
  std::unique_ptr<LlmProvider> shared = provider();
  Meter meter;
  std::vector<double> costs(k_members, 0.0);
  std::vector<std::thread> members;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < k_members; ++i)
    members.emplace_back([&, i] {
      LlmResult result = shared->complete(request());
      if (!result.ok()) return;
      costs[static_cast<std::size_t>(i)] = result.response().cost_usd;
      meter.charge(result.response().usage, result.response().cost_usd);
    });
  for (std::thread& member : members) member.join();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  EXPECT_LT(wall_s, 0.8 * k_members * 0.75) << "the members' calls were taken in turn";
  EXPECT_EQ(meter.totals().calls, static_cast<std::uint64_t>(k_members));
  EXPECT_EQ(meter.totals().tokens, (Usage{100 * k_members, 20 * k_members, 50 * k_members, 0}));
  double sum = 0;
  for (double cost : costs) sum += cost;
  EXPECT_GT(sum, 0.0);
  EXPECT_NEAR(meter.totals().cost_usd, sum, 1e-12);
}

TEST_P(LlmLoopback, ToolCallUsageAndCostComeFromTheReply) {
  m_server.push(ok_reply());
  LlmResult result = provider()->complete(request());
  ASSERT_TRUE(result.ok()) << result.failure().message;
  const LlmResponse& response = result.response();
  ASSERT_EQ(response.content.size(), 2u);
  EXPECT_EQ(response.content[1].kind, BlockKind::tool_use);
  EXPECT_EQ(response.content[1].name, "compile");
  EXPECT_EQ(response.finish, FinishReason::tool_use);
  EXPECT_EQ(response.usage, (Usage{100, 20, 50, 0}));
  EXPECT_GT(response.cost_usd, 0.0);
  EXPECT_EQ(response.attempts, 1);
}

TEST_P(LlmLoopback, KeyTravelsInTheProtocolsHeaderOnly) {
  m_server.push(ok_reply());
  ASSERT_TRUE(provider()->complete(request()).ok());
  std::vector<testing::RecordedRequest> requests = m_server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const testing::RecordedRequest& sent = requests[0];
  if (GetParam() == FakeProtocol::anthropic) {
    EXPECT_EQ(sent.path, "/v1/messages");
    EXPECT_EQ(sent.headers.at("x-api-key"), k_key);
    EXPECT_EQ(sent.headers.at("anthropic-version"), "2023-06-01");
    EXPECT_EQ(sent.headers.count("authorization"), 0u);
  } else {
    EXPECT_EQ(sent.path, "/v1/chat/completions");
    EXPECT_EQ(sent.headers.at("authorization"), std::string("Bearer ") + k_key);
    EXPECT_EQ(sent.headers.count("x-api-key"), 0u);
  }
  EXPECT_EQ(sent.body.find(k_key), std::string::npos);
}

// With both providers' keys in the environment, a run with --provider X sends X's key to X's endpoint and the
// other key nowhere (the settings used to take the auto-detected provider's key, then swap the provider).
TEST_P(LlmLoopback, WithBothKeysSetTheRunsProviderGetsItsOwnKeyOnly) {
  const std::string anthropic_key = "sk-ant-loopback-aaaaaaaaaaaaaaaa";
  const std::string openai_key = "sk-oai-loopback-bbbbbbbbbbbbbbbb";
  const bool anthropic = GetParam() == FakeProtocol::anthropic;
  const std::map<std::string, std::string> environment = {
      {"ANTHROPIC_API_KEY", anthropic_key},
      {"OPENAI_API_KEY", openai_key},
      {anthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL", m_server.base_url()}};
  OptimizeOptions options;
  options.provider = anthropic ? "anthropic" : "openai";
  const ProviderSettings settings = run_provider_settings(Config(), options, m_prices, environment);
  m_server.push(ok_reply());
  ASSERT_TRUE(make_provider(settings, m_prices)->complete(request()).ok());
  const std::vector<testing::RecordedRequest> requests = m_server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const std::string& own = anthropic ? anthropic_key : openai_key;
  const std::string& other = anthropic ? openai_key : anthropic_key;
  EXPECT_EQ(requests[0].headers.at(anthropic ? "x-api-key" : "authorization"), anthropic ? own : "Bearer " + own);
  for (const auto& [name, value] : requests[0].headers) EXPECT_EQ(value.find(other), std::string::npos) << name;
  EXPECT_EQ(requests[0].body.find(other), std::string::npos);
}

TEST_P(LlmLoopback, RateLimitWaitsForRetryAfter) {
  FakeReply limited = error(429, "rate_limit_error");
  limited.headers.push_back({"retry-after", "0.4"});
  m_server.push(limited);
  m_server.push(ok_reply());
  const auto start = std::chrono::steady_clock::now();
  LlmResult result = provider()->complete(request());
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(result.ok()) << result.failure().message;
  EXPECT_EQ(result.response().attempts, 2);
  EXPECT_GE(waited, 0.35);  // the backoff alone would be 0.01 s
}

TEST_P(LlmLoopback, OverloadedAndServerErrorsAreRetried) {
  m_server.push(error(529, "overloaded_error"));
  m_server.push(error(500, "api_error"));
  m_server.push(error(503, "api_error"));
  m_server.push(ok_reply());
  LlmResult result = provider()->complete(request());
  ASSERT_TRUE(result.ok()) << result.failure().message;
  EXPECT_EQ(result.response().attempts, 4);
  EXPECT_EQ(result.response().usage, (Usage{100, 20, 50, 0}));
}

TEST_P(LlmLoopback, RetriesExhaustedIsAnHttpFailureWithTheServersMessage) {
  for (int i = 0; i < 3; ++i) m_server.push(error(529, "overloaded_error"));
  LlmResult result = provider(5, 2)->complete(request());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.failure().kind, FailureKind::http_status);
  EXPECT_EQ(result.failure().http_status, 529);
  EXPECT_EQ(result.failure().attempts, 3);
  EXPECT_NE(result.failure().message.find("fake overloaded_error"), std::string::npos) << result.failure().message;
}

TEST_P(LlmLoopback, AuthenticationErrorIsNotRetried) {
  m_server.push(error(401, "authentication_error"));
  m_server.push(ok_reply());
  LlmResult result = provider()->complete(request());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.failure().http_status, 401);
  EXPECT_EQ(m_server.requests().size(), 1u);
  EXPECT_EQ(result.failure().message.find(k_key), std::string::npos);
}

TEST_P(LlmLoopback, QuotaExhaustedIsNotRetried) {
  m_server.push(error(429, "insufficient_quota"));
  LlmResult result = provider()->complete(request());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(m_server.requests().size(), 1u);
}

TEST_P(LlmLoopback, ConnectionResetIsRetried) {
  m_server.push(FakeReply::reset_connection());
  m_server.push(ok_reply());
  LlmResult result = provider()->complete(request());
  ASSERT_TRUE(result.ok()) << result.failure().message;
  EXPECT_EQ(result.response().attempts, 2);
  EXPECT_EQ(result.response().unknown_cost_attempts, 1);
}

TEST_P(LlmLoopback, SlowReplyPastTheTimeoutIsRetried) {
  FakeReply slow = ok_reply();
  slow.delay = std::chrono::milliseconds(6000);
  m_server.push(slow);
  m_server.push(ok_reply());
  LlmResult result = provider(1.5)->complete(request());
  ASSERT_TRUE(result.ok()) << result.failure().message;
  EXPECT_EQ(result.response().attempts, 2);
  EXPECT_EQ(result.response().unknown_cost_attempts, 1);
}

TEST_P(LlmLoopback, TimeoutsExhaustedAreATimeoutFailure) {
  for (int i = 0; i < 2; ++i) {
    FakeReply slow = ok_reply();
    slow.delay = std::chrono::milliseconds(3000);
    m_server.push(slow);
  }
  LlmResult result = provider(0.3, 1)->complete(request());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.failure().kind, FailureKind::timeout);
  EXPECT_EQ(result.failure().attempts, 2);
}

TEST_P(LlmLoopback, BodyCutByTheConnectionIsRetried) {
  FakeReply cut = ok_reply();
  cut.action = FakeReply::Action::truncate_body;
  m_server.push(cut);
  m_server.push(ok_reply());
  LlmResult result = provider()->complete(request());
  ASSERT_TRUE(result.ok()) << result.failure().message;
  EXPECT_EQ(result.response().attempts, 2);
}

TEST_P(LlmLoopback, TruncatedOrMalformedJsonIsAMalformedReply) {
  const std::string whole = testing::fake_reply_body(GetParam(), "x", {}, {1, 1, 0, 0}).dump();
  m_server.push(FakeReply::text(200, whole.substr(0, whole.size() / 2)));
  m_server.push(FakeReply::text(200, "<html>gateway</html>"));
  m_server.push(FakeReply::json(200, {{"unexpected", true}}));
  std::unique_ptr<LlmProvider> llm = provider();
  for (int i = 0; i < 3; ++i) {
    LlmResult result = llm->complete(request());
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.failure().kind, FailureKind::malformed_reply) << result.failure().message;
  }
}

TEST_P(LlmLoopback, NothingListeningIsANetworkFailure) {
  ProviderSettings settings;
  settings.provider = GetParam() == FakeProtocol::anthropic ? "anthropic" : "openai";
  settings.model = GetParam() == FakeProtocol::anthropic ? "claude-sonnet-4-5" : "gpt-5";
  settings.base_url = "http://127.0.0.1:1";
  settings.api_key = k_key;
  settings.http.max_retries = 1;
  settings.http.backoff_initial_s = 0.01;
  LlmResult result = make_provider(settings, m_prices)->complete(request());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.failure().kind, FailureKind::network);
  EXPECT_EQ(result.failure().attempts, 2);
}

TEST_P(LlmLoopback, InterruptCancelsAWaitingRequest) {
  FakeReply slow = ok_reply();
  slow.delay = std::chrono::milliseconds(5000);
  m_server.push(slow);
  install_interrupt_forwarding();
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::raise(SIGINT);
  });
  const auto start = std::chrono::steady_clock::now();
  LlmResult result = provider(30)->complete(request());
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  interrupter.join();
  uninstall_interrupt_forwarding();
  reset_interrupted_for_tests();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.failure().kind, FailureKind::interrupted);
  EXPECT_LT(took, 4.0);
}

INSTANTIATE_TEST_SUITE_P(Protocols, LlmLoopback, ::testing::Values(FakeProtocol::anthropic, FakeProtocol::openai),
                         [](const ::testing::TestParamInfo<FakeProtocol>& param_info) {
                           return param_info.param == FakeProtocol::anthropic ? "anthropic" : "openai";
                         });

}  // namespace
}  // namespace evoteam
