// Anthropic Messages API with tool use and prompt caching on the stable prefix.
#include "llm/providers.hpp"

namespace evoteam {

namespace {

nlohmann::json block_json(const ContentBlock& block) {
  switch (block.kind) {
    case BlockKind::text: return {{"type", "text"}, {"text", block.text}};
    case BlockKind::tool_use:
      return {{"type", "tool_use"},
              {"id", block.id},
              {"name", block.name},
              {"input", block.input_valid() ? block.input : nlohmann::json::object()}};
    case BlockKind::tool_result:
      return {{"type", "tool_result"},
              {"tool_use_id", block.id},
              {"content", block.text.empty() ? "(no output)" : block.text},
              {"is_error", block.is_error}};
  }
  return nullptr;
}

FinishReason anthropic_finish_reason(const std::string& stop_reason) {
  if (stop_reason == "end_turn") return FinishReason::end_turn;
  if (stop_reason == "tool_use") return FinishReason::tool_use;
  if (stop_reason == "max_tokens") return FinishReason::max_tokens;
  if (stop_reason == "stop_sequence") return FinishReason::stop_sequence;
  if (stop_reason == "refusal") return FinishReason::refusal;
  if (stop_reason == "model_context_window_exceeded") return FinishReason::context_window;
  return FinishReason::other;
}

class AnthropicProvider : public LlmProvider {
 public:
  AnthropicProvider(ProviderSettings settings, const PriceTable& prices)
      : m_settings(std::move(settings)), m_prices(prices, m_settings.local_endpoint) {}

  std::string name() const override { return "anthropic"; }

  LlmResult complete(const LlmRequest& request) override {
    LlmRequest effective = request;
    if (effective.model.empty()) effective.model = m_settings.model;
    http::Request http_request;
    http_request.url = m_settings.base_url + "/v1/messages";
    http_request.credentials = m_settings.base_url_credentials;
    http_request.headers = {"content-type: application/json", "x-api-key: " + m_settings.api_key,
                            "anthropic-version: " + m_settings.anthropic_version};
    http_request.body = anthropic_request_body(effective, m_settings.prompt_caching)
                            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    http::Outcome outcome = http::post(http_request, m_settings.http, "anthropic");
    if (outcome.failure != http::Failure::none) return failure_from(outcome, "anthropic");
    return complete_reply(parse_anthropic_reply(outcome.response.body), outcome, effective.model, m_prices.table(),
                          "request-id");
  }

 private:
  ProviderSettings m_settings;
  ReplyPrices m_prices;
};

}  // namespace

nlohmann::json anthropic_request_body(const LlmRequest& request, bool prompt_caching) {
  nlohmann::json body = {{"model", request.model}, {"max_tokens", request.max_tokens}};
  if (request.temperature) body["temperature"] = *request.temperature;
  const nlohmann::json cache = {{"type", "ephemeral"}};
  if (!request.system.empty()) {
    nlohmann::json system = {{"type", "text"}, {"text", request.system}};
    // Tools come before the system prompt in the cached prefix, so this one breakpoint covers both.
    if (prompt_caching) system["cache_control"] = cache;
    body["system"] = nlohmann::json::array({system});
  }
  if (!request.tools.empty()) {
    nlohmann::json tools = nlohmann::json::array();
    for (const ToolSpec& tool : request.tools)
      tools.push_back({{"name", tool.name}, {"description", tool.description}, {"input_schema", tool.input_schema}});
    body["tools"] = tools;
  }
  nlohmann::json messages = nlohmann::json::array();
  for (const Message& message : request.messages) {
    nlohmann::json content = nlohmann::json::array();
    for (const ContentBlock& block : message.content) {
      // The API rejects empty text blocks.
      if (block.kind == BlockKind::text && block.text.empty()) continue;
      content.push_back(block_json(block));
    }
    if (content.empty()) continue;
    const std::string role = to_string(message.role);
    // Consecutive messages of one role are merged: tool results first, a note after them, as the API wants.
    if (!messages.empty() && messages.back()["role"] == role) {
      for (nlohmann::json& block : content) messages.back()["content"].push_back(std::move(block));
    } else {
      messages.push_back({{"role", role}, {"content", content}});
    }
  }
  // A second breakpoint at the end of the conversation lets the next call reuse everything said so far.
  if (prompt_caching && !messages.empty()) messages.back()["content"].back()["cache_control"] = cache;
  body["messages"] = messages;
  return body;
}

LlmResult parse_anthropic_reply(const std::string& body) {
  nlohmann::json reply = nlohmann::json::parse(body, nullptr, false);
  if (reply.is_discarded())
    return malformed_reply("anthropic", "body is not JSON (" + std::to_string(body.size()) + " bytes)");
  if (!reply.is_object()) return malformed_reply("anthropic", "body is not an object");
  if (text_or(reply, "type") == "error")
    return malformed_reply("anthropic", "error object in a 200 reply: " + reply.dump().substr(0, 200));
  if (!reply.contains("content") || !reply.at("content").is_array())
    return malformed_reply("anthropic", "no content array");
  LlmResponse response;
  for (const nlohmann::json& item : reply.at("content")) {
    if (!item.is_object()) return malformed_reply("anthropic", "content item is not an object");
    const std::string type = text_or(item, "type");
    if (type == "text") {
      if (!item.contains("text") || !item.at("text").is_string())
        return malformed_reply("anthropic", "text block without text");
      response.content.push_back(ContentBlock::make_text(item.at("text").get<std::string>()));
    } else if (type == "tool_use") {
      if (!item.contains("id") || !item.at("id").is_string() || !item.contains("name") || !item.at("name").is_string())
        return malformed_reply("anthropic", "tool_use block without id or name");
      ContentBlock block =
          ContentBlock::make_tool_use(item.at("id").get<std::string>(), item.at("name").get<std::string>(),
                                      item.value("input", nlohmann::json::object()));
      if (!block.input.is_object()) block.input_error_text = block.input.dump();
      response.content.push_back(std::move(block));
    }
    // Other block types (thinking, server tools) carry nothing the loop acts on.
  }
  if (reply.contains("stop_reason") && reply.at("stop_reason").is_string()) {
    response.finish_raw = reply.at("stop_reason").get<std::string>();
    response.finish = anthropic_finish_reason(response.finish_raw);
  }
  if (reply.contains("usage") && reply.at("usage").is_object()) {
    const nlohmann::json& usage = reply.at("usage");
    response.usage.input = token_count(usage, "input_tokens");
    response.usage.output = token_count(usage, "output_tokens");
    response.usage.cache_read = token_count(usage, "cache_read_input_tokens");
    response.usage.cache_write = token_count(usage, "cache_creation_input_tokens");
  }
  if (reply.contains("model") && reply.at("model").is_string()) response.model = reply.at("model").get<std::string>();
  return response;
}

std::unique_ptr<LlmProvider> make_anthropic_provider(const ProviderSettings& settings, const PriceTable& prices) {
  return std::make_unique<AnthropicProvider>(settings, prices);
}

}  // namespace evoteam
