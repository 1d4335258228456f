#pragma once
// Which declared values the builtin search has measured, and where to measure again a value that so far only
// failed: NR=32 failing beside NC=48 (no multiple of 32) says nothing of NR=32 beside NC=256, so such a value is
// not covered until it passes, or until enough failures that nothing else explains make it a finding. A failure inside
// a pair region learned invalid (NC=48 with NR=32) is that pair's, not the value's. A value given up may be reopened
// when the supervisor sees the search stagnate.
#include <cstddef>
#include <vector>

#include "team/builtin_common.hpp"
#include "team/builtin_surrogate.hpp"

namespace evoteam::builtin {

class ValueCoverage {
 public:
  ValueCoverage(const std::vector<ParamSpec>& space, const std::vector<Measurement>& measured,
                const std::vector<InvalidRegion>& learned);

  // Param p's value v (an index into its declared values) was never measured, passing or failing.
  bool never_measured(std::size_t p, int v) const;
  // ... passed (or is being measured), or failed often enough, for reasons nothing else explains, to be given up.
  bool covered(std::size_t p, int v) const;
  // ... never passed but was given up after its failures, and may be reopened once more (a stagnation directive
  // questions what the search wrote off; a value reopened often enough stays given up).
  bool reopenable(std::size_t p, int v) const;
  // For each value of `candidate` not covered (or, `reopening`, reopenable): how much its other values resemble
  // where that value failed, and how often they failed anywhere. The lower, the likelier a failure of the
  // candidate is that value's own.
  double retry_risk(const std::vector<int>& candidate, bool reopening = false) const;

 private:
  struct Failure {
    std::vector<int> point;
    bool in_learned_pair = false;  // inside a two-term region learned invalid: explained by that pair
  };
  struct Value {
    int passed = 0;
    std::vector<Failure> failures;  // where it failed
    bool covered = false;
    // The fraction of its measurements that failed, `leaving_out` of them set aside (a failure is not its own
    // explanation).
    double failure_rate(int leaving_out = 0) const;
  };
  const Value& at(std::size_t p, int v) const { return m_values[p][static_cast<std::size_t>(v)]; }
  double explained_apart_from(const Failure& failure, std::size_t p) const;
  double risk_of(const std::vector<int>& candidate, std::size_t p) const;

  std::vector<std::vector<Value>> m_values;  // per param, per declared value
};

}  // namespace evoteam::builtin
