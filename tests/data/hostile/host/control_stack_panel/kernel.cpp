// Control, must pass: packs a panel of B into a 16 KiB buffer on the stack on every call (internal scratch that
// dies with the call), then multiplies from the panel.
#include <cstdint>
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  constexpr std::int64_t k_panel_k = 64, k_panel_n = 64;
  float panel[k_panel_k * k_panel_n];
  for (std::int64_t i = 0; i < M * N; ++i) C[i] = 0.0f;
  for (std::int64_t k0 = 0; k0 < K; k0 += k_panel_k)
    for (std::int64_t j0 = 0; j0 < N; j0 += k_panel_n) {
      const std::int64_t kb = K - k0 < k_panel_k ? K - k0 : k_panel_k;
      const std::int64_t nb = N - j0 < k_panel_n ? N - j0 : k_panel_n;
      for (std::int64_t k = 0; k < kb; ++k)
        for (std::int64_t j = 0; j < nb; ++j) panel[k * k_panel_n + j] = B[(k0 + k) * N + j0 + j];
      for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t k = 0; k < kb; ++k) {
          const float a = A[i * K + k0 + k];
          for (std::int64_t j = 0; j < nb; ++j) C[i * N + j0 + j] += a * panel[k * k_panel_n + j];
        }
    }
}
