// The agent loop: check limits, call the provider, run the tools, append the results, save the record.
#include <evoteam/agent/agent.hpp>
#include <evoteam/core/clock.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/agent/transcript.hpp>

#include <chrono>

#include "agent/conversation.hpp"

namespace evoteam {

namespace {

constexpr const char* k_no_tool_call =
    "Your reply called no tool. Work on the task with your tools, and call submit when you are done.";
constexpr const char* k_cut_at_max_tokens =
    "Your reply reached the output token limit before it called a tool. Be brief, and call one tool at a time.";
constexpr const char* k_not_run_after_submit = "error: not run: you already submitted in this reply";
constexpr const char* k_not_run_after_crash = "error: not run: the daemon stopped before this tool ran; call it again";
constexpr const char* k_resumed = "The session was resumed after an interruption; continue with the task.";
constexpr std::size_t k_keep_recent_messages = 6;

struct Limit {
  Stop stop;
  std::string detail;
};

std::optional<Limit> limit_reached(const AgentLimits& limits, const AgentResult& spent, double elapsed_s,
                                   const Meter& meter) {
  if (interrupted()) return Limit{Stop::interrupted, "the daemon was interrupted"};
  if (limits.max_steps > 0 && spent.steps >= limits.max_steps)
    return Limit{Stop::step_limit, std::to_string(spent.steps) + " steps"};
  if (limits.max_tokens > 0 && spent.usage.total() >= limits.max_tokens)
    return Limit{Stop::token_limit, std::to_string(spent.usage.total()) + " tokens used by the agent"};
  if (limits.max_cost_usd > 0 && spent.cost_usd >= limits.max_cost_usd)
    return Limit{Stop::cost_limit, "USD " + std::to_string(spent.cost_usd) + " spent by the agent"};
  if (limits.max_wall_s > 0 && elapsed_s >= limits.max_wall_s)
    return Limit{Stop::time_limit, std::to_string(elapsed_s) + " s spent by the agent"};
  switch (meter.check()) {
    case LimitHit::tokens: return Limit{Stop::token_limit, "the run's token budget is spent"};
    case LimitHit::cost: return Limit{Stop::cost_limit, "the run's cost budget is spent"};
    case LimitHit::wall_time: return Limit{Stop::time_limit, "the run's time budget is spent"};
    case LimitHit::none: break;
  }
  return std::nullopt;
}

}  // namespace

AgentResult run_agent(const AgentSettings& settings, const AgentPrompt& prompt, LlmProvider& provider,
                      Toolbox& tools, Meter& meter, const std::filesystem::path& transcript_path) {
  Conversation state = conversation_from(read_transcript(transcript_path));
  Transcript transcript(transcript_path);
  AgentResult result;
  result.steps = state.steps;
  result.usage = state.usage;
  result.cost_usd = state.cost_usd;
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return state.elapsed_s + seconds_since(started);
  };
  auto add = [&](Message message) {
    transcript.append(message_record(message));
    state.messages.push_back(std::move(message));
  };
  auto finish = [&](Stop stop, std::string detail) {
    result.stop = stop;
    result.detail = std::move(detail);
    transcript.append({{"type", "stop"}, {"stop", to_string(stop)}, {"detail", result.detail},
                       {"steps", result.steps}, {"usage", to_json(result.usage)}, {"cost_usd", result.cost_usd},
                       {"elapsed_s", elapsed()}, {"summary", result.summary}});
    return result;
  };

  if (state.stop && state.stop->value("stop", "") == "submitted") {
    result.stop = Stop::submitted;
    result.summary = state.stop->value("summary", "");
    result.detail = "already submitted";
    return result;
  }
  if (state.messages.empty()) {
    state.system = prompt.system;
    transcript.append({{"type", "message"}, {"role", "system"}, {"content", prompt.system},
                       {"agent", settings.role}, {"model", settings.model}, {"provider", provider.name()}});
    add({Role::user, {ContentBlock::make_text(prompt.instance)}});
  } else if (state.messages.back().role == Role::assistant) {
    // The API rejects a tool call without its result, so calls cut off by a crash are answered first.
    Message answer{Role::user, {}};
    for (const std::string& id : unanswered_tool_calls(state.messages))
      answer.content.push_back(ContentBlock::make_tool_result(id, k_not_run_after_crash, true));
    if (answer.content.empty()) answer.content.push_back(ContentBlock::make_text(k_resumed));
    add(std::move(answer));
  }

  const std::vector<ToolSpec> specs = tools.specs();
  int malformed_in_a_row = 0;
  while (true) {
    if (std::optional<Limit> limit = limit_reached(settings.limits, result, elapsed(), meter))
      return finish(limit->stop, limit->detail);
    if (settings.context_window > 0 && settings.context_clear_fraction > 0 &&
        static_cast<double>(state.last_prompt_tokens) >
            settings.context_clear_fraction * static_cast<double>(settings.context_window))
      clear_old_tool_results(state.messages, k_keep_recent_messages);

    LlmRequest request{settings.model, state.system, state.messages, specs, settings.max_reply_tokens,
                       settings.temperature};
    LlmResult reply = provider.complete(request);
    ++result.steps;
    if (!reply.ok()) {
      const LlmFailure& failure = reply.failure();
      meter.charge_unknown(failure.unknown_cost_attempts);
      transcript.append({{"type", "call_failed"}, {"kind", to_string(failure.kind)},
                         {"http_status", failure.http_status}, {"message", failure.message},
                         {"attempts", failure.attempts}});
      if (failure.kind == FailureKind::interrupted) return finish(Stop::interrupted, failure.message);
      if (failure.kind != FailureKind::malformed_reply) return finish(Stop::provider_failed, failure.message);
      // Nothing the model can be shown: count it and ask again.
      if (++malformed_in_a_row >= settings.limits.max_consecutive_malformed)
        return finish(Stop::malformed_replies, failure.message);
      continue;
    }

    const LlmResponse& response = reply.response();
    meter.charge(response.usage, response.cost_usd, response.unknown_cost_attempts);
    result.usage += response.usage;
    result.cost_usd += response.cost_usd;
    state.last_prompt_tokens = response.usage.prompt();
    Message said{Role::assistant, response.content};
    nlohmann::json record = message_record(said);
    record.update({{"usage", to_json(response.usage)}, {"cost_usd", response.cost_usd}, {"model", response.model},
                   {"latency_s", response.latency_s}, {"stop_reason", response.finish_raw},
                   {"request_id", response.request_id}, {"attempts", response.attempts},
                   {"agent_elapsed_s", elapsed()}});
    transcript.append(record);
    if (!said.content.empty()) state.messages.push_back(std::move(said));

    Message results{Role::user, {}};
    bool well_formed = false;
    bool submitted = false;
    for (const ContentBlock& call : response.content) {
      if (call.kind != BlockKind::tool_use) continue;
      if (submitted) {
        results.content.push_back(ContentBlock::make_tool_result(call.id, k_not_run_after_submit, true));
        continue;
      }
      ToolOutcome outcome;
      if (call.input_valid()) {
        outcome = tools.call(call.name, call.input);
      } else {
        outcome.status = ToolStatus::format_error;
        outcome.content = "error: the arguments of " + call.name + " are not a JSON object: " + call.input_error_text;
      }
      well_formed = well_formed || outcome.status != ToolStatus::format_error;
      if (outcome.submitted) {
        submitted = true;
        result.summary = outcome.summary;
      }
      results.content.push_back(ContentBlock::make_tool_result(call.id, outcome.content, outcome.is_error()));
    }
    if (results.content.empty())
      results.content.push_back(ContentBlock::make_text(
          response.finish == FinishReason::max_tokens ? k_cut_at_max_tokens : k_no_tool_call));
    add(std::move(results));
    if (submitted) return finish(Stop::submitted, "");
    malformed_in_a_row = well_formed ? 0 : malformed_in_a_row + 1;
    if (malformed_in_a_row >= settings.limits.max_consecutive_malformed)
      return finish(Stop::malformed_replies, std::to_string(malformed_in_a_row) + " replies in a row without a valid tool call");
  }
}

}  // namespace evoteam
