#pragma once
// Helpers shared by the builtin rule-based roles: moves in the param space, the Profiling Scientist's advice,
// and the model-guided search over the declared params (a surrogate of log speedup fit on what the lab
// measured, and the rule that picks the next point from it).
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <evoteam/core/text.hpp>
#include <evoteam/team/team.hpp>

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

// One attempted point of the param space.
struct Measurement {
  enum class Outcome { passed, failed, pending };
  ParamValues params;
  Outcome outcome = Outcome::pending;
  double speedup = 0;  // passed only
};

// Every attempt evaluated on these sources (the params are what varies between them): passing ones with their
// speedup, failures, and attempts still running. Blocked attempts cost nothing and are left out.
std::vector<Measurement> measurements_of(const RunHistory& history, const std::string& sources_hash);

// Each param's measured effect on log speedup: the spread (largest minus smallest) of its values' coefficients
// in a ridge-regularised additive fit over the passing measurements. Params measured at one value only are
// absent (their effect is unknown, not zero).
std::map<std::string, double> param_effects(const std::vector<ParamSpec>& space,
                                            const std::vector<Measurement>& measured);

// Relevance weights from measured effects: 0.5 for a flat param up to 1.5 for the strongest; 1.0 for a param
// whose effect is still unknown.
std::map<std::string, double> relevance_of(const std::vector<ParamSpec>& space,
                                           const std::map<std::string, double>& effects);

// A Gaussian-process model of log speedup over categorical params: two points are alike in proportion to the
// values and the value pairs they share. A failed point counts as the worst passing one, so the model steers
// away from failing regions. Needs two measurements, one of them passing (check `usable()`).
class Surrogate {
 public:
  Surrogate(const std::vector<ParamSpec>& space, const std::vector<Measurement>& measured);

  struct Prediction {
    double mean = 0;  // log speedup
    double sd = 0;
  };
  bool usable() const { return m_points.size() >= 2; }
  Prediction predict(const ParamValues& params) const;
  double spread() const { return m_scale; }  // prior standard deviation of log speedup

 private:
  double kernel(const std::vector<int>& a, const std::vector<int>& b) const;
  std::vector<int> encode(const ParamValues& params) const;

  std::vector<ParamSpec> m_space;
  std::vector<std::vector<int>> m_points;  // value indices
  std::vector<double> m_alpha;             // (K + noise)^-1 (y - mean)
  std::vector<double> m_chol;              // lower Cholesky factor of K + noise, row-major
  double m_mean = 0;
  double m_scale = 1;
};

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
