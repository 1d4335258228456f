// The builtin Debugger: takes the newest undiagnosed failure, bisects the param changes between it and its
// passing parent to isolate the culprit, confirms it, and records it as a constraint ("when A=x[,B=y] the
// candidate fails with S") so that later attempts are screened before they cost an evaluation. A failure inside a
// region the measurements already show invalid is recorded as that region without a probe, and no probe is spent
// inside one.
#include <algorithm>
#include <sstream>

#include "team/builtin_common.hpp"

namespace evoteam::builtin {

namespace {

bool diagnosed(const KnowledgeBase& knowledge, const ParamValues& params) {
  return knowledge.blocking_constraint(params).has_value();
}

// A learned invalid region written down as a constraint, like a bisected culprit.
void record_region(TurnContext& context, const EvaluationRecord& failing, const InvalidRegion& region) {
  KnowledgeEntry constraint{"when " + region.describe() + ": " + failing.failure_signature,
                            {{"when", region.describe()},
                             {"signature", failing.failure_signature},
                             {"candidate", failing.candidate_id},
                             {"found_by", std::to_string(region.failures) + " failures alike, no pass, no probe"}},
                            ""};
  context.knowledge->add(KnowledgeKind::constraint, constraint);
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
    // A failure inside a region the measurements already show invalid needs no probe: the region is the diagnosis.
    const std::vector<InvalidRegion> regions =
        learned_invalid_regions(lab.param_space(), measurements_of(history, failing->sources_hash));
    if (const InvalidRegion* region = region_holding(regions, failing->params)) {
      record_region(context, *failing, *region);
      outcome.summary = "isolated " + failing->candidate_id + " (" + failing->verdict_text() + ") to " +
                        region->describe() + " without a probe: " + std::to_string(region->failures) +
                        " attempts there failed alike and none passed";
      outcome.handoff_note = outcome.summary + "; avoid " + region->describe();
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
      if (const InvalidRegion* region = region_holding(regions, params)) {
        // Known to fail without an evaluation: the answer a probe there would give.
        EvaluationRecord known;
        known.params = params;
        if (region->failure == failing->failure_signature.substr(0, failing->failure_signature.find(':')))
          known.failure_signature = failing->failure_signature;
        return known;
      }
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
      if (region_holding(regions, elsewhere) != nullptr) {
        general = true;  // the culprit lands in a region known to fail: it fails elsewhere too
      } else {
        LabOutcome result = lab.evaluate(request, context.cycle, Lab::Screening::off);
        if (!result.reused) ++spent;
        // Identical to the failure itself (the culprit is all that differs) proves nothing new.
        if (result.record.candidate_id != failing->candidate_id)
          general = !result.record.passed() && result.record.failure_signature == failing->failure_signature;
        else
          general = confirmed_alone;
      }
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
