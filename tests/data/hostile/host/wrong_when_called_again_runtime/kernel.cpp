// Correct the first time it sees an output buffer with given inputs, wrong in one element every later time: a
// result that changes between timed samples of the same inputs. (Keyed on input values too, because a later
// correctness trial may get a recycled address.)
#include <cstdint>
namespace {
struct Call {
  float* output;
  float a0, b0;
};
constexpr int k_remembered = 64;
Call g_seen[k_remembered] = {};
int g_next = 0;
}  // namespace
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  bool seen = false;
  for (const Call& call : g_seen) seen |= call.output == C && call.a0 == A[0] && call.b0 == B[0];
  if (!seen) g_seen[g_next++ % k_remembered] = Call{C, A[0], B[0]};
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += A[i * K + k] * B[k * N + j];
      C[i * N + j] = sum;
    }
  if (seen) C[0] += 1.0f + 0.5f * (C[0] < 0 ? -C[0] : C[0]);
}
