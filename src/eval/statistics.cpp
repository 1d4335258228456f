#include "eval/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace evoteam::eval {

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + fraction * (sorted[upper] - sorted[lower]);
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile(values, 0.5);
}

SampleStats summarize(const std::vector<double>& samples) {
  SampleStats stats;
  if (samples.empty()) return stats;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  stats.samples = static_cast<int>(sorted.size());
  stats.median_s = quantile(sorted, 0.5);
  stats.p10_s = quantile(sorted, 0.1);
  stats.p90_s = quantile(sorted, 0.9);
  stats.min_s = sorted.front();
  double sum = 0;
  for (double value : sorted) sum += value;
  stats.mean_s = sum / static_cast<double>(sorted.size());
  if (sorted.size() > 1) {
    double squares = 0;
    for (double value : sorted) squares += (value - stats.mean_s) * (value - stats.mean_s);
    const double stdev = std::sqrt(squares / static_cast<double>(sorted.size() - 1));
    stats.relstdev = stats.mean_s > 0 ? stdev / stats.mean_s : 0;
    stats.sem_s = stdev / std::sqrt(static_cast<double>(sorted.size()));
  }
  return stats;
}

Interval bootstrap_speedup(const std::vector<double>& baseline, const std::vector<double>& candidate, int resamples,
                           std::uint64_t seed) {
  Interval interval;
  if (baseline.empty() || candidate.empty()) return interval;
  std::mt19937_64 random(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(std::max(resamples, 1)));
  std::vector<double> scratch;
  auto resampled_median = [&](const std::vector<double>& values) {
    std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
    scratch.resize(values.size());
    for (double& value : scratch) value = values[pick(random)];
    const std::size_t middle = scratch.size() / 2;
    std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(middle), scratch.end());
    double upper = scratch[middle];
    if (scratch.size() % 2 == 1) return upper;
    double lower = *std::max_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(middle));
    return (lower + upper) / 2;
  };
  for (int i = 0; i < std::max(resamples, 1); ++i) {
    const double base = resampled_median(baseline);
    const double cand = resampled_median(candidate);
    if (cand > 0) ratios.push_back(base / cand);
  }
  std::sort(ratios.begin(), ratios.end());
  interval.low = quantile(ratios, 0.025);
  interval.high = quantile(ratios, 0.975);
  return interval;
}

double geometric_mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double log_sum = 0;
  for (double value : values) log_sum += std::log(std::max(value, 1e-300));
  return std::exp(log_sum / static_cast<double>(values.size()));
}

}  // namespace evoteam::eval
