// The LLM supervisor: the `supervisor` role reads the signals and history and answers with a TeamSpec as JSON.
// The proposal is validated; an invalid or over-budget one falls back to the rules, and the fallback is recorded.
#include <evoteam/supervisor/supervisor_llm.hpp>

#include <spdlog/spdlog.h>

#include <evoteam/core/error.hpp>

namespace evoteam {

namespace {

std::string history_text(const RunHistory& history) {
  std::string text;
  for (const CycleRecord& cycle : history.cycles) {
    text += "- cycle " + std::to_string(cycle.cycle) + ": " + to_string(cycle.team.pattern) + " [";
    for (const std::string& role : cycle.team.role_names()) text += role + " ";
    text += "] best after: " +
            (cycle.best_speedup_after ? std::to_string(*cycle.best_speedup_after) + "x" : std::string("none"));
    int evaluations = 0;
    for (const EvaluationRecord* record : history.in_cycle(cycle.cycle)) evaluations += record->blocked() ? 0 : 1;
    text += ", " + std::to_string(evaluations) + " evaluations\n";
  }
  return text.empty() ? "(first decision)" : text;
}

// The first {...} block of the reply: models sometimes wrap JSON in prose or a code fence.
std::optional<nlohmann::json> extract_json(const std::string& text) {
  std::size_t begin = text.find('{');
  std::size_t end = text.rfind('}');
  if (begin == std::string::npos || end == std::string::npos || end < begin) return std::nullopt;
  nlohmann::json value = nlohmann::json::parse(text.substr(begin, end - begin + 1), nullptr, false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

std::string lines_of(const std::vector<std::string>& items, const std::string& bullet, const std::string& end) {
  std::string text;
  for (const std::string& item : items) text += bullet + item + end;
  return text;
}

// The values of the supervisor role's placeholders. `available` lists the roles it may choose.
std::map<std::string, std::string> prompt_values(const LlmSupervisorInputs& inputs, const std::string& available) {
  const TeamSpec& previous = *inputs.previous;
  return {{"task_name", inputs.task_name},
          {"target", inputs.target},
          {"params", inputs.params},
          {"constraints", inputs.constraints},
          {"directives", previous.directives.empty() ? "none" : lines_of(previous.directives, "- ", "\n")},
          {"knowledge_digest", inputs.knowledge_digest},
          {"best_summary", inputs.best_summary},
          {"cycle", std::to_string(inputs.signals->cycle + 1)},
          {"budget", inputs.budget},
          {"team", to_string(previous.pattern) + ": " + lines_of(previous.role_names(), "", " ")},
          {"signals", inputs.signals->to_text()},
          {"history", history_text(*inputs.history)},
          {"available_roles", available},
          {"team_schema", team_spec_schema().dump(2)}};
}

const char* const k_supervisor_ask = "Decide the team for the next cycle. Answer with the JSON object only.";

LlmRequest supervisor_request(const std::string& model, const std::string& system) {
  LlmRequest request;
  request.model = model;
  request.system = system;
  request.messages.push_back(Message{Role::user, {ContentBlock::make_text(k_supervisor_ask)}});
  request.max_tokens = 2048;
  request.caller = "supervisor";
  return request;
}

std::string reply_text(const LlmResponse& response) {
  std::string text;
  for (const ContentBlock& block : response.content)
    if (block.kind == BlockKind::text) text += block.text;
  return text;
}

// The LLM's evidence is its own words, which may be none ("build_failure_rate" and nothing else): the measured
// evidence of each signal it names goes beside them, so the run's record keeps what was measured.
void keep_measured_evidence(nlohmann::json& evidence, const Signals& signals) {
  if (!evidence.is_array()) return;
  for (nlohmann::json& item : evidence) {
    if (!item.is_object() || !item.contains("signal") || !item["signal"].is_string()) continue;
    const auto measured = signals.by_name.find(item["signal"].get<std::string>());
    if (measured == signals.by_name.end()) continue;
    item["measured"] = measured->second.evidence;
  }
}

}  // namespace

Decision decide_by_llm(const LlmSupervisorInputs& inputs, LlmProvider& provider, Meter& meter,
                       std::map<std::string, int>& clear_streak) {
  Decision fallback = decide_by_rules(*inputs.signals, *inputs.previous, *inputs.settings, clear_streak);
  // What a person auditing the team reads: the prompt, the reply, and the rules' decision beside it.
  nlohmann::json exchange = {{"model", inputs.model}, {"rules_decision", fallback.team.to_json()}};
  auto fall_back = [&](const std::string& why) {
    spdlog::warn("LLM supervisor: {}; falling back to the rules", why);
    fallback.team.decided_by = "llm-fallback-rules";
    fallback.team.rationale = "LLM proposal rejected (" + why + "); rules: " + fallback.team.rationale;
    exchange["taken"] = "rules: " + why;
    fallback.exchange = exchange;
    return fallback;
  };
  if (meter.check() != LimitHit::none) return fall_back("the budget is spent");

  std::string available;
  std::set<std::string> names;
  for (const auto& [name, role] : *inputs.roles)
    if (name != "supervisor") available += name + ": " + role.description + "\n", names.insert(name);
  auto supervisor = inputs.roles->find("supervisor");
  if (supervisor == inputs.roles->end()) return fall_back("no supervisor role file");
  std::string system;
  try {
    system = render(supervisor->second, prompt_values(inputs, available));
  } catch (const InvalidInput& error) {
    return fall_back(error.what());
  }
  exchange["system"] = system;
  exchange["user"] = k_supervisor_ask;
  LlmResult result = provider.complete(supervisor_request(inputs.model, system));
  if (!result.ok()) {
    meter.charge_unknown(result.failure().unknown_cost_attempts);
    return fall_back("provider failed: " + result.failure().message);
  }
  meter.charge(result.response().usage, result.response().cost_usd, result.response().unknown_cost_attempts,
               result.response().usage_estimated);
  exchange["reply"] = reply_text(result.response());
  exchange["usage"] = to_json(result.response().usage);
  exchange["cost_usd"] = result.response().cost_usd;
  std::optional<nlohmann::json> proposal = extract_json(reply_text(result.response()));
  if (!proposal) return fall_back("the reply holds no JSON object");
  Decision decision;
  try {
    decision.team = team_spec_from_json(*proposal, names);
  } catch (const InvalidInput& error) {
    return fall_back(error.what());
  }
  decision.team.decided_by = "llm";
  if (decision.team.evidence.empty()) decision.team.evidence = inputs.signals->to_json()["signals"];
  keep_measured_evidence(decision.team.evidence, *inputs.signals);
  if (proposal->value("stop", false)) {
    decision.stop = true;
    decision.stop_reason = StopReason::supervisor_stop;
  }
  exchange["taken"] = "llm";
  // The log says beside the LLM's choice what the rules would have done, so a reader sees where they differ.
  spdlog::info("supervisor (llm): {} [{}]{}; the rules would choose {} [{}]", to_string(decision.team.pattern),
               lines_of(decision.team.role_names(), "", " "), decision.stop ? ", stop" : "",
               to_string(fallback.team.pattern), lines_of(fallback.team.role_names(), "", " "));
  decision.exchange = std::move(exchange);
  return decision;
}

}  // namespace evoteam
