#pragma once
// Double-precision CPU reference of gemm_n4096_k14336 (imported): C[m][n] = sum_k A[m][k] * B[n][k], A [M, 14336] and
// B [4096, 14336] as the fp16 values widened to float. 2 * M * 4096 * 14336 flops: workloads past a few hundred GFLOP
// are too slow for it (README.md lists them).
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gemm_n4096_k14336 {

inline constexpr std::int64_t k_n = 4096;
inline constexpr std::int64_t k_k = 14336;

std::vector<double> run(const float* a, const float* b, std::int64_t m);

}  // namespace evoteam_kernels::gemm_n4096_k14336
