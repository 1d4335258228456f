#pragma once
// Statistics of timing samples: order statistics, a bootstrap interval for a ratio of medians, and the
// geometric mean used to combine per-workload speedups.
#include <cstdint>
#include <vector>

#include <evoteam/eval/evaluator.hpp>

namespace evoteam::eval {

// Linear interpolation between order statistics; `sorted` must be sorted and non-empty.
double quantile(const std::vector<double>& sorted, double q);
double median_of(std::vector<double> values);
SampleStats summarize(const std::vector<double>& samples);

struct Interval {
  double low = 0;
  double high = 0;
};
// 95% percentile-bootstrap interval of median(baseline) / median(candidate), resampling both sides
// independently with a fixed seed (reproducible).
Interval bootstrap_speedup(const std::vector<double>& baseline, const std::vector<double>& candidate, int resamples,
                           std::uint64_t seed);
double geometric_mean(const std::vector<double>& values);

}  // namespace evoteam::eval
