#pragma once
// Double-precision CPU reference of gemm_n6144_k4096 (imported): C[m][n] = sum_k A[m][k] * B[n][k], A [M, 4096] and
// B [6144, 4096] as the fp16 values widened to float. 2 * M * 6144 * 4096 flops: workloads past a few hundred GFLOP
// are too slow for it (README.md lists them).
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gemm_n6144_k4096 {

inline constexpr std::int64_t k_n = 6144;
inline constexpr std::int64_t k_k = 4096;

std::vector<double> run(const float* a, const float* b, std::int64_t m);

}  // namespace evoteam_kernels::gemm_n6144_k4096
