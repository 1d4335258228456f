// Within tolerance every time, but the last bit of one element depends on where the output happens to live.
#include <cstdint>
#include <cstring>
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += A[i * K + k] * B[k * N + j];
      C[i * N + j] = sum;
    }
  std::uint32_t bits;
  std::memcpy(&bits, &C[0], sizeof bits);
  bits ^= static_cast<std::uint32_t>((reinterpret_cast<std::uintptr_t>(C) >> 6) & 1u);
  std::memcpy(&C[0], &bits, sizeof bits);
}
