// Writes into an input during the call and puts the old value back before returning, so a comparison of the
// inputs after the call finds nothing (red-team finding: inputs were compared only after the call). A real
// attack uses the input as scratch space; this one scribbles on A[0] and restores it.
#include <cstdint>
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  volatile float* scratch = const_cast<float*>(A);  // volatile: the stores are made, as real scratch use would be
  const float saved = scratch[0];
  scratch[0] = 0.0f;
  scratch[0] = saved;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += A[i * K + k] * B[k * N + j];
      C[i * N + j] = sum;
    }
}
