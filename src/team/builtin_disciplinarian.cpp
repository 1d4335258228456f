// The builtin Disciplinarian: reviews every candidate of the cycle that would become the new best. Several
// changes at once are rejected and decomposed into single-change candidates (so the gain is attributed);
// a jump beyond the re-verification ratio is re-run with fresh seeds before it counts. Rulings are recorded.
#include "team/builtin_common.hpp"

namespace evoteam::builtin {

namespace {

class Disciplinarian : public TeamMember {
 public:
  explicit Disciplinarian(double reverify_ratio) : m_reverify_ratio(reverify_ratio) {}

  TurnOutcome act(TurnContext& context) override {
    TurnOutcome outcome;
    Lab& lab = *context.lab;
    int spent = 0, rejected = 0, accepted = 0;
    RunHistory history = lab.snapshot();
    std::optional<double> before = history.best_speedup_through(context.cycle - 1);
    for (const EvaluationRecord& record : history.evaluations) {
      if (record.cycle != context.cycle || !record.passed() || record.rejected || !record.ruling.empty() ||
          !record.speedup)
        continue;
      if (before && *record.speedup <= *before) continue;  // not a candidate for the new best
      const EvaluationRecord* parent = history.find(record.parent_id);
      if (parent != nullptr && record.changes > 1) {
        Move move = make_move(parent->params, record.params);
        lab.rule(record.candidate_id, false, context.role.name,
                 Ruling{RulingKind::several_changes, "several changes at once: " + move.description});
        ++rejected;
        for (const std::string& name : move.changed) {
          if (spent >= context.evaluation_budget) break;
          ParamValues single = parent->params;
          single[name] = record.params.at(name);
          LabRequest request{parent->candidate_id,
                             context.role.name,
                             "best",
                             "decompose " + record.candidate_id + ": " + name + " alone",
                             single,
                             lab.sources_of(parent->candidate_id)};
          if (!lab.evaluate(request, context.cycle, context.screening()).reused) ++spent;
        }
        continue;
      }
      if (before && *record.speedup > *before * m_reverify_ratio && spent < context.evaluation_budget) {
        LabOutcome check = lab.reverify(record.candidate_id, context.cycle, context.role.name);
        ++spent;
        if (check.record.rejected) {
          ++rejected;
          continue;
        }
      } else {
        lab.rule(record.candidate_id, true, context.role.name,
                 Ruling{RulingKind::review, parent == nullptr
                                                ? "new lineage (a sample of the space, no parent), measured: accepted"
                                                : "one change, measured: accepted"});
      }
      ++accepted;
    }
    outcome.usage.evaluations = spent;
    outcome.summary = "reviewed new-best candidates: " + std::to_string(accepted) + " accepted, " +
                      std::to_string(rejected) + " rejected";
    context.knowledge->add_role_record(context.role.name,
                                       KnowledgeEntry{"cycle " + std::to_string(context.cycle), {}, outcome.summary});
    outcome.handoff_note = outcome.summary;
    return outcome;
  }

 private:
  double m_reverify_ratio;
};

}  // namespace

std::unique_ptr<TeamMember> make_builtin_disciplinarian(double reverify_ratio) {
  return std::make_unique<Disciplinarian>(reverify_ratio);
}

}  // namespace evoteam::builtin
