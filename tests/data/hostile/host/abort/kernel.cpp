// Aborts (as a failed assertion would).
#include <cstdint>
#include <cstdlib>
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  if (M + N + K > 0) std::abort();
  C[0] = A[0] * B[0];
}
