#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <thread>

#include <spdlog/spdlog.h>

#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/team/team.hpp>

namespace evoteam {

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

std::map<std::string, TurnOutcome> run_team(const TeamSpec& team, int cycle, const CycleBudget& budget,
                                            const MemberFactory& make_member, Lab& lab, KnowledgeBase& knowledge,
                                            std::uint64_t run_seed, ParallelTurns parallel_turns) {
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

  if (team.pattern == Pattern::parallel && parallel_turns == ParallelTurns::in_turn) {
    // Each member starts from "none", as side by side: no hand-off between peers.
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (interrupted()) break;
      outcomes[contexts[i].role.name] = run_member(*members[i], contexts[i]);
    }
    return outcomes;
  }
  if (team.pattern == Pattern::parallel) {
    std::vector<TurnOutcome> results(members.size());
    std::vector<std::exception_ptr> errors(members.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < members.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          results[i] = run_member(*members[i], contexts[i]);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    for (std::thread& thread : threads) thread.join();
    for (std::exception_ptr& error : errors)
      if (error) std::rethrow_exception(error);
    for (std::size_t i = 0; i < members.size(); ++i) outcomes[contexts[i].role.name] = results[i];
    return outcomes;
  }

  // Solo and pipeline: in order, each member reading the previous member's hand-off note.
  std::string note = "none";
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (interrupted()) break;
    contexts[i].handoff_note = note;
    TurnOutcome outcome = run_member(*members[i], contexts[i]);
    // Notes accumulate along the pipeline, so the reviewer at the end sees every earlier hand-off.
    if (!outcome.handoff_note.empty())
      note = (note == "none" ? "" : note + "\n") + contexts[i].role.name + ": " + outcome.handoff_note;
    outcomes[contexts[i].role.name] = outcome;
  }
  return outcomes;
}

}  // namespace evoteam
