#pragma once
// Double-precision CPU reference of fused_add_rmsnorm_h3072 (imported): for each row x of hidden_states + residual [batch_size, 3072],
// output = x * (1 / sqrt(mean(x^2) + 1e-6)) * weight. Inputs are the bf16 values widened to float.
#include <cstdint>
#include <vector>

namespace evoteam_kernels::fused_add_rmsnorm_h3072 {

inline constexpr std::int64_t k_hidden_size = 3072;
inline constexpr double k_eps = 1e-6;

// Returns batch_size * k_hidden_size values; `residual` is ignored (may be null) when the task has none.
std::vector<double> run(const float* hidden_states, const float* residual, const float* weight,
                        std::int64_t batch_size);

}  // namespace evoteam_kernels::fused_add_rmsnorm_h3072
