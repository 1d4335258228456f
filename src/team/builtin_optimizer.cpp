// The builtin Optimizer: a model-guided search over the task's declared params. It first measures every
// declared value once (roots), then climbs from the best with single changes while a surrogate fit on every
// measurement rates them about as well as anything else, and jumps to a new lineage (a root) where the model
// expects more: an optimistic prediction or value combinations never measured together. The Profiling
// Scientist's relevance weights bias which combinations it explores; a stagnation directive makes its next
// point a root away from the best. Nothing is ever evaluated twice, nor a point the task or the recorded
// constraints rule out.
#include <future>
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
    std::set<std::string> refused;   // answered without an evaluation (screened or already known): skip them
    std::set<std::string> proposed;  // never proposed twice: a batch is proposed before any of it is measured
    auto admissible = [&](const ParamValues& params) {
      const std::string key = describe_params(params);
      if (refused.count(key) || proposed.count(key) || (task != nullptr && param_error(*task, params))) return false;
      for (const std::string& when : constraints)
        if (constraint_matches(when, params)) return false;
      return true;
    };
    const ProfilerAdvice advice = current_advice(context);
    bool new_lineage = context.directive_active("Stagnation");
    // As many proposals at a time as the evaluator runs at once (the devices of a pool, a cluster's workers); one
    // device gives the classic one-at-a-time climb.
    const int width = std::max(1, lab.parallel_width());

    int spent = 0, improved = 0;
    std::map<ProposalKind, int> kinds;
    std::string log, stop = "budget spent";
    while (spent < context.evaluation_budget) {
      if (interrupted()) {
        stop = "interrupted";
        break;
      }
      const RunHistory history = lab.snapshot();
      std::vector<Proposal> batch;
      while (static_cast<int>(batch.size()) < std::min(width, context.evaluation_budget - spent)) {
        SearchRequest search{space,
                             measurements_of(history, head->sources_hash),
                             head->params,
                             head->speedup,
                             admissible,
                             advice.relevance,
                             new_lineage ? SearchMode::new_lineage : SearchMode::climb};
        std::optional<Proposal> proposal = propose_next(search, rng);
        if (!proposal) break;
        proposed.insert(describe_params(proposal->params));
        batch.push_back(*proposal);
      }
      if (batch.empty()) {
        stop = "every admissible point is measured";
        break;
      }
      auto request_for = [&](const Proposal& proposal) {
        LabRequest request;
        // A root starts a new lineage (no parent): it is a sample of the space, not a change to review.
        request.parent_id = proposal.kind == ProposalKind::change ? head->candidate_id : "";
        request.author_role = context.role.name;
        request.lineage = context.role.lineage;
        request.hypothesis = proposal.rationale;
        request.params = proposal.params;
        request.sources_dir = lab.sources_of(head->candidate_id);
        return request;
      };
      std::vector<std::future<LabOutcome>> pending;
      for (const Proposal& proposal : batch)
        pending.push_back(std::async(batch.size() == 1 ? std::launch::deferred : std::launch::async,
                                     [&lab, &context, screening, request = request_for(proposal)] {
                                       return lab.evaluate(request, context.cycle, screening);
                                     }));
      std::optional<EvaluationRecord> best_of_batch;
      bool budget_spent = false;
      for (std::size_t i = 0; i < batch.size(); ++i) {
        LabOutcome result = pending[i].get();
        if (result.record.state == RecordState::over_budget) {
          budget_spent = true;
          continue;
        }
        if (result.reused || result.record.blocked()) {
          refused.insert(describe_params(batch[i].params));
          continue;
        }
        ++spent;
        ++kinds[batch[i].kind];
        new_lineage = false;  // one root away from the best answers the directive; the search goes on from there
        const EvaluationRecord& record = result.record;
        log += record.candidate_id + " " + kind_name(batch[i].kind) + " " + record.verdict_text() +
               (record.speedup ? " " + fixed(*record.speedup, 2) + "x" : "") + "; ";
        const std::optional<double> bar = best_of_batch ? best_of_batch->speedup : head->speedup;
        if (record.passed() && !record.rejected && bar && *record.speedup > *bar) best_of_batch = record;
      }
      if (best_of_batch) {
        head = best_of_batch;
        ++improved;
      }
      if (budget_spent) {
        stop = "the run's evaluation budget is spent";
        break;
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
