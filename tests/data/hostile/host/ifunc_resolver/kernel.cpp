// The entry point is a GNU indirect function: its resolver runs while the harness loads the object, before any
// call and outside every deadline, where it could prepare state or look around (red-team finding: only
// .init_array and .ctors were refused).
#include <cstdint>
namespace {
using Matmul = void (*)(const float*, const float*, float*, std::int64_t, std::int64_t, std::int64_t);
}  // namespace
extern "C" void matmul_naive(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N,
                             std::int64_t K) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += A[i * K + k] * B[k * N + j];
      C[i * N + j] = sum;
    }
}
extern "C" Matmul choose_matmul() { return matmul_naive; }
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K)
    __attribute__((ifunc("choose_matmul")));
