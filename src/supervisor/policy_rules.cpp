// The rule-based supervisor: each signal that fires makes its move on the team (supervisor_policy.hpp lists
// the moves), with thresholds from the "supervisor" config section.
#include <algorithm>

#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/supervisor/supervisor_policy.hpp>

namespace evoteam {

namespace {

const char* const k_optimizer = "optimizer";
const char* const k_debugger = "debugger";
const char* const k_profiler = "profiling-scientist";
const char* const k_integrator = "knowledge-integrator";
const char* const k_disciplinarian = "disciplinarian";
const char* const k_one_change =
    "One measurable change per candidate: change one param or one code aspect, state the hypothesis, measure.";
const char* const k_new_lineage =
    "Stagnation: explore a new lineage (restart from a different configuration) instead of polishing the current best, "
    "and question what was written off: retry a value given up after failures its partners may explain.";

// Pipeline order: measure first, then fix and change, then review, then consolidate what was learnt.
int pipeline_rank(const std::string& role) {
  if (role == k_profiler) return 0;
  if (role == k_debugger) return 1;
  if (role == k_optimizer) return 2;
  if (role == k_disciplinarian) return 3;
  if (role == k_integrator) return 4;
  return 5;
}

void assign_shares(TeamSpec& team, const SupervisorSettings& settings) {
  if (team.roles.size() == 1) {
    team.roles[0].budget_share = 1.0;
    return;
  }
  const double optimizer_share = settings.optimizer_share;
  bool has_optimizer = team.has_role(k_optimizer);
  double rest = has_optimizer ? (1.0 - optimizer_share) / static_cast<double>(team.roles.size() - 1)
                              : 1.0 / static_cast<double>(team.roles.size());
  for (RoleAssignment& role : team.roles) role.budget_share = role.name == k_optimizer ? optimizer_share : rest;
}

nlohmann::json evidence_of(const Signal& signal) {
  return {
      {"signal", signal.name}, {"value", signal.value}, {"threshold", signal.threshold}, {"evidence", signal.evidence}};
}

// Each role's trigger: which signals call for it this cycle.
struct Trigger {
  const char* role;
  std::vector<const char*> signals;
  const char* why;
};

const std::vector<Trigger>& role_triggers() {
  static const std::vector<Trigger> triggers = {
      {k_debugger,
       {k_signal_build_failure_rate, k_signal_test_failure_rate, k_signal_recurring_error},
       "the team is stuck debugging"},
      {k_profiler, {k_signal_unprofiled_best}, "decisions lack performance data: the best is not profiled"},
      {k_integrator, {k_signal_repeated_failures, k_signal_ignored_strategies}, "findings do not propagate"},
      {k_disciplinarian,
       {k_signal_changes_per_candidate, k_signal_constraint_violations},
       "the team makes several changes at once or breaks constraints"},
  };
  return triggers;
}

Decision roofline_stop(const Signals& signals, const TeamSpec& previous) {
  Decision decision;
  decision.stop = true;
  decision.stop_reason = StopReason::roofline;
  decision.team = previous;  // unchanged, down to who decided it
  decision.team.rationale = "the best candidate is at the roofline: stop";
  decision.team.evidence = nlohmann::json::array({evidence_of(signals.get(k_signal_roofline))});
  return decision;
}

}  // namespace

Decision with_hard_stops(Decision decision, const Signals& signals) {
  if (!signals.triggered(k_signal_roofline) || decision.stop) return decision;
  Decision stop = roofline_stop(signals, decision.team);
  stop.team.rationale = "the best candidate is at the roofline: stop (the " + decision.team.decided_by +
                        " proposal to go on is overruled)";
  stop.exchange = std::move(decision.exchange);
  return stop;
}

namespace {

// The Optimizer, plus each role whose trigger fired; a role whose trigger cleared stays until it has been clear
// for `clear_after` cycles.
void add_triggered_roles(const Signals& signals, const TeamSpec& previous, int clear_after,
                         std::map<std::string, int>& clear_streak, TeamSpec& team, std::vector<std::string>& reasons) {
  team.roles.push_back({k_optimizer, 0, "best"});
  for (const Trigger& trigger : role_triggers()) {
    std::vector<const Signal*> fired;
    for (const char* name : trigger.signals)
      if (signals.triggered(name)) fired.push_back(&signals.get(name));
    bool had = previous.has_role(trigger.role);
    // A Debugger always works the failing candidate (enforce_team_rules holds every team to it).
    const char* lineage = trigger.role == std::string(k_debugger) ? "failing" : "best";
    if (!fired.empty()) {
      clear_streak[trigger.role] = 0;
      team.roles.push_back({trigger.role, 0, lineage});
      if (!had) reasons.push_back(std::string("+") + trigger.role + ": " + trigger.why);
      for (const Signal* signal : fired) team.evidence.push_back(evidence_of(*signal));
    } else if (had) {
      int streak = ++clear_streak[trigger.role];
      if (streak < clear_after) {
        team.roles.push_back({trigger.role, 0, lineage});
      } else {
        reasons.push_back(std::string("-") + trigger.role + ": its trigger cleared (" +
                          signals.get(trigger.signals.front()).evidence + ")");
      }
    }
  }
}

// Pattern: parallel when a hard path blocks other work (the Debugger takes the failing line), a change of
// pattern or lineage on stagnation, else a pipeline (measure → change → review) or solo.
void choose_pattern(const Signals& signals, const TeamSpec& previous, TeamSpec& team,
                    std::vector<std::string>& reasons) {
  if (signals.triggered(k_signal_hard_path_blocked) && team.has_role(k_debugger)) {
    team.pattern = Pattern::parallel;
    for (RoleAssignment& role : team.roles)
      if (role.name == k_debugger) role.lineage = "failing";
    reasons.push_back("parallel: the Debugger works the blocked line while the Optimizer continues from the best");
    team.evidence.push_back(evidence_of(signals.get(k_signal_hard_path_blocked)));
  } else {
    team.pattern = team.roles.size() == 1 ? Pattern::solo : Pattern::pipeline;
  }
  if (signals.triggered(k_signal_stagnation)) {
    team.directives.push_back(k_new_lineage);
    if (team.roles.size() > 1 && team.pattern == previous.pattern)
      team.pattern = team.pattern == Pattern::pipeline ? Pattern::parallel : Pattern::pipeline;
    reasons.push_back("stagnation: new lineage" +
                      std::string(team.roles.size() > 1 ? ", pattern " + to_string(team.pattern) : ""));
    team.evidence.push_back(evidence_of(signals.get(k_signal_stagnation)));
  }
}

std::string rationale(const TeamSpec& previous, const TeamSpec& team, const std::vector<std::string>& reasons) {
  std::string change = describe_change(previous, team);
  if (reasons.empty()) return "no trigger changed: keep the team (" + change + ")";
  return change + ". Why: " + join(reasons, "; ");
}

}  // namespace

TeamSpec initial_team(TeamMode mode, const SupervisorSettings& settings) {
  TeamSpec team;
  if (mode == TeamMode::fixed) {
    for (const char* role : {k_profiler, k_debugger, k_optimizer, k_integrator})
      team.roles.push_back({role, 0, role == std::string(k_debugger) ? "failing" : "best"});
    team.pattern = Pattern::pipeline;
    team.knowledge = KnowledgeMode::curated;
    team.decided_by = "fixed";
    team.rationale =
        "fixed team (ablation): Optimizer, Debugger, Profiling Scientist and Knowledge Integrator every cycle";
  } else {
    team.roles.push_back({k_optimizer, 1.0, "best"});
    team.pattern = Pattern::solo;
    team.knowledge = mode == TeamMode::single ? KnowledgeMode::none : KnowledgeMode::digest;
    team.decided_by = mode == TeamMode::single ? "single" : "rules";
    team.rationale = mode == TeamMode::single ? "single agent (ablation): one Optimizer every cycle"
                                              : "first cycle: no measurements yet, so one Optimizer explores; the "
                                                "supervisor restructures from what it sees";
  }
  assign_shares(team, settings);
  return team;
}

Decision decide_by_rules(const Signals& signals, const TeamSpec& previous, const SupervisorSettings& settings,
                         std::map<std::string, int>& clear_streak) {
  if (signals.triggered(k_signal_roofline)) return roofline_stop(signals, previous);
  Decision decision;
  TeamSpec& team = decision.team;
  team.decided_by = "rules";
  team.knowledge = previous.knowledge;
  std::vector<std::string> reasons;
  add_triggered_roles(signals, previous, settings.clear_after_cycles, clear_streak, team, reasons);
  if (team.has_role(k_integrator)) team.knowledge = KnowledgeMode::curated;
  if (team.has_role(k_disciplinarian)) team.directives.push_back(k_one_change);
  choose_pattern(signals, previous, team, reasons);
  std::stable_sort(team.roles.begin(), team.roles.end(), [](const RoleAssignment& a, const RoleAssignment& b) {
    return pipeline_rank(a.name) < pipeline_rank(b.name);
  });
  assign_shares(team, settings);
  team.rationale = rationale(previous, team, reasons);
  return decision;
}

}  // namespace evoteam
