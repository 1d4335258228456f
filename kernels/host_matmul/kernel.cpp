// Starting kernel for host_matmul: C[M][N] = A[M][K] * B[K][N], fp32, row-major.
// Cache-tiled with a register-blocked inner kernel. The tile sizes, the register block, the k-loop unroll and
// the tile loop order are compile-time params (see task.json); the defaults are deliberately poor.
#include <cstdint>

// Rows of A and C per cache tile (not a param; edit it if you like).
#define TILE_M 32
#ifndef TILE_N
#define TILE_N 64
#endif
#ifndef TILE_K
#define TILE_K 32
#endif
#ifndef REG_ROWS
#define REG_ROWS 1
#endif
#ifndef REG_COLS
#define REG_COLS 16
#endif
#ifndef UNROLL_K
#define UNROLL_K 1
#endif
#ifndef LOOP_ORDER
#define LOOP_ORDER 0  // 0: tiles in i, j, k order; 1: tiles in i, k, j order
#endif

#define EVOTEAM_STR2(x) #x
#define EVOTEAM_STR(x) EVOTEAM_STR2(x)

namespace {

inline std::int64_t min_of(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

// Adds A[i0:i1, k0:k1] * B[k0:k1, j0:j1] into C.
inline void tile(const float* __restrict A, const float* __restrict B, float* __restrict C, std::int64_t N,
                 std::int64_t K, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, std::int64_t k0,
                 std::int64_t k1) {
  for (std::int64_t i = i0; i < i1; i += REG_ROWS) {
    const std::int64_t rows = min_of(REG_ROWS, i1 - i);
    for (std::int64_t j = j0; j < j1; j += REG_COLS) {
      const std::int64_t cols = min_of(REG_COLS, j1 - j);
      if (rows == REG_ROWS && cols == REG_COLS) {
        // Full register block: the accumulators stay in registers across the k loop.
        float acc[REG_ROWS][REG_COLS];
        for (int r = 0; r < REG_ROWS; ++r)
          for (int c = 0; c < REG_COLS; ++c) acc[r][c] = C[(i + r) * N + j + c];
        _Pragma(EVOTEAM_STR(GCC unroll UNROLL_K))
        for (std::int64_t k = k0; k < k1; ++k) {
          const float* b = B + k * N + j;
          for (int r = 0; r < REG_ROWS; ++r) {
            const float a = A[(i + r) * K + k];
            for (int c = 0; c < REG_COLS; ++c) acc[r][c] += a * b[c];
          }
        }
        for (int r = 0; r < REG_ROWS; ++r)
          for (int c = 0; c < REG_COLS; ++c) C[(i + r) * N + j + c] = acc[r][c];
      } else {
        // Edge block.
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t k = k0; k < k1; ++k) {
            const float a = A[(i + r) * K + k];
            for (std::int64_t c = 0; c < cols; ++c) C[(i + r) * N + j + c] += a * B[k * N + j + c];
          }
      }
    }
  }
}

}  // namespace

extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  for (std::int64_t i = 0; i < M * N; ++i) C[i] = 0.0f;
  for (std::int64_t i0 = 0; i0 < M; i0 += TILE_M) {
    const std::int64_t i1 = min_of(i0 + TILE_M, M);
#if LOOP_ORDER == 0
    for (std::int64_t j0 = 0; j0 < N; j0 += TILE_N)
      for (std::int64_t k0 = 0; k0 < K; k0 += TILE_K)
#else
    for (std::int64_t k0 = 0; k0 < K; k0 += TILE_K)
      for (std::int64_t j0 = 0; j0 < N; j0 += TILE_N)
#endif
        tile(A, B, C, N, K, i0, i1, j0, min_of(j0 + TILE_N, N), k0, min_of(k0 + TILE_K, K));
  }
}
