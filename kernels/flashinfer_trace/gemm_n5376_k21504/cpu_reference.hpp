#pragma once
// Double-precision CPU reference of gemm_n5376_k21504 (imported): C[m][n] = sum_k A[m][k] * B[n][k], A [M, 21504] and
// B [5376, 21504] as the fp16 values widened to float. 2 * M * 5376 * 21504 flops: workloads past a few hundred GFLOP
// are too slow for it (README.md lists them).
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gemm_n5376_k21504 {

inline constexpr std::int64_t k_n = 5376;
inline constexpr std::int64_t k_k = 21504;

std::vector<double> run(const float* a, const float* b, std::int64_t m);

}  // namespace evoteam_kernels::gemm_n5376_k21504
