// The builtin Debugger: takes the newest undiagnosed failure, bisects the param changes between it and its
// passing parent to isolate the culprit, confirms it, and records it as a constraint ("when A=x[,B=y] the
// candidate fails with S") so that later attempts are screened before they cost an evaluation.
#include <algorithm>
#include <sstream>

#include "team/builtin_common.hpp"

namespace evoteam::builtin {

namespace {

bool diagnosed(const KnowledgeBase& knowledge, const ParamValues& params) {
  return knowledge.blocking_constraint(params).has_value();
}

class Debugger : public TeamMember {
 public:
  TurnOutcome act(TurnContext& context) override {
    TurnOutcome outcome;
    Lab& lab = *context.lab;
    RunHistory history = lab.snapshot();
    const EvaluationRecord* failing = nullptr;
    for (auto it = history.evaluations.rbegin(); it != history.evaluations.rend() && !failing; ++it)
      if (it->failed() && !diagnosed(*context.knowledge, it->params)) failing = &*it;
    if (failing == nullptr) {
      outcome.summary = "no undiagnosed failure";
      outcome.handoff_note = outcome.summary;
      return outcome;
    }
    const EvaluationRecord* parent = history.find(failing->parent_id);
    if (parent == nullptr || !parent->passed()) {
      std::optional<EvaluationRecord> best = history.best();
      parent = best ? history.find(best->candidate_id) : nullptr;
    }
    if (parent == nullptr) {
      outcome.summary = "cannot bisect " + failing->candidate_id + ": no passing candidate to compare with";
      return outcome;
    }

    // Bisection over the differing params, assuming one culprit set; each probe is one evaluation.
    std::vector<std::string> suspects = make_move(parent->params, failing->params).changed;
    int spent = 0;
    auto probe = [&](const std::vector<std::string>& applied) {
      ParamValues params = parent->params;
      for (const std::string& name : applied) params[name] = failing->params.at(name);
      LabRequest request{parent->candidate_id,
                         context.role.name,
                         context.role.lineage,
                         "bisect " + failing->candidate_id + ": apply " + std::to_string(applied.size()) + " change(s)",
                         params,
                         lab.sources_of(parent->candidate_id)};
      LabOutcome result = lab.evaluate(request, context.cycle, Lab::Screening::off);
      if (!result.reused) ++spent;
      return result.record;
    };
    while (suspects.size() > 1 && spent < context.evaluation_budget) {
      std::vector<std::string> half(suspects.begin(), suspects.begin() + static_cast<long>(suspects.size() / 2));
      std::vector<std::string> rest(suspects.begin() + static_cast<long>(suspects.size() / 2), suspects.end());
      EvaluationRecord result = probe(half);
      suspects = (!result.passed() && result.failure_signature == failing->failure_signature) ? half : rest;
    }
    // Confirm the culprit alone on the parent, then on a second passing point (the starting kernel): only a
    // culprit that fails the same way in both contexts is recorded as general; otherwise the failure depends on
    // the rest of the configuration and the whole failing configuration is recorded.
    std::vector<std::string> culprit = suspects;
    const std::vector<std::string> changed = make_move(parent->params, failing->params).changed;
    bool confirmed_alone = false;
    if (suspects.size() < changed.size() && spent < context.evaluation_budget) {
      EvaluationRecord alone = probe(suspects);
      confirmed_alone = !alone.passed() && alone.failure_signature == failing->failure_signature;
    }
    bool general = confirmed_alone || suspects.size() == changed.size();
    const EvaluationRecord* second = nullptr;  // another passing configuration to test the culprit in
    for (const EvaluationRecord& record : history.evaluations)
      if (record.passed() && !record.rejected && record.candidate_id != parent->candidate_id &&
          record.sources_hash == parent->sources_hash && !second)
        second = &record;
    if (general && second != nullptr && spent < context.evaluation_budget) {
      ParamValues elsewhere = second->params;
      for (const std::string& name : culprit) elsewhere[name] = failing->params.at(name);
      LabRequest request{second->candidate_id,
                         context.role.name,
                         context.role.lineage,
                         "does " + failing->candidate_id + "'s culprit fail elsewhere?",
                         elsewhere,
                         lab.sources_of(second->candidate_id)};
      LabOutcome result = lab.evaluate(request, context.cycle, Lab::Screening::off);
      if (!result.reused) ++spent;
      // Identical to the failure itself (the culprit is all that differs) proves nothing new.
      if (result.record.candidate_id != failing->candidate_id)
        general = !result.record.passed() && result.record.failure_signature == failing->failure_signature;
      else
        general = confirmed_alone;
    } else if (!confirmed_alone) {
      general = false;  // one context only: the failure may depend on the rest of the configuration
    }
    if (!general) {
      culprit.clear();
      for (const auto& [name, value] : failing->params) culprit.push_back(name);
    }
    std::string when;
    for (const std::string& name : culprit) when += (when.empty() ? "" : ",") + name + "=" + failing->params.at(name);
    KnowledgeEntry constraint{"when " + when + ": " + failing->failure_signature,
                              {{"when", when},
                               {"signature", failing->failure_signature},
                               {"candidate", failing->candidate_id},
                               {"found_by", "debugger bisection, " + std::to_string(spent) + " probe(s)"}},
                              ""};
    context.knowledge->add(KnowledgeKind::constraint, constraint);
    outcome.usage.evaluations = spent;
    outcome.summary = "isolated " + failing->candidate_id + " (" + failing->verdict_text() + ") to " + when + " in " +
                      std::to_string(spent) + " probe(s)";
    outcome.handoff_note = outcome.summary + "; avoid " + when;
    return outcome;
  }
};

}  // namespace

std::unique_ptr<TeamMember> make_builtin_debugger() { return std::make_unique<Debugger>(); }

}  // namespace evoteam::builtin
