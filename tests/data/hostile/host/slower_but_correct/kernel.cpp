// Correct and honest, just slow: one dependent chain of scalar additions per element, computed twice.
#include <cstdint>
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  for (int repeat = 0; repeat < 2; ++repeat)
    for (std::int64_t j = 0; j < N; ++j)
      for (std::int64_t i = 0; i < M; ++i) {
        double sum = 0;
        for (std::int64_t k = 0; k < K; ++k) sum += static_cast<double>(A[i * K + k]) * B[k * N + j];
        C[i * N + j] = static_cast<float>(sum);
      }
}
