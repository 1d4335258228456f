// The builtin Optimizer: first-improvement hill climbing over the task's params from the lineage head, in the
// order the Profiling Scientist's focus suggests. Left to itself it takes compound steps (two changes at
// once); under the one-change directive it takes single steps. On a stagnation directive it restarts from an
// unexplored point (a new lineage).
#include <set>

#include <evoteam/process.hpp>

#include "team/builtin_common.hpp"

namespace evoteam::builtin {

namespace {

class Optimizer : public TeamMember {
 public:
  TurnOutcome act(TurnContext& context) override {
    TurnOutcome outcome;
    std::mt19937_64 rng(context.seed);
    Lab& lab = *context.lab;
    std::vector<ParamSpec> space = lab.param_space();
    std::optional<EvaluationRecord> head = lineage_head(context);
    if (!head || space.empty()) {
      outcome.summary = "nothing to optimise (no params or no starting candidate)";
      return outcome;
    }
    const bool one_change = context.directive_active("One measurable change");
    const std::vector<std::string> focus = current_focus(context);
    int spent = 0, improved = 0;
    std::string log;

    auto try_point = [&](const ParamValues& params, const std::string& hypothesis) -> std::optional<EvaluationRecord> {
      LabRequest request;
      request.parent_id = head->candidate_id;
      request.author_role = context.role.name;
      request.lineage = context.role.lineage;
      request.hypothesis = hypothesis;
      request.params = params;
      request.sources_dir = lab.sources_of(head->candidate_id);
      LabOutcome result = lab.evaluate(request, context.cycle, context.screening());
      // Already known, or screened out by a recorded constraint: costs nothing, try the next move.
      if (result.reused || result.record.blocked_by_knowledge) return std::nullopt;
      ++spent;
      if (!result.record.blocked_by_knowledge)
        log += result.record.candidate_id + " " + result.record.verdict +
               (result.record.speedup ? " " + fixed(*result.record.speedup) + "x" : "") + "; ";
      return result.record;
    };

    if (context.directive_active("Stagnation")) {
      // A new lineage: the best of a few unexplored random points becomes the head.
      std::optional<EvaluationRecord> restart;
      for (int attempt = 0; attempt < 8 && spent < std::max(1, context.evaluation_budget / 3); ++attempt) {
        std::optional<EvaluationRecord> result = try_point(random_point(space, rng), "restart: explore a new region");
        if (result && result->passed && result->speedup && (!restart || *result->speedup > *restart->speedup))
          restart = result;
      }
      if (restart) head = restart;
    }

    std::set<std::string> tried;
    while (spent < context.evaluation_budget && !interrupted()) {
      std::vector<Move> moves = neighbour_moves(head->params, space, focus, rng);
      bool moved = false;
      for (std::size_t i = 0; i < moves.size() && spent < context.evaluation_budget && !interrupted(); ++i) {
        Move move = moves[i];
        if (!one_change && moves.size() > 1) {
          // Unconstrained, the optimizer bundles a second change in the hope of a bigger jump.
          const Move& other = moves[(i + 1 + rng() % (moves.size() - 1)) % moves.size()];
          ParamValues bundled = move.params;
          for (const std::string& name : other.changed)
            if (std::find(move.changed.begin(), move.changed.end(), name) == move.changed.end())
              bundled[name] = other.params.at(name);
          move = make_move(head->params, bundled);
        }
        if (!tried.insert(describe(move.params)).second) continue;
        std::optional<EvaluationRecord> result = try_point(move.params, "change " + move.description);
        if (result && result->passed && result->speedup && head->speedup && *result->speedup > *head->speedup) {
          head = result;
          ++improved;
          moved = true;
          break;
        }
      }
      if (!moved) break;  // a local optimum of the neighbourhood: nothing left to try from here
    }
    outcome.usage.evaluations = spent;
    outcome.summary = "spent " + std::to_string(spent) + " evaluations, improved " + std::to_string(improved) +
                      " times; head " + head->candidate_id +
                      (head->speedup ? " " + fixed(*head->speedup) + "x" : "");
    outcome.handoff_note = outcome.summary + (log.empty() ? "" : "; results: " + log);
    return outcome;
  }
};

}  // namespace

std::unique_ptr<TeamMember> make_builtin_optimizer() { return std::make_unique<Optimizer>(); }

}  // namespace evoteam::builtin
