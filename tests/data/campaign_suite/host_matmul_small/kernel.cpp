// Starting kernel for host_matmul: C[M][N] = A[M][K] * B[K][N], fp32, row-major.
// Cache-tiled. Inside a tile, C is accumulated either in memory (one row of C updated per step of k) or in a
// block of registers (REG_ROWS x REG_COLS accumulators kept across the whole k loop). The tile sizes, the
// register block, the accumulation and the tile loop order are compile-time params (see task.json); the
// defaults are deliberately poor.
#include <cstdint>

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
#define REG_COLS 32
#endif
#ifndef ACC_IN_REGISTERS
#define ACC_IN_REGISTERS 0
#endif
#ifndef LOOP_ORDER
#define LOOP_ORDER 0  // 0: tiles in i, j, k order; 1: tiles in i, k, j order
#endif

// Rows of A and C per cache tile (not a param; edit it if you like).
#define TILE_M 32

namespace {

inline std::int64_t min_of(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

// C[i0:i1, j0:j1] += A[i0:i1, k0:k1] * B[k0:k1, j0:j1], accumulating in C itself.
inline void tile_in_memory(const float* __restrict A, const float* __restrict B, float* __restrict C, std::int64_t N,
                           std::int64_t K, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                           std::int64_t k0, std::int64_t k1) {
  for (std::int64_t i = i0; i < i1; ++i)
    for (std::int64_t k = k0; k < k1; ++k) {
      const float a = A[i * K + k];
      for (std::int64_t j = j0; j < j1; ++j) C[i * N + j] += a * B[k * N + j];
    }
}

// The same, with REG_ROWS x REG_COLS blocks of C held in registers across the k loop.
inline void tile_in_registers(const float* __restrict A, const float* __restrict B, float* __restrict C, std::int64_t N,
                              std::int64_t K, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                              std::int64_t k0, std::int64_t k1) {
  for (std::int64_t i = i0; i < i1; i += REG_ROWS) {
    const std::int64_t rows = min_of(REG_ROWS, i1 - i);
    for (std::int64_t j = j0; j < j1; j += REG_COLS) {
      const std::int64_t cols = min_of(REG_COLS, j1 - j);
      if (rows < REG_ROWS || cols < REG_COLS) {
        tile_in_memory(A, B, C, N, K, i, i + rows, j, j + cols, k0, k1);  // edge block
        continue;
      }
      float acc[REG_ROWS][REG_COLS];
      for (int r = 0; r < REG_ROWS; ++r)
        for (int c = 0; c < REG_COLS; ++c) acc[r][c] = C[(i + r) * N + j + c];
#pragma GCC unroll 4
      for (std::int64_t k = k0; k < k1; ++k) {
        const float* b = B + k * N + j;
        for (int r = 0; r < REG_ROWS; ++r) {
          const float a = A[(i + r) * K + k];
          for (int c = 0; c < REG_COLS; ++c) acc[r][c] += a * b[c];
        }
      }
      for (int r = 0; r < REG_ROWS; ++r)
        for (int c = 0; c < REG_COLS; ++c) C[(i + r) * N + j + c] = acc[r][c];
    }
  }
}

inline void tile(const float* A, const float* B, float* C, std::int64_t N, std::int64_t K, std::int64_t i0,
                 std::int64_t i1, std::int64_t j0, std::int64_t j1, std::int64_t k0, std::int64_t k1) {
#if ACC_IN_REGISTERS
  tile_in_registers(A, B, C, N, K, i0, i1, j0, j1, k0, k1);
#else
  tile_in_memory(A, B, C, N, K, i0, i1, j0, j1, k0, k1);
#endif
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
