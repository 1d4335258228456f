// Never returns: the per-call watchdog must end it.
#include <cstdint>
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  volatile std::int64_t spin = 0;
  while (spin >= 0) spin = spin + 1 - (M + N + K) * 0;
  C[0] = A[0] * B[0];
}
