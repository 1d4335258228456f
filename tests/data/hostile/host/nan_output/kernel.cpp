// Correct except for one NaN.
#include <cstdint>
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += A[i * K + k] * B[k * N + j];
      C[i * N + j] = sum;
    }
  const float zero = static_cast<float>(M - M);
  C[(M * N) / 2] = zero / zero;
}
