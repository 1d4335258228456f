// Row-by-row dot products: row i of A against row j of B, both contiguous in k, which is the natural
// order for the NT layout and the one the CUDA reference also follows.
#include "kernels/gemm_bf16/cpu_reference.hpp"

#include <cstddef>
#include <stdexcept>

namespace evoteam_kernels::gemm_bf16 {

void gemm(const float* a, const float* b, std::int64_t m, std::int64_t n, std::int64_t k, double* c) {
  if (m < 0 || n < 0 || k < 0) throw std::invalid_argument("gemm_bf16::gemm: negative size");
  for (std::int64_t i = 0; i < m; ++i) {
    const float* a_row = a + i * k;
    for (std::int64_t j = 0; j < n; ++j) {
      const float* b_row = b + j * k;
      double sum = 0.0;
      for (std::int64_t p = 0; p < k; ++p) sum += static_cast<double>(a_row[p]) * static_cast<double>(b_row[p]);
      c[i * n + j] = sum;
    }
  }
}

std::vector<double> gemm(const float* a, const float* b, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (m < 0 || n < 0) throw std::invalid_argument("gemm_bf16::gemm: negative size");
  std::vector<double> c(static_cast<std::size_t>(m * n));
  gemm(a, b, m, n, k, c.data());
  return c;
}

}  // namespace evoteam_kernels::gemm_bf16
