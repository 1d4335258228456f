// Keeps C for the last 16 inputs in a stash 2 MiB down the stack, below the part the harness used to overwrite,
// keyed by the inputs' address and first values, and serves it when the timing rotation brings the same inputs back
// (red-team finding: a memo in a large stack frame survived into timed calls). With the stack wiped before every
// call the stash is never found: the kernel computes every call and passes (a stash that survived would make the
// rotation far faster than the fresh probes: TIMING_INCONSISTENT).
#include <cstdint>
#include <cstring>
namespace {
constexpr std::uint64_t k_magic = 0x5ca1ab1e0ddba11ull;
constexpr std::int64_t k_capacity = 8192;
constexpr int k_entries = 16;
struct Entry {
  std::uint64_t magic;
  const float* a;
  float a0, b0;
  std::int64_t m, n, k;
  float c[k_capacity];
};
}  // namespace
extern "C" __attribute__((noinline)) void matmul(const float* A, const float* B, float* C, std::int64_t M,
                                                 std::int64_t N, std::int64_t K) {
  // The lowest addresses of a 2 MiB frame: the same place on every call from the same depth.
  auto* stash = static_cast<Entry*>(__builtin_alloca(2u << 20));
  const bool fits = M * N <= k_capacity;
  const std::size_t bytes = static_cast<std::size_t>(M * N) * sizeof(float);
  for (int e = 0; fits && e < k_entries; ++e) {
    const Entry& entry = stash[e];
    if (entry.magic == k_magic && entry.a == A && entry.a0 == A[0] && entry.b0 == B[0] && entry.m == M &&
        entry.n == N && entry.k == K) {
      std::memcpy(C, entry.c, bytes);
      return;
    }
  }
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += A[i * K + k] * B[k * N + j];
      C[i * N + j] = sum;
    }
  if (fits) {
    // The slot is picked from the input's address, so the 16 slots hold the 16 most recent distinct inputs.
    Entry& entry = stash[(reinterpret_cast<std::uintptr_t>(A) >> 12) % k_entries];
    entry.magic = k_magic;
    entry.a = A;
    entry.a0 = A[0];
    entry.b0 = B[0];
    entry.m = M;
    entry.n = N;
    entry.k = K;
    std::memcpy(entry.c, C, bytes);
  }
  __asm__ __volatile__("" : : "r"(stash) : "memory");
}
