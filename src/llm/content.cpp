// Conversation value types and their canonical JSON form.
#include <evoteam/core/error.hpp>
#include <evoteam/llm/llm.hpp>

namespace evoteam {

ContentBlock ContentBlock::make_text(std::string text) {
  ContentBlock block;
  block.kind = BlockKind::text;
  block.text = std::move(text);
  return block;
}

ContentBlock ContentBlock::make_tool_use(std::string id, std::string name, nlohmann::json input) {
  ContentBlock block;
  block.kind = BlockKind::tool_use;
  block.id = std::move(id);
  block.name = std::move(name);
  block.input = std::move(input);
  return block;
}

ContentBlock ContentBlock::make_tool_result(std::string tool_use_id, std::string content, bool is_error) {
  ContentBlock block;
  block.kind = BlockKind::tool_result;
  block.id = std::move(tool_use_id);
  block.text = std::move(content);
  block.is_error = is_error;
  return block;
}

Usage& Usage::operator+=(const Usage& other) {
  input += other.input;
  output += other.output;
  cache_read += other.cache_read;
  cache_write += other.cache_write;
  return *this;
}

nlohmann::json to_json(const Usage& usage) {
  return {{"input", usage.input},
          {"output", usage.output},
          {"cache_read", usage.cache_read},
          {"cache_write", usage.cache_write}};
}

Usage usage_from_json(const nlohmann::json& value) {
  if (!value.is_object()) throw InvalidInput("usage: expected an object, got " + value.dump());
  auto count = [&](const char* key) -> std::uint64_t {
    if (!value.contains(key) || value.at(key).is_null()) return 0;
    const nlohmann::json& field = value.at(key);
    if (!field.is_number_integer() || field.get<std::int64_t>() < 0)
      throw InvalidInput(std::string("usage: '") + key + "' must be a non-negative integer");
    return field.get<std::uint64_t>();
  };
  Usage usage;
  usage.input = count("input");
  usage.output = count("output");
  usage.cache_read = count("cache_read");
  usage.cache_write = count("cache_write");
  return usage;
}

std::string to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::end_turn: return "end_turn";
    case FinishReason::tool_use: return "tool_use";
    case FinishReason::max_tokens: return "max_tokens";
    case FinishReason::stop_sequence: return "stop_sequence";
    case FinishReason::refusal: return "refusal";
    case FinishReason::context_window: return "context_window";
    case FinishReason::other: return "other";
  }
  return "other";
}

std::string to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::network: return "network";
    case FailureKind::timeout: return "timeout";
    case FailureKind::http_status: return "http_status";
    case FailureKind::malformed_reply: return "malformed_reply";
    case FailureKind::interrupted: return "interrupted";
    case FailureKind::script_ended: return "script_ended";
    case FailureKind::context_overflow: return "context_overflow";
  }
  return "network";
}

bool is_permanent(const LlmFailure& failure) {
  if (failure.kind != FailureKind::http_status) return false;
  const int status = failure.http_status;
  if (status < 400 || status >= 500 || status == 408 || status == 409) return false;
  // A 429 that reached the caller was a spent quota (not retried) or a rate limit that outlasted the retries.
  return status != 429 || failure.attempts <= 1;
}

std::string to_string(Role role) { return role == Role::user ? "user" : "assistant"; }

nlohmann::json to_json(const ContentBlock& block) {
  switch (block.kind) {
    case BlockKind::text: return {{"type", "text"}, {"text", block.text}};
    case BlockKind::tool_use: {
      nlohmann::json value = {{"type", "tool_use"}, {"id", block.id}, {"name", block.name}};
      if (block.input_valid()) {
        value["input"] = block.input;
      } else {
        value["input"] = nlohmann::json::object();
        value["input_error_text"] = block.input_error_text.empty() ? block.input.dump() : block.input_error_text;
      }
      return value;
    }
    case BlockKind::tool_result:
      return {
          {"type", "tool_result"}, {"tool_use_id", block.id}, {"content", block.text}, {"is_error", block.is_error}};
  }
  return nullptr;
}

namespace {

std::string string_field(const nlohmann::json& value, const char* key) {
  if (!value.contains(key) || !value.at(key).is_string())
    throw InvalidInput(std::string("content block: '") + key + "' must be a string in " + value.dump());
  return value.at(key).get<std::string>();
}

// A tool result's content may be a string or an array of text blocks (both are valid Anthropic input).
std::string result_text(const nlohmann::json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array())
    for (const nlohmann::json& part : content)
      if (part.is_object() && part.contains("type") && part.at("type") == "text" && part.contains("text") &&
          part.at("text").is_string())
        text += part.at("text").get<std::string>();
  return text;
}

}  // namespace

ContentBlock content_block_from_json(const nlohmann::json& value) {
  if (!value.is_object()) throw InvalidInput("content block: expected an object, got " + value.dump());
  const std::string type = string_field(value, "type");
  if (type == "text") return ContentBlock::make_text(string_field(value, "text"));
  if (type == "tool_use") {
    ContentBlock block = ContentBlock::make_tool_use(string_field(value, "id"), string_field(value, "name"),
                                                     value.value("input", nlohmann::json::object()));
    if (value.contains("input_error_text") && value.at("input_error_text").is_string())
      block.input_error_text = value.at("input_error_text").get<std::string>();
    else if (!block.input.is_object())
      block.input_error_text = block.input.dump();
    return block;
  }
  if (type == "tool_result") {
    const nlohmann::json is_error = value.value("is_error", nlohmann::json(false));
    if (!is_error.is_boolean())
      throw InvalidInput("content block: 'is_error' must be true or false in " + value.dump());
    return ContentBlock::make_tool_result(string_field(value, "tool_use_id"),
                                          result_text(value.value("content", nlohmann::json(""))),
                                          is_error.get<bool>());
  }
  throw InvalidInput("content block: unknown type '" + type + "'");
}

nlohmann::json to_json(const std::vector<ContentBlock>& blocks) {
  nlohmann::json array = nlohmann::json::array();
  for (const ContentBlock& block : blocks) array.push_back(to_json(block));
  return array;
}

std::vector<ContentBlock> content_from_json(const nlohmann::json& value) {
  if (value.is_string()) return {ContentBlock::make_text(value.get<std::string>())};
  if (!value.is_array()) throw InvalidInput("content: expected an array of blocks, got " + value.dump());
  std::vector<ContentBlock> blocks;
  for (const nlohmann::json& item : value) blocks.push_back(content_block_from_json(item));
  return blocks;
}

}  // namespace evoteam
