// The builtin search's record of which values it measured and where (builtin_coverage.hpp).
#include "team/builtin_coverage.hpp"

#include <algorithm>

namespace evoteam::builtin {

namespace {

// A value that only failed is given up after this many failures that nothing else explains (as much a finding as
// the region learner's three), or three times as many of any kind.
constexpr double k_recover_attempts = 3;
// A value given up is reopened (on a stagnation directive) until it has failed this many times in all.
constexpr std::size_t k_reopen_failure_limit = 12;

bool fully_encoded(const std::vector<int>& point) {
  return std::all_of(point.begin(), point.end(), [](int value) { return value >= 0; });
}

}  // namespace

double ValueCoverage::Value::failure_rate(int leaving_out) const {
  const double failed = static_cast<double>(failures.size()) - leaving_out;
  return failed > 0 ? failed / (failed + passed) : 0.0;
}

ValueCoverage::ValueCoverage(const std::vector<ParamSpec>& space, const std::vector<Measurement>& measured,
                             const std::vector<InvalidRegion>& learned) {
  std::vector<InvalidRegion> pairs;
  for (const InvalidRegion& region : learned)
    if (region.terms.size() == 2) pairs.push_back(region);
  for (const ParamSpec& spec : space) m_values.emplace_back(spec.values.size());
  for (const Measurement& point : measured) {
    const std::vector<int> encoded = encode_point(space, point.params);
    const bool in_learned_pair = region_holding(pairs, point.params) != nullptr;
    for (std::size_t p = 0; p < space.size(); ++p) {
      if (encoded[p] < 0) continue;
      Value& value = m_values[p][static_cast<std::size_t>(encoded[p])];
      if (point.outcome != Measurement::Outcome::failed)
        ++value.passed;
      else if (fully_encoded(encoded))
        value.failures.push_back({encoded, in_learned_pair});
    }
  }
  for (std::size_t p = 0; p < m_values.size(); ++p)
    for (Value& value : m_values[p]) {
      double unexplained = 0;
      for (const Failure& failure : value.failures) unexplained += 1.0 - explained_apart_from(failure, p);
      value.covered = value.passed > 0 || unexplained >= k_recover_attempts ||
                      static_cast<double>(value.failures.size()) >= 3 * k_recover_attempts;
    }
}

bool ValueCoverage::never_measured(std::size_t p, int v) const {
  return at(p, v).passed == 0 && at(p, v).failures.empty();
}

bool ValueCoverage::covered(std::size_t p, int v) const { return at(p, v).covered; }

// How much a failure is explained apart from param p's value: wholly inside a learned pair region, else by the
// highest rate at which one of its other values failed elsewhere (PACK_B=1 failing wherever it was tried explains
// the failure of NC=256 beside it).
double ValueCoverage::explained_apart_from(const Failure& failure, std::size_t p) const {
  if (failure.in_learned_pair) return 1.0;
  double explained = 0;
  for (std::size_t q = 0; q < failure.point.size(); ++q)
    if (q != p) explained = std::max(explained, at(q, failure.point[q]).failure_rate(1));
  return explained;
}

// Each earlier failure of p's value counts, per value the candidate shares with it, as much as nothing else
// explains it: one beside a value that fails elsewhere too says little against the values it shared.
double ValueCoverage::risk_of(const std::vector<int>& candidate, std::size_t p) const {
  double risk = 0;
  for (const Failure& failure : at(p, candidate[p]).failures) {
    const double explained = explained_apart_from(failure, p);
    for (std::size_t q = 0; q < failure.point.size(); ++q)
      if (q != p && failure.point[q] == candidate[q]) risk += 1.0 - explained;
  }
  for (std::size_t q = 0; q < candidate.size(); ++q)
    if (q != p) risk += at(q, candidate[q]).failure_rate();
  return risk;
}

bool ValueCoverage::reopenable(std::size_t p, int v) const {
  return at(p, v).covered && at(p, v).passed == 0 && at(p, v).failures.size() < k_reopen_failure_limit;
}

double ValueCoverage::retry_risk(const std::vector<int>& candidate, bool reopening) const {
  double risk = 0;
  for (std::size_t p = 0; p < candidate.size(); ++p)
    if (!covered(p, candidate[p]) || (reopening && reopenable(p, candidate[p]))) risk += risk_of(candidate, p);
  return risk;
}

}  // namespace evoteam::builtin
