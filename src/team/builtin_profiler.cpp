// The builtin Profiling Scientist: profiles the current best (after every change of the best), measures each
// param's effect from pairs of candidates that differ in that param alone, and hands the Optimizer a focus
// order: the params with the largest measured effect first, then the unmeasured ones, then the flat ones.
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
        CandidateEvaluator::Profile profile = lab.profile(best->candidate_id);
        outcome.usage.evaluations = 1;
        bound = profile.bound;
        profile_summary = profile.summary;
      } else {
        bound = best->profile_bound;
      }
    }

    // Effect of each param: mean |log speedup ratio| over parent/child pairs that differ in it alone.
    RunHistory history = lab.snapshot();
    std::map<std::string, std::pair<double, int>> effect;
    for (const EvaluationRecord& child : history.evaluations) {
      const EvaluationRecord* parent = history.find(child.parent_id);
      if (!parent || !child.passed || !parent->passed || !child.speedup || !parent->speedup) continue;
      Move move = make_move(parent->params, child.params);
      if (move.changed.size() != 1) continue;
      auto& [sum, count] = effect[move.changed.front()];
      sum += std::fabs(std::log(*child.speedup / *parent->speedup));
      ++count;
    }
    std::vector<std::pair<double, std::string>> ranked;
    for (const ParamSpec& spec : lab.param_space()) {
      auto it = effect.find(spec.name);
      // Unmeasured params rank between strong (> 5%) and flat ones: they may hide a gain.
      double score = it == effect.end() ? 0.05 : it->second.first / it->second.second;
      ranked.emplace_back(-score, spec.name);
    }
    std::sort(ranked.begin(), ranked.end());
    std::string focus, effects;
    for (const auto& [score, name] : ranked) {
      focus += (focus.empty() ? "" : ",") + name;
      auto it = effect.find(name);
      if (it != effect.end())
        effects += name + " ±" + fixed(100.0 * (std::exp(it->second.first / it->second.second) - 1.0), 0) + "% (" +
                   std::to_string(it->second.second) + " pair(s)); ";
    }
    if (best) {
      context.knowledge->add(KnowledgeKind::hardware,
                             KnowledgeEntry{best->candidate_id + " is " + bound + "-bound",
                                            {{"candidate", best->candidate_id}, {"bound", bound}, {"focus", focus}},
                                            profile_summary + (effects.empty() ? "" : "\nMeasured param effects: " + effects)});
    }
    outcome.summary = (best ? "profiled " + best->candidate_id + " (" + bound + "-bound); " : std::string()) +
                      "focus " + focus;
    outcome.handoff_note = outcome.summary + "; focus=" + focus;
    return outcome;
  }
};

}  // namespace

std::unique_ptr<TeamMember> make_builtin_profiling_scientist() { return std::make_unique<ProfilingScientist>(); }

}  // namespace evoteam::builtin
