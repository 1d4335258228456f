#pragma once
// The "supervisor", "team" and "budgets" sections of the configuration as typed structs, read once per run
// (supervisor_settings.cpp is their only reader). Values are already checked against their rules at load; the
// structs carry no defaults of their own, so configs/default.json stays the one place a default is written.
#include <cstddef>
#include <cstdint>
#include <string>

namespace evoteam {

class Config;

enum class TeamMode { evolving, fixed, single };
TeamMode team_mode_from_string(const std::string& text);  // InvalidInput naming --team for anything else
std::string to_string(TeamMode mode);

// Who decides the next team: the LLM supervisor when the provider is an LLM (automatic), the rules, or the LLM.
enum class PolicyChoice { automatic, rules, llm };

struct SupervisorSettings {
  PolicyChoice policy = PolicyChoice::automatic;
  double stuck_failure_rate = 0;
  int recurring_error_count = 0;
  double max_changes_per_candidate = 0;
  int repeated_failure_count = 0;
  int stagnation_cycles = 0;
  double min_gain = 0;
  double roofline_stop = 0;
  int clear_after_cycles = 0;
  double optimizer_share = 0;
};

struct TeamSettings {
  TeamMode mode = TeamMode::evolving;
  int evaluations_per_cycle = 0;
  double reverify_ratio = 0;
  std::size_t digest_chars = 0;
  std::uint64_t seed = 0;
};

struct Budgets;

SupervisorSettings supervisor_settings(const Config& config);
TeamSettings team_settings(const Config& config);
Budgets budgets_from_config(const Config& config);

}  // namespace evoteam
