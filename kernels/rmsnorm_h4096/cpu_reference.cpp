// Straight from the definition, one row at a time: the mean of squares, then the reciprocal RMS applied to
// each element before the weight (the same association as the definition: (x * inv_rms) * w).
#include "kernels/rmsnorm_h4096/cpu_reference.hpp"

#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace evoteam_kernels::rmsnorm_h4096 {

void rmsnorm(const float* hidden_states, const float* weight, std::int64_t batch_size, std::int64_t hidden_size,
             double eps, double* output) {
  if (batch_size < 0 || hidden_size < 0) throw std::invalid_argument("rmsnorm_h4096::rmsnorm: negative size");
  if (!(eps >= 0.0)) throw std::invalid_argument("rmsnorm_h4096::rmsnorm: eps must be >= 0");
  for (std::int64_t row = 0; row < batch_size; ++row) {
    const float* x = hidden_states + row * hidden_size;
    double* y = output + row * hidden_size;
    double sum_squares = 0.0;
    for (std::int64_t i = 0; i < hidden_size; ++i) sum_squares += static_cast<double>(x[i]) * static_cast<double>(x[i]);
    const double mean_square = hidden_size > 0 ? sum_squares / static_cast<double>(hidden_size) : 0.0;
    const double inv_rms = 1.0 / std::sqrt(mean_square + eps);
    for (std::int64_t i = 0; i < hidden_size; ++i)
      y[i] = (static_cast<double>(x[i]) * inv_rms) * static_cast<double>(weight[i]);
  }
}

std::vector<double> rmsnorm(const float* hidden_states, const float* weight, std::int64_t batch_size,
                            std::int64_t hidden_size, double eps) {
  if (batch_size < 0 || hidden_size < 0) throw std::invalid_argument("rmsnorm_h4096::rmsnorm: negative size");
  std::vector<double> output(static_cast<std::size_t>(batch_size * hidden_size));
  rmsnorm(hidden_states, weight, batch_size, hidden_size, eps, output.data());
  return output;
}

}  // namespace evoteam_kernels::rmsnorm_h4096
