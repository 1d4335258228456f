// Questions asked of an OpenAI-compatible server before a run: its models, its context window, its tool calls.
#include <evoteam/llm/endpoint.hpp>

#include <arpa/inet.h>

#include <array>
#include <cctype>
#include <cstring>

#include <spdlog/spdlog.h>

#include <evoteam/core/error.hpp>
#include <evoteam/core/json_fields.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/llm/provider_table.hpp>

#include "llm/http.hpp"
#include "llm/providers.hpp"

namespace evoteam {

namespace {

// The authority of a URL ("user@host:port"), without scheme and path.
std::string url_authority(const std::string& url) {
  std::size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  const std::size_t end = url.find_first_of("/?#", start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The host of a URL: no user information, no port, no brackets around an IPv6 address.
std::string url_host(const std::string& url) {
  std::string authority = url_authority(url);
  if (const std::size_t at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    return authority.substr(1, close == std::string::npos ? std::string::npos : close - 1);
  }
  if (const std::size_t colon = authority.find(':'); colon != std::string::npos) authority = authority.substr(0, colon);
  std::string host;
  for (char c : authority) host += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return host;
}

bool private_ipv4(const std::string& host) {
  in_addr address{};
  if (inet_pton(AF_INET, host.c_str(), &address) != 1) return false;
  const std::uint32_t ip = ntohl(address.s_addr);
  auto in = [ip](std::uint32_t network, int bits) { return (ip >> (32 - bits)) == (network >> (32 - bits)); };
  return in(0x7F000000, 8) || in(0x0A000000, 8) || in(0xAC100000, 12) || in(0xC0A80000, 16) || in(0xA9FE0000, 16);
}

bool private_ipv6(const std::string& host) {
  std::array<unsigned char, 16> bytes{};
  if (inet_pton(AF_INET6, host.c_str(), bytes.data()) != 1) return false;
  static constexpr std::array<unsigned char, 16> k_loopback{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return bytes == k_loopback || (bytes[0] & 0xFE) == 0xFC || (bytes[0] == 0xFE && (bytes[1] & 0xC0) == 0x80);
}

// The server's root: llama.cpp serves /props there, beside /v1.
std::string server_root(const std::string& base_url) {
  std::string root = base_url;
  while (!root.empty() && root.back() == '/') root.pop_back();
  if (root.size() >= 3 && root.compare(root.size() - 3, 3, "/v1") == 0) root.resize(root.size() - 3);
  return root;
}

http::Request endpoint_request(const ProviderSettings& settings, const std::string& url) {
  http::Request request;
  request.url = url;
  request.credentials = settings.base_url_credentials;
  if (!settings.api_key.empty()) request.headers.push_back("authorization: Bearer " + settings.api_key);
  return request;
}

// What a failed exchange said, in one line: the transport error, or the status and the server's message.
std::string outcome_problem(const http::Outcome& outcome) {
  if (outcome.failure == http::Failure::http_status) return failure_from(outcome, "server").message;
  return outcome.error.empty() ? "no reply" : outcome.error;
}

}  // namespace

bool is_local_endpoint(const std::string& base_url) {
  const std::string host = url_host(base_url);
  if (host == "localhost" || (host.size() > 10 && host.compare(host.size() - 10, 10, ".localhost") == 0)) return true;
  return private_ipv4(host) || private_ipv6(host);
}

std::string displayed_url(const std::string& base_url) {
  const std::string authority = url_authority(base_url);
  const std::size_t at = authority.rfind('@');
  if (at == std::string::npos) return base_url;
  const std::size_t start = base_url.find(authority);
  return base_url.substr(0, start) + authority.substr(at + 1) + base_url.substr(start + authority.size());
}

std::string url_credentials(const std::string& base_url) {
  const std::string authority = url_authority(base_url);
  const std::size_t at = authority.rfind('@');
  return at == std::string::npos ? std::string() : authority.substr(0, at);
}

bool ServedModels::serves(const std::string& model) const {
  for (const std::string& served : models)
    if (served == model) return true;
  return false;
}

std::string ServedModels::models_text() const { return models.empty() ? "none" : join(models, ", "); }

ServedModels list_served_models(const ProviderSettings& settings) {
  ServedModels served;
  served.url = displayed_url(settings.base_url) + "/models";
  const http::Outcome outcome = http::get(endpoint_request(settings, settings.base_url + "/models"), settings.http);
  if (outcome.failure != http::Failure::none) {
    served.problem = redact(outcome_problem(outcome));
    return served;
  }
  const nlohmann::json body = nlohmann::json::parse(outcome.response.body, nullptr, false);
  if (!body.is_object() || !body.contains("data") || !body.at("data").is_array()) {
    served.problem = "the reply is not a model list ({\"data\": [...]}): " + first_line(outcome.response.body);
    return served;
  }
  served.answered = true;
  for (const nlohmann::json& entry : body.at("data")) {
    const std::string id = text_or(entry, "id");
    if (id.empty()) continue;
    served.models.push_back(id);
    if (const std::uint64_t length = token_count(entry, "max_model_len"); length > 0)
      served.max_model_len.emplace_back(id, length);
  }
  return served;
}

std::optional<std::uint64_t> served_context_window(const ProviderSettings& settings, const ServedModels& models,
                                                   const std::string& model) {
  for (const auto& [id, length] : models.max_model_len)
    if (id == model) return length;
  const http::Outcome outcome =
      http::get(endpoint_request(settings, server_root(settings.base_url) + "/props"), settings.http);
  if (outcome.failure != http::Failure::none) return std::nullopt;
  const nlohmann::json props = nlohmann::json::parse(outcome.response.body, nullptr, false);
  if (!props.is_object() || !props.contains("default_generation_settings")) return std::nullopt;
  const std::uint64_t n_ctx = token_count(props.at("default_generation_settings"), "n_ctx");
  if (n_ctx == 0) return std::nullopt;
  return n_ctx;
}

ToolsProbe probe_tool_calls(const ProviderSettings& settings) {
  LlmRequest request;
  request.model = settings.model;
  request.max_tokens = 32;
  request.messages.push_back({Role::user, {ContentBlock::make_text("Call the ping tool.")}});
  request.tools = {{"ping", "Answers pong.", {{"type", "object"}, {"properties", nlohmann::json::object()}}}};
  http::Request post = endpoint_request(settings, settings.base_url + "/chat/completions");
  post.headers.push_back("content-type: application/json");
  post.body = openai_request_body(request, settings.openai_max_tokens_field).dump();
  HttpSettings once = settings.http;
  once.max_retries = 0;
  const http::Outcome outcome = http::post(post, once, "openai");
  ToolsProbe probe;
  if (outcome.failure != http::Failure::none) {
    probe.detail = redact(outcome_problem(outcome));
    return probe;
  }
  const LlmResult reply = parse_openai_reply(outcome.response.body);
  if (!reply.ok()) {
    probe.detail = reply.failure().message;
    return probe;
  }
  probe.accepted = true;
  for (const ContentBlock& block : reply.response().content) probe.called |= block.kind == BlockKind::tool_use;
  return probe;
}

void check_endpoint_serves_model(const ProviderSettings& settings) {
  const ServedModels served = list_served_models(settings);
  if (!served.answered)
    throw InvalidInput("llm endpoint " + served.url + " does not answer: " + served.problem +
                       " (start the server, or fix --base-url / llm.base_url)");
  if (!served.serves(settings.model))
    throw InvalidInput("llm endpoint " + served.url + " does not serve model '" + settings.model +
                       "'; it serves: " + served.models_text() + " (name one with --model / llm.model)");
}

void check_provider_accepts(const ProviderSettings& settings) {
  const ProviderInfo* provider = find_provider(settings.provider);
  if (provider == nullptr) return;
  http::Request request;
  if (provider->protocol == ProviderProtocol::anthropic_messages) {
    request.url = settings.base_url + "/v1/models/" + settings.model;
    request.credentials = settings.base_url_credentials;
    request.headers = {"x-api-key: " + settings.api_key, "anthropic-version: " + settings.anthropic_version};
  } else if (provider->protocol == ProviderProtocol::openai_chat_completions) {
    request = endpoint_request(settings, settings.base_url + "/models/" + settings.model);
  } else {
    return;  // not a server
  }
  const http::Outcome outcome = http::get(request, settings.http);
  if (outcome.failure == http::Failure::none) return;
  const std::string said = redact(outcome_problem(outcome));
  const std::string where = std::string(provider->name) + " at " + displayed_url(settings.base_url);
  const long status = outcome.failure == http::Failure::http_status ? outcome.response.status : 0;
  if (status == 401)
    throw InvalidInput(where + " refused the key in " + std::string(provider->key_variable) + ": " + said +
                       " (set a valid key in " + std::string(provider->key_variable) + ")");
  if (status == 404)
    throw InvalidInput(where + " does not know model '" + settings.model + "': " + said +
                       " (name one it serves with --model / llm.model)");
  spdlog::warn("could not check the key and model with {} before the run: {}", where, said);
}

ContextWindow resolve_context_window(const ProviderSettings& settings, std::uint64_t configured,
                                     std::uint64_t table_window) {
  const ProviderInfo* provider = find_provider(settings.provider);
  const bool openai_protocol = provider != nullptr && provider->protocol == ProviderProtocol::openai_chat_completions;
  if (openai_protocol && settings.local_endpoint) {
    const ServedModels served = list_served_models(settings);
    if (served.answered)
      if (std::optional<std::uint64_t> window = served_context_window(settings, served, settings.model))
        return {*window, "server"};
  }
  if (configured > 0) return {configured, "llm.context_window"};
  if (table_window > 0) return {table_window, "price table"};
  if (settings.local_endpoint) {
    spdlog::warn(
        "the context window of {} at {} is unknown (the server does not say, llm.context_window is 0): "
        "assuming {} tokens",
        settings.model, displayed_url(settings.base_url), k_default_local_context_window);
    return {k_default_local_context_window, "default"};
  }
  return {0, ""};
}

}  // namespace evoteam
