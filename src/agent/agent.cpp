// The agent loop: check limits, call the provider, run the tools, append the results, save the record.
#include <evoteam/agent/agent.hpp>
#include <evoteam/agent/transcript.hpp>
#include <evoteam/core/clock.hpp>
#include <evoteam/core/process.hpp>

#include <chrono>

#include "agent/conversation.hpp"

namespace evoteam {

namespace {

constexpr const char* k_no_tool_call =
    "Your reply called no tool. Work on the task with your tools, and call submit when you are done.";
constexpr const char* k_cut_at_max_tokens =
    "Your reply reached the output token limit before it called a tool. Be brief, and call one tool at a time.";
constexpr const char* k_not_run_after_submit = "error: not run: you already submitted in this reply";
constexpr const char* k_not_run_after_budget = "error: not run: the run's budget is spent";
constexpr const char* k_not_run_after_crash = "error: not run: the daemon stopped before this tool ran; call it again";
constexpr const char* k_resumed = "The session was resumed after an interruption; continue with the task.";
constexpr std::size_t k_keep_recent_messages = 6;
// After the server said the conversation does not fit its window: clear all but the latest exchange.
constexpr std::size_t k_keep_after_overflow = 2;

// Why the loop ends, with its one-line detail.
struct Ending {
  Stop stop;
  std::string detail;
};

std::optional<Ending> limit_reached(const AgentLimits& limits, const AgentResult& spent, double elapsed_s,
                                    const Meter& meter) {
  if (interrupted()) return Ending{Stop::interrupted, "the daemon was interrupted"};
  if (limits.max_steps > 0 && spent.steps >= limits.max_steps)
    return Ending{Stop::step_limit, std::to_string(spent.steps) + " steps"};
  if (limits.max_tokens > 0 && spent.usage.total() >= limits.max_tokens)
    return Ending{Stop::token_limit, std::to_string(spent.usage.total()) + " tokens used by the agent"};
  if (limits.max_cost_usd > 0 && spent.cost_usd >= limits.max_cost_usd)
    return Ending{Stop::cost_limit, "USD " + std::to_string(spent.cost_usd) + " spent by the agent"};
  if (limits.max_wall_s > 0 && elapsed_s >= limits.max_wall_s)
    return Ending{Stop::time_limit, std::to_string(elapsed_s) + " s spent by the agent"};
  switch (meter.check()) {
    case LimitHit::tokens: return Ending{Stop::token_limit, "the run's token budget is spent"};
    case LimitHit::cost: return Ending{Stop::cost_limit, "the run's cost budget is spent"};
    case LimitHit::wall_time: return Ending{Stop::time_limit, "the run's time budget is spent"};
    case LimitHit::none: break;
  }
  return std::nullopt;
}

// The tool calls of one reply, run in order: their results for the model, and what they mean for the loop.
struct ToolRound {
  Message results{Role::user, {}};
  bool well_formed = false;  // at least one call had arguments its tool could read
  bool submitted = false;
  std::string summary;       // what submit said
  std::string budget_spent;  // a tool found this run budget spent: the turn ends
};

// One agent's run (or resumed run): the conversation, its transcript and what it has spent so far.
class AgentLoop {
 public:
  AgentLoop(const AgentSettings& settings, LlmProvider& provider, Toolbox& tools, Meter& meter,
            const std::filesystem::path& transcript_path);

  AgentResult run(const AgentPrompt& prompt);

 private:
  std::optional<AgentResult> already_submitted() const;
  void start_or_resume(const AgentPrompt& prompt);
  bool context_nearly_full() const;
  LlmRequest next_request() const;
  LlmResult ask_model(const LlmRequest& request);
  std::optional<Ending> record_failed_call(const LlmFailure& failure);
  void record_reply(const LlmResponse& response);
  ToolRound run_tool_calls(const LlmResponse& response);
  ToolOutcome run_tool_call(const ContentBlock& call);
  std::optional<Ending> count_malformed(bool well_formed);
  void add(Message message);
  AgentResult finish(Ending ending);
  double elapsed_s() const;

  const AgentSettings& m_settings;
  LlmProvider& m_provider;
  Toolbox& m_tools;
  Meter& m_meter;
  Conversation m_state;  // read from the transcript before it is opened for appending
  Transcript m_transcript;
  AgentResult m_result;
  std::chrono::steady_clock::time_point m_started;  // where the time not yet in m_state.elapsed_s begins
  std::vector<ToolSpec> m_specs;
  int m_malformed_in_a_row = 0;
  bool m_shortened_after_overflow = false;  // the conversation was shortened once since the last reply
};

AgentLoop::AgentLoop(const AgentSettings& settings, LlmProvider& provider, Toolbox& tools, Meter& meter,
                     const std::filesystem::path& transcript_path)
    : m_settings(settings),
      m_provider(provider),
      m_tools(tools),
      m_meter(meter),
      m_state(conversation_from(read_transcript(transcript_path))),
      m_transcript(transcript_path) {
  m_result.steps = m_state.steps;
  m_result.usage = m_state.usage;
  m_result.cost_usd = m_state.cost_usd;
  m_started = std::chrono::steady_clock::now();
}

AgentResult AgentLoop::run(const AgentPrompt& prompt) {
  if (std::optional<AgentResult> done = already_submitted()) return *done;
  start_or_resume(prompt);
  m_specs = m_tools.specs();
  while (true) {
    if (std::optional<Ending> limit = limit_reached(m_settings.limits, m_result, elapsed_s(), m_meter))
      return finish(std::move(*limit));
    // The budgets the team shares with the evaluator: no model call is spent on a turn that could not act.
    if (std::optional<std::string> spent = m_tools.budget_spent()) return finish({Stop::budget_spent, *spent});
    if (context_nearly_full()) clear_old_tool_results(m_state.messages, k_keep_recent_messages);
    const LlmRequest request = next_request();
    // The prompt is known before it is sent: one the token budget cannot pay for is not sent at all.
    if (std::optional<std::string> refused = m_meter.admit(m_provider.prompt_tokens(request)))
      return finish({Stop::token_limit, *refused});
    LlmResult reply = ask_model(request);
    if (!reply.ok()) {
      if (std::optional<Ending> ending = record_failed_call(reply.failure())) return finish(std::move(*ending));
      continue;
    }
    record_reply(reply.response());
    ToolRound round = run_tool_calls(reply.response());
    add(std::move(round.results));
    if (round.submitted) {
      m_result.summary = std::move(round.summary);
      return finish({Stop::submitted, ""});
    }
    if (!round.budget_spent.empty()) return finish({Stop::budget_spent, round.budget_spent});
    if (std::optional<Ending> ending = count_malformed(round.well_formed)) return finish(std::move(*ending));
  }
}

// A transcript that ends in a submit is done: its result is returned and nothing more is written.
std::optional<AgentResult> AgentLoop::already_submitted() const {
  if (!m_state.stop || m_state.stop->value("stop", "") != "submitted") return std::nullopt;
  AgentResult result = m_result;
  result.stop = Stop::submitted;
  result.summary = m_state.stop->value("summary", "");
  result.detail = "already submitted";
  return result;
}

void AgentLoop::start_or_resume(const AgentPrompt& prompt) {
  if (m_state.messages.empty()) {
    m_state.system = prompt.system;
    m_transcript.append({{"type", "message"},
                         {"role", "system"},
                         {"content", prompt.system},
                         {"agent", m_settings.role},
                         {"model", m_settings.model},
                         {"provider", m_provider.name()}});
    add({Role::user, {ContentBlock::make_text(prompt.instance)}});
  } else if (m_state.messages.back().role == Role::assistant) {
    // The API rejects a tool call without its result, so calls cut off by a crash are answered first.
    Message answer{Role::user, {}};
    for (const std::string& id : unanswered_tool_calls(m_state.messages))
      answer.content.push_back(ContentBlock::make_tool_result(id, k_not_run_after_crash, true));
    if (answer.content.empty()) answer.content.push_back(ContentBlock::make_text(k_resumed));
    add(std::move(answer));
  }
}

// Whether the last prompt passed the share of the context window at which old tool results are cleared.
bool AgentLoop::context_nearly_full() const {
  return m_settings.context_window > 0 && m_settings.context_clear_fraction > 0 &&
         static_cast<double>(m_state.last_prompt_tokens) >
             m_settings.context_clear_fraction * static_cast<double>(m_settings.context_window);
}

LlmRequest AgentLoop::next_request() const {
  return LlmRequest{m_settings.model,       m_state.system, m_state.messages, m_specs, m_settings.max_reply_tokens,
                    m_settings.temperature, m_settings.role};
}

// Every call counts as a step, a failed one too.
LlmResult AgentLoop::ask_model(const LlmRequest& request) {
  LlmResult reply = m_provider.complete(request);
  ++m_result.steps;
  return reply;
}

// Charges and records a call that brought no reply; returns why the loop ends, unless it asks again.
std::optional<Ending> AgentLoop::record_failed_call(const LlmFailure& failure) {
  m_meter.charge_unknown(failure.unknown_cost_attempts);
  m_transcript.append({{"type", "call_failed"},
                       {"kind", to_string(failure.kind)},
                       {"http_status", failure.http_status},
                       {"message", failure.message},
                       {"attempts", failure.attempts}});
  if (failure.kind == FailureKind::interrupted) return Ending{Stop::interrupted, failure.message};
  // Too long for the window: shorten it as for the window share (harder), ask once more, then end the turn.
  if (failure.kind == FailureKind::context_overflow) {
    if (m_shortened_after_overflow) return Ending{Stop::context_overflow, failure.message};
    m_shortened_after_overflow = true;
    clear_old_tool_results(m_state.messages, k_keep_after_overflow);
    return std::nullopt;
  }
  if (failure.kind != FailureKind::malformed_reply) {
    m_result.provider_refused = is_permanent(failure);
    return Ending{Stop::provider_failed, failure.message};
  }
  // Nothing the model can be shown: count it and ask again.
  if (++m_malformed_in_a_row >= m_settings.limits.max_consecutive_malformed)
    return Ending{Stop::malformed_replies, failure.message};
  return std::nullopt;
}

// Charges the reply and records it; an empty reply is kept out of the conversation.
void AgentLoop::record_reply(const LlmResponse& response) {
  m_meter.charge(response.usage, response.cost_usd, response.unknown_cost_attempts, response.usage_estimated);
  m_shortened_after_overflow = false;
  m_result.usage += response.usage;
  m_result.cost_usd += response.cost_usd;
  m_state.last_prompt_tokens = response.usage.prompt();
  Message said{Role::assistant, response.content};
  nlohmann::json record = message_record(said);
  record.update({{"usage", to_json(response.usage)},
                 {"cost_usd", response.cost_usd},
                 {"model", response.model},
                 {"latency_s", response.latency_s},
                 {"stop_reason", response.finish_raw},
                 {"request_id", response.request_id},
                 {"attempts", response.attempts},
                 {"agent_elapsed_s", elapsed_s()}});
  if (response.usage_estimated) record["usage_estimated"] = true;
  m_transcript.append(record);
  if (!said.content.empty()) m_state.messages.push_back(std::move(said));
}

// Calls after a submit, or after a call that found the run's budget spent, are answered but not run, since every
// call needs its result. A reply that called no
// tool is answered with a nudge to use them.
ToolRound AgentLoop::run_tool_calls(const LlmResponse& response) {
  ToolRound round;
  for (const ContentBlock& call : response.content) {
    if (call.kind != BlockKind::tool_use) continue;
    if (round.submitted || !round.budget_spent.empty()) {
      round.results.content.push_back(ContentBlock::make_tool_result(
          call.id, round.submitted ? k_not_run_after_submit : k_not_run_after_budget, true));
      continue;
    }
    ToolOutcome outcome = run_tool_call(call);
    round.well_formed = round.well_formed || outcome.status != ToolStatus::format_error;
    if (outcome.submitted) {
      round.submitted = true;
      round.summary = outcome.summary;
    }
    round.budget_spent = outcome.budget_spent;
    round.results.content.push_back(ContentBlock::make_tool_result(call.id, outcome.content, outcome.is_error()));
  }
  if (round.results.content.empty())
    round.results.content.push_back(
        ContentBlock::make_text(response.finish == FinishReason::max_tokens ? k_cut_at_max_tokens : k_no_tool_call));
  return round;
}

ToolOutcome AgentLoop::run_tool_call(const ContentBlock& call) {
  if (call.input_valid()) return m_tools.call(call.name, call.input);
  ToolOutcome outcome;
  outcome.status = ToolStatus::format_error;
  outcome.content = "error: the arguments of " + call.name + " are not a JSON object: " + call.input_error_text;
  return outcome;
}

// A reply with one well-formed tool call ends the streak of malformed ones.
std::optional<Ending> AgentLoop::count_malformed(bool well_formed) {
  m_malformed_in_a_row = well_formed ? 0 : m_malformed_in_a_row + 1;
  if (m_malformed_in_a_row < m_settings.limits.max_consecutive_malformed) return std::nullopt;
  return Ending{Stop::malformed_replies,
                std::to_string(m_malformed_in_a_row) + " replies in a row without a valid tool call"};
}

// Every message goes to the transcript as it joins the conversation.
void AgentLoop::add(Message message) {
  m_transcript.append(message_record(message));
  m_state.messages.push_back(std::move(message));
}

AgentResult AgentLoop::finish(Ending ending) {
  m_result.stop = ending.stop;
  m_result.detail = std::move(ending.detail);
  m_transcript.append({{"type", "stop"},
                       {"stop", to_string(m_result.stop)},
                       {"detail", m_result.detail},
                       {"steps", m_result.steps},
                       {"usage", to_json(m_result.usage)},
                       {"cost_usd", m_result.cost_usd},
                       {"elapsed_s", elapsed_s()},
                       {"summary", m_result.summary}});
  return m_result;
}

// Time in the loop, across resumes.
double AgentLoop::elapsed_s() const { return m_state.elapsed_s + seconds_since(m_started); }

}  // namespace

AgentResult run_agent(const AgentSettings& settings, const AgentPrompt& prompt, LlmProvider& provider, Toolbox& tools,
                      Meter& meter, const std::filesystem::path& transcript_path) {
  AgentLoop loop(settings, provider, tools, meter, transcript_path);
  return loop.run(prompt);
}

}  // namespace evoteam
