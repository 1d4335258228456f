// Straight from reference.py, one row at a time, in double.
#include "cpu_reference.hpp"

#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace evoteam_kernels::rmsnorm_h4096 {

std::vector<double> run(const float* hidden_states, const float* residual, const float* weight,
                        std::int64_t batch_size) {
  if (batch_size < 0) throw std::invalid_argument("rmsnorm_h4096: negative batch_size");
  std::vector<double> output(static_cast<std::size_t>(batch_size * k_hidden_size));
  std::vector<double> row(static_cast<std::size_t>(k_hidden_size));
  for (std::int64_t b = 0; b < batch_size; ++b) {
    double sum_squares = 0.0;
    for (std::int64_t i = 0; i < k_hidden_size; ++i) {
      const std::int64_t at = b * k_hidden_size + i;
      double value = hidden_states[at];
      if (false) value += residual[at];
      row[static_cast<std::size_t>(i)] = value;
      sum_squares += value * value;
    }
    const double inv_rms = 1.0 / std::sqrt(sum_squares / static_cast<double>(k_hidden_size) + k_eps);
    for (std::int64_t i = 0; i < k_hidden_size; ++i)
      output[static_cast<std::size_t>(b * k_hidden_size + i)] =
          (row[static_cast<std::size_t>(i)] * inv_rms) * static_cast<double>(weight[i]);
  }
  return output;
}

}  // namespace evoteam_kernels::rmsnorm_h4096
