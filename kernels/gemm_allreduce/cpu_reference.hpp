#pragma once
// Double-precision CPU reference of gemm_allreduce, the row-parallel linear layer of tensor parallelism:
// rank r of world_size holds A_r[M, k_shard] and B_r[N, k_shard], column slice r of the full A[M, K] and
// B[N, K] (k_shard = K / world_size), and every rank ends with C = sum over r of A_r * B_r^T. Inputs are the
// bf16 values widened to float; products and sums are double.
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gemm_allreduce {

// Rank `rank`'s slice of a row-major [rows, k] matrix: columns [rank * k / world_size, (rank + 1) * k /
// world_size), row-major [rows, k / world_size]. Throws std::invalid_argument unless world_size >= 1,
// 0 <= rank < world_size and k % world_size == 0.
std::vector<float> shard_columns(const float* full, std::int64_t rows, std::int64_t k, std::int64_t world_size,
                                 std::int64_t rank);

// C[m, n] = sum over ranks r (in rank order) of A_r * B_r^T, each rank's partial accumulated in double:
// a_shards[r] is A_r[m, k_shard], b_shards[r] is B_r[n, k_shard]. Writes m * n values to `c`.
void gemm_allreduce(const float* const* a_shards, const float* const* b_shards, std::int64_t world_size, std::int64_t m,
                    std::int64_t n, std::int64_t k_shard, double* c);

// The same, returning C.
std::vector<double> gemm_allreduce(const float* const* a_shards, const float* const* b_shards, std::int64_t world_size,
                                   std::int64_t m, std::int64_t n, std::int64_t k_shard);

}  // namespace evoteam_kernels::gemm_allreduce
