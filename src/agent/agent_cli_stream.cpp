// The readers of the coding-agent CLIs' event streams: what each line says of tokens, cost, the turn's end and its
// failures. Tokens are counted as they arrive, so that a turn cut short (a deadline, a budget, a signal) has been
// charged what its model served as far as the stream showed it.
#include <evoteam/agent/agent_cli.hpp>

#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include <evoteam/core/error.hpp>

namespace evoteam {

namespace {

// A token count a CLI printed: a number, at most 2^53 (no turn comes near; a larger one is a bogus line, read as 0
// rather than cast out of range).
std::uint64_t count_of(const nlohmann::json& object, const char* field) {
  if (!object.is_object() || !object.contains(field) || !object[field].is_number()) return 0;
  const double value = object[field].get<double>();
  return value > 0 && value <= 9007199254740992.0 ? static_cast<std::uint64_t>(value) : 0;
}

// A dollar figure a CLI printed, when it is one (finite, not negative).
std::optional<double> cost_of(const nlohmann::json& object, const char* field) {
  if (!object.is_object() || !object.contains(field) || !object[field].is_number()) return std::nullopt;
  const double value = object[field].get<double>();
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

// The part of `now` not already in `counted` (never negative).
Usage usage_beyond(const Usage& now, const Usage& counted) {
  auto minus = [](std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; };
  return {minus(now.input, counted.input), minus(now.output, counted.output), minus(now.cache_read, counted.cache_read),
          minus(now.cache_write, counted.cache_write)};
}

Usage usage_max(const Usage& a, const Usage& b) {
  return {std::max(a.input, b.input), std::max(a.output, b.output), std::max(a.cache_read, b.cache_read),
          std::max(a.cache_write, b.cache_write)};
}

std::optional<nlohmann::json> json_object_of(const std::string& line) {
  try {
    nlohmann::json value = nlohmann::json::parse(line);
    if (value.is_object()) return value;
  } catch (const nlohmann::json::exception&) {  // not JSON, or a number past any double's range ("1e600")
  }
  return std::nullopt;
}

std::string string_field(const nlohmann::json& object, const char* field) {
  return object.is_object() && object.contains(field) && object[field].is_string() ? object[field].get<std::string>()
                                                                                   : std::string();
}

// The Anthropic Messages usage object (in a message, a message_delta, or Claude Code's result).
Usage anthropic_usage(const nlohmann::json& usage) {
  return {count_of(usage, "input_tokens"), count_of(usage, "output_tokens"), count_of(usage, "cache_read_input_tokens"),
          count_of(usage, "cache_creation_input_tokens")};
}

// One model's entry of Claude Code's result.modelUsage.
Usage claude_model_usage(const nlohmann::json& usage) {
  return {count_of(usage, "inputTokens"), count_of(usage, "outputTokens"), count_of(usage, "cacheReadInputTokens"),
          count_of(usage, "cacheCreationInputTokens")};
}

// --- Claude Code: `claude -p --output-format stream-json --verbose --include-partial-messages` --------------------
//
// Every model call is a message with an id. Its usage shows up to three times: in the raw stream's message_start
// (input and cache counts, as soon as the call starts) and message_delta (the output count, as it grows), and in the
// whole `assistant` message (Claude Code prints the usage it had then, which may be short of the final output; a
// call it made again without streaming shows only there). Each field of a message is charged once, at the largest
// figure the endpoint gave. Subagents' calls stream alike. The `result` closes the turn with totals, which are
// Claude Code's own accounting — it estimates the output of a stream that broke off — so they count only for what the
// stream never showed: a model no call of the stream named (a side call on a small model), or the whole turn when
// the stream showed no call at all.
class ClaudeStream : public AgentCliStream {
 public:
  AgentCliEvent read(const std::string& line) override {
    AgentCliEvent event;
    std::optional<nlohmann::json> value = json_object_of(line);
    if (!value || !value->contains("type")) return event;
    event.parsed = true;
    const std::string type = string_field(*value, "type");
    if (type == "stream_event") {
      read_raw_event((*value)["event"], string_field(*value, "parent_tool_use_id"), event);
    } else if (type == "assistant" && value->contains("message") && (*value)["message"].is_object()) {
      const nlohmann::json& message = (*value)["message"];
      event.model = string_field(message, "model");
      m_models.insert(event.model);
      if (message.contains("usage"))
        event.usage = charge(string_field(message, "id"), anthropic_usage(message["usage"]));
    } else if (type == "result") {
      read_result(*value, event);
    } else if (type == "system") {
      event.model = string_field(*value, "model");
      event.version = string_field(*value, "claude_code_version");
    }
    return event;
  }

 private:
  // The API's own events: message_start names the call; message_delta grows its output count.
  void read_raw_event(const nlohmann::json& raw, const std::string& parent, AgentCliEvent& event) {
    if (!raw.is_object()) return;
    const std::string type = string_field(raw, "type");
    if (type == "message_start" && raw.contains("message") && raw["message"].is_object()) {
      const nlohmann::json& message = raw["message"];
      const std::string id = string_field(message, "id");
      m_streaming[parent] = id;
      event.model = string_field(message, "model");
      m_models.insert(event.model);
      if (message.contains("usage")) event.usage = charge(id, anthropic_usage(message["usage"]));
    } else if (type == "message_delta" && raw.contains("usage")) {
      event.usage = charge(m_streaming[parent], anthropic_usage(raw["usage"]));
    }
  }

  void read_result(const nlohmann::json& value, AgentCliEvent& event) {
    event.final = true;
    Usage unseen;
    if (value.contains("modelUsage") && value["modelUsage"].is_object())
      for (const auto& [model, usage] : value["modelUsage"].items())
        if (m_models.count(model) == 0) unseen += claude_model_usage(usage);
    if (m_by_message.empty() && value.contains("usage")) unseen = usage_max(unseen, anthropic_usage(value["usage"]));
    event.usage = unseen;
    event.reported_cost_usd = cost_of(value, "total_cost_usd");
    const std::string subtype = value.contains("subtype") ? string_field(value, "subtype") : "success";
    const bool is_error = value.contains("is_error") && value["is_error"].is_boolean() && value["is_error"].get<bool>();
    if (is_error || subtype != "success") {
      // error_max_turns and its kin carry no result text: the subtype and the turn count say what happened.
      std::string words = string_field(value, "result");
      if (words.empty()) {
        words = subtype.empty() ? "error" : subtype;
        if (value.contains("num_turns") && value["num_turns"].is_number_integer())
          words += " after " + std::to_string(value["num_turns"].get<long long>()) + " turns";
      }
      event.failure = words;
      event.auth_failure = looks_like_auth_failure(words);
      event.unreachable = !event.auth_failure && looks_like_unreachable(words);
    }
  }

  // What `usage` adds to what message `id` was already charged, field by field.
  Usage charge(const std::string& id, const Usage& usage) {
    Usage& seen = m_by_message[id];
    const Usage fresh = usage_beyond(usage, seen);
    seen = usage_max(seen, usage);
    return fresh;
  }

  std::map<std::string, Usage> m_by_message;       // per model call (message id): the most each field reached
  std::map<std::string, std::string> m_streaming;  // per agent (its parent tool use; "" the main one): its call
  std::set<std::string> m_models;                  // the models the stream's calls named
};

// --- Codex: `codex exec --json` ----------------------------------------------------------------------------------
//
// Codex reports usage once, on turn.completed; its input count includes the cached part. An `error` event alone is
// a notice (Codex says so while it reconnects and goes on); the turn failed only on turn.failed, or when the process
// fails after one.
class CodexStream : public AgentCliStream {
 public:
  AgentCliEvent read(const std::string& line) override {
    AgentCliEvent event;
    std::optional<nlohmann::json> value = json_object_of(line);
    if (!value || !value->contains("type")) return event;
    event.parsed = true;
    const std::string type = string_field(*value, "type");
    if (type == "turn.completed") {
      event.final = true;
      const nlohmann::json usage = value->value("usage", nlohmann::json::object());
      const std::uint64_t input = count_of(usage, "input_tokens"), cached = count_of(usage, "cached_input_tokens");
      event.usage = {input > cached ? input - cached : 0, count_of(usage, "output_tokens"), cached, 0};
    } else if (type == "turn.failed" || type == "error") {
      const nlohmann::json error = value->value("error", nlohmann::json::object());
      std::string words = error.is_object() ? string_field(error, "message") : "";
      if (words.empty()) words = string_field(*value, "message");
      if (words.empty()) words = type;
      if (type == "error") {
        event.notice = words;
      } else {
        event.final = true;
        event.failure = words;
      }
      event.auth_failure = looks_like_auth_failure(words);
      event.unreachable = !event.auth_failure && looks_like_unreachable(words);
    }
    return event;
  }
};

// --- Any other CLI: a command template ------------------------------------------------------------------------

// JSON lines that carry "usage" ({input_tokens, output_tokens}) and a "cost_usd" or "total_cost_usd" are counted as
// they come; anything else is text. Such a CLI has no last event: its exit says how the turn ended.
class CommandStream : public AgentCliStream {
 public:
  AgentCliEvent read(const std::string& line) override {
    AgentCliEvent event;
    std::optional<nlohmann::json> value = json_object_of(line);
    if (!value) return event;
    event.parsed = true;
    if (value->contains("usage")) event.usage = anthropic_usage((*value)["usage"]);
    for (const char* field : {"cost_usd", "total_cost_usd"})
      if (std::optional<double> cost = cost_of(*value, field)) event.reported_cost_usd = cost;
    return event;
  }
};

}  // namespace

std::unique_ptr<AgentCliStream> AgentCli::stream() const {
  switch (kind) {
    case AgentCliKind::claude_code: return std::make_unique<ClaudeStream>();
    case AgentCliKind::codex: return std::make_unique<CodexStream>();
    case AgentCliKind::command: return std::make_unique<CommandStream>();
  }
  throw_check_failure(__FILE__, __LINE__, "an agent CLI kind without a stream reader");
}

}  // namespace evoteam
