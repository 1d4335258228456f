// Conversation state, resume from a transcript, context clearing, prompt rendering and agent settings.
#include "agent/conversation.hpp"

#include <algorithm>
#include <set>

#include <evoteam/agent/agent.hpp>
#include <evoteam/core/error.hpp>

namespace evoteam {

namespace {

constexpr const char* k_cleared_stub = "[output cleared to save context; run the tool again if you need it]";

const std::vector<std::pair<Stop, const char*>>& stop_words() {
  static const std::vector<std::pair<Stop, const char*>> words = {
      {Stop::submitted, "submitted"},       {Stop::step_limit, "step_limit"},
      {Stop::token_limit, "token_limit"},   {Stop::cost_limit, "cost_limit"},
      {Stop::time_limit, "time_limit"},     {Stop::malformed_replies, "malformed_replies"},
      {Stop::interrupted, "interrupted"},   {Stop::provider_failed, "provider_failed"},
      {Stop::budget_spent, "budget_spent"}, {Stop::context_overflow, "context_overflow"},
  };
  return words;
}

}  // namespace

std::string to_string(Stop stop) {
  for (const auto& [value, word] : stop_words())
    if (value == stop) return word;
  return "interrupted";
}

Stop stop_from_string(const std::string& text) {
  for (const auto& [value, word] : stop_words())
    if (text == word) return value;
  throw InvalidInput("unknown agent stop '" + text + "'");
}

std::string render_instance(const std::string& intro, const PromptInputs& inputs) {
  std::string text = intro;
  auto section = [&](const char* title, const std::string& body) {
    if (body.empty()) return;
    if (!text.empty() && text.back() != '\n') text += '\n';
    if (!text.empty()) text += '\n';
    text += std::string("## ") + title + "\n\n" + body;
    if (text.back() != '\n') text += '\n';
  };
  section("Task", inputs.task_readme);
  std::string directives;
  for (const std::string& directive : inputs.directives) directives += "- " + directive + "\n";
  section("Directives", directives);
  section("Knowledge", inputs.knowledge_digest);
  section("Current best", inputs.current_best);
  section("Figures of the current best", inputs.best_figures);
  return text;
}

Conversation conversation_from(const std::vector<nlohmann::json>& records) {
  Conversation conversation;
  for (const nlohmann::json& record : records) {
    const std::string type = record.value("type", "");
    if (type == "stop") {
      conversation.stop = record;
      continue;
    }
    conversation.stop.reset();
    if (type == "call_failed") {
      ++conversation.steps;
      continue;
    }
    if (type != "message") continue;
    const std::string role = record.value("role", "");
    if (role == "system") {
      conversation.system = record.value("content", "");
      continue;
    }
    if (role != "user" && role != "assistant")
      throw InvalidInput("transcript record " + std::to_string(record.value("seq", 0)) + ": unknown role '" + role +
                         "'");
    Message message{role == "user" ? Role::user : Role::assistant,
                    content_from_json(record.value("content", nlohmann::json::array()))};
    if (message.role == Role::assistant) {
      ++conversation.steps;
      const Usage usage = usage_from_json(record.value("usage", nlohmann::json::object()));
      conversation.usage += usage;
      conversation.cost_usd += record.value("cost_usd", 0.0);
      conversation.elapsed_s = std::max(conversation.elapsed_s, record.value("agent_elapsed_s", 0.0));
      conversation.last_prompt_tokens = usage.prompt();
    }
    // An empty reply is on record but was never part of the conversation (the API rejects empty turns).
    if (!message.content.empty()) conversation.messages.push_back(std::move(message));
  }
  if (conversation.stop)
    conversation.elapsed_s = std::max(conversation.elapsed_s, conversation.stop->value("elapsed_s", 0.0));
  return conversation;
}

std::vector<std::string> unanswered_tool_calls(const std::vector<Message>& messages) {
  std::size_t last_assistant = messages.size();
  for (std::size_t i = messages.size(); i > 0; --i)
    if (messages[i - 1].role == Role::assistant) {
      last_assistant = i - 1;
      break;
    }
  if (last_assistant == messages.size()) return {};
  std::set<std::string> answered;
  for (std::size_t i = last_assistant + 1; i < messages.size(); ++i)
    for (const ContentBlock& block : messages[i].content)
      if (block.kind == BlockKind::tool_result) answered.insert(block.id);
  std::vector<std::string> pending;
  for (const ContentBlock& block : messages[last_assistant].content)
    if (block.kind == BlockKind::tool_use && answered.count(block.id) == 0) pending.push_back(block.id);
  return pending;
}

void clear_old_tool_results(std::vector<Message>& messages, std::size_t keep_last) {
  if (messages.size() <= keep_last) return;
  for (std::size_t i = 0; i + keep_last < messages.size(); ++i)
    for (ContentBlock& block : messages[i].content)
      if (block.kind == BlockKind::tool_result && block.text.size() > 200) block.text = k_cleared_stub;
}

nlohmann::json message_record(const Message& message) {
  return {{"type", "message"}, {"role", to_string(message.role)}, {"content", to_json(message.content)}};
}

}  // namespace evoteam
