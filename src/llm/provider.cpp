// Provider factory and the reply bookkeeping shared by providers.
#include <evoteam/core/error.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/llm/provider_table.hpp>

#include "llm/providers.hpp"

namespace evoteam {

namespace {

// The words servers use for a prompt longer than the context window: llama.cpp's error type and message, vLLM's
// and OpenAI's "maximum context length", OpenAI's code, Anthropic's "prompt is too long".
bool says_context_overflow(const std::string& body) {
  for (const char* words :
       {"exceed_context_size_error", "exceeds the available context size", "context_length_exceeded",
        "maximum context length", "prompt is too long", "context window"})
    if (body.find(words) != std::string::npos) return true;
  return false;
}

std::string without_trailing_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

std::uint64_t estimate_prompt_tokens(const LlmRequest& request) {
  std::size_t characters = request.system.size();
  for (const Message& message : request.messages)
    for (const ContentBlock& block : message.content)
      characters += block.text.size() + block.name.size() + block.input_error_text.size() +
                    (block.input.is_null() ? 0 : block.input.dump().size());
  for (const ToolSpec& tool : request.tools)
    characters += tool.name.size() + tool.description.size() + tool.input_schema.dump().size();
  return (characters + 3) / 4;
}

std::unique_ptr<LlmProvider> make_provider(const ProviderSettings& settings, const PriceTable& prices) {
  ProviderSettings resolved = settings;
  resolved.base_url = without_trailing_slash(resolved.base_url);
  if (resolved.model.empty()) resolved.model = prices.default_model(resolved.provider);
  const ProviderInfo* provider = find_provider(resolved.provider);
  const ProviderProtocol protocol = provider != nullptr ? provider->protocol : ProviderProtocol::none;
  if (protocol == ProviderProtocol::scripted) {
    return make_scripted_provider(resolved.scripted_file, resolved.model.empty() ? "scripted" : resolved.model, prices);
  }
  if (protocol == ProviderProtocol::none)
    throw InvalidInput("llm.provider: '" + resolved.provider + "' is not an LLM provider");
  if (resolved.model.empty()) throw InvalidInput("llm.model: no model given and no default for " + resolved.provider);
  // Fail before the first call, not after the first reply, when the model has no price; on a server of one's own
  // (a local endpoint) an unpriced model costs 0.
  if (!resolved.local_endpoint) prices.cost(resolved.model, Usage{});
  switch (protocol) {
    case ProviderProtocol::anthropic_messages: return make_anthropic_provider(resolved, prices);
    case ProviderProtocol::openai_chat_completions: return make_openai_provider(resolved, prices);
    case ProviderProtocol::scripted:
    case ProviderProtocol::none: break;
  }
  throw_check_failure(__FILE__, __LINE__, "a provider protocol without a maker");
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
  if (failure.http_status == 400 && says_context_overflow(outcome.response.body))
    failure.kind = FailureKind::context_overflow;
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
