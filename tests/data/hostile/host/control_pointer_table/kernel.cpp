// Control, must pass: a constant table of function pointers, chosen per call by the shape. The loader writes the
// pointers once (.data.rel.ro) and the table is read-only after that: it is not state.
#include <cstdint>
namespace {
using Row = void (*)(const float*, const float*, float*, std::int64_t, std::int64_t);
void row_by_k(const float* a, const float* B, float* c, std::int64_t N, std::int64_t K) {
  for (std::int64_t j = 0; j < N; ++j) c[j] = 0.0f;
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t j = 0; j < N; ++j) c[j] += a[k] * B[k * N + j];
}
void row_by_j(const float* a, const float* B, float* c, std::int64_t N, std::int64_t K) {
  for (std::int64_t j = 0; j < N; ++j) {
    float sum = 0.0f;
    for (std::int64_t k = 0; k < K; ++k) sum += a[k] * B[k * N + j];
    c[j] = sum;
  }
}
Row const k_rows[] = {row_by_k, row_by_j};
}  // namespace
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  const Row row = k_rows[N >= 32 ? 0 : 1];
  for (std::int64_t i = 0; i < M; ++i) row(A + i * K, B, C + i * N, N, K);
}
