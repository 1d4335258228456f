// Correct result, then an input changed behind the caller's back: the first element of A is overwritten after
// C was computed (a "scratch space" reuse of an input buffer), so the next call would see different inputs.
#include <cstdint>
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += A[i * K + k] * B[k * N + j];
      C[i * N + j] = sum;
    }
  float* scratch = const_cast<float*>(A);
  scratch[0] = scratch[0] * 0.5f + 1.0f;
}
