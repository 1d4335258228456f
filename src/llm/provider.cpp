// Provider factory, settings from config and environment, and the reply bookkeeping shared by providers.
#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/log.hpp>

#include "llm/providers.hpp"

namespace evoteam {

namespace {

std::string env_value(const std::map<std::string, std::string>& environment, const std::string& name) {
  auto found = environment.find(name);
  return found == environment.end() ? std::string() : found->second;
}

std::string without_trailing_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

ProviderSettings provider_settings_from_config(const Config& config,
                                               const std::map<std::string, std::string>& environment) {
  ProviderSettings settings;
  settings.provider = config.get<std::string>("llm.provider");
  if (settings.provider == "auto") {
    if (!env_value(environment, "ANTHROPIC_API_KEY").empty())
      settings.provider = "anthropic";
    else if (!env_value(environment, "OPENAI_API_KEY").empty())
      settings.provider = "openai";
    else
      settings.provider = "builtin";
  }
  settings.model = config.get<std::string>("llm.model");
  settings.http.connect_timeout_s = config.get<double>("llm.connect_timeout_s");
  settings.http.request_timeout_s = config.get<double>("llm.request_timeout_s");
  settings.http.max_retries = config.get<int>("llm.max_retries");
  settings.http.backoff_initial_s = config.get<double>("llm.backoff_initial_s");
  settings.http.backoff_max_s = config.get<double>("llm.backoff_max_s");
  settings.http.retry_after_max_s = config.get<double>("llm.retry_after_max_s");
  settings.prompt_caching = config.get<bool>("llm.prompt_caching");
  settings.openai_max_tokens_field = config.get<std::string>("llm.openai_max_tokens_field");
  settings.scripted_file = config.get<std::string>("llm.scripted_file");
  if (settings.openai_max_tokens_field != "max_tokens" && settings.openai_max_tokens_field != "max_completion_tokens")
    throw InvalidInput("llm.openai_max_tokens_field: must be \"max_tokens\" or \"max_completion_tokens\", got \"" +
                       settings.openai_max_tokens_field + "\"");
  if (settings.provider == "anthropic") {
    settings.api_key = env_value(environment, "ANTHROPIC_API_KEY");
    settings.base_url = env_value(environment, "ANTHROPIC_BASE_URL");
    if (settings.base_url.empty()) settings.base_url = "https://api.anthropic.com";
    if (settings.api_key.empty()) throw InvalidInput("llm.provider anthropic: ANTHROPIC_API_KEY is not set");
  } else if (settings.provider == "openai") {
    settings.api_key = env_value(environment, "OPENAI_API_KEY");
    settings.base_url = env_value(environment, "OPENAI_BASE_URL");
    if (settings.base_url.empty()) settings.base_url = "https://api.openai.com/v1";
    if (settings.api_key.empty())
      throw InvalidInput("llm.provider openai: OPENAI_API_KEY is not set (local servers accept any value)");
  } else if (settings.provider == "scripted") {
    if (settings.scripted_file.empty())
      throw InvalidInput("llm.provider scripted: llm.scripted_file names no file");
  } else if (settings.provider != "builtin") {
    throw InvalidInput("llm.provider: unknown provider '" + settings.provider +
                       "' (expected auto, anthropic, openai, scripted or builtin)");
  }
  settings.base_url = without_trailing_slash(settings.base_url);
  return settings;
}

std::unique_ptr<LlmProvider> make_provider(const ProviderSettings& settings, const PriceTable& prices) {
  ProviderSettings resolved = settings;
  resolved.base_url = without_trailing_slash(resolved.base_url);
  if (resolved.model.empty()) resolved.model = prices.default_model(resolved.provider);
  if (resolved.provider == "scripted") {
    return make_scripted_provider(resolved.scripted_file, resolved.model.empty() ? "scripted" : resolved.model,
                                  prices);
  }
  if (resolved.provider != "anthropic" && resolved.provider != "openai")
    throw InvalidInput("llm.provider: '" + resolved.provider + "' is not an LLM provider");
  if (resolved.model.empty()) throw InvalidInput("llm.model: no model given and no default for " + resolved.provider);
  // Fail before the first call, not after the first reply, when the model has no price.
  prices.cost(resolved.model, Usage{});
  if (resolved.provider == "anthropic") return make_anthropic_provider(resolved, prices);
  return make_openai_provider(resolved, prices);
}

LlmFailure failure_from(const http::Outcome& outcome, const std::string& provider) {
  LlmFailure failure;
  failure.attempts = outcome.attempts;
  failure.unknown_cost_attempts = outcome.unknown_cost_attempts;
  switch (outcome.failure) {
    case http::Failure::interrupted:
      failure.kind = FailureKind::interrupted;
      failure.message = provider + ": interrupted";
      return failure;
    case http::Failure::timeout:
      failure.kind = FailureKind::timeout;
      failure.message = provider + ": " + outcome.error + " after " + std::to_string(outcome.attempts) + " attempts";
      return failure;
    case http::Failure::network:
    case http::Failure::none:
      failure.kind = FailureKind::network;
      failure.message = provider + ": " + outcome.error + " after " + std::to_string(outcome.attempts) + " attempts";
      return failure;
    case http::Failure::http_status: break;
  }
  failure.kind = FailureKind::http_status;
  failure.http_status = static_cast<int>(outcome.response.status);
  // Both protocols put a human message at error.message; fall back to the start of the body.
  std::string detail;
  nlohmann::json body = nlohmann::json::parse(outcome.response.body, nullptr, false);
  if (body.is_object() && body.contains("error") && body.at("error").is_object()) {
    const nlohmann::json& error = body.at("error");
    if (error.contains("type") && error.at("type").is_string()) detail = error.at("type").get<std::string>() + ": ";
    if (error.contains("message") && error.at("message").is_string()) detail += error.at("message").get<std::string>();
  } else {
    detail = outcome.response.body.substr(0, 200);
  }
  failure.message = redact(provider + ": HTTP " + std::to_string(failure.http_status) + " " + detail + " (after " +
                           std::to_string(outcome.attempts) + " attempts)");
  return failure;
}

LlmResult complete_reply(LlmResult parsed, const http::Outcome& outcome, const std::string& model,
                         const PriceTable& prices, const std::string& request_id_header) {
  if (!parsed.ok()) {
    LlmFailure failure = parsed.failure();
    failure.attempts = outcome.attempts;
    failure.unknown_cost_attempts = outcome.unknown_cost_attempts;
    return failure;
  }
  LlmResponse& response = parsed.response();
  response.cost_usd = prices.cost(model, response.usage);
  response.latency_s = outcome.latency_s;
  response.attempts = outcome.attempts;
  response.unknown_cost_attempts = outcome.unknown_cost_attempts;
  if (auto id = outcome.response.headers.find(request_id_header); id != outcome.response.headers.end())
    response.request_id = id->second;
  if (response.model.empty()) response.model = model;
  return parsed;
}

}  // namespace evoteam
