// The double-precision CPU reference of the gemm_bf16 task: C = A * B^T with B stored [N, K].
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/gemm_bf16/cpu_reference.hpp"

// Named, not anonymous: unity builds compile several test files as one, and helper names here repeat elsewhere.
namespace gemm_bf16_reference_test {

namespace ref = evoteam_kernels::gemm_bf16;

std::vector<float> random_matrix(std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(static_cast<std::size_t>(rows * cols));
  for (float& value : values) value = normal(engine);
  return values;
}

// An independent formulation: transpose B explicitly to [K, N], then accumulate C with rank-one updates
// (k outermost), the loop order of a row-major A * Bt.
std::vector<double> gemm_rank_one_updates(const std::vector<float>& a, const std::vector<float>& b, std::int64_t m,
                                          std::int64_t n, std::int64_t k) {
  std::vector<double> bt(static_cast<std::size_t>(k * n));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t p = 0; p < k; ++p)
      bt[static_cast<std::size_t>(p * n + j)] = b[static_cast<std::size_t>(j * k + p)];
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t p = 0; p < k; ++p)
    for (std::int64_t i = 0; i < m; ++i) {
      const double a_value = a[static_cast<std::size_t>(i * k + p)];
      for (std::int64_t j = 0; j < n; ++j)
        c[static_cast<std::size_t>(i * n + j)] += a_value * bt[static_cast<std::size_t>(p * n + j)];
    }
  return c;
}

void expect_near_all(const std::vector<double>& actual, const std::vector<double>& expected, double relative) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], relative * (1.0 + std::fabs(expected[i]))) << "element " << i;
}

TEST(GemmBf16CpuReference, HandComputedTwoByFour) {
  // A is 2 x 3; B is 4 x 3 (four output columns, each a row of B).
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {1, 0, -1, 2, 1, 0, 0, 0, 1, 1, 1, 1};
  const std::vector<double> c = ref::gemm(a.data(), b.data(), 2, 4, 3);
  const std::vector<double> expected = {-2, 4, 3, 6, -2, 13, 6, 15};
  EXPECT_EQ(c, expected);
}

TEST(GemmBf16CpuReference, MatchesRankOneUpdatesOnTransposedWeight) {
  struct Shape {
    std::int64_t m, n, k;
  };
  for (const Shape shape : {Shape{7, 5, 13}, Shape{1, 9, 33}, Shape{17, 3, 1}, Shape{4, 16, 64}}) {
    const std::vector<float> a = random_matrix(shape.m, shape.k, 11);
    const std::vector<float> b = random_matrix(shape.n, shape.k, 12);
    expect_near_all(ref::gemm(a.data(), b.data(), shape.m, shape.n, shape.k),
                    gemm_rank_one_updates(a, b, shape.m, shape.n, shape.k), 1e-12);
  }
}

TEST(GemmBf16CpuReference, IdentityWeightCopiesActivations) {
  const std::int64_t m = 3, k = 6;
  const std::vector<float> a = random_matrix(m, k, 5);
  std::vector<float> identity(static_cast<std::size_t>(k * k), 0.0f);
  for (std::int64_t i = 0; i < k; ++i) identity[static_cast<std::size_t>(i * k + i)] = 1.0f;
  const std::vector<double> c = ref::gemm(a.data(), identity.data(), m, k, k);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(c[i], static_cast<double>(a[i])) << "element " << i;
}

TEST(GemmBf16CpuReference, DecodeRowIsOneDotProductPerWeightRow) {
  const std::int64_t n = 5, k = 8;
  const std::vector<float> a = random_matrix(1, k, 21);
  const std::vector<float> b = random_matrix(n, k, 22);
  const std::vector<double> c = ref::gemm(a.data(), b.data(), 1, n, k);
  for (std::int64_t j = 0; j < n; ++j) {
    double dot = 0.0;
    for (std::int64_t p = k - 1; p >= 0; --p)
      dot += static_cast<double>(a[static_cast<std::size_t>(p)]) * b[static_cast<std::size_t>(j * k + p)];
    EXPECT_NEAR(c[static_cast<std::size_t>(j)], dot, 1e-12 * (1.0 + std::fabs(dot))) << "column " << j;
  }
}

TEST(GemmBf16CpuReference, EmptyReductionGivesZeros) {
  const std::vector<float> none;
  std::vector<double> c(6, 42.0);
  ref::gemm(none.data(), none.data(), 2, 3, 0, c.data());
  for (double value : c) EXPECT_EQ(value, 0.0);
}

TEST(GemmBf16CpuReference, AccumulatesInDoubleNotFloat) {
  // In float, 1e8 + 1 rounds back to 1e8 and the 1 is lost; in double the sum is exactly 1.
  const std::vector<float> a = {1e8f, 1.0f, -1e8f};
  const std::vector<float> b = {1.0f, 1.0f, 1.0f};
  EXPECT_EQ(ref::gemm(a.data(), b.data(), 1, 1, 3)[0], 1.0);
}

TEST(GemmBf16CpuReference, NegativeSizeThrows) {
  const std::vector<float> none;
  EXPECT_THROW(ref::gemm(none.data(), none.data(), -1, 2, 2), std::invalid_argument);
}

}  // namespace gemm_bf16_reference_test
