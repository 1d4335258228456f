// Order statistics, the bootstrap interval, the geometric mean and the harness's stopping rule.
#include <gtest/gtest.h>

#include <random>

#include "../../kernels/common/stop_rule.hpp"
#include "eval/statistics.hpp"

namespace {

using namespace evoteam::eval;
using evoteam_harness::NoiseTracker;
using evoteam_harness::StopConfig;
using evoteam_harness::StopReason;

TEST(EvalStatistics, SummarisesSamples) {
  evoteam::SampleStats stats = summarize({4, 1, 3, 2, 5});
  EXPECT_EQ(stats.samples, 5);
  EXPECT_DOUBLE_EQ(stats.median_s, 3);
  EXPECT_DOUBLE_EQ(stats.min_s, 1);
  EXPECT_DOUBLE_EQ(stats.mean_s, 3);
  EXPECT_NEAR(stats.p10_s, 1.4, 1e-12);
  EXPECT_NEAR(stats.p90_s, 4.6, 1e-12);
  EXPECT_NEAR(stats.relstdev, std::sqrt(2.5) / 3, 1e-12);
  EXPECT_EQ(summarize({}).samples, 0);
}

TEST(EvalStatistics, BootstrapIntervalCoversTheTrueRatioAndIsReproducible) {
  std::mt19937_64 random(7);
  std::normal_distribution<double> noise(0, 0.02);
  std::vector<double> baseline, candidate;
  for (int i = 0; i < 40; ++i) {
    baseline.push_back(2.0 * (1 + noise(random)));
    candidate.push_back(1.0 * (1 + noise(random)));
  }
  Interval interval = bootstrap_speedup(baseline, candidate, 2000, 1);
  EXPECT_LT(interval.low, 2.0);
  EXPECT_GT(interval.high, 2.0);
  EXPECT_GT(interval.low, 1.9);
  EXPECT_LT(interval.high, 2.1);
  Interval again = bootstrap_speedup(baseline, candidate, 2000, 1);
  EXPECT_EQ(interval.low, again.low);
  EXPECT_EQ(interval.high, again.high);
}

TEST(EvalStatistics, GeometricMean) {
  EXPECT_NEAR(geometric_mean({2, 8}), 4, 1e-12);
  EXPECT_NEAR(geometric_mean({0.5, 2}), 1, 1e-12);
}

TEST(EvalStopRule, WaitsForMinimumSamplesAndTime) {
  NoiseTracker a, b;
  StopConfig config;
  for (int i = 0; i < 19; ++i) {
    a.add(1.0);
    b.add(1.0);
  }
  EXPECT_EQ(evoteam_harness::should_stop(a, b, config, 10.0, 1.0), StopReason::none);  // 19 < 20 samples
  a.add(1.0);
  b.add(1.0);
  EXPECT_EQ(evoteam_harness::should_stop(a, b, config, 0.1, 1.0), StopReason::none);  // 0.1 s < 0.5 s
  EXPECT_EQ(evoteam_harness::should_stop(a, b, config, 0.6, 1.0), StopReason::converged);
}

TEST(EvalStopRule, StopsWhenNoiseStabilisesOrAtTheCap) {
  std::mt19937_64 random(3);
  std::normal_distribution<double> noise(1.0, 0.05);  // 5% noise never converges to 0.5%
  NoiseTracker a, b;
  StopConfig config;
  StopReason reason = StopReason::none;
  int samples = 0;
  while (reason == StopReason::none && samples < 5000) {
    a.add(noise(random));
    b.add(noise(random));
    ++samples;
    reason = evoteam_harness::should_stop(a, b, config, samples * 2.0 * 0.01, samples * 0.03);
  }
  EXPECT_EQ(reason, StopReason::noise_stable);
  EXPECT_GE(samples, 25);  // 0.5 s of timed work at 10 ms per sample and side
  EXPECT_EQ(evoteam_harness::should_stop(a, b, config, 100, config.max_time_s), StopReason::cap);
}

}  // namespace
