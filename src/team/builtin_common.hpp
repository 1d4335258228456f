#pragma once
// Helpers shared by the builtin rule-based roles: moves in the param space, the Profiling Scientist's advice,
// and the model-guided search over the declared params (the rule that picks the next point from a surrogate of
// log speedup fit on what the lab measured; the surrogate itself is in builtin_surrogate.hpp).
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <evoteam/core/text.hpp>
#include <evoteam/team/team.hpp>

#include "team/builtin_surrogate.hpp"

namespace evoteam::builtin {

struct Move {
  ParamValues params;
  std::vector<std::string> changed;  // names of the params that differ from the parent
  std::string description;           // "tile_m 16→32, unroll 1→4"
};

Move make_move(const ParamValues& from, const ParamValues& to);

// What the Profiling Scientist last handed over: the params ranked by measured effect, and a relevance weight
// per param (larger for params that move the speedup). Read from "focus=a,b" and "relevance=a:1.5,b:0.5" in
// the hand-off note, else from the newest hardware observation with those fields. Empty when there is none.
struct ProfilerAdvice {
  std::vector<std::string> focus;
  std::map<std::string, double> relevance;
};
ProfilerAdvice current_advice(const TurnContext& context);
std::vector<std::string> current_focus(const TurnContext& context);

// Passing, not rejected; the record the lineage continues from.
std::optional<EvaluationRecord> lineage_head(const TurnContext& context);

// Every attempt evaluated on these sources (the params are what varies between them): passing ones with their
// speedup, failures, and attempts still running. Blocked attempts cost nothing and are left out.
std::vector<Measurement> measurements_of(const RunHistory& history, const std::string& sources_hash);

// A region of the param space learned invalid from failures: the points that hold each of its one or two terms
// (param values). Learned when attempts inside it failed the same way three times (four for a one-term region, since
// a single value is a wider claim) and none inside it passed: a static_assert on divisibility, a path that is wrong
// at some shapes. A one-term region whose failures all shared one value of another param is that pair instead; pairs
// that hold exactly the same failures are rival explanations, none learned until a failure tells them apart. The
// search never proposes a point inside one, and the Debugger takes one as diagnosed.
struct InvalidRegion {
  ParamValues terms;
  std::string failure;           // the verdict the attempts inside it failed with
  int failures = 0;              // how many did
  std::string describe() const;  // "MC=16,MR=6"
};
std::vector<InvalidRegion> learned_invalid_regions(const std::vector<ParamSpec>& space,
                                                   const std::vector<Measurement>& measured);
// The first region that holds `params`, if any.
const InvalidRegion* region_holding(const std::vector<InvalidRegion>& regions, const ParamValues& params);

// Each param's measured effect on log speedup: the spread (largest minus smallest) of its values' coefficients
// in a ridge-regularised additive fit over the passing measurements. Params measured at one value only are
// absent (their effect is unknown, not zero).
std::map<std::string, double> param_effects(const std::vector<ParamSpec>& space,
                                            const std::vector<Measurement>& measured);

// Relevance weights from measured effects: 0.5 for a flat param up to 1.5 for the strongest; 1.0 for a param
// whose effect is still unknown.
std::map<std::string, double> relevance_of(const std::vector<ParamSpec>& space,
                                           const std::map<std::string, double>& effects);

enum class ProposalKind {
  cover,   // a root that measures param values no attempt has had yet
  change,  // one param changed from the head
  jump     // a root elsewhere in the space: a new lineage
};

struct Proposal {
  ParamValues params;
  ProposalKind kind = ProposalKind::jump;
  std::string rationale;  // the hypothesis recorded with the candidate
};

enum class SearchMode {
  climb,       // single changes from the head while the model rates them about as well as any jump
  new_lineage  // the next point is a root away from the head (the supervisor saw stagnation)
};

struct SearchRequest {
  std::vector<ParamSpec> space;
  std::vector<Measurement> measured;  // every attempt so far: never proposed again
  ParamValues head;                   // the best passing point; changes are made from it
  std::optional<double> head_speedup;
  std::function<bool(const ParamValues&)> admissible;  // declared-valid and not screened out by knowledge
  std::map<std::string, double> relevance;             // the Profiling Scientist's weights; empty: all equal
  SearchMode mode = SearchMode::climb;
};

// The next point to evaluate. First roots that measure every declared value at least once; then the point
// with the best model score (predicted log speedup plus its uncertainty plus a bonus for value pairs never
// measured together, weighted by relevance), preferring a single change from the head when it scores within
// about 5% of the best jump. Never an attempted or inadmissible point; nullopt when none is left.
std::optional<Proposal> propose_next(const SearchRequest& request, std::mt19937_64& rng);

}  // namespace evoteam::builtin
