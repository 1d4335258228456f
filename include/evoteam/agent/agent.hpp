#pragma once
// The agent loop (mini-swe-agent's shape): render the prompt, then repeat: check limits, call the provider,
// run the requested tools, append their results, save the transcript record. It ends with one of a closed set
// of stops. Malformed replies and tool errors go back to the model as error results, never fatal.
// A transcript that already holds records is resumed: its conversation, steps, tokens and cost continue, and
// a tool call left without a result gets an error result first.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/agent/tools.hpp>
#include <evoteam/llm/llm.hpp>
#include <evoteam/llm/meter.hpp>

namespace evoteam {

class Config;

// Why the loop ended (a closed set). provider_failed: the provider returned no reply after its retries
// (network, HTTP status such as 401 or exhausted 529s, or a scripted file that ran out).
enum class Stop {
  submitted,
  step_limit,
  token_limit,
  cost_limit,
  time_limit,
  malformed_replies,
  interrupted,
  provider_failed,
  budget_spent,      // a run budget the team shares (time, GPU-seconds, evaluations) ran out: ended at a tool call
  context_overflow,  // the conversation did not fit the model's window, even shortened once
};
std::string to_string(Stop stop);
// Throws InvalidInput for an unknown word.
Stop stop_from_string(const std::string& text);

// What the first user message is made of (the role's template may place these itself).
struct PromptInputs {
  std::string task_readme;
  std::vector<std::string> directives;
  std::string knowledge_digest;
  std::string current_best;  // the current best candidate (its source or a description); empty for none
  std::string best_figures;  // its verdict and figures
};
// `intro` followed by a Markdown section per non-empty input: "## Task", "## Directives" (a bulleted list),
// "## Knowledge", "## Current best", "## Figures of the current best".
std::string render_instance(const std::string& intro, const PromptInputs& inputs);

// The rendered prompt: the role's system prompt and the first user message.
struct AgentPrompt {
  std::string system;
  std::string instance;
};

// Per-agent limits; 0 means unlimited. The run-wide limits are the Meter's.
struct AgentLimits {
  int max_steps = 100;           // provider calls, failed ones included
  std::uint64_t max_tokens = 0;  // Usage::total() of this agent
  double max_cost_usd = 0;
  double max_wall_s = 0;              // time spent in the loop, across resumes
  int max_consecutive_malformed = 3;  // replies in a row without one well-formed tool call
};

struct AgentSettings {
  std::string role;
  std::string model;
  int max_reply_tokens = 8192;
  std::optional<double> temperature;
  AgentLimits limits;
  // When the last prompt passed this fraction of the context window, older tool results are replaced by a
  // stub (the call stays). 0 disables; so does an unknown window.
  double context_clear_fraction = 0.8;
  std::uint64_t context_window = 0;  // the model's max_input_tokens; 0 unknown
};
// agent.* limits and llm.max_tokens / llm.temperature, for any role: the caller sets role, model and the
// model's context window.
AgentSettings agent_settings_from_config(const Config& config);

struct AgentResult {
  Stop stop = Stop::interrupted;
  std::string summary;  // what submit said
  std::string detail;   // one line: the limit and figures, or the provider's failure
  int steps = 0;        // provider calls, across resumes
  Usage usage;          // of this agent, across resumes
  double cost_usd = 0;
  // The provider refused a call for good (is_permanent: a refused key, an unknown model): provider_failed, and no
  // later turn can do better.
  bool provider_refused = false;
};

// Runs (or resumes) one agent until it stops. Every message goes to `transcript_path` as it happens; every
// reply is charged to `meter`, whose limits are checked with the agent's before each call. Throws only for
// infrastructure faults (the transcript cannot be written, a corrupt transcript, a misconfigured backend).
AgentResult run_agent(const AgentSettings& settings, const AgentPrompt& prompt, LlmProvider& provider, Toolbox& tools,
                      Meter& meter, const std::filesystem::path& transcript_path);

}  // namespace evoteam
