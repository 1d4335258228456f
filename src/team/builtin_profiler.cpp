// The builtin Profiling Scientist: profiles the current best (after every change of the best), measures each
// param's effect with an additive fit of log speedup over every measurement on the best's sources, and hands
// the Optimizer a focus order (largest measured effect first, then the unmeasured params, then the flat ones)
// and relevance weights that bias which param combinations the Optimizer explores.
#include <algorithm>
#include <cmath>
#include <map>

#include "team/builtin_common.hpp"

namespace evoteam::builtin {

namespace {

class ProfilingScientist : public TeamMember {
 public:
  TurnOutcome act(TurnContext& context) override {
    TurnOutcome outcome;
    Lab& lab = *context.lab;
    std::optional<EvaluationRecord> best = lab.best();
    std::string bound = "unknown", profile_summary;
    if (best) {
      if (!best->profiled) {
        if (std::optional<CandidateEvaluator::Profile> profile = lab.profile(best->candidate_id)) {
          outcome.usage.evaluations = 1;
          bound = profile->bound;
          profile_summary = profile->summary;
        }
      } else {
        bound = best->profile_bound;
      }
    }

    const std::vector<ParamSpec> space = lab.param_space();
    RunHistory history = lab.snapshot();
    std::vector<Measurement> measured;
    if (best) measured = measurements_of(history, best->sources_hash);
    int passing = 0;
    for (const Measurement& point : measured) passing += point.outcome == Measurement::Outcome::passed ? 1 : 0;
    const std::map<std::string, double> effects = param_effects(space, measured);
    const std::map<std::string, double> relevance = relevance_of(space, effects);

    std::vector<std::pair<double, std::string>> ranked;
    for (const ParamSpec& spec : space) {
      auto it = effects.find(spec.name);
      // Unmeasured params rank between strong (> 5%) and flat ones: they may hide a gain.
      ranked.emplace_back(-(it == effects.end() ? 0.05 : it->second), spec.name);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string focus, weights, effects_text;
    for (const auto& [score, name] : ranked) {
      focus += (focus.empty() ? "" : ",") + name;
      if (auto weight = relevance.find(name); weight != relevance.end())
        weights += (weights.empty() ? "" : ",") + name + ":" + fixed(weight->second, 2);
      if (auto effect = effects.find(name); effect != effects.end())
        effects_text += name + " " + fixed(100.0 * (std::exp(effect->second) - 1.0), 0) + "%; ";
    }
    if (!effects_text.empty())
      effects_text = "Measured param effects (additive fit over " + std::to_string(passing) +
                     " passing measurements, largest minus smallest value): " + effects_text;
    if (best) {
      std::map<std::string, std::string> fields = {
          {"candidate", best->candidate_id}, {"bound", bound}, {"focus", focus}};
      if (!weights.empty()) fields["relevance"] = weights;
      context.knowledge->add(KnowledgeKind::hardware,
                             KnowledgeEntry{best->candidate_id + " is " + bound + "-bound", fields,
                                            profile_summary + (effects_text.empty() ? "" : "\n" + effects_text)});
    }
    outcome.summary = (best ? "profiled " + best->candidate_id + " (" + bound + "-bound); " : std::string()) +
                      "focus " + focus + (effects_text.empty() ? "" : "; " + effects_text);
    outcome.handoff_note = outcome.summary + "; focus=" + focus + (weights.empty() ? "" : "; relevance=" + weights);
    return outcome;
  }
};

}  // namespace

std::unique_ptr<TeamMember> make_builtin_profiling_scientist() { return std::make_unique<ProfilingScientist>(); }

}  // namespace evoteam::builtin
