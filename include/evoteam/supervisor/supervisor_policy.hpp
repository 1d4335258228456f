#pragma once
// Signals computed from a run's history, and the rule-based policy that turns them into the next TeamSpec. The
// rules are the supervisor's moves: a team stuck debugging gets a Debugger; proposals not grounded in performance
// data (or a best kernel not profiled since its last structural change) get a Profiling Scientist; findings that
// do not reach later teams get a Knowledge Integrator; a hard path abandoned, or several changes at once, get a
// Disciplinarian; a blocked hard path runs the Debugger in parallel with the Optimizer; no improvement for
// several cycles changes the pattern or lineage, and a kernel near the roofline stops the run. Every signal
// carries the evidence behind it; every decision names the signals it used, so a person can audit the team.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/history/history.hpp>
#include <evoteam/history/stop_reason.hpp>
#include <evoteam/history/team_spec.hpp>
#include <evoteam/supervisor/supervisor_settings.hpp>
#include <evoteam/team/knowledge.hpp>

namespace evoteam {

struct Signal {
  std::string name;
  double value = 0;
  double threshold = 0;
  bool triggered = false;
  std::string evidence;  // candidate ids, signatures, figures
};

struct Signals {
  int cycle = 0;  // the cycle these signals describe
  std::map<std::string, Signal> by_name;
  nlohmann::json budget_burn;  // per role, the last cycle

  const Signal& get(const std::string& name) const;
  bool triggered(const std::string& name) const { return get(name).triggered; }
  nlohmann::json to_json() const;
  std::string to_text() const;  // for the LLM supervisor's prompt
};

// Names of the signals (a closed set).
inline const char* const k_signal_build_failure_rate = "build_failure_rate";
inline const char* const k_signal_test_failure_rate = "test_failure_rate";
inline const char* const k_signal_recurring_error = "recurring_error";
inline const char* const k_signal_unprofiled_best = "unprofiled_best";
inline const char* const k_signal_repeated_failures = "repeated_failures";
inline const char* const k_signal_ignored_strategies = "ignored_strategies";
inline const char* const k_signal_constraint_violations = "constraint_violations";
inline const char* const k_signal_changes_per_candidate = "changes_per_candidate";
inline const char* const k_signal_stagnation = "stagnation_cycles";
inline const char* const k_signal_roofline = "roofline_fraction";
inline const char* const k_signal_hard_path_blocked = "hard_path_blocked";

Signals compute_signals(const RunHistory& history, const KnowledgeBase& knowledge, const SupervisorSettings& settings,
                        int cycle);

struct Decision {
  TeamSpec team;
  bool stop = false;                              // the policy wants the run to end (near the roofline)
  StopReason stop_reason = StopReason::roofline;  // why, when `stop`
  // The LLM policy's exchange: its prompt, the reply, the rules' decision beside it and which one was taken
  // (kept under cycles/NNNN/supervisor.json). Null when the rules decided alone.
  nlohmann::json exchange;
};

// The team of the first cycle for a mode.
TeamSpec initial_team(TeamMode mode, const SupervisorSettings& settings);

// The stops no policy may skip: a best candidate at the roofline ends the run whatever the policy proposed
// (target speedup and budgets are the loop's own checks). The loop passes every decision through it.
Decision with_hard_stops(Decision decision, const Signals& signals);

// The rule-based supervisor. `previous` is the team of the cycle the signals describe; `clear_streak` counts,
// per role, the consecutive cycles its trigger has been clear (updated by the call).
Decision decide_by_rules(const Signals& signals, const TeamSpec& previous, const SupervisorSettings& settings,
                         std::map<std::string, int>& clear_streak);

}  // namespace evoteam
