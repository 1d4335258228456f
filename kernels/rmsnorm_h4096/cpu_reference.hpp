#pragma once
// Double-precision CPU reference of rmsnorm_h4096: for each row x of hidden_states [batch_size, hidden_size],
// output = x * (1 / sqrt(mean(x^2) + eps)) * weight, element by element. Inputs are the bf16 values widened to
// float; everything after that is double.
#include <cstdint>
#include <vector>

namespace evoteam_kernels::rmsnorm_h4096 {

// The task's constants: the hidden size, and eps as the float32 scalar the entry receives (1e-5f widened).
inline constexpr std::int64_t k_hidden_size = 4096;
inline constexpr double k_eps = static_cast<double>(1e-5f);

// Writes batch_size * hidden_size values to `output`. Sizes must be non-negative and eps >= 0; a row of zeros
// gives zeros when eps > 0.
void rmsnorm(const float* hidden_states, const float* weight, std::int64_t batch_size, std::int64_t hidden_size,
             double eps, double* output);

// The same, returning the output.
std::vector<double> rmsnorm(const float* hidden_states, const float* weight, std::int64_t batch_size,
                            std::int64_t hidden_size, double eps);

}  // namespace evoteam_kernels::rmsnorm_h4096
