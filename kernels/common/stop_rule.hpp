#pragma once
// Noise-based stopping for the timing loop (nvbench's stdrel criterion, adapted to an interleaved pair):
// keep sampling until both sides have at least min_samples and together min_time_s of timed work, then stop
// when both relative standard deviations are <= max_noise ("converged"), or when the noise estimate of each
// side has stopped moving ("noise_stable": the relative spread of its last noise_window estimates is below
// noise_stability), or at the max_time_s cap ("cap", reported as NOISY). Header-only: the unit tests use it too.
#include <cmath>
#include <cstddef>
#include <vector>

namespace evoteam_harness {

struct StopConfig {
  std::size_t min_samples = 20;
  double min_time_s = 0.5;
  double max_time_s = 10.0;
  double max_noise = 0.005;
  std::size_t noise_window = 10;
  double noise_stability = 0.05;
};

enum class StopReason { none, converged, noise_stable, cap };

inline const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::converged: return "converged";
    case StopReason::noise_stable: return "noise_stable";
    case StopReason::cap: return "cap";
    case StopReason::none: break;
  }
  return "none";
}

// Running mean and variance (Welford) plus the history of relative-stdev estimates.
class NoiseTracker {
 public:
  void add(double sample) {
    ++m_count;
    const double delta = sample - m_mean;
    m_mean += delta / static_cast<double>(m_count);
    m_m2 += delta * (sample - m_mean);
    m_total += sample;
    if (m_count >= 2) m_history.push_back(relstdev());
  }
  std::size_t count() const { return m_count; }
  double mean() const { return m_mean; }
  double total() const { return m_total; }
  double relstdev() const {
    if (m_count < 2 || m_mean <= 0) return INFINITY;
    return std::sqrt(m_m2 / static_cast<double>(m_count - 1)) / m_mean;
  }
  // True when the last `window` noise estimates vary by less than `threshold` relative to their mean.
  bool noise_stable(std::size_t window, double threshold) const {
    if (window < 2 || m_history.size() < window) return false;
    double sum = 0;
    for (std::size_t i = m_history.size() - window; i < m_history.size(); ++i) sum += m_history[i];
    const double mean = sum / static_cast<double>(window);
    if (!(mean > 0) || !std::isfinite(mean)) return false;
    double squares = 0;
    for (std::size_t i = m_history.size() - window; i < m_history.size(); ++i)
      squares += (m_history[i] - mean) * (m_history[i] - mean);
    return std::sqrt(squares / static_cast<double>(window - 1)) / mean < threshold;
  }

 private:
  std::size_t m_count = 0;
  double m_mean = 0;
  double m_m2 = 0;
  double m_total = 0;
  std::vector<double> m_history;
};

// `timed_s`: timed work accumulated by both sides; `elapsed_s`: wall time since the measurement began.
inline StopReason should_stop(const NoiseTracker& candidate, const NoiseTracker& baseline, const StopConfig& config,
                              double timed_s, double elapsed_s) {
  if (elapsed_s >= config.max_time_s) return StopReason::cap;
  if (candidate.count() < config.min_samples || baseline.count() < config.min_samples) return StopReason::none;
  if (timed_s < config.min_time_s) return StopReason::none;
  if (candidate.relstdev() <= config.max_noise && baseline.relstdev() <= config.max_noise) return StopReason::converged;
  if (candidate.noise_stable(config.noise_window, config.noise_stability) &&
      baseline.noise_stable(config.noise_window, config.noise_stability))
    return StopReason::noise_stable;
  return StopReason::none;
}

}  // namespace evoteam_harness
