// The CPU reference of kmeans_assign: a hand case, ties to the lowest index, agreement with an independent
// brute force, distances that are |x - c|^2 of the chosen centroid, and the input hooks whose grid makes fp32
// distances exact.
#include "kernels/kmeans_assign/cpu_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "kernels/kmeans_assign/hooks.cpp"

namespace {

namespace km = evoteam_kernels::kmeans_assign;

float widen_bf16(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value = 0;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

// Points and centroids from the task's hooks, widened to float as the reference sees them.
struct GridProblem {
  std::int64_t n, k, d;
  std::vector<float> points, centroids;
};

GridProblem hook_problem(std::int64_t n, std::int64_t k, std::int64_t d, uint64_t seed) {
  const char* names[] = {"n", "k", "d"};
  const int64_t values[] = {n, k, d};
  std::vector<uint16_t> p(static_cast<std::size_t>(n * d)), c(static_cast<std::size_t>(k * d));
  evoteam_hook_kmeans_grid_points(p.data(), n * d, names, values, 3, seed);
  evoteam_hook_kmeans_grid_centroids(c.data(), k * d, names, values, 3, seed + 1000);
  GridProblem problem{n, k, d, {}, {}};
  for (uint16_t bits : p) problem.points.push_back(widen_bf16(bits));
  for (uint16_t bits : c) problem.centroids.push_back(widen_bf16(bits));
  return problem;
}

TEST(KmeansAssignCpuReference, HandComputedCase) {
  // Centroids (0,0), (4,0), (0,3) in 2-D; the squared distances were worked out by hand.
  const std::vector<float> centroids = {0, 0, 4, 0, 0, 3};
  const std::vector<float> points = {1, 1, 3, 0, 0, 2, -1, -1, 4, 4};
  const km::Assignment a = km::assign(points.data(), centroids.data(), 5, 3, 2);
  const std::vector<std::int32_t> index = {0, 1, 2, 0, 1};  // (4,4): 32, 16, 17
  const std::vector<double> distance = {2, 1, 1, 2, 16};
  EXPECT_EQ(a.index, index);
  EXPECT_EQ(a.distance, distance);
}

TEST(KmeansAssignCpuReference, TiesGoToTheLowestIndex) {
  // Centroids 1 and 3 are the same point; centroids 0 and 2 mirror each other around the origin.
  const std::vector<float> centroids = {-1, 0, 5, 5, 1, 0, 5, 5};
  const std::vector<float> points = {0, 0, 5, 5, 0, 7};
  const km::Assignment a = km::assign(points.data(), centroids.data(), 3, 4, 2);
  EXPECT_EQ(a.index, (std::vector<std::int32_t>{0, 1, 1}));  // (0,7): 50, 29, 50, 29
  EXPECT_EQ(a.distance, (std::vector<double>{1, 0, 29}));
  // Every centroid the same: everything goes to 0.
  const std::vector<float> same = {2, 2, 2, 2, 2, 2};
  const km::Assignment b = km::assign(points.data(), same.data(), 3, 3, 2);
  EXPECT_EQ(b.index, (std::vector<std::int32_t>{0, 0, 0}));
}

TEST(KmeansAssignCpuReference, MatchesAnIndependentBruteForce) {
  // The other loop order (centroids outside, points inside, the expanded form |x|^2 - 2 x.c + |c|^2, a running
  // best updated only on strictly smaller values) must agree exactly on grid inputs, where both are exact.
  for (auto [n, k, d] :
       {std::tuple<std::int64_t, std::int64_t, std::int64_t>{200, 37, 16}, {64, 300, 3}, {50, 8, 131}, {17, 1, 5}}) {
    const GridProblem p = hook_problem(n, k, d, static_cast<uint64_t>(n * 31 + k));
    std::vector<double> best(static_cast<std::size_t>(n), std::numeric_limits<double>::infinity());
    std::vector<std::int32_t> best_index(static_cast<std::size_t>(n), -1);
    for (std::int64_t c = 0; c < k; ++c) {
      double c2 = 0;
      for (std::int64_t j = 0; j < d; ++j)
        c2 += static_cast<double>(p.centroids[static_cast<std::size_t>(c * d + j)]) *
              p.centroids[static_cast<std::size_t>(c * d + j)];
      for (std::int64_t i = 0; i < n; ++i) {
        double x2 = 0, xc = 0;
        for (std::int64_t j = d - 1; j >= 0; --j) {
          const double x = p.points[static_cast<std::size_t>(i * d + j)];
          x2 += x * x;
          xc += x * p.centroids[static_cast<std::size_t>(c * d + j)];
        }
        const double distance = x2 - 2 * xc + c2;
        if (distance < best[static_cast<std::size_t>(i)]) {
          best[static_cast<std::size_t>(i)] = distance;
          best_index[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(c);
        }
      }
    }
    const km::Assignment a = km::assign(p.points.data(), p.centroids.data(), n, k, d);
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(a.index[static_cast<std::size_t>(i)], best_index[static_cast<std::size_t>(i)])
          << "n " << n << " k " << k << " d " << d << " point " << i;
      ASSERT_EQ(a.distance[static_cast<std::size_t>(i)], best[static_cast<std::size_t>(i)]);
    }
  }
}

TEST(KmeansAssignCpuReference, DistanceIsTheSquaredDistanceToTheChosenCentroid) {
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal;
  const std::int64_t n = 100, k = 20, d = 9;
  std::vector<float> points(n * d), centroids(k * d);
  for (float& x : points) x = normal(rng);
  for (float& x : centroids) x = normal(rng);
  const km::Assignment a = km::assign(points.data(), centroids.data(), n, k, d);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t chosen = a.index[static_cast<std::size_t>(i)];
    double expected = 0;
    for (std::int64_t j = 0; j < d; ++j) {
      const double diff = static_cast<double>(points[static_cast<std::size_t>(i * d + j)]) -
                          centroids[static_cast<std::size_t>(chosen * d + j)];
      expected += diff * diff;
    }
    EXPECT_NEAR(a.distance[static_cast<std::size_t>(i)], expected, 1e-12 * expected);
    for (std::int64_t c = 0; c < k; ++c) {
      const double other = km::squared_distance(points.data() + i * d, centroids.data() + c * d, d);
      EXPECT_TRUE(other > a.distance[static_cast<std::size_t>(i)] ||
                  (other == a.distance[static_cast<std::size_t>(i)] && c >= chosen));
    }
  }
}

TEST(KmeansAssignCpuReference, RejectsEmptyCentroidsAndDimensions) {
  const std::vector<float> one = {0};
  EXPECT_THROW(km::assign(one.data(), one.data(), 1, 0, 1), std::invalid_argument);
  EXPECT_THROW(km::assign(one.data(), one.data(), 1, 1, 0), std::invalid_argument);
  EXPECT_TRUE(km::assign(one.data(), one.data(), 0, 1, 1).index.empty());
}

TEST(KmeansAssignCpuReference, GridHookEncodesEveryGridValueExactly) {
  for (int m = -63; m <= 63; ++m) EXPECT_EQ(widen_bf16(kmeans_grid_bf16(m)), static_cast<float>(m) / 16.0f) << m;
  const GridProblem p = hook_problem(300, 64, 128, 5);
  for (float x : p.points) {
    ASSERT_EQ(std::nearbyint(x * 16.0f), x * 16.0f);
    ASSERT_LE(std::fabs(x), 63.0f / 16.0f);
  }
  EXPECT_EQ(p.points, hook_problem(300, 64, 128, 5).points);
  EXPECT_NE(p.points, hook_problem(300, 64, 128, 6).points);
}

TEST(KmeansAssignCpuReference, GridInputsMakeFp32DistancesExact) {
  // Both fp32 formulas a kernel might use, in two summation orders, equal the double distance bit for bit at
  // the largest d the task allows, and the hooks' duplicated centroids produce exact ties.
  const GridProblem p = hook_problem(64, 512, 256, 9);
  int duplicated = 0;
  for (std::int64_t c = 1; c < p.k; ++c)
    for (std::int64_t e = 0; e < c; ++e)
      if (std::equal(p.centroids.begin() + c * p.d, p.centroids.begin() + (c + 1) * p.d,
                     p.centroids.begin() + e * p.d)) {
        ++duplicated;
        break;
      }
  EXPECT_GT(duplicated, 10);
  for (std::int64_t i = 0; i < p.n; ++i)
    for (std::int64_t c = 0; c < p.k; ++c) {
      const float* x = p.points.data() + i * p.d;
      const float* y = p.centroids.data() + c * p.d;
      float direct = 0, x2 = 0, y2 = 0, xy = 0, reversed = 0;
      for (std::int64_t j = 0; j < p.d; ++j) {
        direct += (x[j] - y[j]) * (x[j] - y[j]);
        x2 += x[j] * x[j];
        y2 += y[j] * y[j];
        xy += x[j] * y[j];
        const std::int64_t r = p.d - 1 - j;
        reversed = std::fma(x[r] - y[r], x[r] - y[r], reversed);
      }
      const double exact = km::squared_distance(x, y, p.d);
      ASSERT_EQ(static_cast<double>(direct), exact);
      ASSERT_EQ(static_cast<double>(reversed), exact);
      ASSERT_EQ(static_cast<double>(x2 + y2 - 2.0f * xy), exact);
      ASSERT_EQ(static_cast<double>((x2 - 2.0f * xy) + y2), exact);
    }
}

}  // namespace
