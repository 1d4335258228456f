#pragma once
// Double-precision CPU reference of gemm_n128_k2048 (imported): C[m][n] = sum_k A[m][k] * B[n][k], A [M, 2048] and
// B [128, 2048] as the fp16 values widened to float. 2 * M * 128 * 2048 flops: workloads past a few hundred GFLOP
// are too slow for it (README.md lists them).
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gemm_n128_k2048 {

inline constexpr std::int64_t k_n = 128;
inline constexpr std::int64_t k_k = 2048;

std::vector<double> run(const float* a, const float* b, std::int64_t m);

}  // namespace evoteam_kernels::gemm_n128_k2048
