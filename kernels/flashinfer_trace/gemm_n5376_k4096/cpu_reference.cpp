// Straight from reference.py: one dot product per element, in double.
#include "cpu_reference.hpp"

#include <cstddef>
#include <stdexcept>

namespace evoteam_kernels::gemm_n5376_k4096 {

std::vector<double> run(const float* a, const float* b, std::int64_t m) {
  if (m < 0) throw std::invalid_argument("gemm_n5376_k4096: negative M");
  std::vector<double> c(static_cast<std::size_t>(m * k_n));
  for (std::int64_t row = 0; row < m; ++row)
    for (std::int64_t col = 0; col < k_n; ++col) {
      double sum = 0.0;
      for (std::int64_t k = 0; k < k_k; ++k)
        sum += static_cast<double>(a[row * k_k + k]) * static_cast<double>(b[col * k_k + k]);
      c[static_cast<std::size_t>(row * k_n + col)] = sum;
    }
  return c;
}

}  // namespace evoteam_kernels::gemm_n5376_k4096
