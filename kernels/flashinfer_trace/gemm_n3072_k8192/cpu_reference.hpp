#pragma once
// Double-precision CPU reference of gemm_n3072_k8192 (imported): C[m][n] = sum_k A[m][k] * B[n][k], A [M, 8192] and
// B [3072, 8192] as the fp16 values widened to float. 2 * M * 3072 * 8192 flops: workloads past a few hundred GFLOP
// are too slow for it (README.md lists them).
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gemm_n3072_k8192 {

inline constexpr std::int64_t k_n = 3072;
inline constexpr std::int64_t k_k = 8192;

std::vector<double> run(const float* a, const float* b, std::int64_t m);

}  // namespace evoteam_kernels::gemm_n3072_k8192
