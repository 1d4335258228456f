// Writes through a wild pointer far from any buffer.
#include <cstdint>
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  float* wild = reinterpret_cast<float*>(static_cast<std::uintptr_t>(0x10) + static_cast<std::uintptr_t>(M * N * K * 0));
  *wild = A[0] + B[0];
  C[0] = 0;
}
