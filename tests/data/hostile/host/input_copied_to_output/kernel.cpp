// Copies an input into the output instead of computing (fast, and wrong).
#include <cstdint>
#include <cstring>
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  const std::int64_t count = M * N < K * N ? M * N : K * N;
  std::memcpy(C, B, static_cast<std::size_t>(count) * sizeof(float));
  for (std::int64_t i = count; i < M * N; ++i) C[i] = A[0];
}
