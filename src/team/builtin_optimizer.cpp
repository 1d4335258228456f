// The builtin Optimizer: a model-guided search over the task's declared params. It first measures every
// declared value once (roots), and again elsewhere a value that so far only failed (beside a partner it cannot
// build with, say), then climbs from the best with single changes while a surrogate fit on every measurement rates
// them about as well as anything else, and jumps to a new lineage (a root) where the model expects more: an
// optimistic prediction or value combinations never measured together. The Profiling Scientist's relevance weights
// bias which combinations it explores; a stagnation directive makes its next point a root away from the best, a
// value it gave up after failures first (what was written off is questioned before the model's favourites).
// Nothing is ever evaluated twice, nor a point the task, the recorded constraints or a region its own failures
// showed invalid rule out.
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

// Which points may still be proposed. A point the task declares invalid, or one a recorded constraint screens out,
// would only buy a rejection or a block; one answered without an evaluation (screened or already known) is
// skipped; none is proposed twice, since a batch is proposed before any of it is measured.
class AdmissiblePoints {
 public:
  AdmissiblePoints(const Task* task, std::vector<std::string> constraints)
      : m_task(task), m_constraints(std::move(constraints)) {}

  bool operator()(const ParamValues& params) const {
    const std::string key = describe_params(params);
    if (m_refused.count(key) || m_proposed.count(key) || (m_task != nullptr && param_error(*m_task, params)))
      return false;
    for (const std::string& when : m_constraints)
      if (constraint_matches(when, params)) return false;
    return region_holding(m_learned, params) == nullptr;
  }
  // The regions the measurements so far show invalid (learned_invalid_regions): never proposed.
  void learned(std::vector<InvalidRegion> regions) { m_learned = std::move(regions); }
  void proposed(const ParamValues& params) { m_proposed.insert(describe_params(params)); }
  void refused(const ParamValues& params) { m_refused.insert(describe_params(params)); }

 private:
  const Task* m_task;
  std::vector<std::string> m_constraints;
  std::set<std::string> m_refused;
  std::set<std::string> m_proposed;
  std::vector<InvalidRegion> m_learned;
};

// The turn so far: its head (the best it reached), what it spent and on which kinds of proposal, and why it stops.
struct ClimbProgress {
  EvaluationRecord head;
  bool new_lineage = false;  // the next point is a root away from the best (a stagnation directive)
  int spent = 0;
  int improved = 0;
  std::map<ProposalKind, int> kinds;
  std::string log;
  std::string stop = "budget spent";
};

class Optimizer : public TeamMember {
 public:
  TurnOutcome act(TurnContext& context) override {
    TurnOutcome outcome;
    Lab& lab = *context.lab;
    const std::vector<ParamSpec> space = lab.param_space();
    std::optional<EvaluationRecord> head = lineage_head(context);
    if (!head || space.empty()) {
      outcome.summary = "nothing to optimise (no params or no starting candidate)";
      return outcome;
    }
    std::mt19937_64 rng(context.seed);
    const Lab::Screening screening = context.screening();
    AdmissiblePoints admissible(lab.task(), screening == Lab::Screening::against_knowledge
                                                ? context.knowledge->constraint_conditions()
                                                : std::vector<std::string>{});
    const ProfilerAdvice advice = current_advice(context);
    ClimbProgress progress;
    progress.head = *head;
    progress.new_lineage = context.directive_active("Stagnation");
    // As many proposals at a time as the evaluator runs at once (the devices of a pool, a cluster's workers); one
    // device gives the classic one-at-a-time climb.
    const int width = std::max(1, lab.parallel_width());
    while (progress.spent < context.evaluation_budget) {
      if (interrupted()) {
        progress.stop = "interrupted";
        break;
      }
      const SearchRequest search{space,
                                 measurements_of(lab.snapshot(), progress.head.sources_hash),
                                 progress.head.params,
                                 progress.head.speedup,
                                 [&admissible](const ParamValues& params) { return admissible(params); },
                                 advice.relevance,
                                 progress.new_lineage ? SearchMode::new_lineage : SearchMode::climb};
      admissible.learned(learned_invalid_regions(space, search.measured));
      const std::vector<Proposal> batch =
          propose_batch(search, std::min(width, context.evaluation_budget - progress.spent), admissible, rng);
      if (batch.empty()) {
        progress.stop = "every admissible point is measured";
        break;
      }
      if (!take_results(batch, evaluate_batch(context, progress.head, batch, screening), admissible, progress)) {
        progress.stop = "the run's evaluation budget is spent";
        break;
      }
    }
    outcome.usage.evaluations = progress.spent;
    outcome.summary = summary_of(progress);
    outcome.handoff_note = outcome.summary + (progress.log.empty() ? "" : "; results: " + progress.log);
    return outcome;
  }

 private:
  // Up to `size` points from the search, each marked proposed as it is taken.
  static std::vector<Proposal> propose_batch(const SearchRequest& search, int size, AdmissiblePoints& admissible,
                                             std::mt19937_64& rng) {
    std::vector<Proposal> batch;
    while (static_cast<int>(batch.size()) < size) {
      std::optional<Proposal> proposal = propose_next(search, rng);
      if (!proposal) break;
      admissible.proposed(proposal->params);
      batch.push_back(*proposal);
    }
    return batch;
  }

  // The batch evaluated by the lab, all at once when it holds several (the lab spreads them over its devices).
  static std::vector<LabOutcome> evaluate_batch(const TurnContext& context, const EvaluationRecord& head,
                                                const std::vector<Proposal>& batch, Lab::Screening screening) {
    Lab& lab = *context.lab;
    std::vector<std::future<LabOutcome>> pending;
    for (const Proposal& proposal : batch) {
      LabRequest request;
      // A root starts a new lineage (no parent): it is a sample of the space, not a change to review.
      request.parent_id = proposal.kind == ProposalKind::change ? head.candidate_id : "";
      request.author_role = context.role.name;
      request.lineage = context.role.lineage;
      request.hypothesis = proposal.rationale;
      request.params = proposal.params;
      request.sources_dir = lab.sources_of(head.candidate_id);
      pending.push_back(std::async(batch.size() == 1 ? std::launch::deferred : std::launch::async,
                                   [&lab, &context, screening, request = std::move(request)] {
                                     return lab.evaluate(request, context.cycle, screening);
                                   }));
    }
    std::vector<LabOutcome> results;
    for (std::future<LabOutcome>& result : pending) results.push_back(result.get());
    return results;
  }

  // Counts the batch's evaluations into the progress and moves the head to the batch's best improvement. Returns
  // false when the run's evaluation budget turned a request away.
  static bool take_results(const std::vector<Proposal>& batch, const std::vector<LabOutcome>& results,
                           AdmissiblePoints& admissible, ClimbProgress& progress) {
    std::optional<EvaluationRecord> best_of_batch;
    bool budget_spent = false;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const LabOutcome& result = results[i];
      if (result.record.state == RecordState::over_budget) {
        budget_spent = true;
        continue;
      }
      if (result.reused || result.record.blocked()) {
        admissible.refused(batch[i].params);
        continue;
      }
      ++progress.spent;
      ++progress.kinds[batch[i].kind];
      progress.new_lineage = false;  // one root away from the best answers the directive; the search goes on
      const EvaluationRecord& record = result.record;
      progress.log += record.candidate_id + " " + kind_name(batch[i].kind) + " " + record.verdict_text() +
                      (record.speedup ? " " + fixed(*record.speedup, 2) + "x" : "") + "; ";
      const std::optional<double> bar = best_of_batch ? best_of_batch->speedup : progress.head.speedup;
      if (record.passed() && !record.rejected && bar && *record.speedup > *bar) best_of_batch = record;
    }
    if (best_of_batch) {
      progress.head = *best_of_batch;
      ++progress.improved;
    }
    return !budget_spent;
  }

  static std::string summary_of(ClimbProgress& progress) {
    const EvaluationRecord& head = progress.head;
    return "spent " + std::to_string(progress.spent) + " evaluations (" +
           std::to_string(progress.kinds[ProposalKind::cover]) + " to cover values, " +
           std::to_string(progress.kinds[ProposalKind::change]) + " single changes, " +
           std::to_string(progress.kinds[ProposalKind::jump]) + " jumps), improved " +
           std::to_string(progress.improved) + " times; head " + head.candidate_id +
           (head.speedup ? " " + fixed(*head.speedup, 2) + "x" : "") + "; stopped: " + progress.stop;
  }
};

}  // namespace

std::unique_ptr<TeamMember> make_builtin_optimizer() { return std::make_unique<Optimizer>(); }

}  // namespace evoteam::builtin
