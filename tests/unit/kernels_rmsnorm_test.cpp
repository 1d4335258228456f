// The double-precision CPU reference of the rmsnorm_h4096 task.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/rmsnorm_h4096/cpu_reference.hpp"

// Named, not anonymous: unity builds compile several test files as one, and helper names here repeat elsewhere.
namespace rmsnorm_reference_test {

namespace ref = evoteam_kernels::rmsnorm_h4096;

std::vector<float> random_values(std::int64_t count, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& value : values) value = normal(engine);
  return values;
}

double rms(const double* values, std::int64_t count) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < count; ++i) sum += values[i] * values[i];
  return std::sqrt(sum / static_cast<double>(count));
}

TEST(RmsnormH4096CpuReference, TaskConstantsMatchTheDefinition) {
  EXPECT_EQ(ref::k_hidden_size, 4096);
  EXPECT_EQ(ref::k_eps, static_cast<double>(1e-5f));
}

TEST(RmsnormH4096CpuReference, HandComputedRow) {
  // mean(x^2) = (1 + 4 + 9 + 16) / 4 = 7.5; with eps = 0.5 the reciprocal RMS is 1 / sqrt(8).
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> w = {2, 1, 0.5f, -1};
  const std::vector<double> y = ref::rmsnorm(x.data(), w.data(), 1, 4, 0.5);
  const std::vector<double> expected = {0.7071067811865475, 0.7071067811865475, 0.5303300858899106,
                                        -1.4142135623730951};
  ASSERT_EQ(y.size(), expected.size());
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-15) << "element " << i;
}

TEST(RmsnormH4096CpuReference, OutputHasUnitRmsBeforeTheWeight) {
  const std::int64_t hidden = ref::k_hidden_size;
  const std::vector<float> x = random_values(hidden, 1, 3.0f);
  const std::vector<float> ones(static_cast<std::size_t>(hidden), 1.0f);
  EXPECT_NEAR(rms(ref::rmsnorm(x.data(), ones.data(), 1, hidden, 0.0).data(), hidden), 1.0, 1e-12);
  // With eps the RMS is sqrt(ms / (ms + eps)), slightly below one.
  double mean_square = 0.0;
  for (float value : x) mean_square += static_cast<double>(value) * value;
  mean_square /= static_cast<double>(hidden);
  EXPECT_NEAR(rms(ref::rmsnorm(x.data(), ones.data(), 1, hidden, ref::k_eps).data(), hidden),
              std::sqrt(mean_square / (mean_square + ref::k_eps)), 1e-12);
}

TEST(RmsnormH4096CpuReference, ScalesWithTheWeight) {
  const std::int64_t batch = 2, hidden = 64;
  const std::vector<float> x = random_values(batch * hidden, 2);
  const std::vector<float> w = random_values(hidden, 3);
  const std::vector<float> ones(static_cast<std::size_t>(hidden), 1.0f);
  std::vector<float> w_scaled(w);
  for (float& value : w_scaled) value *= -4.0f;
  const std::vector<double> unweighted = ref::rmsnorm(x.data(), ones.data(), batch, hidden, ref::k_eps);
  const std::vector<double> weighted = ref::rmsnorm(x.data(), w.data(), batch, hidden, ref::k_eps);
  const std::vector<double> scaled = ref::rmsnorm(x.data(), w_scaled.data(), batch, hidden, ref::k_eps);
  for (std::int64_t i = 0; i < batch * hidden; ++i) {
    const std::size_t at = static_cast<std::size_t>(i);
    EXPECT_NEAR(weighted[at], unweighted[at] * w[static_cast<std::size_t>(i % hidden)], 1e-14) << "element " << i;
    EXPECT_NEAR(scaled[at], -4.0 * weighted[at], 1e-13) << "element " << i;
  }
}

TEST(RmsnormH4096CpuReference, InvariantToScalingTheInput) {
  const std::int64_t hidden = 256;
  const std::vector<float> x = random_values(hidden, 4);
  const std::vector<float> w = random_values(hidden, 5);
  const std::vector<double> base = ref::rmsnorm(x.data(), w.data(), 1, hidden, 0.0);
  for (float scale : {1e-3f, 0.5f, 7.0f, 1e3f}) {
    std::vector<float> scaled(x);
    for (float& value : scaled) value *= scale;
    const std::vector<double> y = ref::rmsnorm(scaled.data(), w.data(), 1, hidden, 0.0);
    for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], base[i], 1e-6 * (1.0 + std::fabs(base[i]))) << scale;
  }
  // With eps the invariance holds once the mean square dwarfs eps.
  std::vector<float> large(x);
  for (float& value : large) value *= 100.0f;
  const std::vector<double> y = ref::rmsnorm(large.data(), w.data(), 1, hidden, ref::k_eps);
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], base[i], 1e-6 * (1.0 + std::fabs(base[i])));
}

TEST(RmsnormH4096CpuReference, EpsDominatesTinyRows) {
  const std::vector<float> x(8, 1e-4f);
  const std::vector<float> w(8, 1.0f);
  const std::vector<double> y = ref::rmsnorm(x.data(), w.data(), 1, 8, 1e-5);
  const double mean_square = static_cast<double>(1e-4f) * static_cast<double>(1e-4f);
  const double expected = static_cast<double>(1e-4f) / std::sqrt(mean_square + 1e-5);
  for (double value : y) EXPECT_NEAR(value, expected, 1e-15);
  EXPECT_LT(expected, 0.04);  // far from the unit RMS a row without eps would get
}

TEST(RmsnormH4096CpuReference, ZeroRowGivesZerosNotNaN) {
  const std::vector<float> x(16, 0.0f);
  const std::vector<float> w = random_values(16, 6);
  for (double value : ref::rmsnorm(x.data(), w.data(), 1, 16, ref::k_eps)) EXPECT_EQ(value, 0.0);
}

TEST(RmsnormH4096CpuReference, RowsAreNormalisedIndependently) {
  const std::int64_t hidden = 32;
  std::vector<float> x = random_values(3 * hidden, 7);
  for (std::int64_t i = hidden; i < 2 * hidden; ++i) x[static_cast<std::size_t>(i)] *= 1e3f;  // a loud middle row
  const std::vector<float> w = random_values(hidden, 8);
  const std::vector<double> batched = ref::rmsnorm(x.data(), w.data(), 3, hidden, ref::k_eps);
  for (std::int64_t row = 0; row < 3; ++row) {
    const std::vector<double> alone = ref::rmsnorm(x.data() + row * hidden, w.data(), 1, hidden, ref::k_eps);
    for (std::int64_t i = 0; i < hidden; ++i)
      EXPECT_EQ(batched[static_cast<std::size_t>(row * hidden + i)], alone[static_cast<std::size_t>(i)]) << row;
  }
}

TEST(RmsnormH4096CpuReference, RejectsNegativeSizesAndEps) {
  const std::vector<float> none;
  EXPECT_THROW(ref::rmsnorm(none.data(), none.data(), -1, 4, 0.0), std::invalid_argument);
  EXPECT_THROW(ref::rmsnorm(none.data(), none.data(), 0, 4, -1.0), std::invalid_argument);
}

}  // namespace rmsnorm_reference_test
