#pragma once
// The LLM supervisor policy (the `supervisor` role): proposes the next TeamSpec as JSON; falls back to the rules.
#include <map>
#include <string>

#include <evoteam/llm/llm.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/supervisor/supervisor_policy.hpp>
#include <evoteam/team/role.hpp>

namespace evoteam {

struct LlmSupervisorInputs {
  const Signals* signals = nullptr;
  const TeamSpec* previous = nullptr;
  const RunHistory* history = nullptr;
  const SupervisorSettings* settings = nullptr;
  const std::map<std::string, RoleDefinition>* roles = nullptr;
  std::string model;
  std::string task_name, target, params, constraints, knowledge_digest, best_summary, budget;
};

Decision decide_by_llm(const LlmSupervisorInputs& inputs, LlmProvider& provider, Meter& meter,
                       std::map<std::string, int>& clear_streak);

}  // namespace evoteam
