// The double-precision CPU reference of the gemm_allreduce task: a sum over ranks of partial GEMMs on column
// slices of A[M, K] and B[N, K].
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/gemm_allreduce/cpu_reference.hpp"

namespace {

namespace ref = evoteam_kernels::gemm_allreduce;

std::vector<float> random_matrix(std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(static_cast<std::size_t>(rows * cols));
  for (float& value : values) value = normal(engine);
  return values;
}

// The unsplit layer, written independently: rank-one updates over the whole of K.
std::vector<double> unsplit_gemm(const std::vector<float>& a, const std::vector<float>& b, std::int64_t m,
                                 std::int64_t n, std::int64_t k) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t p = 0; p < k; ++p)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        c[static_cast<std::size_t>(i * n + j)] +=
            static_cast<double>(a[static_cast<std::size_t>(i * k + p)]) * b[static_cast<std::size_t>(j * k + p)];
  return c;
}

// Shards of the full A and B for every rank, and the pointer lists the reference takes.
struct Shards {
  std::vector<std::vector<float>> a, b;
  std::vector<const float*> a_ptrs, b_ptrs;
};

Shards make_shards(const std::vector<float>& a, const std::vector<float>& b, std::int64_t m, std::int64_t n,
                   std::int64_t k, std::int64_t world_size) {
  Shards shards;
  for (std::int64_t r = 0; r < world_size; ++r) {
    shards.a.push_back(ref::shard_columns(a.data(), m, k, world_size, r));
    shards.b.push_back(ref::shard_columns(b.data(), n, k, world_size, r));
  }
  for (std::int64_t r = 0; r < world_size; ++r) {
    shards.a_ptrs.push_back(shards.a[static_cast<std::size_t>(r)].data());
    shards.b_ptrs.push_back(shards.b[static_cast<std::size_t>(r)].data());
  }
  return shards;
}

}  // namespace

TEST(GemmAllreduceCpuReference, HandComputedTwoRanks) {
  // Full A = [1 2 3 4]; B rows [1 1 1 1] and [1 -1 2 0]. Rank 0 holds columns 0-1, rank 1 columns 2-3:
  // partials [3, -1] and [7, 6], summed [10, 5].
  const std::vector<float> a0 = {1, 2}, a1 = {3, 4};
  const std::vector<float> b0 = {1, 1, 1, -1}, b1 = {1, 1, 2, 0};
  const float* a_shards[] = {a0.data(), a1.data()};
  const float* b_shards[] = {b0.data(), b1.data()};
  EXPECT_EQ(ref::gemm_allreduce(a_shards, b_shards, 2, 1, 2, 2), (std::vector<double>{10, 5}));
}

TEST(GemmAllreduceCpuReference, EqualsTheUnsplitGemmForEveryWorldSize) {
  const std::int64_t m = 5, n = 7, k = 64;
  const std::vector<float> a = random_matrix(m, k, 31);
  const std::vector<float> b = random_matrix(n, k, 32);
  const std::vector<double> expected = unsplit_gemm(a, b, m, n, k);
  for (std::int64_t world_size : {1, 2, 4, 8}) {
    const Shards shards = make_shards(a, b, m, n, k, world_size);
    const std::vector<double> c =
        ref::gemm_allreduce(shards.a_ptrs.data(), shards.b_ptrs.data(), world_size, m, n, k / world_size);
    ASSERT_EQ(c.size(), expected.size());
    for (std::size_t i = 0; i < c.size(); ++i)
      EXPECT_NEAR(c[i], expected[i], 1e-12 * (1.0 + std::fabs(expected[i])))
          << "world " << world_size << " element " << i;
  }
}

TEST(GemmAllreduceCpuReference, RankOrderOnlyChangesRounding) {
  const std::int64_t m = 3, n = 4, k = 24, world_size = 3;
  const Shards shards = make_shards(random_matrix(m, k, 41), random_matrix(n, k, 42), m, n, k, world_size);
  const std::vector<const float*> a_reversed(shards.a_ptrs.rbegin(), shards.a_ptrs.rend());
  const std::vector<const float*> b_reversed(shards.b_ptrs.rbegin(), shards.b_ptrs.rend());
  const std::vector<double> forward =
      ref::gemm_allreduce(shards.a_ptrs.data(), shards.b_ptrs.data(), world_size, m, n, 8);
  const std::vector<double> backward = ref::gemm_allreduce(a_reversed.data(), b_reversed.data(), world_size, m, n, 8);
  for (std::size_t i = 0; i < forward.size(); ++i)
    EXPECT_NEAR(forward[i], backward[i], 1e-12 * (1.0 + std::fabs(forward[i]))) << "element " << i;
}

TEST(GemmAllreduceCpuReference, MismatchedShardsAreNotTheLayer) {
  // Pairing rank 0's A slice with rank 1's B slice computes something else: the slices must line up.
  const std::int64_t m = 2, n = 3, k = 8;
  const std::vector<float> a = random_matrix(m, k, 51);
  const std::vector<float> b = random_matrix(n, k, 52);
  Shards shards = make_shards(a, b, m, n, k, 2);
  std::swap(shards.b_ptrs[0], shards.b_ptrs[1]);
  const std::vector<double> wrong = ref::gemm_allreduce(shards.a_ptrs.data(), shards.b_ptrs.data(), 2, m, n, k / 2);
  const std::vector<double> right = unsplit_gemm(a, b, m, n, k);
  double difference = 0.0;
  for (std::size_t i = 0; i < right.size(); ++i) difference += std::fabs(wrong[i] - right[i]);
  EXPECT_GT(difference, 1e-3);
}

TEST(GemmAllreduceCpuReference, ShardsReassembleTheFullMatrix) {
  const std::int64_t rows = 3, k = 12, world_size = 4, k_shard = 3;
  const std::vector<float> full = random_matrix(rows, k, 61);
  for (std::int64_t r = 0; r < world_size; ++r) {
    const std::vector<float> shard = ref::shard_columns(full.data(), rows, k, world_size, r);
    ASSERT_EQ(shard.size(), static_cast<std::size_t>(rows * k_shard));
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t p = 0; p < k_shard; ++p)
        EXPECT_EQ(shard[static_cast<std::size_t>(i * k_shard + p)],
                  full[static_cast<std::size_t>(i * k + r * k_shard + p)]);
  }
}

TEST(GemmAllreduceCpuReference, ShardColumnsRejectsImpossibleSplits) {
  const std::vector<float> full(40, 1.0f);
  EXPECT_THROW(ref::shard_columns(full.data(), 4, 10, 4, 0), std::invalid_argument);  // 10 columns over 4 ranks
  EXPECT_THROW(ref::shard_columns(full.data(), 4, 10, 2, 2), std::invalid_argument);  // no rank 2 of 2
  EXPECT_THROW(ref::shard_columns(full.data(), 4, 10, 0, 0), std::invalid_argument);
}

TEST(GemmAllreduceCpuReference, DecodeRowWithOneColumnPerRank) {
  // M = 1 and k_shard = 1: each rank contributes one product per output.
  const std::int64_t n = 3, world_size = 4;
  const std::vector<float> a = {1, -2, 3, 0.5f};
  const std::vector<float> b = random_matrix(n, world_size, 71);
  const Shards shards = make_shards(a, b, 1, n, world_size, world_size);
  const std::vector<double> c = ref::gemm_allreduce(shards.a_ptrs.data(), shards.b_ptrs.data(), world_size, 1, n, 1);
  const std::vector<double> expected = unsplit_gemm(a, b, 1, n, world_size);
  for (std::size_t j = 0; j < c.size(); ++j) EXPECT_NEAR(c[j], expected[j], 1e-12 * (1.0 + std::fabs(expected[j])));
}
