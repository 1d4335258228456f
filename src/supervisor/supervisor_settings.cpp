#include <evoteam/supervisor/supervisor_settings.hpp>

#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/supervisor/supervisor.hpp>

namespace evoteam {

TeamMode team_mode_from_string(const std::string& text) {
  if (text == "evolving") return TeamMode::evolving;
  if (text == "fixed") return TeamMode::fixed;
  if (text == "single") return TeamMode::single;
  throw InvalidInput("--team must be evolving, fixed or single, got '" + text + "'");
}

std::string to_string(TeamMode mode) {
  switch (mode) {
    case TeamMode::evolving: return "evolving";
    case TeamMode::fixed: return "fixed";
    case TeamMode::single: return "single";
  }
  return "evolving";
}

namespace {

PolicyChoice policy_from_string(const std::string& text) {
  if (text == "rules") return PolicyChoice::rules;
  if (text == "llm") return PolicyChoice::llm;
  EVOTEAM_CHECK(text == "auto", "supervisor.policy passed its rule with '" + text + "'");
  return PolicyChoice::automatic;
}

}  // namespace

SupervisorSettings supervisor_settings(const Config& config) {
  SupervisorSettings settings;
  settings.policy = policy_from_string(config.get<std::string>("supervisor.policy"));
  settings.stuck_failure_rate = config.get<double>("supervisor.stuck_failure_rate");
  settings.recurring_error_count = config.get<int>("supervisor.recurring_error_count");
  settings.max_changes_per_candidate = config.get<double>("supervisor.max_changes_per_candidate");
  settings.repeated_failure_count = config.get<int>("supervisor.repeated_failure_count");
  settings.stagnation_cycles = config.get<int>("supervisor.stagnation_cycles");
  settings.min_gain = config.get<double>("supervisor.min_gain");
  settings.roofline_stop = config.get<double>("supervisor.roofline_stop");
  settings.clear_after_cycles = config.get<int>("supervisor.clear_after_cycles");
  settings.optimizer_share = config.get<double>("supervisor.optimizer_share");
  return settings;
}

TeamSettings team_settings(const Config& config) {
  TeamSettings settings;
  settings.mode = team_mode_from_string(config.get<std::string>("team.mode"));
  settings.evaluations_per_cycle = config.get<int>("team.evaluations_per_cycle");
  settings.reverify_ratio = config.get<double>("team.reverify_ratio");
  settings.digest_chars = config.get<std::size_t>("team.digest_chars");
  settings.seed = config.get<std::uint64_t>("team.seed");
  return settings;
}

Budgets budgets_from_config(const Config& config) {
  Budgets budgets;
  budgets.max_cycles = config.get<int>("budgets.max_cycles");
  budgets.tokens = config.get<long long>("budgets.tokens");
  budgets.usd = config.get<double>("budgets.usd");
  budgets.hours = config.get<double>("budgets.hours");
  budgets.gpu_seconds = config.get<double>("budgets.gpu_seconds");
  budgets.evaluations = config.get<int>("budgets.evaluations");
  budgets.target_speedup = config.get<double>("budgets.target_speedup");
  return budgets;
}

}  // namespace evoteam
