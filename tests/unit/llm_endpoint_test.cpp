// A server of one's own named by its base URL: no key needed, priced at zero on a local address, asked before the
// run for its models, its context window and its tool calls (the loopback fake server plays it).
#include <gtest/gtest.h>

#include <cstdlib>

#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/llm/endpoint.hpp>
#include <evoteam/llm/llm.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/supervisor/supervisor.hpp>

#include "support/fake_llm_server.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using testing::FakeLlmServer;
using testing::FakeProtocol;
using testing::FakeReply;

// A port nothing listens on: bound, then closed.
std::string closed_port_url() {
  FakeLlmServer gone(FakeProtocol::openai);
  return gone.base_url();
}

Config config_with_base_url(const std::string& base_url, const std::string& model = "") {
  Config config;
  config.overlay({{"llm", {{"base_url", base_url}, {"model", model}}}}, "test");
  return config;
}

FakeReply model_list(const std::vector<std::string>& ids, std::uint64_t max_model_len = 0) {
  nlohmann::json data = nlohmann::json::array();
  for (const std::string& id : ids) {
    nlohmann::json entry = {{"id", id}, {"object", "model"}};
    if (max_model_len > 0) entry["max_model_len"] = max_model_len;
    data.push_back(entry);
  }
  return FakeReply::json(200, {{"object", "list"}, {"data", data}});
}

class LlmEndpoint : public ::testing::Test {
 protected:
  LlmEndpoint() : m_prices(PriceTable::load(std::filesystem::path(EVOTEAM_SOURCE_DIR) / "configs/models.json")) {}

  ProviderSettings local_settings(const std::string& model = "tiny-local") {
    ProviderSettings settings = provider_settings_for("openai", config_with_base_url(m_server.base_url()), {});
    settings.model = model;
    settings.http.connect_timeout_s = 2;
    settings.http.request_timeout_s = 5;
    settings.http.max_retries = 0;
    return settings;
  }

  FakeLlmServer m_server{FakeProtocol::openai};
  PriceTable m_prices;
};

TEST(LlmEndpointAddress, LoopbackAndPrivateAddressesAreLocalPublicOnesAreNot) {
  for (const char* url :
       {"http://localhost:8080/v1", "http://127.0.0.1:8080/v1", "http://127.8.9.1/v1", "http://10.1.2.3:8000/v1",
        "http://172.16.0.5/v1", "http://172.31.255.1/v1", "http://192.168.1.20:11434/v1", "http://169.254.1.1/v1",
        "http://[::1]:8080/v1", "http://[fd12:3456::1]/v1", "http://[fe80::1]/v1", "http://user:pw@127.0.0.1:1/v1",
        "http://gpu.localhost/v1"})
    EXPECT_TRUE(is_local_endpoint(url)) << url;
  for (const char* url :
       {"https://api.openai.com/v1", "http://8.8.8.8/v1", "http://172.32.0.1/v1", "http://11.0.0.1/v1",
        "http://[2001:db8::1]/v1", "http://myserver.lan:8000/v1", "http://127.0.0.1.example.com/v1", ""})
    EXPECT_FALSE(is_local_endpoint(url)) << url;
}

TEST(LlmEndpointAddress, UserInformationIsNeverShown) {
  EXPECT_EQ(displayed_url("http://user:secret@127.0.0.1:8080/v1"), "http://127.0.0.1:8080/v1");
  EXPECT_EQ(displayed_url("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080/v1");
}

// A named server needs no key; OpenAI's own endpoint still does. The configuration's base URL beats the variable.
TEST(LlmEndpointSettings, ANamedServerNeedsNoKeyTheProvidersOwnEndpointDoes) {
  const ProviderSettings local = provider_settings_for("openai", config_with_base_url("http://127.0.0.1:8080/v1/"), {});
  EXPECT_EQ(local.base_url, "http://127.0.0.1:8080/v1");
  EXPECT_TRUE(local.api_key.empty());
  EXPECT_TRUE(local.local_endpoint);
  const ProviderSettings from_file = provider_settings_for("openai", config_with_base_url("http://10.0.0.2:8000/v1"),
                                                           {{"OPENAI_BASE_URL", "http://127.0.0.1:1/v1"}});
  EXPECT_EQ(from_file.base_url, "http://10.0.0.2:8000/v1");
  const ProviderSettings public_named =
      provider_settings_for("openai", config_with_base_url("https://llm.example/v1"), {});
  EXPECT_FALSE(public_named.local_endpoint);
  try {
    (void)provider_settings_for("openai", Config(), {});
    ADD_FAILURE() << "OpenAI's own endpoint was accepted without a key";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("OPENAI_API_KEY"), std::string::npos) << error.what();
  }
}

// On a local endpoint a model without a price costs 0 (its tokens still count); on a public one it is still refused.
TEST_F(LlmEndpoint, AnUnpricedModelCostsZeroOnALocalEndpointOnlyAndNoKeyIsSent) {
  m_server.push(testing::fake_reply(FakeProtocol::openai, "Compiling.", {{"c1", "compile", nlohmann::json::object()}},
                                    {100, 20, 0, 0}));
  std::unique_ptr<LlmProvider> provider = make_provider(local_settings(), m_prices);
  LlmRequest request;
  request.messages.push_back({Role::user, {ContentBlock::make_text("Make it fast.")}});
  LlmResult result = provider->complete(request);
  ASSERT_TRUE(result.ok()) << result.failure().message;
  EXPECT_EQ(result.response().cost_usd, 0.0);
  EXPECT_EQ(result.response().usage, (Usage{100, 20, 0, 0}));
  ASSERT_EQ(m_server.requests().size(), 1u);
  EXPECT_EQ(m_server.requests()[0].headers.count("authorization"), 0u);

  ProviderSettings public_endpoint = local_settings();
  public_endpoint.base_url = "https://llm.example/v1";
  public_endpoint.local_endpoint = false;
  EXPECT_THROW(make_provider(public_endpoint, m_prices), InvalidInput);
}

// One rule for both protocols: Anthropic's Messages on a local endpoint prices a model the table does not know at
// zero, as the run's start line says, rather than failing the run at the first reply.
TEST(LlmEndpointPricing, AnUnpricedModelCostsZeroOnALocalEndpointWithEitherProtocol) {
  for (FakeProtocol protocol : {FakeProtocol::anthropic, FakeProtocol::openai}) {
    FakeLlmServer server(protocol);
    const bool anthropic = protocol == FakeProtocol::anthropic;
    const std::map<std::string, std::string> environment = {
        {anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY", "sk-local-0123456789abcdef"}};
    ProviderSettings settings = provider_settings_for(
        anthropic ? "anthropic" : "openai", config_with_base_url(server.base_url(), "mock-model"), environment);
    ASSERT_TRUE(settings.local_endpoint);
    settings.http.max_retries = 0;
    const PriceTable prices = PriceTable::load(std::filesystem::path(EVOTEAM_SOURCE_DIR) / "configs/models.json");
    ASSERT_EQ(prices.find("mock-model"), nullptr);
    server.push(
        testing::fake_reply(protocol, "Compiling.", {{"c1", "compile", nlohmann::json::object()}}, {100, 20, 0, 0}));
    std::unique_ptr<LlmProvider> provider = make_provider(settings, prices);
    LlmRequest request;
    request.messages.push_back({Role::user, {ContentBlock::make_text("Make it fast.")}});
    LlmResult result = provider->complete(request);
    ASSERT_TRUE(result.ok()) << (anthropic ? "anthropic: " : "openai: ") << result.failure().message;
    EXPECT_EQ(result.response().cost_usd, 0.0);
    EXPECT_EQ(result.response().usage, (Usage{100, 20, 0, 0}));
  }
}

// Credentials in the base URL are a secret: out of the URL the settings, the log and the run's record see, sent to
// the server by the transport only (HTTP basic authentication); a resumed run finds them in the variable.
TEST_F(LlmEndpoint, CredentialsInTheBaseUrlReachTheTransportOnly) {
  const std::string plain = m_server.base_url();
  const std::string with_password = "http://user:PASSWORD@" + plain.substr(std::string("http://").size()) + "/";
  const Config config = config_with_base_url(with_password, "tiny-local");
  ProviderSettings settings = provider_settings_for("openai", config, {});
  EXPECT_EQ(settings.base_url, plain);
  EXPECT_EQ(settings.base_url_credentials, "user:PASSWORD");
  EXPECT_TRUE(settings.local_endpoint);
  EXPECT_EQ(without_url_credentials(config).json()["llm"]["base_url"], plain + "/");
  EXPECT_EQ(without_url_credentials(config).json().dump().find("PASSWORD"), std::string::npos);
  EXPECT_EQ(redact("openai: POST " + with_password + "chat/completions -> HTTP 200").find("PASSWORD"),
            std::string::npos);
  EXPECT_EQ(redact("the password is PASSWORD").find("PASSWORD"), std::string::npos);

  settings.http.max_retries = 0;
  m_server.push(testing::fake_reply(FakeProtocol::openai, "ok", {}, {10, 2, 0, 0}));
  std::unique_ptr<LlmProvider> provider = make_provider(settings, m_prices);
  LlmRequest request;
  request.messages.push_back({Role::user, {ContentBlock::make_text("hi")}});
  ASSERT_TRUE(provider->complete(request).ok());
  ASSERT_EQ(m_server.requests().size(), 1u);
  EXPECT_EQ(m_server.requests()[0].path, "/v1/chat/completions");
  EXPECT_EQ(m_server.requests()[0].headers.at("authorization"), "Basic dXNlcjpQQVNTV09SRA==");

  const ProviderSettings resumed =
      provider_settings_for("openai", without_url_credentials(config), {{"OPENAI_BASE_URL", with_password}});
  EXPECT_EQ(resumed.base_url_credentials, "user:PASSWORD");
  const ProviderSettings elsewhere = provider_settings_for("openai", without_url_credentials(config),
                                                           {{"OPENAI_BASE_URL", "http://user:PASSWORD@10.9.9.9/v1"}});
  EXPECT_TRUE(elsewhere.base_url_credentials.empty()) << "credentials of another server are not sent";
}

// llm.openai_tool_choice goes with the tools.
TEST_F(LlmEndpoint, TheConfiguredToolChoiceGoesWithTheTools) {
  Config config = config_with_base_url(m_server.base_url());
  config.overlay({{"llm", {{"openai_tool_choice", "required"}}}}, "test");
  ProviderSettings settings = provider_settings_for("openai", config, {});
  settings.model = "tiny-local";
  EXPECT_EQ(settings.openai_tool_choice, "required");
  m_server.push(
      testing::fake_reply(FakeProtocol::openai, "", {{"c1", "compile", nlohmann::json::object()}}, {1, 1, 0, 0}));
  LlmRequest request;
  request.messages.push_back({Role::user, {ContentBlock::make_text("Go.")}});
  request.tools = {{"compile", "Build.", {{"type", "object"}, {"properties", nlohmann::json::object()}}}};
  ASSERT_TRUE(make_provider(settings, m_prices)->complete(request).ok());
  EXPECT_EQ(nlohmann::json::parse(m_server.requests().back().body).value("tool_choice", ""), "required");
}

// A priced model keeps its price behind a local proxy (a LiteLLM proxy forwarding to a hosted model).
TEST_F(LlmEndpoint, APricedModelKeepsItsPriceOnALocalEndpoint) {
  m_server.push(testing::fake_reply(FakeProtocol::openai, "ok", {}, {1000, 100, 0, 0}));
  std::unique_ptr<LlmProvider> provider = make_provider(local_settings("gpt-5"), m_prices);
  LlmRequest request;
  request.messages.push_back({Role::user, {ContentBlock::make_text("Hi.")}});
  LlmResult result = provider->complete(request);
  ASSERT_TRUE(result.ok()) << result.failure().message;
  EXPECT_GT(result.response().cost_usd, 0.0);
}

TEST_F(LlmEndpoint, TheModelListSaysWhetherTheModelIsServed) {
  m_server.push(model_list({"tiny-local", "other"}));
  const ServedModels served = list_served_models(local_settings());
  ASSERT_TRUE(served.answered) << served.problem;
  EXPECT_TRUE(served.serves("tiny-local"));
  EXPECT_FALSE(served.serves("tiny"));
  EXPECT_EQ(served.models_text(), "tiny-local, other");
  ASSERT_EQ(m_server.requests().size(), 1u);
  EXPECT_EQ(m_server.requests()[0].method, "GET");
  EXPECT_EQ(m_server.requests()[0].path, "/v1/models");
}

TEST_F(LlmEndpoint, AnEndpointThatDoesNotServeTheModelIsRefusedNamingWhatItServes) {
  m_server.push(model_list({"qwen2.5-coder"}));
  try {
    check_endpoint_serves_model(local_settings("llama-3"));
    ADD_FAILURE() << "accepted";
  } catch (const InvalidInput& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(m_server.base_url() + "/models"), std::string::npos) << message;
    EXPECT_NE(message.find("llama-3"), std::string::npos) << message;
    EXPECT_NE(message.find("qwen2.5-coder"), std::string::npos) << message;
  }
}

TEST_F(LlmEndpoint, AnEndpointThatAnswersWithAnErrorIsRefusedWithWhatItSaid) {
  m_server.push(testing::fake_error(FakeProtocol::openai, 404, "not_found", "no route /v1/models here"));
  try {
    check_endpoint_serves_model(local_settings());
    ADD_FAILURE() << "accepted";
  } catch (const InvalidInput& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("404"), std::string::npos) << message;
    EXPECT_NE(message.find("no route /v1/models here"), std::string::npos) << message;
  }
}

// `optimize` asks before the run exists: a server that does not answer leaves no run directory behind (exit 3).
TEST(LlmEndpointOptimize, AnEndpointThatDoesNotAnswerIsRefusedBeforeTheRunExists) {
  testing::TempDir runs;
  const std::string url = closed_port_url();
  Config config = config_with_base_url(url, "tiny-local");
  config.overlay({{"llm", {{"connect_timeout_s", 2.0}}}}, "test");
  OptimizeOptions options;
  options.task_dir = std::filesystem::path(EVOTEAM_SOURCE_DIR) / "kernels" / "host_matmul";
  options.provider = "openai";
  options.runs_dir = runs.path();
  RunContext context(system_runner(), process_meter());
  try {
    (void)optimize(config, options, context);
    ADD_FAILURE() << "the run started";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.code(), ExitCode::invalid_input);
    const std::string message = error.what();
    EXPECT_NE(message.find(url + "/models"), std::string::npos) << message;
    EXPECT_NE(message.find("does not answer"), std::string::npos) << message;
  }
  EXPECT_TRUE(std::filesystem::is_empty(runs.path()));
}

// A provider's own endpoint is asked for the model with the key (a free lookup): a refused key or an unknown model is
// refused before the run exists, naming the provider, the variable and what the server said.
TEST(LlmEndpointOptimize, AKeyTheProviderRefusesIsRefusedBeforeTheRunExists) {
  testing::TempDir runs;
  FakeLlmServer server(FakeProtocol::anthropic);
  server.push(testing::fake_error(FakeProtocol::anthropic, 401, "authentication_error", "invalid x-api-key"));
  ::setenv("ANTHROPIC_API_KEY", "sk-ant-wrong", 1);
  Config config = config_with_base_url(server.base_url(), "claude-sonnet-4-5");
  OptimizeOptions options;
  options.task_dir = std::filesystem::path(EVOTEAM_SOURCE_DIR) / "kernels" / "host_matmul";
  options.provider = "anthropic";
  options.runs_dir = runs.path();
  RunContext context(system_runner(), process_meter());
  try {
    (void)optimize(config, options, context);
    ADD_FAILURE() << "the run started";
  } catch (const InvalidInput& error) {
    const std::string message = error.what();
    for (const char* said : {"anthropic", "ANTHROPIC_API_KEY", "invalid x-api-key"})
      EXPECT_NE(message.find(said), std::string::npos) << said << " in " << message;
    EXPECT_EQ(message.find("sk-ant-wrong"), std::string::npos) << message;
  }
  ::unsetenv("ANTHROPIC_API_KEY");
  EXPECT_TRUE(std::filesystem::is_empty(runs.path()));
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests().front().method, "GET");
  EXPECT_EQ(server.requests().front().path, "/v1/models/claude-sonnet-4-5");
  EXPECT_EQ(server.requests().front().headers.at("x-api-key"), "sk-ant-wrong");
}

TEST_F(LlmEndpoint, TheProvidersModelLookupChecksTheKeyAndTheModel) {
  ProviderSettings settings = local_settings("gpt-4o");
  settings.api_key = "sk-wrong";
  m_server.push(testing::fake_error(FakeProtocol::openai, 401, "invalid_request_error", "Incorrect API key provided"));
  try {
    check_provider_accepts(settings);
    ADD_FAILURE() << "a refused key was accepted";
  } catch (const InvalidInput& error) {
    const std::string message = error.what();
    for (const char* said : {"openai", "OPENAI_API_KEY", "Incorrect API key provided"})
      EXPECT_NE(message.find(said), std::string::npos) << said << " in " << message;
  }
  EXPECT_EQ(m_server.requests().back().path, "/v1/models/gpt-4o");
  EXPECT_EQ(m_server.requests().back().headers.at("authorization"), "Bearer sk-wrong");
  m_server.push(testing::fake_error(FakeProtocol::openai, 404, "invalid_request_error", "The model does not exist"));
  try {
    check_provider_accepts(settings);
    ADD_FAILURE() << "an unknown model was accepted";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("gpt-4o"), std::string::npos) << error.what();
  }
  // A known model, and a server that is only busy, let the run start (its turns retry as usual).
  m_server.push(FakeReply::json(200, {{"id", "gpt-4o"}, {"object", "model"}}));
  EXPECT_NO_THROW(check_provider_accepts(settings));
  m_server.push(testing::fake_error(FakeProtocol::openai, 503, "server_error", "busy"));
  EXPECT_NO_THROW(check_provider_accepts(settings));
}

// vLLM says max_model_len in its model list; llama.cpp says n_ctx in /props at the server's root.
TEST_F(LlmEndpoint, TheContextWindowComesFromTheServerWhenItSaysSo) {
  m_server.push(model_list({"tiny-local"}, 32768));
  const ServedModels vllm = list_served_models(local_settings());
  EXPECT_EQ(served_context_window(local_settings(), vllm, "tiny-local"), std::optional<std::uint64_t>(32768));

  m_server.push(model_list({"tiny-local"}));
  const ServedModels llama = list_served_models(local_settings());
  m_server.push(FakeReply::json(
      200,
      {{"default_generation_settings", {{"n_ctx", 2048}, {"params", nlohmann::json::object()}}}, {"total_slots", 1}}));
  EXPECT_EQ(served_context_window(local_settings(), llama, "tiny-local"), std::optional<std::uint64_t>(2048));
  EXPECT_EQ(m_server.requests().back().path, "/props");

  // Neither: the configuration, else the price table, else the conservative default.
  m_server.push(model_list({"tiny-local"}));
  m_server.push(testing::fake_error(FakeProtocol::openai, 404, "not_found", "no props"));
  ProviderSettings settings = local_settings();
  EXPECT_EQ(resolve_context_window(settings, 8192, 0).source, "llm.context_window");
  m_server.push(model_list({"tiny-local"}));
  m_server.push(testing::fake_error(FakeProtocol::openai, 404, "not_found", "no props"));
  const ContextWindow fallback = resolve_context_window(settings, 0, 0);
  EXPECT_EQ(fallback.tokens, k_default_local_context_window);
  EXPECT_EQ(fallback.source, "default");
}

TEST_F(LlmEndpoint, TheToolProbeTellsAcceptedFromRefused) {
  m_server.push(
      testing::fake_reply(FakeProtocol::openai, "", {{"p1", "ping", nlohmann::json::object()}}, {10, 5, 0, 0}));
  ToolsProbe accepted = probe_tool_calls(local_settings());
  EXPECT_TRUE(accepted.accepted) << accepted.detail;
  EXPECT_TRUE(accepted.called);
  const nlohmann::json sent = nlohmann::json::parse(m_server.requests().back().body);
  EXPECT_EQ(sent.at("tools").at(0).at("function").at("name"), "ping");

  // What llama-server answers without --jinja.
  m_server.push(testing::fake_error(FakeProtocol::openai, 500, "server_error", "tools param requires --jinja flag"));
  ToolsProbe refused = probe_tool_calls(local_settings());
  EXPECT_FALSE(refused.accepted);
  EXPECT_NE(refused.detail.find("--jinja"), std::string::npos) << refused.detail;
}

}  // namespace
}  // namespace evoteam
