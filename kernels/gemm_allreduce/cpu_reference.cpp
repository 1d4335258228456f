// Mirrors what the ranks do: each computes its own partial product, and the partials are then summed, so the
// reference has the structure of the distributed computation rather than that of the unsplit GEMM (the tests
// check that the two agree).
#include "kernels/gemm_allreduce/cpu_reference.hpp"

#include <cstddef>
#include <stdexcept>

namespace evoteam_kernels::gemm_allreduce {

std::vector<float> shard_columns(const float* full, std::int64_t rows, std::int64_t k, std::int64_t world_size,
                                 std::int64_t rank) {
  if (world_size < 1 || rank < 0 || rank >= world_size)
    throw std::invalid_argument("gemm_allreduce::shard_columns: need 0 <= rank < world_size");
  if (rows < 0 || k < 0 || k % world_size != 0)
    throw std::invalid_argument("gemm_allreduce::shard_columns: k must be a non-negative multiple of world_size");
  const std::int64_t k_shard = k / world_size;
  std::vector<float> shard(static_cast<std::size_t>(rows * k_shard));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t p = 0; p < k_shard; ++p)
      shard[static_cast<std::size_t>(i * k_shard + p)] = full[i * k + rank * k_shard + p];
  return shard;
}

void gemm_allreduce(const float* const* a_shards, const float* const* b_shards, std::int64_t world_size, std::int64_t m,
                    std::int64_t n, std::int64_t k_shard, double* c) {
  if (world_size < 1) throw std::invalid_argument("gemm_allreduce::gemm_allreduce: world_size must be >= 1");
  if (m < 0 || n < 0 || k_shard < 0) throw std::invalid_argument("gemm_allreduce::gemm_allreduce: negative size");
  for (std::int64_t i = 0; i < m * n; ++i) c[i] = 0.0;
  for (std::int64_t r = 0; r < world_size; ++r) {
    const float* a = a_shards[r];
    const float* b = b_shards[r];
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double partial = 0.0;
        for (std::int64_t p = 0; p < k_shard; ++p)
          partial += static_cast<double>(a[i * k_shard + p]) * static_cast<double>(b[j * k_shard + p]);
        c[i * n + j] += partial;
      }
  }
}

std::vector<double> gemm_allreduce(const float* const* a_shards, const float* const* b_shards, std::int64_t world_size,
                                   std::int64_t m, std::int64_t n, std::int64_t k_shard) {
  if (m < 0 || n < 0) throw std::invalid_argument("gemm_allreduce::gemm_allreduce: negative size");
  std::vector<double> c(static_cast<std::size_t>(m * n));
  gemm_allreduce(a_shards, b_shards, world_size, m, n, k_shard, c.data());
  return c;
}

}  // namespace evoteam_kernels::gemm_allreduce
