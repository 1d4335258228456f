// The builtin Optimizer: samples the param space first, then first-improvement hill climbing with single
// changes from the lineage head, in the order the Profiling Scientist's focus suggests. On a stagnation
// directive it restarts from unexplored points (new lineages).
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
    const std::vector<std::string> focus = current_focus(context);
    // The task declares which param combinations are valid; proposing an invalid one would only buy a rejection.
    const Task* task = lab.task();
    auto valid = [&](const ParamValues& params) { return task == nullptr || !param_error(*task, params); };
    int spent = 0, improved = 0;
    std::string log;

    // A root starts a new lineage (no parent): it is a sample of the space, not a change to review.
    enum class Kind { change, root };
    auto try_point = [&](const ParamValues& params, const std::string& hypothesis,
                         Kind kind = Kind::change) -> std::optional<EvaluationRecord> {
      LabRequest request;
      request.parent_id = kind == Kind::root ? "" : head->candidate_id;
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
      for (int attempt = 0; attempt < 32 && spent < std::max(1, context.evaluation_budget / 3); ++attempt) {
        ParamValues point = random_point(space, rng);
        if (!valid(point)) continue;
        std::optional<EvaluationRecord> result = try_point(point, "restart: explore a new region", Kind::root);
        if (result && result->passed && result->speedup && (!restart || *result->speedup > *restart->speedup))
          restart = result;
      }
      if (restart) head = restart;
    }

    // Before any change has been measured, the first turn samples the space so that hill climbing starts
    // from the best region found rather than from the starting kernel's corner.
    RunHistory seen = lab.snapshot();
    int passing = 0;
    for (const EvaluationRecord& record : seen.evaluations) passing += record.passed ? 1 : 0;
    if (passing <= 1 && !context.directive_active("Stagnation")) {
      for (int attempt = 0; attempt < 64 && spent < context.evaluation_budget && !interrupted(); ++attempt) {
        ParamValues point = random_point(space, rng);
        if (!valid(point)) continue;
        std::optional<EvaluationRecord> result = try_point(point, "explore: sample the param space", Kind::root);
        if (result && result->passed && result->speedup && head->speedup && *result->speedup > *head->speedup)
          head = result;
      }
    }

    std::set<std::string> tried;
    while (spent < context.evaluation_budget && !interrupted()) {
      std::vector<Move> moves = neighbour_moves(head->params, space, focus, rng);
      bool moved = false;
      for (std::size_t i = 0; i < moves.size() && spent < context.evaluation_budget && !interrupted(); ++i) {
        const Move& move = moves[i];
        if (!valid(move.params) || !tried.insert(describe(move.params)).second) continue;
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
