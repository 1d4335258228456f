#pragma once
// Double-precision CPU reference of gemm_n21504_k5376 (imported): C[m][n] = sum_k A[m][k] * B[n][k], A [M, 5376] and
// B [21504, 5376] as the fp16 values widened to float. 2 * M * 21504 * 5376 flops: workloads past a few hundred GFLOP
// are too slow for it (README.md lists them).
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gemm_n21504_k5376 {

inline constexpr std::int64_t k_n = 21504;
inline constexpr std::int64_t k_k = 5376;

std::vector<double> run(const float* a, const float* b, std::int64_t m);

}  // namespace evoteam_kernels::gemm_n21504_k5376
