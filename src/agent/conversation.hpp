#pragma once
// The conversation state of an agent and how it is rebuilt from a transcript, kept apart from the loop so
// agent.cpp reads as the loop alone.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/llm/llm.hpp>

namespace evoteam {

struct Conversation {
  std::string system;
  std::vector<Message> messages;
  int steps = 0;  // provider calls recorded
  Usage usage;
  double cost_usd = 0;
  double elapsed_s = 0;  // time spent in the loop by earlier runs
  std::uint64_t last_prompt_tokens = 0;
  std::optional<nlohmann::json> stop;  // the last stop record, if the transcript ends with one
};

// Rebuilds the state from transcript records; empty when there are none. Throws InvalidInput on a record
// of a bad shape.
Conversation conversation_from(const std::vector<nlohmann::json>& records);

// Tool-use ids of the last assistant message that no later message answers.
std::vector<std::string> unanswered_tool_calls(const std::vector<Message>& messages);

// Replaces the content of tool results older than the last `keep_last` messages with a short stub.
void clear_old_tool_results(std::vector<Message>& messages, std::size_t keep_last);

// Transcript record of a message (without seq and t).
nlohmann::json message_record(const Message& message);

}  // namespace evoteam
