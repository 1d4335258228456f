// OpenAI Chat Completions with tool calls; also what vLLM, SGLang, llama.cpp's server and Ollama speak.
#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

#include <evoteam/core/text.hpp>
#include <evoteam/llm/endpoint.hpp>

#include "llm/providers.hpp"

namespace evoteam {

namespace {

FinishReason openai_finish_reason(const std::string& reason) {
  if (reason == "stop") return FinishReason::end_turn;
  if (reason == "tool_calls" || reason == "function_call") return FinishReason::tool_use;
  if (reason == "length") return FinishReason::max_tokens;
  if (reason == "content_filter") return FinishReason::refusal;
  return FinishReason::other;
}

// Content may be a string, null, or (some servers) an array of text parts.
std::string message_text(const nlohmann::json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array())
    for (const nlohmann::json& part : content)
      if (part.is_object() && part.contains("text") && part.at("text").is_string())
        text += part.at("text").get<std::string>();
  return text;
}

std::string joined_text(const Message& message) {
  std::vector<std::string_view> texts;
  for (const ContentBlock& block : message.content)
    if (block.kind == BlockKind::text && !block.text.empty()) texts.push_back(block.text);
  return join(texts, "\n\n");
}

// Arguments arrive as a JSON string; local models sometimes send broken JSON, an empty string for no
// arguments, or an object instead of a string.
ContentBlock tool_call_block(const std::string& id, const std::string& name, const nlohmann::json& arguments) {
  ContentBlock block = ContentBlock::make_tool_use(id, name, nlohmann::json::object());
  if (arguments.is_object()) {
    block.input = arguments;
    return block;
  }
  const std::string text = arguments.is_string() ? arguments.get<std::string>() : arguments.dump();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return block;
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_object())
    block.input = std::move(parsed);
  else
    block.input_error_text = text;
  return block;
}

// Models without native tool calling write their calls into the text, in the common (Hermes, Qwen) form
// <tool_call>{"name": "...", "arguments": {...}}</tool_call>. Each tagged call becomes a tool_use block and leaves
// the text; a tag whose inside is not such an object stays text, for the model to see what it wrote.
void take_text_tool_calls(LlmResponse& response) {
  constexpr std::string_view k_open = "<tool_call>", k_close = "</tool_call>";
  std::vector<ContentBlock> blocks;
  for (ContentBlock& block : response.content) {
    if (block.kind != BlockKind::text || block.text.find(k_open) == std::string::npos) {
      blocks.push_back(std::move(block));
      continue;
    }
    std::string kept;
    std::vector<ContentBlock> calls;
    std::size_t from = 0;
    for (std::size_t open; (open = block.text.find(k_open, from)) != std::string::npos;) {
      const std::size_t body = open + k_open.size();
      const std::size_t close = block.text.find(k_close, body);
      const std::size_t end = close == std::string::npos ? block.text.size() : close + k_close.size();
      const nlohmann::json call = nlohmann::json::parse(
          block.text.substr(body, (close == std::string::npos ? block.text.size() : close) - body), nullptr, false);
      if (call.is_object() && call.contains("name") && call.at("name").is_string()) {
        kept += block.text.substr(from, open - from);
        const char* key = call.contains("arguments") ? "arguments" : "parameters";
        calls.push_back(tool_call_block("", call.at("name").get<std::string>(),
                                        call.contains(key) ? call.at(key) : nlohmann::json("")));
      } else {
        kept += block.text.substr(from, end - from);
      }
      from = end;
    }
    kept += block.text.substr(std::min(from, block.text.size()));
    if (kept.find_first_not_of(" \t\r\n") != std::string::npos) blocks.push_back(ContentBlock::make_text(trim(kept)));
    for (ContentBlock& call : calls) blocks.push_back(std::move(call));
  }
  response.content = std::move(blocks);
}

// About 4 characters a token: what a reply without usage is counted as (see LlmResponse::usage_estimated).
std::uint64_t estimated_tokens(std::size_t characters) { return (characters + 3) / 4; }

class OpenAiProvider : public LlmProvider {
 public:
  OpenAiProvider(ProviderSettings settings, const PriceTable& prices)
      : m_settings(std::move(settings)), m_prices(prices, m_settings.local_endpoint) {}

  std::string name() const override { return "openai"; }

  LlmResult complete(const LlmRequest& request) override {
    LlmRequest effective = request;
    if (effective.model.empty()) effective.model = m_settings.model;
    http::Request http_request;
    http_request.url = m_settings.base_url + "/chat/completions";
    http_request.credentials = m_settings.base_url_credentials;
    http_request.headers = {"content-type: application/json"};
    // A server of one's own may need no key; an empty bearer would be refused by some.
    if (!m_settings.api_key.empty()) http_request.headers.push_back("authorization: Bearer " + m_settings.api_key);
    nlohmann::json body = openai_request_body(effective, m_settings.openai_max_tokens_field);
    if (!m_settings.openai_tool_choice.empty() && body.contains("tools"))
      body["tool_choice"] = m_settings.openai_tool_choice;
    http_request.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    http::Outcome outcome = http::post(http_request, m_settings.http, "openai");
    if (outcome.failure != http::Failure::none) return failure_from(outcome, "openai");
    LlmResult parsed = parse_openai_reply(outcome.response.body);
    // Without usage the prompt is counted from what was sent; parse_openai_reply counted the reply.
    if (parsed.ok() && parsed.response().usage_estimated) {
      parsed.response().usage.input = estimated_tokens(http_request.body.size());
      std::call_once(m_warned_no_usage, [&] {
        spdlog::warn(
            "openai: {} sent a reply without usage: its tokens are estimated from the text (4 characters a "
            "token), and the meter marks them estimated",
            m_settings.base_url);
      });
    }
    if (parsed.ok()) {
      // Some local servers send no ids (or repeat them); the conversation needs unique ones. Parallel members
      // share the provider, so the ids seen are guarded; the request itself went out on its own connection.
      std::lock_guard<std::mutex> lock(m_ids_mutex);
      for (ContentBlock& block : parsed.response().content)
        if (block.kind == BlockKind::tool_use && (block.id.empty() || !m_seen_ids.insert(block.id).second))
          block.id = "call_local_" + std::to_string(++m_generated_ids);
    }
    return complete_reply(std::move(parsed), outcome, effective.model, m_prices.table(), "x-request-id");
  }

 private:
  ProviderSettings m_settings;
  ReplyPrices m_prices;
  std::once_flag m_warned_no_usage;
  std::mutex m_ids_mutex;
  std::set<std::string> m_seen_ids;
  int m_generated_ids = 0;
};

}  // namespace

nlohmann::json openai_request_body(const LlmRequest& request, const std::string& max_tokens_field) {
  nlohmann::json body = {{"model", request.model}, {max_tokens_field, request.max_tokens}};
  if (request.temperature) body["temperature"] = *request.temperature;
  nlohmann::json messages = nlohmann::json::array();
  if (!request.system.empty()) messages.push_back({{"role", "system"}, {"content", request.system}});
  for (const Message& message : request.messages) {
    if (message.role == Role::assistant) {
      nlohmann::json out = {{"role", "assistant"}};
      const std::string text = joined_text(message);
      out["content"] = text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
      nlohmann::json calls = nlohmann::json::array();
      for (const ContentBlock& block : message.content) {
        if (block.kind != BlockKind::tool_use) continue;
        const std::string arguments = block.input_valid() ? block.input.dump() : block.input_error_text;
        calls.push_back(
            {{"id", block.id}, {"type", "function"}, {"function", {{"name", block.name}, {"arguments", arguments}}}});
      }
      if (!calls.empty()) out["tool_calls"] = calls;
      if (!text.empty() || !calls.empty()) messages.push_back(out);
      continue;
    }
    // Tool results become role "tool" messages, which must directly follow the assistant's calls.
    for (const ContentBlock& block : message.content) {
      if (block.kind != BlockKind::tool_result) continue;
      // The protocol has no error flag, so the text says it.
      const std::string content = (block.is_error ? "ERROR: " : "") + (block.text.empty() ? "(no output)" : block.text);
      messages.push_back({{"role", "tool"}, {"tool_call_id", block.id}, {"content", content}});
    }
    const std::string text = joined_text(message);
    if (!text.empty()) messages.push_back({{"role", "user"}, {"content", text}});
  }
  body["messages"] = messages;
  if (!request.tools.empty()) {
    nlohmann::json tools = nlohmann::json::array();
    for (const ToolSpec& tool : request.tools)
      tools.push_back(
          {{"type", "function"},
           {"function", {{"name", tool.name}, {"description", tool.description}, {"parameters", tool.input_schema}}}});
    body["tools"] = tools;
  }
  return body;
}

LlmResult parse_openai_reply(const std::string& body) {
  nlohmann::json reply = nlohmann::json::parse(body, nullptr, false);
  if (reply.is_discarded())
    return malformed_reply("openai", "body is not JSON (" + std::to_string(body.size()) + " bytes)");
  if (!reply.is_object()) return malformed_reply("openai", "body is not an object");
  if (!reply.contains("choices") || !reply.at("choices").is_array() || reply.at("choices").empty())
    return malformed_reply("openai", "no choices");
  const nlohmann::json& choice = reply.at("choices").at(0);
  if (!choice.is_object() || !choice.contains("message") || !choice.at("message").is_object())
    return malformed_reply("openai", "choice without a message");
  const nlohmann::json& message = choice.at("message");
  LlmResponse response;
  if (message.contains("content")) {
    std::string text = message_text(message.at("content"));
    if (!text.empty()) response.content.push_back(ContentBlock::make_text(std::move(text)));
  }
  if (message.contains("tool_calls") && message.at("tool_calls").is_array()) {
    for (const nlohmann::json& call : message.at("tool_calls")) {
      if (!call.is_object() || !call.contains("function") || !call.at("function").is_object())
        return malformed_reply("openai", "tool call without a function");
      const nlohmann::json& function = call.at("function");
      if (!function.contains("name") || !function.at("name").is_string())
        return malformed_reply("openai", "tool call without a name");
      std::string id = call.contains("id") && call.at("id").is_string() ? call.at("id").get<std::string>() : "";
      const bool has_arguments = function.contains("arguments") && !function.at("arguments").is_null();
      response.content.push_back(tool_call_block(id, function.at("name").get<std::string>(),
                                                 has_arguments ? function.at("arguments") : nlohmann::json("")));
    }
  }
  if (choice.contains("finish_reason") && choice.at("finish_reason").is_string()) {
    response.finish_raw = choice.at("finish_reason").get<std::string>();
    response.finish = openai_finish_reason(response.finish_raw);
  }
  bool called = false;
  for (const ContentBlock& block : response.content) called |= block.kind == BlockKind::tool_use;
  if (!called) {
    take_text_tool_calls(response);
    for (const ContentBlock& block : response.content)
      if (block.kind == BlockKind::tool_use && response.finish == FinishReason::end_turn)
        response.finish = FinishReason::tool_use;
  }
  if (!reply.contains("usage") || !reply.at("usage").is_object()) {
    std::size_t characters = 0;
    for (const ContentBlock& block : response.content)
      characters += block.text.size() + block.name.size() +
                    (block.input_valid() ? block.input.dump().size() : block.input_error_text.size());
    response.usage_estimated = true;
    response.usage.output = estimated_tokens(characters);
  }
  if (reply.contains("usage") && reply.at("usage").is_object()) {
    const nlohmann::json& usage = reply.at("usage");
    const nlohmann::json details = usage.value("prompt_tokens_details", nlohmann::json::object());
    // prompt_tokens includes the cached tokens; the meter counts them apart.
    const std::uint64_t prompt = token_count(usage, "prompt_tokens");
    response.usage.cache_read = token_count(details, "cached_tokens");
    response.usage.cache_write = token_count(details, "cache_write_tokens");
    const std::uint64_t cached = response.usage.cache_read + response.usage.cache_write;
    response.usage.input = prompt > cached ? prompt - cached : 0;
    response.usage.output = token_count(usage, "completion_tokens");
  }
  if (reply.contains("model") && reply.at("model").is_string()) response.model = reply.at("model").get<std::string>();
  return response;
}

std::unique_ptr<LlmProvider> make_openai_provider(const ProviderSettings& settings, const PriceTable& prices) {
  return std::make_unique<OpenAiProvider>(settings, prices);
}

}  // namespace evoteam
