#pragma once
// Double-precision CPU reference of gemm_n4608_k3584 (imported): C[m][n] = sum_k A[m][k] * B[n][k], A [M, 3584] and
// B [4608, 3584] as the fp16 values widened to float. 2 * M * 4608 * 3584 flops: workloads past a few hundred GFLOP
// are too slow for it (README.md lists them).
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gemm_n4608_k3584 {

inline constexpr std::int64_t k_n = 4608;
inline constexpr std::int64_t k_k = 3584;

std::vector<double> run(const float* a, const float* b, std::int64_t m);

}  // namespace evoteam_kernels::gemm_n4608_k3584
