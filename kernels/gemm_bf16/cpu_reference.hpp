#pragma once
// Double-precision CPU reference of gemm_bf16: C[M, N] = A[M, K] * B[N, K]^T, all row-major, B holding one
// row per output column (the weight layout of a linear layer). Inputs are the bf16 values widened to float;
// every product is exact in double and the sum over k is accumulated in double, in increasing k.
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gemm_bf16 {

// Writes the m * n elements of C to `c`. K == 0 gives zeros. Sizes must be non-negative.
void gemm(const float* a, const float* b, std::int64_t m, std::int64_t n, std::int64_t k, double* c);

// The same, returning C.
std::vector<double> gemm(const float* a, const float* b, std::int64_t m, std::int64_t n, std::int64_t k);

}  // namespace evoteam_kernels::gemm_bf16
