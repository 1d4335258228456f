// The builtin Knowledge Integrator: at the end of a cycle turns the cycle's measurements into knowledge —
// validated param changes (with the candidates and figures that validate them), constraints inferred from
// recurring failures, failed configurations (never re-tried) — and rewrites the action plan every agent reads,
// with the param effects measured so far.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "team/builtin_common.hpp"

namespace evoteam::builtin {

namespace {

class KnowledgeIntegrator : public TeamMember {
 public:
  TurnOutcome act(TurnContext& context) override {
    TurnOutcome outcome;
    KnowledgeBase& knowledge = *context.knowledge;
    RunHistory history = context.lab->snapshot();

    // Validated strategies: single changes that beat their parent by a measured margin. Each cycle looks at the
    // whole history; the knowledge base refuses what it holds already (by content, not by candidate id: ids
    // restart in every run sharing the directory).
    int strategies = 0;
    for (const EvaluationRecord& child : history.evaluations) {
      const EvaluationRecord* parent = history.find(child.parent_id);
      if (!parent || !child.passed() || child.rejected || !parent->passed() || !child.speedup || !parent->speedup ||
          *child.speedup < *parent->speedup * 1.02)
        continue;
      Move move = make_move(parent->params, child.params);
      if (move.changed.size() != 1) continue;
      const std::string& name = move.changed.front();
      const KnowledgeEntry strategy{move.description + ": " + fixed(*child.speedup / *parent->speedup, 2) + "x",
                                    {{"param", name},
                                     {"from", parent->params.at(name)},
                                     {"to", child.params.at(name)},
                                     {"candidate", child.candidate_id},
                                     {"parent", parent->candidate_id},
                                     {"speedup", fixed(*child.speedup, 2)}},
                                    ""};
      if (knowledge.add(KnowledgeKind::strategy, strategy)) ++strategies;
    }

    // Failed configurations, recorded exactly (never re-tried): a general rule needs the Debugger's probes.
    const std::vector<std::string> conditions = knowledge.constraint_conditions();  // this task's only
    std::set<std::string> known_constraints(conditions.begin(), conditions.end());
    int constraints = 0;
    for (const EvaluationRecord& record : history.evaluations) {
      if (!record.failed() || record.failure_signature.empty()) continue;
      std::string when = describe_params(record.params);
      if (known_constraints.count(when)) continue;
      const bool added = knowledge.add(KnowledgeKind::constraint,
                                       KnowledgeEntry{"when " + when + ": " + record.failure_signature,
                                                      {{"when", when},
                                                       {"signature", record.failure_signature},
                                                       {"candidate", record.candidate_id},
                                                       {"found_by", "knowledge integrator (exact configuration)"}},
                                                      ""});
      known_constraints.insert(when);
      if (added) ++constraints;
    }

    // The action plan: where the team stands and what to try next.
    std::optional<EvaluationRecord> best = history.best();
    std::string plan = "- cycle: " + std::to_string(context.cycle) + "\n";
    plan += "- best: " +
            (best ? best->candidate_id + " " + fixed(best->speedup.value_or(0), 2) + "x (" +
                        describe_params(best->params) + ")"
                  : std::string("none")) +
            "\n";
    std::vector<std::string> focus = current_focus(context);
    std::string focus_text;
    for (const std::string& name : focus) focus_text += (focus_text.empty() ? "" : ",") + name;
    plan += "- focus: " + (focus_text.empty() ? "unmeasured; profile the best first" : focus_text) + "\n";
    // Param effects as measured so far (an additive fit over every measurement on the best's sources), so a
    // reader sees which params matter without replaying the history.
    if (best) {
      std::map<std::string, double> effects =
          param_effects(context.lab->param_space(), measurements_of(history, best->sources_hash));
      std::string effects_text;
      for (const auto& [name, effect] : effects)
        effects_text +=
            (effects_text.empty() ? "" : ", ") + name + " " + fixed(100.0 * (std::exp(effect) - 1.0), 0) + "%";
      if (!effects_text.empty()) plan += "- param effects (largest minus smallest value): " + effects_text + "\n";
    }
    plan += "- respect constraints: " + std::to_string(known_constraints.size()) + " recorded (constraints.md)\n";
    plan +=
        "- next: one change at a time from the best where the model rates it well, else a new lineage where "
        "it expects more; never retry a measured configuration or a recorded failure\n";
    knowledge.write_action_plan(plan);
    knowledge.add_role_record(context.role.name, KnowledgeEntry{"cycle " + std::to_string(context.cycle),
                                                                {{"strategies_added", std::to_string(strategies)},
                                                                 {"constraints_added", std::to_string(constraints)}},
                                                                ""});
    outcome.summary = "recorded " + std::to_string(strategies) + " validated strateg" +
                      (strategies == 1 ? "y" : "ies") + " and " + std::to_string(constraints) +
                      " constraint(s); action plan rewritten";
    outcome.handoff_note = outcome.summary;
    return outcome;
  }
};

}  // namespace

std::unique_ptr<TeamMember> make_builtin_knowledge_integrator() { return std::make_unique<KnowledgeIntegrator>(); }

}  // namespace evoteam::builtin
