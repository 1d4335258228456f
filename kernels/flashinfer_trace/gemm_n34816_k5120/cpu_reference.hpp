#pragma once
// Double-precision CPU reference of gemm_n34816_k5120 (imported): C[m][n] = sum_k A[m][k] * B[n][k], A [M, 5120] and
// B [34816, 5120] as the fp16 values widened to float. 2 * M * 34816 * 5120 flops: workloads past a few hundred GFLOP
// are too slow for it (README.md lists them).
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gemm_n34816_k5120 {

inline constexpr std::int64_t k_n = 34816;
inline constexpr std::int64_t k_k = 5120;

std::vector<double> run(const float* a, const float* b, std::int64_t m);

}  // namespace evoteam_kernels::gemm_n34816_k5120
