// Control, must pass: a read-only table (.rodata) of the column blocks to visit, the same on every call.
#include <cstdint>
namespace {
constexpr std::int64_t k_block = 16;
const std::int64_t k_block_starts[] = {0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240};
}  // namespace
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  for (std::int64_t i = 0; i < M * N; ++i) C[i] = 0.0f;
  for (std::int64_t start = 0; start < N; start += 256)
    for (const std::int64_t offset : k_block_starts) {
      const std::int64_t j0 = start + offset;
      if (j0 >= N) break;
      const std::int64_t j1 = j0 + k_block < N ? j0 + k_block : N;
      for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t k = 0; k < K; ++k) {
          const float a = A[i * K + k];
          for (std::int64_t j = j0; j < j1; ++j) C[i * N + j] += a * B[k * N + j];
        }
    }
}
