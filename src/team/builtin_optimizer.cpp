// The builtin Optimizer: a model-guided search over the task's declared params. It first measures every
// declared value once (roots), then climbs from the best with single changes while a surrogate fit on every
// measurement rates them about as well as anything else, and jumps to a new lineage (a root) where the model
// expects more: an optimistic prediction or value combinations never measured together. The Profiling
// Scientist's relevance weights bias which combinations it explores; a stagnation directive makes its next
// point a root away from the best. Nothing is ever evaluated twice, nor a point the task or the recorded
// constraints rule out.
#include <set>

#include <evoteam/core/process.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/team/knowledge.hpp>

#include "team/builtin_common.hpp"

namespace evoteam::builtin {

namespace {

const char* kind_name(ProposalKind kind) {
  switch (kind) {
    case ProposalKind::cover: return "cover";
    case ProposalKind::change: return "change";
    case ProposalKind::jump: return "jump";
  }
  return "jump";
}

class Optimizer : public TeamMember {
 public:
  TurnOutcome act(TurnContext& context) override {
    TurnOutcome outcome;
    std::mt19937_64 rng(context.seed);
    Lab& lab = *context.lab;
    const std::vector<ParamSpec> space = lab.param_space();
    std::optional<EvaluationRecord> head = lineage_head(context);
    if (!head || space.empty()) {
      outcome.summary = "nothing to optimise (no params or no starting candidate)";
      return outcome;
    }
    // Proposing a point the task declares invalid, or one a recorded constraint screens out, would only buy a
    // rejection or a block: such points are never candidates.
    const Task* task = lab.task();
    const Lab::Screening screening = context.screening();
    std::vector<std::string> constraints;
    if (screening == Lab::Screening::against_knowledge) constraints = context.knowledge->constraint_conditions();
    std::set<std::string> refused;  // answered without an evaluation (screened or already known): skip them
    auto admissible = [&](const ParamValues& params) {
      if (refused.count(describe_params(params)) || (task != nullptr && param_error(*task, params))) return false;
      for (const std::string& when : constraints)
        if (constraint_matches(when, params)) return false;
      return true;
    };
    const ProfilerAdvice advice = current_advice(context);
    bool new_lineage = context.directive_active("Stagnation");

    int spent = 0, improved = 0;
    std::map<ProposalKind, int> kinds;
    std::set<std::string> proposed;
    std::string log, stop = "budget spent";
    while (spent < context.evaluation_budget) {
      if (interrupted()) {
        stop = "interrupted";
        break;
      }
      RunHistory history = lab.snapshot();
      SearchRequest search{space,
                           measurements_of(history, head->sources_hash),
                           head->params,
                           head->speedup,
                           admissible,
                           advice.relevance,
                           new_lineage ? SearchMode::new_lineage : SearchMode::climb};
      std::optional<Proposal> proposal = propose_next(search, rng);
      if (!proposal) {
        stop = "every admissible point is measured";
        break;
      }
      // The lab records every evaluation, so a point proposed twice means it did not: stop rather than spin.
      if (!proposed.insert(describe_params(proposal->params)).second) {
        stop = "the lab did not record " + describe_params(proposal->params);
        break;
      }

      LabRequest request;
      // A root starts a new lineage (no parent): it is a sample of the space, not a change to review.
      request.parent_id = proposal->kind == ProposalKind::change ? head->candidate_id : "";
      request.author_role = context.role.name;
      request.lineage = context.role.lineage;
      request.hypothesis = proposal->rationale;
      request.params = proposal->params;
      request.sources_dir = lab.sources_of(head->candidate_id);
      LabOutcome result = lab.evaluate(request, context.cycle, screening);
      if (result.record.state == RecordState::over_budget) {
        stop = "the run's evaluation budget is spent";
        break;
      }
      if (result.reused || result.record.blocked()) {
        refused.insert(describe_params(proposal->params));
        continue;
      }
      ++spent;
      ++kinds[proposal->kind];
      new_lineage = false;  // one root away from the best answers the directive; the search goes on from there
      const EvaluationRecord& record = result.record;
      log += record.candidate_id + " " + kind_name(proposal->kind) + " " + record.verdict_text() +
             (record.speedup ? " " + fixed(*record.speedup, 2) + "x" : "") + "; ";
      if (record.passed() && !record.rejected && head->speedup && *record.speedup > *head->speedup) {
        head = record;
        ++improved;
      }
    }
    outcome.usage.evaluations = spent;
    outcome.summary = "spent " + std::to_string(spent) + " evaluations (" + std::to_string(kinds[ProposalKind::cover]) +
                      " to cover values, " + std::to_string(kinds[ProposalKind::change]) + " single changes, " +
                      std::to_string(kinds[ProposalKind::jump]) + " jumps), improved " + std::to_string(improved) +
                      " times; head " + head->candidate_id +
                      (head->speedup ? " " + fixed(*head->speedup, 2) + "x" : "") + "; stopped: " + stop;
    outcome.handoff_note = outcome.summary + (log.empty() ? "" : "; results: " + log);
    return outcome;
  }
};

}  // namespace

std::unique_ptr<TeamMember> make_builtin_optimizer() { return std::make_unique<Optimizer>(); }

}  // namespace evoteam::builtin
