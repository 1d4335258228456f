#pragma once
// A team member acts for one turn of a cycle; the pattern runner runs the cycle's members solo, as a pipeline
// (ordered hand-offs with written notes) or in parallel (separate lineages at once, sharing the lab).
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <evoteam/history/history.hpp>
#include <evoteam/history/team_spec.hpp>
#include <evoteam/team/knowledge.hpp>
#include <evoteam/team/lab.hpp>

namespace evoteam {

struct TurnContext {
  int cycle = 0;
  const TeamSpec* team = nullptr;
  RoleAssignment role;
  int evaluation_budget = 0;  // evaluations this member may spend this turn
  std::string handoff_note;   // the previous member's note in a pipeline, or "none"
  Lab* lab = nullptr;
  KnowledgeBase* knowledge = nullptr;
  std::uint64_t seed = 0;  // deterministic per (run seed, cycle, role)

  bool directive_active(const std::string& prefix) const;
  Lab::Screening screening() const;  // against knowledge when the knowledge mode is curated
};

struct TurnOutcome {
  std::string handoff_note;  // what the next member should know
  std::string summary;       // one line for the journal
  RoleUsage usage;
  // The member's provider refused its calls for good (a refused key, an unknown model): when every member's turn
  // of a cycle says so, the run stops as provider_refused rather than spending cycles that cannot work.
  bool provider_refused = false;
  // The member could not reach its model at all (no connection, no route): as above, a cycle of such turns stops
  // the run (model_unreachable) rather than reporting a night of failed turns as a finished run.
  bool model_unreachable = false;
  // Who did the work, for a coding-agent CLI member: the CLI, its version and the model, as its stream named them.
  std::string agent;
};

class TeamMember {
 public:
  virtual ~TeamMember() = default;
  virtual TurnOutcome act(TurnContext& context) = 0;
};

// Builds the member for a role name (the builtin rule-based roles, or LLM agents).
using MemberFactory = std::function<std::unique_ptr<TeamMember>(const RoleAssignment& role)>;

// Who acts for a role in a turn. builtin: the rule-based roles (no LLM, no key); llm: an agent per role, driven by
// the run's LLM provider; cli: a coding-agent CLI (agent.member) using evoteam's tools over MCP. Every kind but
// builtin starts its turn from the same TurnSetup (src/team/turn_setup.hpp).
enum class MemberKind { builtin, llm, cli };
std::string to_string(MemberKind kind);
// The kind a run's provider calls for: the builtin team without an LLM provider, agents with one.
MemberKind member_kind_of_provider(const std::string& provider);

struct LlmTeam;
struct CliTeam;
// What members draw on within a run; each kind takes its part.
struct MemberSupport {
  double reverify_ratio = 0;  // the builtin disciplinarian's share of candidates it re-verifies
  LlmTeam* llm = nullptr;     // the run's provider, meter and role files (llm members)
  CliTeam* cli = nullptr;     // the roles a coding-agent CLI acts for, and how it runs (cli members)
};

// One row per member kind: its name and the maker of its member for a role.
struct MemberKindInfo {
  MemberKind kind;
  std::string_view name;
  std::unique_ptr<TeamMember> (*make)(const RoleAssignment& role, const MemberSupport& support);
};
const std::vector<MemberKindInfo>& member_kinds();

// The one factory of a run's members: a role a coding-agent CLI acts for gets a cli member, every other role the
// run's kind, over the run's support.
MemberFactory member_factory(MemberKind kind, MemberSupport support);

struct CycleBudget {
  int evaluations = 8;  // evaluations the whole team may spend this cycle
};

// How a parallel pattern's members take their turns. Side by side, the order in which their evaluations land
// (and so what each reads of the others' mid-cycle) is the scheduler's; in turn, in role order, a run is a function
// of its seed — what a replayed search benchmark needs — at the cost of the overlap.
enum class ParallelTurns { side_by_side, in_turn };

// The rules every cycle's team keeps, whoever proposed it (the rule policy, an LLM's proposal, a fixed team): a
// Debugger works the failing lineage (its workspace holds the latest failed candidate, its hand-off names it and
// carries its build log); a Disciplinarian reviews the cycle's candidates, so it comes after every member who makes
// them (only a Knowledge Integrator may follow it; in a parallel team it runs once the others are done) and never
// alone (an Optimizer joins it). Returns what it changed, one phrase each; the team's record says so.
std::vector<std::string> enforce_team_rules(TeamSpec& team);

// Runs one cycle's team (after enforce_team_rules). Returns each member's outcome by role. A member's exception is
// recorded as that member's failure and does not stop the others (it is rethrown only if it is an InvalidInput).
std::map<std::string, TurnOutcome> run_team(const TeamSpec& proposed, int cycle, const CycleBudget& budget,
                                            const MemberFactory& make_member, Lab& lab, KnowledgeBase& knowledge,
                                            std::uint64_t run_seed,
                                            ParallelTurns parallel_turns = ParallelTurns::side_by_side);

// The builtin offline team: rule-based roles over the task's declared params (no LLM, no key).
std::unique_ptr<TeamMember> make_builtin_member(const std::string& role, double reverify_ratio);

}  // namespace evoteam
