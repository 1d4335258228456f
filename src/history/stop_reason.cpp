#include <evoteam/history/stop_reason.hpp>

#include <array>

namespace evoteam {

namespace {

// Every reason, so parsing and the tests can walk the closed set.
constexpr std::array k_all_stop_reasons = {
    StopReason::max_cycles,         StopReason::target_reached,     StopReason::roofline,
    StopReason::budget_tokens,      StopReason::budget_usd,         StopReason::budget_hours,
    StopReason::budget_gpu_seconds, StopReason::budget_evaluations, StopReason::supervisor_stop,
    StopReason::interrupted,        StopReason::search_exhausted,   StopReason::infra_errors,
    StopReason::provider_refused,   StopReason::model_unreachable,
};

}  // namespace

std::string to_string(StopReason reason) {
  switch (reason) {
    case StopReason::max_cycles: return "max_cycles";
    case StopReason::target_reached: return "target_reached";
    case StopReason::roofline: return "roofline";
    case StopReason::budget_tokens: return "budget_tokens";
    case StopReason::budget_usd: return "budget_usd";
    case StopReason::budget_hours: return "budget_hours";
    case StopReason::budget_gpu_seconds: return "budget_gpu_seconds";
    case StopReason::budget_evaluations: return "budget_evaluations";
    case StopReason::supervisor_stop: return "supervisor_stop";
    case StopReason::interrupted: return "interrupted";
    case StopReason::search_exhausted: return "search_exhausted";
    case StopReason::infra_errors: return "infra_errors";
    case StopReason::provider_refused: return "provider_refused";
    case StopReason::model_unreachable: return "model_unreachable";
  }
  return "interrupted";
}

bool is_budget(StopReason reason) {
  return reason == StopReason::budget_tokens || reason == StopReason::budget_usd ||
         reason == StopReason::budget_hours || reason == StopReason::budget_gpu_seconds ||
         reason == StopReason::budget_evaluations;
}

std::optional<StopReason> parse_stop_reason(std::string_view text) {
  for (StopReason reason : k_all_stop_reasons)
    if (to_string(reason) == text) return reason;
  return std::nullopt;
}

RunEnd run_end(StopReason reason, double target_speedup) {
  if (reason == StopReason::interrupted) return {RunStatus::stopped, ExitCode::interrupted};
  if (reason == StopReason::infra_errors) return {RunStatus::failed, ExitCode::failure};
  if (reason == StopReason::provider_refused || reason == StopReason::model_unreachable)
    return {RunStatus::failed, ExitCode::provider_refused};
  const bool target_missed = target_speedup > 0 && reason != StopReason::target_reached;
  return {RunStatus::finished, target_missed || is_budget(reason) ? ExitCode::budget_exhausted : ExitCode::success};
}

}  // namespace evoteam
