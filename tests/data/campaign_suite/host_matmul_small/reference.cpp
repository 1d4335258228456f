// Trusted reference for host_matmul: C = A * B with every product accumulated in double precision and rounded
// to float once at the end, so its error is at most half an ulp per element.
#include <cstdint>
#include <vector>

extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  std::vector<double> row(static_cast<std::size_t>(N));
  for (std::int64_t i = 0; i < M; ++i) {
    for (double& value : row) value = 0.0;
    for (std::int64_t k = 0; k < K; ++k) {
      const double a = A[i * K + k];
      const float* b = B + k * N;
      for (std::int64_t j = 0; j < N; ++j) row[static_cast<std::size_t>(j)] += a * static_cast<double>(b[j]);
    }
    for (std::int64_t j = 0; j < N; ++j) C[i * N + j] = static_cast<float>(row[static_cast<std::size_t>(j)]);
  }
}
