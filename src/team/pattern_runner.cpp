#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/team/team.hpp>

#include "team/turn_setup.hpp"

namespace evoteam {

namespace {

const char* const k_debugger_role = "debugger";
const char* const k_reviewer_role = "disciplinarian";
const char* const k_integrator_role = "knowledge-integrator";

bool is_reviewer(const RoleAssignment& role) { return role.name == k_reviewer_role; }

}  // namespace

std::vector<std::string> enforce_team_rules(TeamSpec& team) {
  std::vector<std::string> changes;
  for (RoleAssignment& role : team.roles)
    if (role.name == k_debugger_role && role.lineage != "failing") {
      role.lineage = "failing";
      changes.push_back("the Debugger works the failing lineage");
    }
  auto reviewer = std::find_if(team.roles.begin(), team.roles.end(), is_reviewer);
  if (reviewer == team.roles.end()) return changes;
  if (team.roles.size() == 1) {
    // Alone, a reviewer has no candidate to review: an Optimizer makes them.
    reviewer->budget_share = 0.5;
    team.roles.insert(team.roles.begin(), RoleAssignment{"optimizer", 0.5, "best"});
    team.pattern = Pattern::pipeline;
    changes.push_back("an Optimizer makes the candidates the Disciplinarian reviews");
    return changes;
  }
  // After every member who makes candidates; only the Knowledge Integrator, who consolidates, may follow it.
  const std::vector<std::string> order = team.role_names();
  const RoleAssignment moved = *reviewer;
  team.roles.erase(reviewer);
  auto at = team.roles.end();
  if (!team.roles.empty() && team.roles.back().name == k_integrator_role) at = team.roles.end() - 1;
  team.roles.insert(at, moved);
  if (team.role_names() != order) changes.push_back("the Disciplinarian reviews after the members who make candidates");
  return changes;
}

bool TurnContext::directive_active(const std::string& prefix) const {
  for (const std::string& directive : team->directives)
    if (directive.rfind(prefix, 0) == 0) return true;
  return false;
}

Lab::Screening TurnContext::screening() const {
  return team->knowledge == KnowledgeMode::curated ? Lab::Screening::against_knowledge : Lab::Screening::off;
}

namespace {

// A role's evaluations: its share of the cycle's, rounded down, at least one, never more than the cycle has.
int share_of(const RoleAssignment& role, const CycleBudget& budget) {
  int share = static_cast<int>(std::floor(role.budget_share * budget.evaluations + 1e-9));
  return std::min(budget.evaluations, std::max(1, share));
}

std::uint64_t seed_for(std::uint64_t run_seed, int cycle, const std::string& role) {
  return run_seed ^ (static_cast<std::uint64_t>(cycle) * 0x9E3779B97F4A7C15ull) ^ std::hash<std::string>{}(role);
}

TurnOutcome run_member(TeamMember& member, TurnContext& context) {
  const auto start = std::chrono::steady_clock::now();
  try {
    TurnOutcome outcome = member.act(context);
    outcome.usage.seconds = seconds_since(start);
    return outcome;
  } catch (const InvalidInput&) {
    throw;
  } catch (const IoError&) {
    // The file system refused a write (a full disk): the run cannot go on, and the member did not fail. Recorded
    // as a failed turn, its cycle would close short of its evaluations and a resume would not redo them.
    throw;
  } catch (const std::exception& error) {
    spdlog::warn("cycle {}: {} failed: {}", context.cycle, context.role.name, error.what());
    TurnOutcome outcome;
    outcome.summary = "failed: " + std::string(error.what());
    outcome.handoff_note = context.handoff_note;
    return outcome;
  }
}

}  // namespace

namespace {

// What a reviewer is handed: the cycle's candidates so far, each with its verdict and author, then the notes of the
// members before it.
std::string review_handoff(const Lab& lab, int cycle, const std::string& notes) {
  std::string listed;
  const RunHistory history = lab.snapshot();  // in_cycle points into it: it must outlive the loop
  for (const EvaluationRecord* record : history.in_cycle(cycle))
    if (record->evaluated() && record->author_role != "start")
      listed += "\n- " + describe_record(*record) + " by " + record->author_role +
                (record->hypothesis.empty() ? "" : ": " + record->hypothesis);
  std::string note = listed.empty() ? "no candidate was recorded this cycle"
                                    : "candidates of cycle " + std::to_string(cycle) + " to review:" + listed;
  return notes == "none" ? note : note + "\n" + notes;
}

// The hand-off a member starts from: the notes of the members before it, and what its role must have whatever they
// wrote (a Debugger the failing candidate, a reviewer the cycle's candidates).
std::string handoff_for(const TurnContext& context, const std::string& notes) {
  if (context.role.lineage == "failing") {
    const std::string failing = failing_candidate_handoff(*context.lab);
    return notes == "none" ? failing : failing + "\n" + notes;
  }
  if (is_reviewer(context.role)) return review_handoff(*context.lab, context.cycle, notes);
  return notes;
}

// Appends a member's hand-off to the notes the next members read.
void add_note(std::string& notes, const std::string& role, const TurnOutcome& outcome) {
  if (!outcome.handoff_note.empty()) notes = (notes == "none" ? "" : notes + "\n") + role + ": " + outcome.handoff_note;
}

}  // namespace

std::map<std::string, TurnOutcome> run_team(const TeamSpec& proposed, int cycle, const CycleBudget& budget,
                                            const MemberFactory& make_member, Lab& lab, KnowledgeBase& knowledge,
                                            std::uint64_t run_seed, ParallelTurns parallel_turns) {
  // Whoever proposed the team, it keeps the rules here, where its members are made.
  TeamSpec team = proposed;
  enforce_team_rules(team);
  std::map<std::string, TurnOutcome> outcomes;
  std::vector<TurnContext> contexts;
  std::vector<std::unique_ptr<TeamMember>> members;
  for (const RoleAssignment& role : team.roles) {
    TurnContext context;
    context.cycle = cycle;
    context.team = &team;
    context.role = role;
    context.evaluation_budget = share_of(role, budget);
    context.handoff_note = "none";
    context.lab = &lab;
    context.knowledge = &knowledge;
    context.seed = seed_for(run_seed, cycle, role.name);
    contexts.push_back(context);
    members.push_back(make_member(role));
  }

  std::string note = "none";
  std::size_t next = 0;
  if (team.pattern == Pattern::parallel) {
    // Every member but the reviewer at once; the reviewer (enforce_team_rules put it after them) then reviews what
    // they made.
    std::size_t width = 0;
    while (width < members.size() && !is_reviewer(contexts[width].role)) ++width;
    std::vector<TurnOutcome> results(width);
    std::vector<std::exception_ptr> errors(width);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < width; ++i) contexts[i].handoff_note = handoff_for(contexts[i], "none");
    for (std::size_t i = 0; i < width; ++i) {
      auto take_turn = [&, i] {
        try {
          results[i] = run_member(*members[i], contexts[i]);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      };
      // In turn: each member as it would act side by side (no hand-off from its peers), one after another.
      if (parallel_turns == ParallelTurns::in_turn) {
        take_turn();
      } else {
        threads.emplace_back(take_turn);
      }
    }
    for (std::thread& thread : threads) thread.join();
    for (std::exception_ptr& error : errors)
      if (error) std::rethrow_exception(error);
    for (std::size_t i = 0; i < width; ++i) {
      outcomes[contexts[i].role.name] = results[i];
      add_note(note, contexts[i].role.name, results[i]);
    }
    next = width;
  }

  // Solo and pipeline (and a parallel team's reviewer and those after it): in order, each member reading the
  // earlier members' hand-off notes.
  for (std::size_t i = next; i < members.size(); ++i) {
    if (interrupted()) break;
    contexts[i].handoff_note = handoff_for(contexts[i], note);
    TurnOutcome outcome = run_member(*members[i], contexts[i]);
    // Notes accumulate along the pipeline, so the reviewer at the end sees every earlier hand-off.
    add_note(note, contexts[i].role.name, outcome);
    outcomes[contexts[i].role.name] = outcome;
  }
  return outcomes;
}

}  // namespace evoteam
